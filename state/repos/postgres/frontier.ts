/**
 * The crawl frontier on PostgreSQL: claims lock the URL row and its host's politeness row together (FOR UPDATE SKIP
 * LOCKED), leases are guarded by their owner token; admission and bookkeeping live in crawl.ts.
 */
import { randomUUID } from 'node:crypto';
import { FRONTIER_STATES, toClaimed, type FrontierRow } from '../rows.js';
import {
  LeaseLostError,
  type ClaimedItem,
  type CompleteFields,
  type FrontierEntry,
  type FrontierRepo,
  type FrontierState,
} from '../types.js';
import { pgComplete, PgCrawlFrontier, pgFail, pgInsertEntry } from './crawl.js';
import { NO_HOST_CAP } from '../crawl-sql.js';
import type { Db } from './db.js';
import { type Queryable } from './db.js';

export class PgFrontier implements FrontierRepo {
  constructor(
    readonly pool: Db,
    readonly defaultGapMs: number,
  ) {}

  async enqueue(e: Parameters<FrontierRepo['enqueue']>[0], now: number = Date.now()) {
    if (e.refresh || e.expedite || e.rescope || e.reviveDead) {
      const r = await this.admit({ ...e, maxPerHost: undefined }, now);
      return { id: r!.id, added: r!.added };
    }
    return this.pool.transaction(async (c) => {
      const ins = await pgInsertEntry(c, e, this.defaultGapMs, NO_HOST_CAP, now);
      if (ins !== undefined && ins !== 'capped') return { id: ins.id, added: true };
      const prior = await c.query<{ id: number }>('SELECT id FROM frontier WHERE url = $1', [e.url]);
      return { id: (prior.rows[0] as { id: number }).id, added: false };
    });
  }

  async claim(opts: { owner: string; leaseMs: number; now?: number }) {
    const now = opts.now ?? Date.now();
    const token = `${opts.owner}:${randomUUID()}`;
    // One statement: URL and host rows are locked together and rows other workers hold are skipped; the re-check on the
    // locked host row sees any newer claim, so two workers never start on one host within its gap. Expired leases are
    // simply due (no process-id checks).
    const r = await this.pool.query<FrontierRow>(
      `WITH picked AS (
         SELECT f.id, f.host, h.gap_ms FROM frontier f JOIN host_politeness h ON h.host = f.host
         WHERE f.state <> 'dead' AND f.next_at <= $1 AND h.next_fetch_at <= $1
         ORDER BY f.priority DESC, f.next_at, f.id
         LIMIT 1
         FOR UPDATE OF f, h SKIP LOCKED
       ), host AS (
         UPDATE host_politeness h SET next_fetch_at = $1 + p.gap_ms, holder = $2 FROM picked p WHERE h.host = p.host
       )
       UPDATE frontier f SET state = 'leased', lease_owner = $2, lease_until = $3, next_at = $3, updated_at = $1
       FROM picked p WHERE f.id = p.id
       RETURNING f.id, f.url, f.host, f.kind, f.priority, f.attempts, f.depth, f.reason, f.request_id, f.etag, f.last_modified,
                 f.fetched_at, f.scope, f.recrawl_ms, f.lease_owner, f.lease_until`,
      [now, token, now + opts.leaseMs],
    );
    const row = r.rows[0];
    return row ? toClaimed(row) : null;
  }

  async nextClaimAt(opts: { unfinished?: boolean } = {}) {
    // Per host: its gap's end or its earliest live row, whichever is later (one step along frontier_host_next_at);
    // the earliest of those. A host without a live row has no lateral row and drops out.
    const states = opts.unfinished ? `g.state IN ('queued', 'leased', 'retrying')` : `g.state <> 'dead'`;
    const r = await this.pool.query<{ t: number | null }>(
      `SELECT min(greatest(h.next_fetch_at, n.next_at)) AS t FROM host_politeness h
       CROSS JOIN LATERAL (SELECT g.next_at FROM frontier g WHERE g.host = h.host AND ${states} AND g.next_at < $1
                           ORDER BY g.next_at LIMIT 1) n`,
      [Number.MAX_SAFE_INTEGER],
    );
    const t = r.rows[0]?.t;
    return t === null || t === undefined ? null : Number(t);
  }

