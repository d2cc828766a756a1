/**
 * svc_submit_url / POST /api/v1/requests: suggest a URL, ask for a recrawl or correction, or the exact removal of a
 * gone URL. Recorded and processed later through the crawler's normal path, with no promise about indexing or rank.
 */
import { z } from 'zod';
import { classifyAddress, ipLiteralOf } from '../crawler/address.js';
import { parsePin, type Resolver } from '../crawler/resolver.js';
import { normalizeUrl } from '../crawler/url.js';
import { SvcError } from '../errors.js';
import {
  REQUEST_LIMITS,
  REQUEST_OUTCOMES,
  REQUEST_STATUSES,
  REQUEST_TYPES,
  SUBMISSION_NOTICE,
  type UrlRequest,
} from '../state/requests.js';
import { defineTool } from './define-tool.js';

/** TLDs and names that never denote a public host (RFC 6761, RFC 8375, RFC 7686 and common internal suffixes). */
const SPECIAL_SUFFIXES = new Set([
  'localhost',
  'local',
  'internal',
  'intranet',
  'lan',
  'home',
  'corp',
  'test',
  'example',
  'invalid',
  'onion',
  'arpa',
  'localdomain',
]);

export interface UrlCheckOptions {
  /**
   * curl-style HOST:PORT:ADDR pins set by the operator (config.resolve): the only way a submission reaches a host
   * that is not public. A URL whose host and port match a pin is accepted even under a special-use suffix such as
   * .test and whatever the pin's addresses: the operator, not the caller, decided it is crawlable.
   */
  readonly pins: readonly string[];
  /**
   * Accept only pinned URLs (config.crawlAllowLoopback): while the crawler may connect to loopback, any other name
   * could resolve there by fetch time (slow or rebinding DNS), so callers reach only the operator's pinned hosts.
   * @default false
   */
  readonly pinnedOnly?: boolean;
}

/**
 * Whether an operator pin covers this URL's host and port, i.e. the crawler will connect to the pinned addresses
 * and never ask DNS. A malformed pin covers nothing (the configuration refuses them at start anyway).
 */
export function pinnedByOperator(url: string, pins: readonly string[]): boolean {
  const u = new URL(url);
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return pins.some((text) => {
    try {
      const p = parsePin(text);
      return p.host === host && (p.port === null || p.port === port);
    } catch {
      return false;
    }
  });
}

/**
 * Checks a submitted URL (≤ 2048 chars, absolute http(s), no credentials, a public host or an operator-pinned name)
 * and returns the crawler's normal form; errors are 422 validation_failed, 400 invalid_url or invalid_host. Names
 * are not resolved here: the crawler classifies every address at fetch time.
 */
