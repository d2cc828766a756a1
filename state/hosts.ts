/**
 * Per-host facts the site-evidence tool (svc_site) reads: robots.txt as SvcBot sees it, llms.txt, last crawl,
 * observed change intervals (for a median), and link aggregates between hosts. Aggregates only: no visitor data,
 * no per-request logs. Written by the crawler pipeline; the tables come from migration crawler-001.
 */
import { stmt, type StateDb } from './db.js';

/** robots.txt facts for one host. */
export interface HostRobotsFacts {
  /** ok | not_found | error_disallow_all | unreachable (crawler/robots.ts RobotsStatus). */
  readonly status: string;
  readonly httpStatus: number | null;
  /** ISO 8601. */
  readonly fetchedAt: string;
  /** Rules that apply to SvcBot, e.g. "Disallow: /private". */
  readonly rules: readonly string[];
  readonly sitemaps: readonly string[];
  readonly crawlDelaySec: number | null;
}

/** llms.txt facts for one host. */
export interface HostLlmsFacts {
  readonly present: boolean;
  readonly fetchedAt: string;
  readonly title: string | null;
  readonly summary: string | null;
  readonly linkCount: number;
}

/** One page's extraction as svc_site reports it (crawler/extract.ts ExtractionReport, with its URL and time). */
export interface PageExtractionFacts {
  readonly url: string;
  readonly pageChars: number;
  readonly keptChars: number;
  /** ok | empty | script_rendered | mostly_boilerplate | short_text (crawler/extract.ts EXTRACTION_VERDICTS). */
  readonly verdict: string;
  /** ISO 8601. */
  readonly at: string;
}

/** The host's pages by extraction verdict, and its latest pages that yielded little. */
export interface HostExtractionFacts {
  readonly byVerdict: Readonly<Record<string, number>>;
  /** Newest first, at most THIN_PAGES_SHOWN. */
  readonly thin: readonly PageExtractionFacts[];
}

/** How many thin pages svc_site lists per host. */
export const THIN_PAGES_SHOWN = 10;

/** Everything known about a host. */
export interface HostFacts {
  readonly host: string;
  readonly robots: HostRobotsFacts | null;
  readonly llms: HostLlmsFacts | null;
  readonly lastCrawlAt: string | null;
  readonly pagesFetched: number;
  /** Median of observed intervals between content changes of its pages (ms), null when none observed. */
  readonly medianChangeIntervalMs: number | null;
  readonly changeIntervalsObserved: number;
  /** Links from this host's indexed pages to other hosts. */
  readonly outboundLinks: number;
  /** Distinct other hosts linking to this host from indexed pages. */
  readonly inboundHosts: number;
  readonly extraction: HostExtractionFacts;
}

interface RawHost {
  host: string;
  robots_status: string | null;
  robots_http_status: number | null;
  robots_fetched_at: string | null;
  robots_rules: string | null;
  robots_sitemaps: string | null;
  robots_crawl_delay: number | null;
  llms_present: number | null;
  llms_fetched_at: string | null;
  llms_title: string | null;
  llms_summary: string | null;
  llms_link_count: number | null;
  last_crawl_at: string | null;
  pages_fetched: number;
}

/** Change intervals kept per host (the newest); enough for a stable median. */
export const MAX_INTERVALS_PER_HOST = 200;

