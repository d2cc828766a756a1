/**
 * The crawler's frontier policy (normalisation, priorities, per-host cap, revival, back-off with jitter, adaptive
 * recrawl) over a FrontierRepo that keeps the rows. Every method is one repository call, so the same crawler runs
 * alone on SQLite or as one of many workers on PostgreSQL.
 */
import type { ClaimedItem, FrontierRecord, FrontierRepo, FrontierState } from '../state/repos/types.js';
import {
  PRIORITY,
  type CompleteOptions,
  type CrawlScope,
  type EnqueueOptions,
  type EnqueueResult,
  type FailOptions,
  type FrontierOptions,
  type HostQueueCounts,
} from './frontier.js';
import { hostOf, normalizeUrl } from './url.js';

/** An item handed to the pipeline: a claimed row of the repository. */
export type CrawlItem = ClaimedItem;

export class CrawlFrontier {
  readonly #repo: FrontierRepo;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #o: Required<Omit<FrontierOptions, 'now' | 'random'>>;
  /** Names this process's leases. */
  readonly owner: string;

  constructor(repo: FrontierRepo, opts: FrontierOptions & { owner?: string } = {}) {
    this.#repo = repo;
    this.#now = opts.now ?? Date.now;
    this.#random = opts.random ?? Math.random;
    this.owner = opts.owner ?? `crawler-${process.pid}`;
    this.#o = {
      leaseMs: opts.leaseMs ?? 120_000,
      maxAttempts: opts.maxAttempts ?? 5,
      retryBaseMs: opts.retryBaseMs ?? 30_000,
      retryMaxMs: opts.retryMaxMs ?? 6 * 3600_000,
      recrawlInitialMs: opts.recrawlInitialMs ?? 24 * 3600_000,
      recrawlMinMs: opts.recrawlMinMs ?? 3600_000,
      recrawlMaxMs: opts.recrawlMaxMs ?? 30 * 24 * 3600_000,
      maxPerHost: opts.maxPerHost ?? 100_000,
    };
  }

  /** The repository underneath (claims, politeness, diagnostics). */
  get repo(): FrontierRepo {
    return this.#repo;
  }

  /** How long a lease lasts (ms) unless renewed. */
  get leaseMs(): number {
    return this.#o.leaseMs;
  }

  /**
   * Admits a URL (normalised first; not crawlable → null). Idempotent: a known URL keeps its row, its priority is
   * raised if the new one is higher; `refresh` makes it due now; a seed or submission revives a dead-lettered one.
   * Discovered URLs beyond the per-host cap are refused (null).
   */
  async enqueue(url: string, opts: EnqueueOptions): Promise<EnqueueResult | null> {
    const norm = normalizeUrl(url);
    if (norm === null) return null;
    const priority = typeof opts.priority === 'number' ? opts.priority : PRIORITY[opts.priority ?? 'discovered'];
    const now = this.#now();
    const r = await this.#repo.admit(
      {
        url: norm,
        host: hostOf(norm),
        reason: opts.reason,
        priority,
        kind: opts.kind ?? 'page',
        at: opts.notBefore ?? now,
        depth: opts.depth ?? 0,
        requestId: opts.requestId ?? null,
        scope: opts.scope ?? null,
        ...(opts.refresh ? { refresh: true } : {}),
        ...(opts.rescope ? { rescope: true } : {}),
        // A seed given again or a URL submitted again revives a dead-lettered entry (say it died because loopback was
        // not allowed then); a link found again never does, so traps stay dead.
        ...(priority >= PRIORITY.submitted ? { reviveDead: true } : {}),
        ...(priority <= PRIORITY.discovered ? { maxPerHost: this.#o.maxPerHost } : {}),
      },
      now,
    );
    return r === null ? null : { id: r.id, created: r.added, state: r.state };
  }

  /** Leases one given URL now unless a live lease holds it (processNow); null when unknown or busy. */
  async claimUrl(url: string): Promise<CrawlItem | null> {
    const norm = normalizeUrl(url);
    if (norm === null) return null;
    return this.#repo.claimUrl(norm, { owner: this.owner, leaseMs: this.#o.leaseMs, now: this.#now() });
  }

  /** Extends a lease (long fetches); LeaseLostError when it is no longer held. */
  async renew(item: CrawlItem): Promise<void> {
    await this.#repo.extend(item, this.#o.leaseMs, this.#now());
  }

  /**
   * Completes an item: validators and outcome stored, the completion counted, the recrawl scheduled at an interval
   * that halves when the page changed and grows by half when it did not (bounded).
   */
  async complete(item: CrawlItem, c: CompleteOptions): Promise<void> {
    const now = this.#now();
    const prev = item.recrawlMs ?? this.#o.recrawlInitialMs;
    let interval = prev;
    if (item.fetchedBefore && c.changed === true) interval = Math.max(this.#o.recrawlMinMs, Math.round(prev / 2));
    else if (item.fetchedBefore && c.changed === false) interval = Math.min(this.#o.recrawlMaxMs, Math.round(prev * 1.5));
    const recrawl = c.recrawlInMs === undefined ? interval : c.recrawlInMs;
    await this.#repo.complete(item, {
      recrawlAt: recrawl === null ? Number.MAX_SAFE_INTEGER : Math.min(now + recrawl, c.recrawlBy ?? Number.MAX_SAFE_INTEGER),
      status: c.status ?? null,
      outcome: c.outcome,
      etag: c.etag ?? null,
      lastModified: c.lastModified ?? null,
      recrawlMs: recrawl === null ? null : interval,
      changed: c.changed ?? null,
      // A crawled page waits for its recrawl at the lowest priority; sitemaps and llms.txt keep theirs.
      priority: item.kind === 'page' ? PRIORITY.recrawl : null,
      now,
    });
  }

  /** Records a failure: retry later with exponential backoff + jitter, or dead-letter after maxAttempts. */
  async fail(item: CrawlItem, f: FailOptions): Promise<{ state: 'retrying' | 'dead'; nextAt: number | null }> {
    const now = this.#now();
    const attempts = item.attempts + 1;
    if (!f.retryable || attempts >= this.#o.maxAttempts) {
      const deadReason = f.retryable ? `${f.error} (after ${attempts} attempts)` : f.error;
      await this.#repo.fail(item, { error: f.error, retryAt: null, deadReason, status: f.status ?? null, now });
      return { state: 'dead', nextAt: null };
    }
    const nextAt = now + Math.max(this.backoffMs(attempts), f.retryAfterMs ?? 0);
    await this.#repo.fail(item, { error: f.error, retryAt: nextAt, status: f.status ?? null, now });
    return { state: 'retrying', nextAt };
  }

  /** Backoff before retry number `attempt` (1-based): base·2^(attempt−1), capped, times a jitter in [0.5, 1.5). */
  backoffMs(attempt: number): number {
    const raw = Math.min(this.#o.retryMaxMs, this.#o.retryBaseMs * 2 ** Math.max(0, attempt - 1));
    return Math.round(raw * (0.5 + this.#random()));
  }

  /** Gives an item back untouched (shutdown), due again at `at` (default now). */
  async release(item: CrawlItem, at?: number): Promise<void> {
    const now = this.#now();
    await this.#repo.release(item, at ?? now, now);
  }

  /** Marks a URL as fetched through another item (the target of a redirect), creating it if needed. */
  async markFetched(url: string, c: CompleteOptions & { reason: string; scope?: CrawlScope }): Promise<void> {
    const norm = normalizeUrl(url);
    if (norm === null) return;
    await this.#repo.markFetched(norm, hostOf(norm), {
      reason: c.reason,
      outcome: c.outcome,
      status: c.status ?? null,
      etag: c.etag ?? null,
      lastModified: c.lastModified ?? null,
      scope: c.scope ?? null,
      recrawlMs: this.#o.recrawlInitialMs,
      priority: PRIORITY.recrawl,
      now: this.#now(),
    });
  }

  /** The row of a URL (normalised first), or null. */
  async get(url: string): Promise<FrontierRecord | null> {
    return this.#repo.get(normalizeUrl(url) ?? url);
  }

  async counts(): Promise<HostQueueCounts> {
    return this.#repo.counts() as Promise<Record<FrontierState, number>>;
  }

  /** Counts by state for one host. */
  async countsForHost(host: string): Promise<HostQueueCounts> {
    return this.#repo.counts({ host });
  }

  /** Items not finished: queued, leased or retrying. */
  pending(): Promise<number> {
    return this.#repo.unfinished();
  }

  deadLetters(opts: { host?: string; limit?: number } = {}): Promise<FrontierRecord[]> {
    return this.#repo.deadLetters(opts);
  }

  pendingItems(limit = 10): Promise<FrontierRecord[]> {
    return this.#repo.pendingItems(limit);
  }
}