export function validateSubmissionUrl(input: string, opts: UrlCheckOptions): { url: string; host: string } {
  const bad = (why: string, code: 'invalid_url' | 'invalid_host' = 'invalid_url'): never => {
    throw new SvcError(code, `url: ${why}`, { errors: [{ path: ['url'], issue: why }] });
  };
  if (input.length > REQUEST_LIMITS.urlMaxLength) {
    throw new SvcError('validation_failed', `url is longer than ${REQUEST_LIMITS.urlMaxLength} characters`, {
      errors: [{ path: ['url'], issue: `at most ${REQUEST_LIMITS.urlMaxLength} characters` }],
    });
  }
  let parsed: URL;
  try {
    parsed = new URL(input.trim());
  } catch {
    return bad('not an absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') bad('only http and https URLs can be submitted');
  if (parsed.username !== '' || parsed.password !== '') bad('URLs with credentials (user:password@) are refused');
  const url = normalizeUrl(input);
  if (url === null) return bad('not a crawlable URL');
  if (url.length > REQUEST_LIMITS.urlMaxLength) bad(`longer than ${REQUEST_LIMITS.urlMaxLength} characters once normalised`);
  const host = new URL(url).hostname.toLowerCase();
  const literal = ipLiteralOf(host);
  if (literal !== null) {
    const cls = classifyAddress(literal);
    if (!cls.allowed({ allowLoopback: false })) bad(`the address ${cls.ip} is not a public address (${cls.kind})`, 'invalid_host');
    return { url, host };
  }
  if (pinnedByOperator(url, opts.pins)) return { url, host };
  if (opts.pinnedOnly)
    bad('this service crawls loopback (--allow-loopback): only the operator’s pinned hosts can be submitted', 'invalid_host');
  const labels = host.split('.');
  const tld = labels[labels.length - 1] ?? '';
  if (labels.length < 2 || labels.some((l) => l === '')) bad('the host must be a public, fully qualified name', 'invalid_host');
  if (SPECIAL_SUFFIXES.has(tld)) bad(`.${tld} names are not public hosts`, 'invalid_host');
  if (/^\d+$/.test(tld)) bad('the host is neither a public name nor a valid address', 'invalid_host');
  return { url, host };
}

/** How long a submission waits for DNS before accepting the URL unresolved (the fetch-time check still applies). */
export const SUBMISSION_RESOLVE_TIMEOUT_MS = 2000;

/**
 * Refuses a URL whose host resolves to any address the crawler would not fetch for a caller (loopback never
 * allowed), so the caller hears 400 blocked_address now rather than a failure later. Unresolvable or slow names are
 * accepted: DNS may change, and the fetch-time check still decides.
 */
export async function refuseBlockedAddresses(url: string, opts: { resolver: Resolver; timeoutMs?: number }): Promise<void> {
  const u = new URL(url);
  if (ipLiteralOf(u.hostname) !== null) return; // literals were classified by validateSubmissionUrl
  const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), opts.timeoutMs ?? SUBMISSION_RESOLVE_TIMEOUT_MS);
  });
  const addresses = await Promise.race([opts.resolver.resolve(u.hostname, port).catch(() => null), timeout]).finally(() =>
    clearTimeout(timer),
  );
  if (addresses === null || addresses.length === 0) return;
  const refused = addresses.map(classifyAddress).filter((c) => !c.allowed({ allowLoopback: false }));
  if (refused.length === 0) return;
  const kinds = [...new Set(refused.map((c) => c.kind))].join(', ');
  throw new SvcError('blocked_address', `url: the host resolves to addresses SvcBot never connects to (${kinds})`, {
    errors: [{ path: ['url'], issue: `resolves to non-public addresses (${kinds})` }],
  });
}

/** The public shape of a request (shared with svc_request_status). */
export const requestRecordSchema = z
  .object({
    id: z.string().describe('Request id (req_…); look it up later with svc_request_status / GET /api/v1/requests/{id}.'),
    type: z.enum(REQUEST_TYPES).describe('discovery, recrawl, correction or removal.'),
    url: z.string().describe('The URL in the crawler’s normal form (lower-case scheme and host, no fragment, …).'),
    note: z.string().nullable().describe('The note sent with the request (corrections), or null.'),
    status: z
      .enum(REQUEST_STATUSES)
      .describe('received → queued → in_progress → completed (see outcome) or failed (see reason). completed and failed are final.'),
    outcome: z
      .enum(REQUEST_OUTCOMES)
      .nullable()
      .describe(
        'When completed: indexed (new in the index), updated (content changed), unchanged, removed (exact removal done), ' +
          'excluded_by_robots, excluded_by_noindex, not_found (404/410), rejected (see reason). Null before completion.',
      ),
    reason: z.string().nullable().describe('Why the request was rejected or failed, or a detail of the outcome; null otherwise.'),
    received_at: z.string().describe('When the request was recorded (ISO 8601).'),
    updated_at: z.string().describe('When the status last changed (ISO 8601).'),
    history: z
      .array(
        z.object({
          status: z.enum(REQUEST_STATUSES).describe('Status entered.'),
          at: z.string().describe('When (ISO 8601).'),
          outcome: z.enum(REQUEST_OUTCOMES).optional().describe('Outcome, on completion.'),
          reason: z.string().optional().describe('Reason, on rejection or failure.'),
        }),
      )
      .describe('Every status the request went through, oldest first.'),
    notice: z.string().describe('Submission guarantees neither indexing nor position.'),
  })
  .describe('A URL request and its status.');

