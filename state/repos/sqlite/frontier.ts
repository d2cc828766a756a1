/**
 * The crawl frontier on SQLite: every operation one synchronous transaction (BEGIN IMMEDIATE where it reads then
 * writes), running the frontier rules written once in ../crawl-sql.ts.
 */
import { randomUUID } from 'node:crypto';
import { stmt, type StateDb } from '../../db.js';
import { FRONTIER_STATES, toClaimed, type FrontierRow } from '../rows.js';
import {
  LeaseLostError,
  type AdmitResult,
  type ClaimedItem,
  type CompleteFields,
  type FrontierEntry,
  type FrontierRecord,
  type FrontierRepo,
  type FrontierState,
} from '../types.js';
import {
  fetchedInsertArgs,
  fetchedUpdateArgs,
  insertArgs,
  NO_HOST_CAP,
  planKnown,
  plansNothing,
  sqlite,
  SQL,
  toRecord,
  type RawFrontierRow,
} from '../crawl-sql.js';

export class SqliteFrontier implements FrontierRepo {
  readonly #claim;

  constructor(
    readonly db: StateDb,
    readonly defaultGapMs: number,
  ) {
    // Host by host: each host past its gap offers its best due row (partial index frontier_host_claim) and the best
    // is taken, so a claim costs the number of hosts, not of due rows (scanning due rows found nothing when all hosts
    // were in their gap). Every row has its host's politeness row.
    const pick = db.prepare<[number, number], FrontierRow & { gap_ms: number | null }>(
      `SELECT f.*, h.gap_ms FROM host_politeness h
       JOIN frontier f ON f.id = (SELECT g.id FROM frontier g WHERE g.host = h.host AND g.state <> 'dead' AND g.next_at <= ?
                                  ORDER BY g.priority DESC, g.next_at, g.id LIMIT 1)
       WHERE h.next_fetch_at <= ?
       ORDER BY f.priority DESC, f.next_at, f.id LIMIT 1`,
    );
    const hostNext = db.prepare<[string, number, number, string, number, string]>(
      `INSERT INTO host_politeness (host, gap_ms, next_fetch_at, holder) VALUES (?, ?, ?, ?)
       ON CONFLICT (host) DO UPDATE SET next_fetch_at = ?, holder = ?`,
    );
    const lease = db.prepare<[string, number, number, number, number]>(
      `UPDATE frontier SET state = 'leased', lease_owner = ?, lease_until = ?, next_at = ?, updated_at = ? WHERE id = ?`,
    );
    this.#claim = db.transaction((owner: string, leaseMs: number, now: number): ClaimedItem | null => {
      const r = pick.get(now, now);
      if (!r) return null;
      const gap = r.gap_ms ?? this.defaultGapMs;
      const token = `${owner}:${randomUUID()}`;
      hostNext.run(r.host, gap, now + gap, token, now + gap, token);
      lease.run(token, now + leaseMs, now + leaseMs, now, r.id);
      return toClaimed({ ...r, lease_owner: token, lease_until: now + leaseMs });
    });
  }

  async enqueue(e: Parameters<FrontierRepo['enqueue']>[0], now: number = Date.now()) {
    if (e.refresh || e.expedite || e.rescope || e.reviveDead) {
      const r = await this.admit({ ...e, maxPerHost: undefined }, now);
      return { id: r!.id, added: r!.added };
    }
    return this.db
      .transaction(() => {
        const row = this.#counted(e.host, NO_HOST_CAP, () => this.#get(SQL.insert, insertArgs(e, now)) as { id: number } | undefined);
        if (row !== undefined && row !== 'capped') return { id: row.id, added: true };
        return { id: (this.#get(SQL.byUrl, [e.url]) as RawFrontierRow).id, added: false };
      })
      .immediate();
  }

  async claim(opts: { owner: string; leaseMs: number; now?: number }) {
    return this.#claim.immediate(opts.owner, opts.leaseMs, opts.now ?? Date.now());
  }

  async nextClaimAt(opts: { unfinished?: boolean } = {}) {
    // Per host: its gap's end or its earliest live row, whichever is later (one step along frontier_host_next_at);
    // the earliest of those. Hosts without a live row give NULL, which min() leaves out.
    const states = opts.unfinished ? `g.state IN ('queued', 'leased', 'retrying')` : `g.state <> 'dead'`;
    const r = stmt(
      this.db,
      `SELECT min(max(h.next_fetch_at, (SELECT g.next_at FROM frontier g WHERE g.host = h.host AND ${states}
                                         AND g.next_at < ${Number.MAX_SAFE_INTEGER} ORDER BY g.next_at LIMIT 1))) AS t
       FROM host_politeness h`,
    ).get() as { t: number | null };
    return r.t;
  }

  #guarded(sql: string, item: ClaimedItem, ...args: unknown[]): void {
    const n = stmt(this.db, `${sql} WHERE id = ? AND state = 'leased' AND lease_owner = ?`).run(...args, item.id, item.lease).changes;
    if (n !== 1) throw new LeaseLostError(`lease on frontier item ${item.id} is no longer held`);
  }

  async extend(item: ClaimedItem, leaseMs: number, now: number = Date.now()) {
    this.#guarded('UPDATE frontier SET lease_until = ?, next_at = ?, updated_at = ?', item, now + leaseMs, now + leaseMs, now);
    return { ...item, leaseUntil: now + leaseMs };
  }

  async complete(item: ClaimedItem, opts: CompleteFields) {
    const now = opts.now ?? Date.now();
    this.#run(
      SQL.complete,
      [
        opts.recrawlAt,
        opts.status ?? null,
        now,
        opts.etag ?? null,
        opts.lastModified ?? null,
        opts.outcome ?? null,
        opts.recrawlMs ?? null,
        opts.changed === true ? 1 : 0,
        opts.priority ?? null,
        item.id,
        item.lease,
      ],
      item,
    );
  }

  async fail(
    item: ClaimedItem,
    opts: { error: string; retryAt: number | null; deadReason?: string; status?: number | null; now?: number },
  ) {
    const now = opts.now ?? Date.now();
    const state = opts.retryAt === null ? 'dead' : 'retrying';
    this.#run(
      SQL.fail,
      [
        state,
        opts.error,
        state === 'dead' ? (opts.deadReason ?? opts.error) : null,
        opts.retryAt ?? Number.MAX_SAFE_INTEGER,
        now,
        opts.status ?? null,
        item.id,
        item.lease,
      ],
      item,
    );
    return state;
  }

  /** A lease-guarded statement (the guard's values last): LeaseLostError unless exactly the held row changed. */
  #run(sql: string, args: unknown[], item: ClaimedItem): void {
    const q = sqlite(sql, args);
    if (stmt(this.db, q.sql).run(...q.args).changes !== 1) throw new LeaseLostError(`lease on frontier item ${item.id} is no longer held`);
  }

  #get(sql: string, args: unknown[]): unknown {
    const q = sqlite(sql, args);
    return stmt(this.db, q.sql).get(...q.args);
  }

  #exec(sql: string, args: unknown[]): number {
    const q = sqlite(sql, args);
    return stmt(this.db, q.sql).run(...q.args).changes;
  }

  #all(sql: string, args: unknown[]): unknown[] {
    const q = sqlite(sql, args);
    return stmt(this.db, q.sql).all(...q.args);
  }

  /**
   * Runs `insert` (a frontier INSERT … ON CONFLICT (url) DO NOTHING RETURNING id) as a counted new row of `host`: the
   * host gets its politeness row when it has none, one is taken from the host's stored row count first, refused at `cap` ('capped'), and given back when the URL was
   * inserted meanwhile (undefined). The count is in the state file, so the cap holds for every process sharing it.
   */
  #counted(host: string, cap: number, insert: () => { id: number } | undefined): { id: number } | undefined | 'capped' {
    this.#exec(SQL.ensureHost, [host, this.defaultGapMs]);
    if (cap <= 0 || this.#get(SQL.hostReserve, [host, cap]) === undefined) return 'capped';
    const row = insert();
    if (row === undefined) this.#exec(SQL.hostUnreserve, [host]);
    return row;
  }

  async admit(e: FrontierEntry, now: number = Date.now()): Promise<AdmitResult | null> {
    // A known URL whose row this admission would not change (a link found again: most links of most pages) is
    // answered from one read, without taking the file's write lock; anything else is decided inside it.
    const seen = this.#get(SQL.byUrl, [e.url]) as RawFrontierRow | undefined;
    if (seen) {
      const plan = planKnown(seen, e, now);
      if (plansNothing(plan)) return plan.result;
    }
    return this.db
      .transaction((): AdmitResult | null => {
        const cur = this.#get(SQL.byUrl, [e.url]) as RawFrontierRow | undefined;
        if (!cur) {
          const row = this.#counted(
            e.host,
            e.maxPerHost ?? NO_HOST_CAP,
            () => this.#get(SQL.insert, insertArgs(e, now)) as { id: number } | undefined,
          );
          if (row === 'capped') return null;
          return { id: row!.id, added: true, state: 'queued' };
        }
        const plan = planKnown(cur, e, now);
        if (plan.rescope) {
          if (plan.rescope.from !== null) this.#exec(SQL.rescopeAll, [plan.rescope.to, plan.rescope.from]);
          this.#exec(SQL.rescopeOne, [plan.rescope.to, cur.id]);
        }
        if (plan.refresh) this.#exec(SQL.refresh, [plan.refresh.nextAt, e.priority ?? 0, e.reason, e.requestId ?? null, now, cur.id]);
        else if (plan.raise) this.#exec(SQL.raise, [e.priority ?? 0, e.requestId ?? null, now, cur.id]);
        return plan.result;
      })
      .immediate();
  }

  async claimUrl(url: string, opts: { owner: string; leaseMs: number; now?: number }) {
    const now = opts.now ?? Date.now();
    return this.db
      .transaction((): ClaimedItem | null => {
        const r = this.#get(SQL.byUrl, [url]) as RawFrontierRow | undefined;
        if (!r || (r.state === 'leased' && (r.lease_until ?? 0) > now)) return null;
        const token = `${opts.owner}:${randomUUID()}`;
        this.#exec(SQL.lease, [token, now + opts.leaseMs, now, r.id]);
        return toClaimed({ ...r, lease_owner: token, lease_until: now + opts.leaseMs });
      })
      .immediate();
  }

  async markFetched(url: string, host: string, c: Parameters<FrontierRepo['markFetched']>[2]) {
    const now = c.now ?? Date.now();
    this.db
      .transaction(() => {
        const r = this.#get(SQL.byUrl, [url]) as RawFrontierRow | undefined;
        if (r?.state === 'leased') return; // someone is on it right now; let them finish
        const interval = r?.recrawl_ms ?? c.recrawlMs;
        if (!r) {
          this.#counted(
            host,
            NO_HOST_CAP,
            () => this.#get(SQL.fetchedInsert, fetchedInsertArgs(url, host, c, now, interval)) as { id: number } | undefined,
          );
        } else {
          this.#exec(SQL.fetchedUpdate, fetchedUpdateArgs(c, now, interval, r.id));
        }
      })
      .immediate();
  }

  async get(url: string): Promise<FrontierRecord | null> {
    const r = this.#get(SQL.byUrl, [url]) as RawFrontierRow | undefined;
    return r ? toRecord(r) : null;
  }

  async deadLetters(opts: { host?: string; limit?: number } = {}) {
    const limit = opts.limit ?? 100;
    const rows = (
      opts.host ? this.#all(SQL.deadHost, [limit, opts.host.toLowerCase()]) : this.#all(SQL.deadAll, [limit])
    ) as RawFrontierRow[];
    return rows.map(toRecord);
  }

  async pendingItems(limit = 10) {
    return (this.#all(SQL.pending, [limit]) as RawFrontierRow[]).map(toRecord);
  }

  async release(item: ClaimedItem, at?: number, now: number = Date.now()) {
    this.#guarded(
      `UPDATE frontier SET state = CASE WHEN attempts > 0 THEN 'retrying' ELSE 'queued' END, lease_owner = NULL,
         lease_until = NULL, next_at = ?, updated_at = ?`,
      item,
      at ?? now,
      now,
    );
  }

  async counts(opts: { host?: string } = {}) {
    const out = Object.fromEntries(FRONTIER_STATES.map((s) => [s, 0])) as Record<FrontierState, number>;
    const rows = (
      opts.host === undefined
        ? stmt(this.db, 'SELECT state, count(*) AS n FROM frontier GROUP BY state').all()
        : stmt(this.db, 'SELECT state, count(*) AS n FROM frontier WHERE host = ? GROUP BY state').all(opts.host.toLowerCase())
    ) as { state: FrontierState; n: number }[];
    for (const r of rows) out[r.state] = r.n;
    return out;
  }

  async unfinished() {
    return (stmt(this.db, `SELECT count(*) AS n FROM frontier WHERE state IN ('queued', 'leased', 'retrying')`).get() as { n: number }).n;
  }
}
