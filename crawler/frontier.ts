/**
 * The frontier's vocabulary (named priorities, scope, enqueue / complete / fail options) and the synchronous SQLite
 * `Frontier` class. The running crawler no longer uses the class: it works through crawler/crawl-frontier.ts over
 * the state repositories (SQLite file or PostgreSQL), which applies the same rules; the class stays as the reference
 * its unit tests pin down (test/crawler/frontier.test.ts) and for the request processor's unit test.
 *
 * The durable crawl frontier (SQLite, table `frontier`). One row per normalised URL, so enqueueing is idempotent
 * and deduplicated. Work is handed out under a lease: a worker that dies (kill -9) never completes its item, the
 * lease lapses by time (no process-id checks: the holder may be on another machine) and the item is handed out
 * again; completion is one
 * transaction guarded by the lease token, so every URL is completed exactly once per due date.
 *
 * Every write transaction is BEGIN IMMEDIATE: several crawler processes share the file (issue 10, roles), and a
 * deferred transaction that reads then writes fails with SQLITE_BUSY_SNAPSHOT instead of waiting for the lock.
 *
 * Priorities: submitted (URL requests) > sitemap > discovered links > recrawls of known pages.
 * Failures retry with exponential backoff and jitter, then go to the dead letter with the reason.
 * Completed pages come back for recrawl at an interval that adapts to how often they were seen changing; the
 * stored ETag / Last-Modified make that recrawl a conditional GET.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { StateDb } from '../state/db.js';
import { hostOf, normalizeUrl } from './url.js';

/** Higher is served first. */
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

/** Canonical stored form of a scope (null = open web). */
function scopeText(scope: CrawlScope | undefined): string | null {
  if (scope === null || scope === undefined) return null;
  return JSON.stringify([...new Set(scope.map((h) => h.toLowerCase()))].sort());
}

function parseScope(text: string | null): CrawlScope {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter((h): h is string => typeof h === 'string') : null;
  } catch {
    return null;
  }
}

/** What a frontier row is. */
export type FrontierKind = 'page' | 'sitemap' | 'llms';
export type FrontierState = 'queued' | 'leased' | 'retrying' | 'done' | 'dead';

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

/** An item handed to a worker. */
export interface FrontierItem {
  readonly id: number;
  readonly url: string;
  readonly host: string;
  readonly kind: FrontierKind;
  readonly priority: number;
  readonly reason: string;
  readonly requestId: string | null;
  readonly attempts: number;
  readonly etag: string | null;
  readonly lastModified: string | null;
  /** Was this URL completed before (so a conditional GET makes sense)? */
  readonly fetchedBefore: boolean;
  readonly depth: number;
  /** Where links found under this item may lead (null: the open web). */
  readonly scope: CrawlScope;
  /** The lease token: pass it back to complete() / fail() / release(). */
  readonly lease: string;
}

/** A row as the site tool and tests see it. */
export interface FrontierRow {
  readonly id: number;
  readonly url: string;
  readonly host: string;
  readonly kind: FrontierKind;
  readonly state: FrontierState;
  readonly priority: number;
  readonly reason: string;
  readonly requestId: string | null;
  readonly attempts: number;
  readonly nextAt: number;
  readonly lastError: string | null;
  readonly deadReason: string | null;
  readonly etag: string | null;
  readonly lastModified: string | null;
  readonly lastStatus: number | null;
  readonly lastOutcome: string | null;
  readonly recrawlMs: number | null;
  readonly completions: number;
  readonly scope: CrawlScope;
}

/** Options of {@link Frontier.enqueue}. */
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

interface RawRow {
  id: number;
  url: string;
  host: string;
  kind: FrontierKind;
  priority: number;
  reason: string;
  request_id: string | null;
  state: FrontierState;
  next_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  attempts: number;
  last_error: string | null;
  dead_reason: string | null;
  etag: string | null;
  last_modified: string | null;
  last_status: number | null;
  last_outcome: string | null;
  fetched_at: number | null;
  changed_at: number | null;
  recrawl_ms: number | null;
  completions: number;
  depth: number;
  scope: string | null;
}

const toRow = (r: RawRow): FrontierRow => ({
  id: r.id,
  url: r.url,
  host: r.host,
  kind: r.kind,
  state: r.state,
  priority: r.priority,
  reason: r.reason,
  requestId: r.request_id,
  attempts: r.attempts,
  nextAt: r.next_at,
  lastError: r.last_error,
  deadReason: r.dead_reason,
  etag: r.etag,
  lastModified: r.last_modified,
  lastStatus: r.last_status,
  lastOutcome: r.last_outcome,
  recrawlMs: r.recrawl_ms,
  completions: r.completions,
  scope: parseScope(r.scope),
});

