/**
 * Moves URL requests through the crawler (states and outcomes: docs/api-requests.md). Submissions go through the
 * same crawler path as any URL, so none bypasses robots, noindex or politeness; a removal deletes exactly that URL
 * only when a fresh fetch shows 404/410 or noindex, so no key can remove someone else's live page.
 */
import type { Logger } from 'pino';
import { PRIORITY, type EnqueueOptions, type EnqueueResult, type FrontierRow } from '../crawler/frontier.js';
import { hostOf } from '../crawler/url.js';
import type { DocumentRow } from '../state/documents.js';
import type { RequestOutcome, RequestStatus, UrlRequest } from '../state/requests.js';
import type { RequestsRepo } from '../state/repos/types.js';

/** What a fresh single-URL fetch by the crawler showed (crawler `processNow`). */
export interface ProcessNowResult {
  /** Final HTTP status, null when no response (robots refusal, network error). */
  readonly status: number | null;
  /**
   * What the crawler did with the URL: indexed | unchanged | excluded:noindex | excluded:robots | gone (404/410)
   * | error:<kind> | excluded:<other reason>. Only the prefix before ':' and these values are relied on.
   */
  readonly outcome: string;
  /** True when the response carried noindex (meta robots, meta svcbot or X-Robots-Tag). */
  readonly noindex?: boolean;
}

/**
 * The part of the crawler URL requests use. crawler/crawler.ts provides it; main.ts passes the running crawler
 * (or null when the process does not crawl).
 */
export interface CrawlerHandle {
  /**
   * The durable frontier (enqueue with a request id; read a URL's state): the crawler's CrawlFrontier on the
   * repositories.
   */
  readonly frontier: {
    enqueue(url: string, opts: EnqueueOptions): Promise<EnqueueResult | null>;
    get(url: string): Promise<FrontierView | null>;
  };
  /** Fetches and processes one URL now, through the same robots / politeness / redirect checks as the crawl. */
  processNow(url: string, opts: { reason: string; requestId?: string }): Promise<ProcessNowResult>;
}

type FrontierView = Pick<FrontierRow, 'state' | 'deadReason' | 'lastError' | 'completions' | 'lastOutcome' | 'lastStatus'>;

/** The document registry as the processor reads it: the repositories' (async) or state/documents.ts (sync). */
export interface DocumentsView {
  byUrl(url: string): Promise<DocumentRow | null> | DocumentRow | null | undefined;
}

/** Frontier priority of a request type: submissions rank above sitemap and discovered URLs, corrections highest. */
export function priorityFor(type: UrlRequest['type']): number {
  return type === 'correction' ? PRIORITY.submitted + 5 : PRIORITY.submitted;
}

/** Verification fetches a removal gets before it fails. */
export const MAX_REMOVAL_ATTEMPTS = 3;

export interface RequestProcessorOptions {
  /** The URL requests (the state repositories': shared by every replica on PostgreSQL). */
  readonly requests: RequestsRepo;
  readonly documents: DocumentsView;
  readonly crawler: CrawlerHandle;
  readonly log?: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** How many requests one tick looks at per status. @default 50 */
  readonly batch?: number;
  /** Poll interval of `start()`, ms. @default 1000 */
  readonly intervalMs?: number;
  /**
   * A removal left in_progress longer than this (its process died during the verification fetch) is queued again.
   * @default 600000 (10 min)
   */
  readonly staleMs?: number;
  /** Clock (ms). @default Date.now */
  readonly now?: () => number;
}

