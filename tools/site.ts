/**
 * svc_site / GET /api/v1/site/{host}: technical evidence about one host as SvcBot sees it — robots.txt, URL scope
 * counts, link aggregates, freshness and llms.txt (docs/api-tools.md). Aggregates only: no visitor data.
 * Sources: state/hosts.ts (robots, llms.txt, last crawl, change intervals, links) and state/site-scope.ts, which
 * counts every known URL of the host once (indexed, excluded by reason, queued, retrying, dead-lettered), so the
 * scope adds up: known = indexed + excluded.total + queued + retrying + dead_lettered.
 */
import { z } from 'zod';
import { ipLiteralOf } from '../crawler/address.js';
import { EXTRACTION_VERDICTS, type ExtractionVerdict } from '../crawler/extract.js';
import { SvcError } from '../errors.js';
import { EXCLUSION_REASONS } from '../state/site-scope.js';
import { defineTool } from './define-tool.js';
import { runCovered } from './shard-coverage.js';

/**
 * The normal form of a host name, or null when malformed: lower case, punycode for IDN (WHATWG URL), no port, no
 * trailing dot, labels of letters, digits and hyphens (1–63 chars, not starting or ending with a hyphen), ≤ 253
 * characters. IP literals are accepted in their canonical form.
 */
export function normalizeHostParam(raw: string): string | null {
  const s = raw.trim();
  if (s === '' || s.length > 253 || /[\s/?#@:\\]/.test(s.replace(/^\[[0-9a-fA-F:.]+\]$/, ''))) return null;
  let host: string;
  try {
    host = new URL(`http://${s}/`).hostname;
  } catch {
    return null;
  }
  host = host.replace(/\.$/, '');
  if (ipLiteralOf(host) !== null) return host;
  const labels = host.split('.');
  if (labels.some((l) => !/^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(l))) return null;
  return host;
}

const input = z.object({
  host: z
    .string()
    .min(1)
    .max(253)
    // Documents the ASCII form; normalizeHostParam also takes IDN and IP literals (malformed → 400 invalid_host). The
    // last label starts with a letter: one of digits (or 0x…) makes the URL parser read the name as an IPv4 address.
    .meta({ pattern: '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?$' })
    .describe('Host name, e.g. "www.example.ca" (no scheme, path or port).'),
});

const output = z.object({
  host: z.string().describe('The host, normalised (lower case, punycode).'),
  robots: z
    .object({
      status: z.string().describe('ok | not_found (4xx: everything allowed) | error_disallow_all (5xx: nothing fetched) | unreachable.'),
      http_status: z.number().int().nullable().describe('HTTP status of the last robots.txt fetch.'),
      fetched_at: z.string().describe('When robots.txt was last fetched (ISO 8601).'),
      rules: z
        .array(z.string())
        .describe('The rules that apply to SvcBot (its own group, or * when it has none), e.g. "Disallow: /private".'),
      sitemaps: z.array(z.string()).describe('Sitemap URLs listed in robots.txt.'),
      crawl_delay_seconds: z.number().nullable().describe('Crawl-delay honoured for SvcBot, or null.'),
    })
    .nullable()
    .describe('robots.txt as SvcBot last saw it; null when not fetched yet.'),
  scope: z
    .object({
      known: z
        .number()
        .int()
        .describe(
          'Distinct page URLs of this host SvcBot knows; each is counted in exactly one state: known = indexed + excluded.total + queued + retrying + dead_lettered.',
        ),
      indexed: z.number().int().describe('URLs in the index now.'),
      near_duplicates: z
        .number()
        .int()
        .describe('Indexed pages whose main text is a near-copy of another indexed page of this host (counted in indexed).'),
      excluded: z
        .object({
          total: z.number().int().describe('URLs known but not indexed (the sum of by_reason).'),
          by_reason: z
            .partialRecord(z.enum(EXCLUSION_REASONS), z.number().int())
            .describe(
              'Counts per reason, only reasons that occur: robots (robots.txt disallows SvcBot), noindex, unavailable_after, ' +
                'redirect (the URL redirects elsewhere), removal, gone (404/410), http_error (other 4xx, odd statuses), unsupported_type ' +
                '(not HTML, PDF, text or Markdown), too_large, encrypted, no_text_layer, parse_error (PDF), empty (no text), error, unprocessed.',
            ),
        })
        .describe('URLs not in the index, by reason.'),
      queued: z
        .number()
        .int()
        .describe('URLs without an index verdict yet, waiting in the crawl queue (including ones being fetched now).'),
      retrying: z.number().int().describe('URLs without an index verdict, backing off after a failed attempt.'),
      dead_lettered: z.number().int().describe('URLs without an index verdict the crawler gave up on after repeated failures.'),
    })
    .describe('URL counts by state.'),
  links: z
    .object({
      outbound: z.number().int().describe('Links from this host’s indexed pages to other hosts.'),
      inbound_hosts: z.number().int().describe('Distinct other hosts whose indexed pages link here.'),
    })
    .describe('Aggregate link counts (no per-page or visitor data).'),
  freshness: z
    .object({
      last_crawl_at: z.string().nullable().describe('Last fetch from this host (ISO 8601), or null.'),
      pages_fetched: z.number().int().describe('Fetches made from this host.'),
      median_change_interval_seconds: z
        .number()
        .nullable()
        .describe('Median observed time between two content changes of a page, or null when none observed.'),
      change_intervals_observed: z.number().int().describe('How many change intervals the median is based on.'),
    })
    .describe('How often content changes and when SvcBot last came.'),
  llms_txt: z
    .object({
      present: z.boolean().describe('Whether /llms.txt exists.'),
      fetched_at: z.string().describe('When it was checked (ISO 8601).'),
      title: z.string().nullable().describe('Its title (first H1), or null.'),
      summary: z.string().nullable().describe('Its summary (blockquote), or null.'),
      link_count: z.number().int().describe('Links it lists.'),
    })
    .nullable()
    .describe('llms.txt evidence; null when not checked yet.'),
  extraction: z
    .object({
      pages_measured: z.number().int().describe('HTML pages of this host whose main text SvcBot extracted (latest extraction of each).'),
      by_verdict: z
        .partialRecord(z.enum(EXTRACTION_VERDICTS), z.number().int())
        .describe(
          'Pages per verdict, only verdicts that occur: ok (enough main text kept), empty (no visible text), script_rendered ' +
            '(next to no text in the HTML, scripts present: the content is drawn in the browser), mostly_boilerplate ' +
            '(plenty of text, nearly all navigation, footers or link lists), short_text (the page itself carries little text).',
        ),
      thin_pages: z
        .array(
          z.object({
            url: z.string().describe('The page.'),
            page_chars: z.number().int().describe('Visible text characters in its HTML.'),
            kept_chars: z.number().int().describe('Characters of main text kept for the index.'),
            verdict: z.enum(EXTRACTION_VERDICTS).describe('Why it yielded little (see by_verdict).'),
            extracted_at: z.string().describe('When it was extracted (ISO 8601).'),
          }),
        )
        .describe('The latest pages (at most 10, newest first) whose verdict is not ok.'),
    })
    .describe('How much main text SvcBot kept from this host’s pages, and why some yielded little.'),
});

export const siteTool = defineTool({
  name: 'svc_site',
  title: 'Host evidence',
  description:
    'How the svc crawler sees one host: robots.txt status and rules, sitemaps, URL counts (indexed, excluded by ' +
    'reason, queued, retrying), link counts, freshness, llms.txt, and how much main text its pages yielded (and why some ' +
    'yielded little: script-rendered, mostly boilerplate, short). Explains why a site’s pages are or are not indexed.',
  input,
  output,
  annotations: { readOnlyHint: true, openWorldHint: true, idempotentHint: true },
  runsOn: 'main',
  rest: [
    { method: 'GET', path: '/site/:host', source: 'query', summary: 'Robots, scope, links, freshness and llms.txt evidence for a host' },
  ],
  run: async (inp, ctx) => {
    const host = normalizeHostParam(inp.host);
    if (host === null) {
      throw new SvcError('invalid_host', 'host must be a host name such as www.example.ca (no scheme, path or port)', {
        errors: [{ path: ['host'], issue: 'not a valid host name' }],
      });
    }
    const { facts, scope } = await ctx.deps.repos.hosts.evidence(host);
    if (facts === null && scope.known === 0) throw new SvcError('not_found', `SvcBot has no record of ${host}`);
    return {
      host,
      robots: facts?.robots
        ? {
            status: facts.robots.status,
            http_status: facts.robots.httpStatus,
            fetched_at: facts.robots.fetchedAt,
            rules: [...facts.robots.rules],
            sitemaps: [...facts.robots.sitemaps],
            crawl_delay_seconds: facts.robots.crawlDelaySec,
          }
        : null,
      scope: {
        known: scope.known,
        indexed: scope.indexed,
        near_duplicates: (await runCovered(ctx.deps.index, () => ctx.deps.index.nearCopyCount(host))).value,
        excluded: { total: scope.excluded.total, by_reason: { ...scope.excluded.byReason } },
        queued: scope.queued,
        retrying: scope.retrying,
        dead_lettered: scope.dead,
      },
      links: { outbound: facts?.outboundLinks ?? 0, inbound_hosts: facts?.inboundHosts ?? 0 },
      freshness: {
        last_crawl_at: facts?.lastCrawlAt ?? null,
        pages_fetched: facts?.pagesFetched ?? 0,
        median_change_interval_seconds: facts?.medianChangeIntervalMs != null ? Math.round(facts.medianChangeIntervalMs / 1000) : null,
        change_intervals_observed: facts?.changeIntervalsObserved ?? 0,
      },
      llms_txt: facts?.llms
        ? {
            present: facts.llms.present,
            fetched_at: facts.llms.fetchedAt,
            title: facts.llms.title,
            summary: facts.llms.summary,
            link_count: facts.llms.linkCount,
          }
        : null,
      extraction: {
        pages_measured: Object.values(facts?.extraction.byVerdict ?? {}).reduce((a, b) => a + b, 0),
        by_verdict: Object.fromEntries(Object.entries(facts?.extraction.byVerdict ?? {}).filter(([v]) => isVerdict(v))) as Partial<
          Record<ExtractionVerdict, number>
        >,
        thin_pages: (facts?.extraction.thin ?? [])
          .filter((p) => isVerdict(p.verdict))
          .map((p) => ({
            url: p.url,
            page_chars: p.pageChars,
            kept_chars: p.keptChars,
            verdict: p.verdict as ExtractionVerdict,
            extracted_at: p.at,
          })),
      },
    };
  },
});

const isVerdict = (v: string): v is ExtractionVerdict => (EXTRACTION_VERDICTS as readonly string[]).includes(v);
