/**
 * The frontier's vocabulary: named priorities, crawl scope, and enqueue / complete / fail options and results.
 * Policy lives in CrawlFrontier (crawl-frontier.ts); rows, leases and transactions in the FrontierRepo.
 */
import type { FrontierKind, FrontierRecord, FrontierState } from '../state/repos/types.js';
import { hostOf } from './url.js';

export type { FrontierKind, FrontierState } from '../state/repos/types.js';

/** Higher is served first: submitted (URL requests) > sitemap > discovered links > recrawls of known pages. */
export const PRIORITY = { submitted: 30, sitemap: 20, discovered: 10, recrawl: 0 } as const;
export type PriorityName = keyof typeof PRIORITY;

/**
 * Where links found under an entry may lead: the hosts listed (sorted, lower case), or null for the open web.
 * It belongs to the entry, is stored with it, and passes to every link and sitemap entry admitted from it, so
 * every process that crawls the frontier (svc crawl, svc serve) keeps to it.
 */
export type CrawlScope = readonly string[] | null;

/** Whether `url` may be admitted under `scope`. */
export function inScope(scope: CrawlScope, url: string): boolean {
  return scope === null || scope.includes(hostOf(url));
}

/** Tunables, all with defaults. */
export interface FrontierOptions {
  /** Clock (ms). @default Date.now */
  readonly now?: () => number;
  /** How long a claimed item stays leased before it is handed out again. @default 120000 */
  readonly leaseMs?: number;
  /** Attempts before an item is dead-lettered. @default 5 */
  readonly maxAttempts?: number;
  /** First retry delay; doubles per attempt. @default 30000 */
  readonly retryBaseMs?: number;
  /** Longest retry delay. @default 6 h */
  readonly retryMaxMs?: number;
  /** Recrawl interval of a page never seen changing yet. @default 1 day */
  readonly recrawlInitialMs?: number;
  /** Recrawl interval bounds. @default 1 h … 30 days */
  readonly recrawlMinMs?: number;
  readonly recrawlMaxMs?: number;
  /** Random source in [0, 1) for jitter (tests pass a fixed one). @default Math.random */
  readonly random?: () => number;
  /** Discovered URLs admitted per host at most (crawler traps, calendars). @default 100000 */
  readonly maxPerHost?: number;
}

/** A frontier row as the site tool, the request processor and tests read it. */
export type FrontierRow = FrontierRecord;

/** Options of CrawlFrontier.enqueue. */
export interface EnqueueOptions {
  /** A named priority or a number (higher first). @default 'discovered' */
  readonly priority?: PriorityName | number;
  /** Why it was admitted (seed, link, sitemap, submitted, redirect, …). */
  readonly reason: string;
  /** The URL request this comes from, if any. */
  readonly requestId?: string;
  readonly kind?: FrontierKind;
  /** Not before this instant (ms). @default now */
  readonly notBefore?: number;
  /** Link depth from a seed. @default 0 */
  readonly depth?: number;
  /**
   * Make an already completed / dead-lettered URL due again now (a recrawl request). Without it, enqueueing a
   * known URL only raises its priority.
   */
  readonly refresh?: boolean;
  /** Where links found under this entry may lead (stored with a new row). @default null, the open web */
  readonly scope?: CrawlScope;
  /**
   * A seed given again: a known row takes the new scope, and so does every row admitted under its old scope (the
   * crawl it started); a done row is made due now so its links are read again under the new scope.
   */
  readonly rescope?: boolean;
}

export interface EnqueueResult {
  readonly id: number;
  /** True when the URL was not in the frontier before. */
  readonly created: boolean;
  readonly state: FrontierState;
}

/** How a fetch ended, for completion. */
export interface CompleteOptions {
  /** Outcome label stored on the row (indexed, unchanged, excluded:noindex, gone, robots, …). */
  readonly outcome: string;
  readonly status?: number | null;
  /** true: content changed; false: unchanged (304 or same hash); null: unknown / not applicable. */
  readonly changed?: boolean | null;
  readonly etag?: string | null;
  readonly lastModified?: string | null;
  /** Override the next recrawl delay (ms); null disables recrawl (the row stays done). */
  readonly recrawlInMs?: number | null;
  /** Recrawl no later than this instant (ms), e.g. a page's unavailable_after date. */
  readonly recrawlBy?: number | null;
}

export interface FailOptions {
  /** Short reason, kept as last_error and as the dead-letter reason. */
  readonly error: string;
  /** false → dead-letter immediately. */
  readonly retryable: boolean;
  /** Server-requested delay (Retry-After), used when longer than the backoff. */
  readonly retryAfterMs?: number | null;
  readonly status?: number | null;
}

/** Counts by state for one host (svc_site: queued, retrying, dead, …). */
export interface HostQueueCounts {
  readonly queued: number;
  readonly leased: number;
  readonly retrying: number;
  readonly done: number;
  readonly dead: number;
}