  /** Runs `UPDATE frontier SET … WHERE id AND lease held`; `sets` uses $1…$n, the guard takes the next two. */
  async #guarded(q: Queryable, sets: string, item: ClaimedItem, args: unknown[]): Promise<void> {
    const n = args.length;
    const r = await q.query(`UPDATE frontier SET ${sets} WHERE id = $${n + 1} AND state = 'leased' AND lease_owner = $${n + 2}`, [
      ...args,
      item.id,
      item.lease,
    ]);
    if (r.rowCount !== 1) throw new LeaseLostError(`lease on frontier item ${item.id} is no longer held`);
  }

  async extend(item: ClaimedItem, leaseMs: number, now: number = Date.now()) {
    await this.#guarded(this.pool, 'lease_until = $1, next_at = $1, updated_at = $2', item, [now + leaseMs, now]);
    return { ...item, leaseUntil: now + leaseMs };
  }

  async complete(item: ClaimedItem, opts: CompleteFields) {
    return pgComplete(this.pool, item, opts);
  }

  async fail(item: ClaimedItem, opts: Parameters<FrontierRepo['fail']>[1]) {
    return pgFail(this.pool, item, opts);
  }

  // The crawler's admission and bookkeeping (crawl.ts, rules shared with SQLite in ../crawl-sql.ts).
  #crawlOps: PgCrawlFrontier | undefined;
  get #crawl(): PgCrawlFrontier {
    return (this.#crawlOps ??= new PgCrawlFrontier(this.pool, this.defaultGapMs));
  }
  admit(e: FrontierEntry, now?: number) {
    return this.#crawl.admit(e, now);
  }
  claimUrl(url: string, opts: { owner: string; leaseMs: number; now?: number }) {
    return this.#crawl.claimUrl(url, opts);
  }
  markFetched(url: string, host: string, c: Parameters<FrontierRepo['markFetched']>[2]) {
    return this.#crawl.markFetched(url, host, c);
  }
  get(url: string) {
    return this.#crawl.get(url);
  }
  deadLetters(opts?: { host?: string; limit?: number }) {
    return this.#crawl.deadLetters(opts);
  }
  pendingItems(limit?: number) {
    return this.#crawl.pendingItems(limit);
  }

  async release(item: ClaimedItem, at?: number, now: number = Date.now()) {
    await this.#guarded(
      this.pool,
      `state = CASE WHEN attempts > 0 THEN 'retrying' ELSE 'queued' END, lease_owner = NULL, lease_until = NULL, next_at = $1,
       updated_at = $2`,
      item,
      [at ?? now, now],
    );
  }

  async counts(opts: { host?: string } = {}) {
    const out = Object.fromEntries(FRONTIER_STATES.map((s) => [s, 0])) as Record<FrontierState, number>;
    const rows = (
      opts.host === undefined
        ? await this.pool.query<{ state: FrontierState; n: number }>('SELECT state, count(*) AS n FROM frontier GROUP BY state')
        : await this.pool.query<{ state: FrontierState; n: number }>(
            'SELECT state, count(*) AS n FROM frontier WHERE host = $1 GROUP BY state',
            [opts.host.toLowerCase()],
          )
    ).rows;
    for (const r of rows) out[r.state] = r.n;
    return out;
  }

  async unfinished() {
    const r = await this.pool.query<{ n: number }>(`SELECT count(*) AS n FROM frontier WHERE state IN ('queued', 'leased', 'retrying')`);
    return r.rows[0]?.n ?? 0;
  }
}