/** Maps a frontier/documents state after the crawler processed a URL to a request outcome. */
export function outcomeFromCrawl(
  row: Pick<FrontierRow, 'lastOutcome' | 'lastStatus'>,
  doc: DocumentRow | null | undefined,
  queuedAt: string,
): { outcome: RequestOutcome; reason?: string } {
  const o = (row.lastOutcome ?? '').toLowerCase();
  const status = row.lastStatus;
  if (o.includes('robots')) return { outcome: 'excluded_by_robots', reason: 'robots.txt disallows this URL for SvcBot' };
  if (o.includes('noindex') || o.includes('unavailable_after'))
    return { outcome: 'excluded_by_noindex', reason: 'the page asks not to be indexed (noindex)' };
  if (o === 'gone' || o.startsWith('gone') || o.includes('not_found') || status === 404 || status === 410) {
    return { outcome: 'not_found', reason: `the server answered ${status ?? 'not found'}` };
  }
  if (doc && doc.status === 'indexed') {
    if (doc.firstSeen !== null && doc.firstSeen >= queuedAt) return { outcome: 'indexed' };
    if (doc.lastChanged !== null && doc.lastChanged >= queuedAt) return { outcome: 'updated' };
    return { outcome: 'unchanged' };
  }
  if (o.startsWith('unchanged') || status === 304) return { outcome: 'unchanged' };
  if (o === 'redirected')
    return { outcome: 'rejected', reason: 'the URL redirects; the crawler follows the redirect and indexes the target instead' };
  if (doc && (doc.status === 'excluded' || doc.status === 'removed' || doc.status === 'gone')) {
    return { outcome: 'rejected', reason: `not indexed: ${doc.reason ?? doc.status}` };
  }
  return { outcome: 'rejected', reason: `not indexed: ${row.lastOutcome ?? 'no indexable content'}` };
}

/**
 * Drives request status transitions. `tick()` does one pass (tests call it directly); `start()` runs ticks on an
 * interval until `stop()`.
 */
export class RequestProcessor {
  readonly #o: RequestProcessorOptions;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;

  constructor(opts: RequestProcessorOptions) {
    this.#o = opts;
  }

  /** One pass: admit received requests, follow queued / in-progress ones, run removals. */
  async tick(): Promise<void> {
    const { requests } = this.#o;
    const batch = this.#o.batch ?? 50;
    const now = (this.#o.now ?? Date.now)();
    for (const r of await requests.listByStatus('received', batch)) {
      await this.#guard(r, async () => (r.type === 'removal' ? this.#removal(r) : this.#admit(r)));
    }
    for (const r of [...(await requests.listByStatus('queued', batch)), ...(await requests.listByStatus('in_progress', batch))]) {
      await this.#guard(r, async () => {
        if (r.type !== 'removal') await this.#follow(r);
        // A removal back in the queue (its verification fetch had to wait) is tried again.
        else if (r.status === 'queued') await this.#removal(r);
        else if (now - Date.parse(r.updatedAt) > (this.#o.staleMs ?? 600_000)) {
          await this.#move(r.id, 'queued', { reason: 'verification interrupted; tried again' });
        }
      });
    }
  }