const parseList = (s: string | null): string[] => {
  if (s === null) return [];
  try {
    const v = JSON.parse(s) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
};

/** Host facts store. */
export class Hosts {
  readonly #db: StateDb;

  constructor(db: StateDb) {
    this.#db = db;
  }

  #ensure(host: string): void {
    stmt(this.#db, 'INSERT INTO crawl_hosts (host) VALUES (?) ON CONFLICT (host) DO NOTHING').run(host.toLowerCase());
  }

  /** Stores the latest robots.txt facts. */
  recordRobots(host: string, f: HostRobotsFacts): void {
    this.#ensure(host);
    stmt(
      this.#db,
      `UPDATE crawl_hosts SET robots_status = ?, robots_http_status = ?, robots_fetched_at = ?, robots_rules = ?,
           robots_sitemaps = ?, robots_crawl_delay = ? WHERE host = ?`,
    ).run(f.status, f.httpStatus, f.fetchedAt, JSON.stringify(f.rules), JSON.stringify(f.sitemaps), f.crawlDelaySec, host.toLowerCase());
  }

  /** Stores the latest llms.txt facts (present: false when it was fetched and is absent). */
  recordLlms(host: string, f: HostLlmsFacts): void {
    this.#ensure(host);
    stmt(
      this.#db,
      `UPDATE crawl_hosts SET llms_present = ?, llms_fetched_at = ?, llms_title = ?, llms_summary = ?, llms_link_count = ?
         WHERE host = ?`,
    ).run(f.present ? 1 : 0, f.fetchedAt, f.title, f.summary, f.linkCount, host.toLowerCase());
  }

  /** Stores the latest extraction of one page (replacing the page's earlier one). */
  recordExtraction(host: string, f: PageExtractionFacts): void {
    stmt(this.#db, PAGE_EXTRACTION_UPSERT.replace(/\$\d/g, '?')).run(f.url, host.toLowerCase(), f.pageChars, f.keptChars, f.verdict, f.at);
  }

  /** Counts one fetch of a page of the host. */
  recordCrawl(host: string, at: string): void {
    this.#ensure(host);
    stmt(this.#db, 'UPDATE crawl_hosts SET last_crawl_at = ?, pages_fetched = pages_fetched + 1 WHERE host = ?').run(
      at,
      host.toLowerCase(),
    );
  }

  /** Records the interval between two observed content changes of one page of the host. */
  recordChangeInterval(host: string, intervalMs: number, at: string): void {
    if (!(intervalMs > 0)) return;
    const h = host.toLowerCase();
    this.#db
      .transaction(() => {
        stmt(this.#db, 'INSERT INTO host_change_intervals (host, at, interval_ms) VALUES (?, ?, ?)').run(h, at, Math.round(intervalMs));
        stmt(
          this.#db,
          `DELETE FROM host_change_intervals WHERE host = ? AND rowid NOT IN
             (SELECT rowid FROM host_change_intervals WHERE host = ? ORDER BY at DESC, rowid DESC LIMIT ?)`,
        ).run(h, h, MAX_INTERVALS_PER_HOST);
      })
      .immediate();
  }

  /** Replaces what one page links to, aggregated by target host (`counts`: host → number of links). */
  recordPageLinks(pageRef: number, fromHost: string, counts: ReadonlyMap<string, number>): void {
    const from = fromHost.toLowerCase();
    this.#db
      .transaction(() => {
        stmt(this.#db, 'DELETE FROM page_host_links WHERE page_ref = ?').run(pageRef);
        const ins = stmt(this.#db, 'INSERT INTO page_host_links (page_ref, from_host, to_host, links) VALUES (?, ?, ?, ?)');
        for (const [to, n] of counts) if (n > 0) ins.run(pageRef, from, to.toLowerCase(), n);
      })
      .immediate();
  }

  /** Forgets a page's links (the page left the index). */
  withdrawPageLinks(pageRef: number): void {
    stmt(this.#db, 'DELETE FROM page_host_links WHERE page_ref = ?').run(pageRef);
  }

  /** Everything known about a host, or null when the crawler never touched it. */
  get(host: string): HostFacts | null {
    const h = host.toLowerCase();
    // $1 becomes the named parameter @h (better-sqlite3 binds names, not numbered positions).
    const q = <R>(sql: string) => this.#db.prepare<[{ h: string }], R>(sql.replaceAll('$1', '@h'));
    return hostFacts(
      h,
      q<RawHost>(HOST_FACTS_SQL.host).get({ h }),
      q<{ interval_ms: number }>(HOST_FACTS_SQL.intervals)
        .all({ h })
        .map((x) => x.interval_ms),
      q<{ n: number | null }>(HOST_FACTS_SQL.outbound).get({ h })?.n ?? 0,
      q<{ n: number }>(HOST_FACTS_SQL.inbound).get({ h })?.n ?? 0,
      extractionFacts(
        q<VerdictCount>(HOST_FACTS_SQL.extractionCounts).all({ h }),
        q<RawExtraction>(HOST_FACTS_SQL.extractionThin).all({ h }),
      ),
    );
  }
}

/** The reads behind HostFacts, host in $1 (both state backends run them; on SQLite $1 is bound as @h). */
export const HOST_FACTS_SQL = {
  host: 'SELECT * FROM crawl_hosts WHERE host = $1',
  intervals: 'SELECT interval_ms FROM host_change_intervals WHERE host = $1 ORDER BY interval_ms',
  outbound: 'SELECT sum(links) AS n FROM page_host_links WHERE from_host = $1 AND to_host <> $1',
  inbound: 'SELECT count(DISTINCT from_host) AS n FROM page_host_links WHERE to_host = $1 AND from_host <> $1',
  extractionCounts: 'SELECT verdict, count(*) AS n FROM page_extraction WHERE host = $1 GROUP BY verdict',
  extractionThin: `SELECT url, page_chars, kept_chars, verdict, at FROM page_extraction WHERE host = $1 AND verdict <> 'ok'
    ORDER BY at DESC, url LIMIT ${THIN_PAGES_SHOWN}`,
} as const;

/** One page's extraction, upserted by URL ($1 url, $2 host, $3 page_chars, $4 kept_chars, $5 verdict, $6 at). */
export const PAGE_EXTRACTION_UPSERT = `INSERT INTO page_extraction (url, host, page_chars, kept_chars, verdict, at) VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (url) DO UPDATE SET host = excluded.host, page_chars = excluded.page_chars, kept_chars = excluded.kept_chars,
    verdict = excluded.verdict, at = excluded.at`;

/** Rows of HOST_FACTS_SQL.extractionCounts / extractionThin (PostgreSQL counts arrive as strings). */
export interface VerdictCount {
  verdict: string;
  n: number | string;
}
export interface RawExtraction {
  url: string;
  page_chars: number;
  kept_chars: number;
  verdict: string;
  at: string;
}

/** HostExtractionFacts from the rows of HOST_FACTS_SQL.extractionCounts and extractionThin. */
export function extractionFacts(counts: readonly VerdictCount[], thin: readonly RawExtraction[]): HostExtractionFacts {
  const byVerdict: Record<string, number> = {};
  for (const c of counts) byVerdict[c.verdict] = Number(c.n);
  return {
    byVerdict,
    thin: thin.map((r) => ({ url: r.url, pageChars: r.page_chars, keptChars: r.kept_chars, verdict: r.verdict, at: r.at })),
  };
}

export type { RawHost };

/** HostFacts from the rows of HOST_FACTS_SQL (null when the crawler never touched the host). */
export function hostFacts(
  h: string,
  r: RawHost | undefined,
  intervals: readonly number[],
  outbound: number,
  inbound: number,
  extraction: HostExtractionFacts = { byVerdict: {}, thin: [] },
): HostFacts | null {
  if (!r && intervals.length === 0 && outbound === 0 && inbound === 0) return null;
  return {
    host: h,
    robots:
      r && r.robots_status !== null && r.robots_fetched_at !== null
        ? {
            status: r.robots_status,
            httpStatus: r.robots_http_status,
            fetchedAt: r.robots_fetched_at,
            rules: parseList(r.robots_rules),
            sitemaps: parseList(r.robots_sitemaps),
            crawlDelaySec: r.robots_crawl_delay,
          }
        : null,
    llms:
      r && r.llms_fetched_at !== null
        ? {
            present: r.llms_present === 1,
            fetchedAt: r.llms_fetched_at,
            title: r.llms_title,
            summary: r.llms_summary,
            linkCount: r.llms_link_count ?? 0,
          }
        : null,
    lastCrawlAt: r?.last_crawl_at ?? null,
    pagesFetched: r?.pages_fetched ?? 0,
    medianChangeIntervalMs: median(intervals),
    changeIntervalsObserved: intervals.length,
    outboundLinks: outbound,
    inboundHosts: inbound,
    extraction,
  };
}

/** Median of a sorted list (mean of the middle two for an even count), null when empty. */
export function median(sorted: readonly number[]): number | null {
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