/** Public record of a stored request (the key digest stays inside the store). */
export function publicRequest(r: UrlRequest): z.input<typeof requestRecordSchema> {
  return {
    id: r.id,
    type: r.type,
    url: r.url,
    note: r.note,
    status: r.status,
    outcome: r.outcome,
    reason: r.reason,
    received_at: r.receivedAt,
    updated_at: r.updatedAt,
    history: r.history.map((h) => ({ ...h })),
    notice: SUBMISSION_NOTICE,
  };
}

const input = z.object({
  type: z
    .string()
    .max(32)
    // Checked in run() so that another value is a 400 (the spec: "bad host, URL or type"); documented as the closed set.
    .meta({ enum: [...REQUEST_TYPES] })
    .describe(
      'discovery (a URL the crawler may not know), recrawl (fetch again soon), correction (recrawl first; say what is ' +
        'wrong in note), removal (only if a fresh fetch shows 404, 410 or noindex).',
    ),
  url: z
    .string()
    .min(1)
    .max(REQUEST_LIMITS.urlMaxLength)
    // Checked in run() (a bad URL or host is a 400, per the spec); the schema states the format it checks.
    .meta({ format: 'uri', pattern: '^[hH][tT][tT][pP][sS]?://' })
    .describe('Absolute http(s) URL of a public page, no user:password@; private addresses are refused.'),
  note: z.string().max(REQUEST_LIMITS.noteMaxLength).optional().describe('For a correction: what is wrong. Never published.'),
  idempotency_key: z
    .string()
    .min(1)
    .max(REQUEST_LIMITS.idempotencyKeyMaxLength)
    .optional()
    .describe('Idempotency key (REST: Idempotency-Key header): the same key returns the same request.'),
});

const output = z.object({
  request: requestRecordSchema,
  deduplicated: z
    .boolean()
    .describe(
      'True when an earlier request was returned instead of a new one (same Idempotency-Key, or the same type and URL still open).',
    ),
  notice: z.string().describe('Submission guarantees neither indexing nor position.'),
});

export const submitUrlTool = defineTool({
  name: 'svc_submit_url',
  title: 'Submit a URL request',
  description:
    'Asks the svc crawler to discover, recrawl or correct a public URL, or to remove one that is gone (404/410) or ' +
    'noindex. Queued and crawled normally (robots.txt applies); track it with svc_request_status. Guarantees neither ' +
    'indexing nor rank; daily quota per key.',
  input,
  output,
  // Not idempotent in general: after a request completes, the same submission opens a new one (docs/api-requests.md).
  annotations: { readOnlyHint: false, openWorldHint: true, idempotentHint: false, destructiveHint: false },
  runsOn: 'main',
  rest: [
    {
      method: 'POST',
      path: '/requests',
      source: 'body',
      successStatus: 202,
      headers: { 'idempotency-key': 'idempotency_key' },
      summary: 'Submit a URL request (discovery, recrawl, correction, exact removal)',
    },
  ],
  run: async (inp, ctx) => {
    const { config, repos } = ctx.deps;
    if (!(REQUEST_TYPES as readonly string[]).includes(inp.type)) {
      throw new SvcError('bad_request', `type must be one of ${REQUEST_TYPES.join(', ')}`, {
        errors: [{ path: ['type'], issue: `must be one of ${REQUEST_TYPES.join(', ')}` }],
      });
    }
    // Whatever --allow-loopback says, a caller reaches non-public addresses only through the operator's pins.
    const { url, host } = validateSubmissionUrl(inp.url, { pins: config.resolve, pinnedOnly: config.crawlAllowLoopback });
    if (ctx.deps.resolver && !pinnedByOperator(url, config.resolve)) await refuseBlockedAddresses(url, { resolver: ctx.deps.resolver });
    const { request, deduplicated } = await repos.requests.submit(
      ctx.caller.digest,
      { type: inp.type, url, host, note: inp.note, idempotencyKey: inp.idempotency_key },
      { perDay: config.submissionsPerDay, now: ctx.deps.now() },
    );
    return { request: publicRequest(request), deduplicated, notice: SUBMISSION_NOTICE };
  },
});