/** Raised when an operation names a lease that is no longer held (it lapsed and the item went to someone else). */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}

/**
 * Due = next_at has passed. A leased row's next_at is its lease expiry (a crashed worker's item comes back by
 * itself); dead rows and done rows without recrawl carry MAX_SAFE_INTEGER.
 */
const ELIGIBLE = `next_at <= @now`;

/** The frontier. One instance per process; several processes may share the file (leases keep them apart). */
export class Frontier {
  readonly #db: StateDb;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #o: Required<Omit<FrontierOptions, 'now' | 'random'>>;
  /** Identifies this process's leases. */
  readonly owner = randomUUID();
  readonly #hostRows = new Map<string, number>();
  /** Prepared statements, by SQL text (preparing costs more than running these small statements). */
  readonly #stmts = new Map<string, Database.Statement<unknown[], unknown>>();

  #q<P extends unknown[] | object = unknown[], R = unknown>(sql: string): Database.Statement<P extends unknown[] ? P : [P], R> {
    let st = this.#stmts.get(sql);
    if (!st) {
      st = this.#db.prepare<unknown[], unknown>(sql);
      this.#stmts.set(sql, st);
    }
    return st as unknown as Database.Statement<P extends unknown[] ? P : [P], R>;
  }

  constructor(db: StateDb, opts: FrontierOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
    this.#random = opts.random ?? Math.random;
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

  /**
   * Admits a URL (normalised first; null result → not crawlable, returns null). Idempotent: a known URL keeps
   * its row; its priority is raised if the new one is higher, and `refresh` makes a done/dead URL due now.
   */
  enqueue(url: string, opts: EnqueueOptions): EnqueueResult | null {
    const norm = normalizeUrl(url);
    if (norm === null) return null;
    const host = hostOf(norm);
    const priority = typeof opts.priority === 'number' ? opts.priority : PRIORITY[opts.priority ?? 'discovered'];
    const now = this.#now();
    const notBefore = opts.notBefore ?? now;
    return this.#db
      .transaction((): EnqueueResult | null => {
        const cur = this.#q<[string], RawRow>('SELECT * FROM frontier WHERE url = ?').get(norm);
        if (!cur) {
          // Rows per host, counted once then kept up to date here (a soft cap: other processes' inserts are not seen).
          let n = this.#hostRows.get(host);
          if (n === undefined) {
            n = this.#q<[string], { n: number }>('SELECT count(*) AS n FROM frontier WHERE host = ?').get(host)?.n ?? 0;
            this.#hostRows.set(host, n);
          }
          if (priority <= PRIORITY.discovered && n >= this.#o.maxPerHost) return null;
          this.#hostRows.set(host, n + 1);
          const info = this.#q(
            `INSERT INTO frontier (url, host, kind, priority, reason, request_id, state, next_at, depth, scope, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?)`,
          ).run(
            norm,
            host,
            opts.kind ?? 'page',
            priority,
            opts.reason,
            opts.requestId ?? null,
            notBefore,
            opts.depth ?? 0,
            scopeText(opts.scope),
            now,
            now,
          );
          return { id: Number(info.lastInsertRowid), created: true, state: 'queued' };
        }
        let state = cur.state;
        let refresh = opts.refresh === true;
        if (opts.rescope) {
          const next = scopeText(opts.scope);
          if (next !== cur.scope) {
            if (cur.scope !== null) this.#q('UPDATE frontier SET scope = ? WHERE scope = ?').run(next, cur.scope);
            this.#q('UPDATE frontier SET scope = ? WHERE id = ?').run(next, cur.id);
            if (cur.state === 'done') refresh = true;
          }
        }
        // A seed given again or a URL submitted again revives a dead-lettered entry (say it died because loopback was
        // not allowed then); a link found again never does, so traps stay dead.
        if (cur.state === 'dead' && priority >= PRIORITY.submitted) refresh = true;
        if (refresh && (cur.state === 'done' || cur.state === 'dead' || cur.state === 'retrying' || cur.state === 'queued')) {
          this.#q(
            `UPDATE frontier SET state = 'queued', next_at = ?, attempts = 0, dead_reason = NULL, priority = max(priority, ?),
               reason = ?, request_id = coalesce(?, request_id), updated_at = ? WHERE id = ?`,
          ).run(
            Math.min(notBefore, cur.state === 'queued' ? cur.next_at : notBefore),
            priority,
            opts.reason,
            opts.requestId ?? null,
            now,
            cur.id,
          );
          state = 'queued';
        } else if (priority > cur.priority) {
          this.#q('UPDATE frontier SET priority = ?, request_id = coalesce(?, request_id), updated_at = ? WHERE id = ?').run(
            priority,
            opts.requestId ?? null,
            now,
            cur.id,
          );
        }
        return { id: cur.id, created: false, state };
      })
      .immediate();
  }

  /** Hosts that have at least one item due now, with the highest priority due there (for fair host rotation). */
  readyHosts(): { host: string; priority: number }[] {
    return this.#q<{ now: number }, { host: string; priority: number }>(
      `SELECT host, max(priority) AS priority FROM frontier WHERE ${ELIGIBLE} GROUP BY host ORDER BY priority DESC, host`,
    ).all({ now: this.#now() });
  }

  /**
   * Earliest instant (ms) after now at which an item becomes due (a back-off ends, a lease lapses, a recrawl
   * comes up), or null when there is none. Items already due are not counted: readyHosts() covers them.
   */
  nextDueAt(): number | null {
    const t =
      this.#q<{ now: number }, { t: number | null }>(`SELECT min(next_at) AS t FROM frontier WHERE next_at > @now`).get({
        now: this.#now(),
      })?.t ?? null;
    return t === null || t >= Number.MAX_SAFE_INTEGER ? null : t;
  }

  /** Hands out the best due item of a host (highest priority, then oldest due), leased to this process. */
  claim(host: string): FrontierItem | null {
    const now = this.#now();
    return this.#db
      .transaction((): FrontierItem | null => {
        const r = this.#q<{ now: number; host: string }, RawRow>(
          `SELECT * FROM frontier WHERE host = @host AND (${ELIGIBLE}) ORDER BY priority DESC, next_at, id LIMIT 1`,
        ).get({ now, host });
        return r ? this.#lease(r, now) : null;
      })
      .immediate();
  }

  /** Leases one given URL now if it is not leased by someone else (processNow); null when unknown or busy. */
  claimUrl(url: string): FrontierItem | null {
    const norm = normalizeUrl(url);
    if (norm === null) return null;
    const now = this.#now();
    return this.#db
      .transaction((): FrontierItem | null => {
        const r = this.#q<[string], RawRow>('SELECT * FROM frontier WHERE url = ?').get(norm);
        if (!r) return null;
        if (r.state === 'leased' && (r.lease_until ?? 0) > now) return null;
        return this.#lease(r, now);
      })
      .immediate();
  }

  #lease(r: RawRow, now: number): FrontierItem {
    const lease = `${this.owner}:${randomUUID()}`;
    this.#q(`UPDATE frontier SET state = 'leased', lease_owner = ?, lease_until = ?, next_at = ?, updated_at = ? WHERE id = ?`).run(
      lease,
      now + this.#o.leaseMs,
      now + this.#o.leaseMs,
      now,
      r.id,
    );
    return {
      id: r.id,
      url: r.url,
      host: r.host,
      kind: r.kind,
      priority: r.priority,
      reason: r.reason,
      requestId: r.request_id,
      attempts: r.attempts,
      etag: r.etag,
      lastModified: r.last_modified,
      fetchedBefore: r.fetched_at !== null,
      depth: r.depth,
      scope: parseScope(r.scope),
      lease,
    };
  }

  #held(id: number, lease: string): RawRow {
    const r = this.#q<[number], RawRow>('SELECT * FROM frontier WHERE id = ?').get(id);
    if (!r || r.state !== 'leased' || r.lease_owner !== lease) throw new LeaseLostError(`lease on frontier item ${id} is no longer held`);
    return r;
  }

  /** How long a lease lasts (ms) unless renewed. */
  get leaseMs(): number {
    return this.#o.leaseMs;
  }

  /** Extends a lease (long fetches). */
  renew(item: FrontierItem): void {
    const now = this.#now();
    this.#db
      .transaction(() => {
        this.#held(item.id, item.lease);
        this.#q('UPDATE frontier SET lease_until = ?, next_at = ? WHERE id = ?').run(now + this.#o.leaseMs, now + this.#o.leaseMs, item.id);
      })
      .immediate();
  }

  /**
   * Completes an item: stores validators and the outcome, counts the completion, and schedules the recrawl at an
   * interval that halves when the page changed and grows by half when it did not (bounded).
   */
  complete(item: FrontierItem, c: CompleteOptions): void {
    const now = this.#now();
    this.#db
      .transaction(() => {
        const r = this.#held(item.id, item.lease);
        const prev = r.recrawl_ms ?? this.#o.recrawlInitialMs;
        let interval = prev;
        if (r.fetched_at !== null && c.changed === true) interval = Math.max(this.#o.recrawlMinMs, Math.round(prev / 2));
        else if (r.fetched_at !== null && c.changed === false) interval = Math.min(this.#o.recrawlMaxMs, Math.round(prev * 1.5));
        const recrawl = c.recrawlInMs === undefined ? interval : c.recrawlInMs;
        this.#q(
          `UPDATE frontier SET state = 'done', lease_owner = NULL, lease_until = NULL, attempts = 0, last_error = NULL,
             next_at = ?, etag = ?, last_modified = ?, last_status = ?, last_outcome = ?, fetched_at = ?,
             changed_at = CASE WHEN ? = 1 THEN ? ELSE changed_at END, recrawl_ms = ?, completions = completions + 1,
             priority = CASE WHEN kind = 'page' THEN ? ELSE priority END, updated_at = ?
           WHERE id = ?`,
        ).run(
          recrawl === null ? Number.MAX_SAFE_INTEGER : Math.min(now + recrawl, c.recrawlBy ?? Number.MAX_SAFE_INTEGER),
          c.etag ?? null,
          c.lastModified ?? null,
          c.status ?? null,
          c.outcome,
          now,
          c.changed === true ? 1 : 0,
          now,
          recrawl === null ? null : interval,
          PRIORITY.recrawl,
          now,
          item.id,
        );
      })
      .immediate();
  }

  /** Records a failure: retry later with exponential backoff + jitter, or dead-letter after maxAttempts. */
  fail(item: FrontierItem, f: FailOptions): { state: 'retrying' | 'dead'; nextAt: number | null } {
    const now = this.#now();
    return this.#db
      .transaction(() => {
        const r = this.#held(item.id, item.lease);
        const attempts = r.attempts + 1;
        if (!f.retryable || attempts >= this.#o.maxAttempts) {
          const reason = f.retryable ? `${f.error} (after ${attempts} attempts)` : f.error;
          this.#q(
            `UPDATE frontier SET state = 'dead', lease_owner = NULL, lease_until = NULL, attempts = ?, last_error = ?,
               dead_reason = ?, last_status = ?, last_outcome = 'dead', next_at = ?, updated_at = ? WHERE id = ?`,
          ).run(attempts, f.error, reason, f.status ?? null, Number.MAX_SAFE_INTEGER, now, item.id);
          return { state: 'dead' as const, nextAt: null };
        }
        const delay = Math.max(this.backoffMs(attempts), f.retryAfterMs ?? 0);
        const nextAt = now + delay;
        this.#q(
          `UPDATE frontier SET state = 'retrying', lease_owner = NULL, lease_until = NULL, attempts = ?, last_error = ?,
             last_status = ?, next_at = ?, updated_at = ? WHERE id = ?`,
        ).run(attempts, f.error, f.status ?? null, nextAt, now, item.id);
        return { state: 'retrying' as const, nextAt };
      })
      .immediate();
  }

  /** Backoff before retry number `attempt` (1-based): base·2^(attempt−1), capped, times a jitter in [0.5, 1.5). */
  backoffMs(attempt: number): number {
    const raw = Math.min(this.#o.retryMaxMs, this.#o.retryBaseMs * 2 ** Math.max(0, attempt - 1));
    return Math.round(raw * (0.5 + this.#random()));
  }

  /** Gives an item back untouched (shutdown, or politeness said "not now"), due again at `at` (default now). */
  release(item: FrontierItem, at?: number): void {
    const now = this.#now();
    this.#db
      .transaction(() => {
        const r = this.#held(item.id, item.lease);
        const back: FrontierState = r.attempts > 0 ? 'retrying' : 'queued';
        this.#q('UPDATE frontier SET state = ?, lease_owner = NULL, lease_until = NULL, next_at = ?, updated_at = ? WHERE id = ?').run(
          back,
          at ?? now,
          now,
          item.id,
        );
      })
      .immediate();
  }

  /** Marks a URL as fetched through another item (the target of a redirect), creating it if needed. */
  markFetched(url: string, c: CompleteOptions & { reason: string; scope?: CrawlScope }): void {
    const norm = normalizeUrl(url);
    if (norm === null) return;
    const now = this.#now();
    this.#db
      .transaction(() => {
        const r = this.#q<[string], RawRow>('SELECT * FROM frontier WHERE url = ?').get(norm);
        if (r && r.state === 'leased') return; // someone is on it right now; let them finish
        const interval = r?.recrawl_ms ?? this.#o.recrawlInitialMs;
        if (!r) {
          this.#q(
            `INSERT INTO frontier (url, host, kind, priority, reason, state, next_at, etag, last_modified, last_status,
               last_outcome, fetched_at, changed_at, recrawl_ms, completions, scope, created_at, updated_at)
             VALUES (?, ?, 'page', ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
          ).run(
            norm,
            hostOf(norm),
            PRIORITY.recrawl,
            c.reason,
            now + interval,
            c.etag ?? null,
            c.lastModified ?? null,
            c.status ?? null,
            c.outcome,
            now,
            now,
            interval,
            scopeText(c.scope),
            now,
            now,
          );
        } else {
          this.#q(
            `UPDATE frontier SET state = 'done', next_at = ?, etag = ?, last_modified = ?, last_status = ?, last_outcome = ?,
               fetched_at = ?, attempts = 0, completions = completions + 1, priority = ?, updated_at = ? WHERE id = ?`,
          ).run(now + interval, c.etag ?? null, c.lastModified ?? null, c.status ?? null, c.outcome, now, PRIORITY.recrawl, now, r.id);
        }
      })
      .immediate();
  }

  get(url: string): FrontierRow | undefined {
    const norm = normalizeUrl(url) ?? url;
    const r = this.#q<[string], RawRow>('SELECT * FROM frontier WHERE url = ?').get(norm);
    return r ? toRow(r) : undefined;
  }

  /** Counts by state for one host. */
  countsForHost(host: string): HostQueueCounts {
    const out = { queued: 0, leased: 0, retrying: 0, done: 0, dead: 0 };
    for (const r of this.#q<[string], { state: FrontierState; n: number }>(
      'SELECT state, count(*) AS n FROM frontier WHERE host = ? GROUP BY state',
    ).all(host.toLowerCase()))
      out[r.state] = r.n;
    return out;
  }

  /** Counts by state over the whole frontier. */
  counts(): HostQueueCounts {
    const out = { queued: 0, leased: 0, retrying: 0, done: 0, dead: 0 };
    for (const r of this.#q<[], { state: FrontierState; n: number }>('SELECT state, count(*) AS n FROM frontier GROUP BY state').all())
      out[r.state] = r.n;
    return out;
  }

  /** Dead-lettered items (newest first), optionally for one host. */
  deadLetters(opts: { host?: string; limit?: number } = {}): FrontierRow[] {
    const limit = opts.limit ?? 100;
    const rows = opts.host
      ? this.#q<[string, number], RawRow>(`SELECT * FROM frontier WHERE state = 'dead' AND host = ? ORDER BY updated_at DESC LIMIT ?`).all(
          opts.host,
          limit,
        )
      : this.#q<[number], RawRow>(`SELECT * FROM frontier WHERE state = 'dead' ORDER BY updated_at DESC LIMIT ?`).all(limit);
    return rows.map(toRow);
  }

  /**
   * Earliest instant (ms) at which an unfinished item (queued, leased or retrying) is due, or null when none is
   * left: how long a run "until idle" would still have to wait.
   */
  nextPendingAt(): number | null {
    return (
      this.#q<[], { t: number | null }>(`SELECT min(next_at) AS t FROM frontier WHERE state IN ('queued', 'leased', 'retrying')`).get()
        ?.t ?? null
    );
  }

  /** Unfinished items (queued, leased or retrying), soonest due first: what a run leaves for later. */
  pendingItems(limit = 10): FrontierRow[] {
    return this.#q<[number], RawRow>(`SELECT * FROM frontier WHERE state IN ('queued', 'leased', 'retrying') ORDER BY next_at, id LIMIT ?`)
      .all(limit)
      .map(toRow);
  }

  /** Number of items not finished: queued, leased or retrying (done items waiting for recrawl do not count). */
  pending(): number {
    return this.#q<[], { n: number }>(`SELECT count(*) AS n FROM frontier WHERE state IN ('queued', 'leased', 'retrying')`).get()?.n ?? 0;
  }
}
