/**
 * Where ownership proofs are looked for: a DNS TXT record, a home-page meta tag, a /.well-known/ file. HTTP goes
 * through the crawler's SSRF-safe fetcher and a proof found after a cross-host redirect does not count. Checkers
 * only return candidates (ownership.ts compares them) and never log or store one.
 */
import { Resolver as DnsResolver } from 'node:dns/promises';
import { CRAWLER_VERSION } from '../crawler/crawler.js';
import { decodeHtml, extractPage } from '../crawler/extract.js';
import { createFetcher, isFetchError, svcBotUserAgent, type Connector, type Fetcher } from '../crawler/fetcher.js';
import type { Resolver } from '../crawler/resolver.js';
import type { AuditOutcome } from '../state/repos/webmaster-types.js';

/** The DNS label under which the TXT record is published: `_svc-verification.<property name>`. */
export const DNS_TXT_LABEL = '_svc-verification';
/** A TXT value is `svc-site-verification=<challenge>`. */
export const TXT_PREFIX = 'svc-site-verification=';
/** `<meta name="svc-site-verification" content="<challenge>">` on the home page. */
export const META_NAME = 'svc-site-verification';
/** A text file holding the challenge on a line of its own. */
export const WELL_KNOWN_PATH = '/.well-known/svc-site-verification.txt';

/** Candidates considered per lookup, and their longest accepted length (bounds the work an answer can cause). */
const MAX_CANDIDATES = 50;
const MAX_CANDIDATE_LENGTH = 200;
/** A verification page or file is small: anything larger is cut off (the meta tag must be in the first 256 KiB). */
export const PROOF_MAX_BYTES = 256 * 1024;

export type CheckResult =
  | { readonly found: true; readonly candidates: readonly string[] }
  | { readonly found: false; readonly outcome: Extract<AuditOutcome, 'not_found' | 'blocked_address' | 'network_error'> };

export interface ProofCheckers {
  dnsTxt(name: string): Promise<CheckResult>;
  metaTag(host: string): Promise<CheckResult>;
  wellKnown(host: string): Promise<CheckResult>;
}

/** TXT records of a name, each as its joined strings (node:dns resolveTxt). */
export type TxtLookup = (name: string) => Promise<string[][]>;

/** A TXT lookup through node:dns, optionally against given servers (`['127.0.0.1:5353']`: tests, split DNS). */
export function createTxtLookup(opts: { servers?: readonly string[]; timeoutMs?: number } = {}): TxtLookup {
  const r = new DnsResolver({ timeout: opts.timeoutMs ?? 3000, tries: 2 });
  if (opts.servers && opts.servers.length > 0) r.setServers([...opts.servers]);
  return (name) => r.resolveTxt(name);
}

export interface ProofCheckerOptions {
  /** The crawler's resolver (pins, system DNS); the fetcher classifies every address it returns. */
  readonly resolver: Resolver;
  readonly txt: TxtLookup;
  /** Loopback only for the local test web; never settable through an API. */
  readonly allowLoopback: boolean;
  /** Info URL in the SvcBot User-Agent. */
  readonly crawlerInfoUrl: string;
  /** Origin of a host's home page. @default https://host */
  readonly origin?: (host: string) => string;
  /** Socket opener (tests record connection attempts). */
  readonly connector?: Connector;
  /** Fetcher timeouts. @default connect 5 s, headers 5 s, total 10 s */
  readonly timeouts?: { connectTimeoutMs?: number; headersTimeoutMs?: number; totalTimeoutMs?: number };
}

const bounded = (xs: Iterable<string>): string[] => {
  const out: string[] = [];
  for (const x of xs) {
    const v = x.trim();
    if (v !== '' && v.length <= MAX_CANDIDATE_LENGTH) out.push(v);
    if (out.length >= MAX_CANDIDATES) break;
  }
  return out;
};

/** The checkers, with their own SSRF-safe fetcher (the crawler's, with a small size cap and short deadlines). */
export function createProofCheckers(opts: ProofCheckerOptions): ProofCheckers {
  const fetcher: Fetcher = createFetcher({
    userAgent: svcBotUserAgent(CRAWLER_VERSION, opts.crawlerInfoUrl),
    resolver: opts.resolver,
    allowLoopback: opts.allowLoopback,
    maxBytes: PROOF_MAX_BYTES,
    maxRedirects: 3,
    connectTimeoutMs: opts.timeouts?.connectTimeoutMs ?? 5000,
    headersTimeoutMs: opts.timeouts?.headersTimeoutMs ?? 5000,
    totalTimeoutMs: opts.timeouts?.totalTimeoutMs ?? 10_000,
    ...(opts.connector ? { connector: opts.connector } : {}),
  });
  const origin = opts.origin ?? ((host: string) => `https://${host}`);

  /** GETs a proof location; the body when it answered 200 on the same host, else why not. */
  const get = async (host: string, path: string, accept: string): Promise<{ body: Buffer; type: string; url: string } | CheckResult> => {
    try {
      const res = await fetcher.fetch(`${origin(host)}${path}`, { headers: { accept }, maxBytes: PROOF_MAX_BYTES, truncate: true });
      if (res.status !== 200 || new URL(res.url).hostname !== host) return { found: false, outcome: 'not_found' };
      return { body: res.body, type: res.headers['content-type'] ?? '', url: res.url };
    } catch (err) {
      if (isFetchError(err) && err.kind === 'blocked_address') return { found: false, outcome: 'blocked_address' };
      return { found: false, outcome: 'network_error' };
    }
  };

  return {
    async dnsTxt(name) {
      let records: string[][];
      try {
        records = await opts.txt(`${DNS_TXT_LABEL}.${name}`);
      } catch (err) {
        const code = (err as { code?: string }).code;
        return { found: false, outcome: code === 'ENOTFOUND' || code === 'ENODATA' ? 'not_found' : 'network_error' };
      }
      const values = records
        .map((chunks) => chunks.join(''))
        .filter((v) => v.startsWith(TXT_PREFIX))
        .map((v) => v.slice(TXT_PREFIX.length));
      const candidates = bounded(values);
      return candidates.length > 0 ? { found: true, candidates } : { found: false, outcome: 'not_found' };
    },

    async metaTag(host) {
      const r = await get(host, '/', 'text/html');
      if ('found' in r) return r;
      const page = extractPage(decodeHtml(r.body, r.type), { url: r.url });
      const candidates = bounded(page.metas.filter((m) => m.name.trim().toLowerCase() === META_NAME).map((m) => m.content));
      return candidates.length > 0 ? { found: true, candidates } : { found: false, outcome: 'not_found' };
    },

    async wellKnown(host) {
      const r = await get(host, WELL_KNOWN_PATH, 'text/plain');
      if ('found' in r) return r;
      const candidates = bounded(r.body.toString('utf8').split(/\r?\n/));
      return candidates.length > 0 ? { found: true, candidates } : { found: false, outcome: 'not_found' };
    },
  };
}