  /**
   * One request's failure (e.g. another process moved it first, so the transition is refused) must not stop the
   * others: it is logged and the request is looked at again on the next tick.
   */
  async #guard(r: UrlRequest, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.#o.log?.warn({ err: e, request: r.id }, 'request processing step failed');
    }
  }

  /** Runs ticks every `intervalMs` (one at a time) until stop(). */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.tick()
        .catch((e: unknown) => this.#o.log?.warn({ err: e }, 'request processor tick failed'))
        .finally(() => (this.#running = null));
    }, this.#o.intervalMs ?? 1000);
    this.#timer.unref();
  }

  /** Stops the loop and waits for a running tick. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** One transition, stamped with this processor's clock. */
  #move(id: string, to: RequestStatus, detail: { outcome?: RequestOutcome; reason?: string } = {}): Promise<UrlRequest> {
    return this.#o.requests.transition(id, to, detail, new Date((this.#o.now ?? Date.now)()));
  }

  async #admit(r: UrlRequest): Promise<void> {
    const res = await this.#o.crawler.frontier.enqueue(r.url, {
      priority: priorityFor(r.type),
      reason: `request:${r.type}`,
      requestId: r.id,
      // Recrawl and correction make an already crawled URL due now; discovery of a known URL only raises priority
      // (a dead-lettered one is revived).
      refresh: r.type !== 'discovery',
      // A submitted URL brings its own site into the crawl, not the open web: links found under it stay on its host.
      scope: [hostOf(r.url)],
    });
    if (res === null) {
      await this.#move(r.id, 'completed', { outcome: 'rejected', reason: 'the crawler does not accept this URL' });
      return;
    }
    await this.#move(r.id, 'queued');
    if (r.type === 'discovery' && !res.created && (res.state === 'done' || res.state === 'dead')) {
      // Already known and crawled: discovery has nothing left to do; the outcome is what the last crawl found.
      const row = await this.#o.crawler.frontier.get(r.url);
      if (row) {
        const doc = await this.#o.documents.byUrl(r.url);
        const out = outcomeFromCrawl(row, doc, r.receivedAt);
        await this.#move(r.id, 'completed', {
          outcome: out.outcome,
          reason: `already known to the crawler${out.reason ? `; ${out.reason}` : ''}`,
        });
      }
    }
  }

  /** Reads the frontier row of a queued / in-progress request and moves the request on. */
  async #follow(r: UrlRequest): Promise<void> {
    const { documents, crawler } = this.#o;
    const row = await crawler.frontier.get(r.url);
    if (!row) return;
    const queuedAt = r.history.find((h) => h.status === 'queued')?.at ?? r.receivedAt;
    const queuedMs = Date.parse(queuedAt);
    if (row.state === 'leased') {
      if (r.status === 'queued') await this.#move(r.id, 'in_progress');
      return;
    }
    if (row.state === 'dead') {
      await this.#move(r.id, 'failed', {
        reason: `the crawler gave up on this URL: ${row.deadReason ?? row.lastError ?? 'repeated failures'}`,
      });
      return;
    }
    if (row.state === 'retrying') {
      // Waiting for back-off: the attempt is over, the request waits in the queue again.
      if (r.status === 'in_progress') await this.#move(r.id, 'queued');
      return;
    }
    if (row.state === 'done') {
      const fetched = await documents.byUrl(r.url);
      const fetchedAt = fetched?.lastFetched ? Date.parse(fetched.lastFetched) : NaN;
      // Completed only by a fetch that happened after the request was queued (a recrawl must be a new fetch).
      // URLs the registry never saw (refused before allocation) count as processed once the frontier completed them.
      const processedAfter = fetched ? Number.isFinite(fetchedAt) && fetchedAt >= queuedMs : row.completions > 0;
      if (!processedAfter) return;
      if (r.status === 'queued') await this.#move(r.id, 'in_progress');
      const out = outcomeFromCrawl(row, fetched, queuedAt);
      await this.#move(r.id, 'completed', out);
    }
  }

  async #removal(r: UrlRequest): Promise<void> {
    const { crawler } = this.#o;
    r = await this.#move(r.id, 'in_progress');
    let res: ProcessNowResult;
    try {
      res = await crawler.processNow(r.url, { reason: 'request:removal', requestId: r.id });
    } catch (e) {
      await this.#move(r.id, 'failed', { reason: `the verification fetch failed: ${(e as Error).message}` });
      return;
    }
    const o = res.outcome.toLowerCase();
    if (res.status === 404 || res.status === 410 || o === 'gone' || o.startsWith('gone')) {
      await this.#move(r.id, 'completed', {
        outcome: 'removed',
        reason: `a fresh fetch answered ${res.status ?? 'gone'}; this URL was removed from the index`,
      });
    } else if (res.noindex === true || o.includes('noindex')) {
      await this.#move(r.id, 'completed', {
        outcome: 'removed',
        reason: 'a fresh fetch shows noindex; this URL was removed from the index',
      });
    } else if (o.includes('robots')) {
      await this.#move(r.id, 'completed', {
        outcome: 'rejected',
        reason:
          'robots.txt does not let SvcBot fetch this URL, so its removal cannot be verified; robots rules already keep it from being crawled again',
      });
    } else if (o.startsWith('retry') && r.attempts < MAX_REMOVAL_ATTEMPTS) {
      // The host asked to wait (429/503, busy): keep the request and verify on a later tick, under the same back-off.
      await this.#move(r.id, 'queued', { reason: `verification postponed (${res.outcome})` });
    } else if (o.startsWith('error') || o.startsWith('dead') || o.startsWith('retry')) {
      await this.#move(r.id, 'failed', { reason: `the verification fetch failed (${res.outcome}); submit again later` });
    } else {
      await this.#move(r.id, 'completed', {
        outcome: 'rejected',
        reason: `the page is live (HTTP ${res.status ?? '?'}, indexable): exact removal needs a fresh fetch that shows 404, 410 or noindex`,
      });
    }
  }
}
