/**
 * The SQLite backend of the repositories: the embedded default, one file in the data dir. Every operation is one
 * synchronous better-sqlite3 transaction (BEGIN IMMEDIATE where it reads then writes), so the semantics are the
 * PostgreSQL backend's ones for every process sharing the file; the async signatures are only for parity.
 */
import Database from 'better-sqlite3';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { openStateDb, stmt, type StateDb } from '../db.js';
import { EntityStore } from '../entities.js';
import { Hosts } from '../hosts.js';
import { digestKey, mintKey, parseKey } from '../keys.js';
import { RateLimiter } from '../rate-limits.js';
import { RequestStore, type RequestOutcome, type RequestStatus, type RequestSubmission } from '../requests.js';
import { hostScope } from '../site-scope.js';
import {
  classifyChange,
  FRESH_SQL,
  freshRow,
  FRONTIER_STATES,
  toClaimed,
  toDocument,
  toKeyRecord,
  toRequest,
  type DocRow,
  type FrontierRow,
  type KeyRow,
  type RequestRow,
} from './rows.js';
import {
  decide,
  LeaseLostError,
  peeked,
  windows,
  type AdmitResult,
  type ClaimedItem,
  type CompleteFields,
  type DocumentsRepo,
  type FrontierEntry,
  type FrontierRecord,
  type EntitiesRepo,
  type FrontierRepo,
  type DocumentStatus,
  type FrontierState,
  type HostFactsRepo,
  type HostIdsRepo,
  type KeysRepo,
  type OutboxBatch,
  type OutboxEntry,
  type OutboxRepo,
  type PolitenessRepo,
  type Repositories,
  type RequestsRepo,
  type UsageCountersRepo,
} from './types.js';
import { sqlitePropertyState } from './property-state.js';
import { SqliteWebmaster } from './webmaster-sqlite.js';
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
} from './crawl-sql.js';

export interface SqliteRepoOptions {
  /** Gap between two fetch starts on a host not yet given its own (ms). @default 1000 */
  readonly defaultGapMs?: number;
  /**
   * Usage counters decided in memory and reserved in blocks in the file (state/rate-limits.ts RateLimiter) instead
   * of one write transaction per decision: exact within this process, never over-admitting after a crash, and
   * several times more decisions per second (docs/benchmarks.md, bench/state-repos.ts).
   * Right for `svc serve` on the embedded default, where one process owns the data dir's counters; not for several
   * processes sharing one file. close() gives unused slots back.
   * @default false
   */
  readonly inProcessUsage?: boolean;
}

/** Migration ids already recorded in an existing state file (so open can say what it applied). */
function recordedMigrations(file: string): Set<string> {
  if (file === ':memory:' || !existsSync(file)) return new Set();
  const db = new Database(file, { readonly: true });
  try {
    const has = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
    return new Set(has ? (db.prepare('SELECT id FROM schema_migrations').all() as { id: string }[]).map((r) => r.id) : []);
  } finally {
    db.close();
  }
}

/** Opens (creating and migrating) the SQLite state file and returns its repositories. */
export function openSqliteRepositories(file: string, opts: SqliteRepoOptions = {}): Repositories {
  const before = recordedMigrations(file);
  const db = openStateDb(file);
  const applied = (db.prepare('SELECT id FROM schema_migrations ORDER BY rowid').all() as { id: string }[])
    .map((r) => r.id)
    .filter((id) => !before.has(id));
  return sqliteRepositories(db, { ...opts, applied, close: () => db.close() });
}

/** Repositories over an already open state database (the caller keeps owning it unless `close` is given). */
export function sqliteRepositories(db: StateDb, opts: SqliteRepoOptions & { applied?: string[]; close?: () => void } = {}): Repositories {
  const gap = opts.defaultGapMs ?? 1000;
  const limiter = opts.inProcessUsage ? new RateLimiter(db) : null;
  return {
    backend: 'sqlite',
    keys: new SqliteKeys(db),
    usage: limiter ? limiterUsage(limiter, db) : new SqliteUsage(db),
    frontier: new SqliteFrontier(db, gap),
    politeness: new SqlitePoliteness(db, gap),
    hostIds: new SqliteHostIds(db),
    documents: new SqliteDocuments(db),
    requests: new SqliteRequests(db),
    entities: sqliteEntities(new EntityStore(db)),
    hosts: sqliteHostFacts(db),
    webmaster: new SqliteWebmaster(db),
    propertyState: sqlitePropertyState(db),
    outbox: new SqliteOutbox(db),
    applied: opts.applied ?? [],
    ping: async () => {
      db.prepare('SELECT 1').get();
    },
    close: async () => {
      limiter?.close();
      opts.close?.();
    },
  };
}

class SqliteKeys implements KeysRepo {
  constructor(readonly db: StateDb) {}

  async create(opts: { name: string; perMinute: number; perDay: number; now?: Date }) {
    const { id, key } = mintKey();
    const createdAt = (opts.now ?? new Date()).toISOString();
    // Prepared per call: keys are created rarely.
    this.db
      .prepare('INSERT INTO api_keys (id, name, digest, per_minute, per_day, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, opts.name, digestKey(key), opts.perMinute, opts.perDay, createdAt);
    return { record: { id, name: opts.name, perMinute: opts.perMinute, perDay: opts.perDay, createdAt, revokedAt: null }, key };
  }

  async list() {
    return (stmt(this.db, 'SELECT * FROM api_keys ORDER BY created_at, id').all() as KeyRow[]).map(toKeyRecord);
  }

  async revoke(id: string, now: Date = new Date()) {
    return stmt(this.db, 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now.toISOString(), id).changes === 1;
  }

  async verify(key: string) {
    const parsed = parseKey(key);
    const digest = digestKey(key);
    const row = parsed ? (stmt(this.db, 'SELECT * FROM api_keys WHERE id = ?').get(parsed.id) as KeyRow | undefined) : undefined;
    // Compare against a dummy when there is no row so both paths do the same work.
    const same = timingSafeEqual(row?.digest ?? Buffer.alloc(32), digest);
    if (!row || !same || row.revoked_at !== null) return null;
    return { ...toKeyRecord(row), digest: digest.toString('hex') };
  }
}

class SqliteUsage implements UsageCountersRepo {
  readonly #consume;
  readonly #get;

  constructor(readonly db: StateDb) {
    const get = (this.#get = db.prepare<[Buffer, string, number], { count: number }>(
      'SELECT count FROM usage_counters WHERE digest = ? AND window = ? AND window_start = ?',
    ));
    const bump = db.prepare<[Buffer, string, number]>(
      `INSERT INTO usage_counters (digest, window, window_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (digest, window, window_start) DO UPDATE SET count = count + 1`,
    );
    // Read and conditional increment in one write transaction: exact for every process sharing the file.
    this.#consume = db.transaction((digestHex: string, limits: { perMinute: number; perDay: number }, now: Date) => {
      const w = windows(now);
      const d = Buffer.from(digestHex, 'hex');
      const minute = get.get(d, 'minute', w.minuteStart)?.count ?? 0;
      const day = get.get(d, 'day', w.dayStart)?.count ?? 0;
      const decision = decide(limits, w, minute, day);
      if (decision.allowed) {
        bump.run(d, 'minute', w.minuteStart);
        bump.run(d, 'day', w.dayStart);
      }
      return decision;
    });
  }

  async consume(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()) {
    return this.#consume.immediate(digestHex, limits, now);
  }

  async peek(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()) {
    const w = windows(now);
    const d = Buffer.from(digestHex, 'hex');
    return peeked(limits, this.#get.get(d, 'minute', w.minuteStart)?.count ?? 0, this.#get.get(d, 'day', w.dayStart)?.count ?? 0);
  }

  async prune(before: number) {
    return stmt(this.db, 'DELETE FROM usage_counters WHERE window_start < ?').run(before).changes;
  }
}

class SqliteFrontier implements FrontierRepo {
  readonly #claim;

  constructor(
    readonly db: StateDb,
    readonly defaultGapMs: number,
  ) {
    // Host by host: every host whose gap has passed offers its best due row (one step down the partial index
    // frontier_host_claim), and the best of those is taken. A claim costs the number of hosts, not of due rows: when
    // every host with due rows is in its gap, a scan of the due rows found nothing after reading them all. Every row
    // has its host's politeness row (written with every insert; migration repos-007 added the older ones).
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

class SqlitePoliteness implements PolitenessRepo {
  constructor(
    readonly db: StateDb,
    readonly defaultGapMs: number,
  ) {}

  async setGap(host: string, gapMs: number) {
    stmt(this.db, 'INSERT INTO host_politeness (host, gap_ms) VALUES (?, ?) ON CONFLICT (host) DO UPDATE SET gap_ms = excluded.gap_ms').run(
      host,
      gapMs,
    );
  }

  async acquire(host: string, token: string, holdMs: number, now: number = Date.now()) {
    return this.db
      .transaction((): { acquired: true } | { acquired: false; retryAt: number } => {
        stmt(this.db, 'INSERT INTO host_politeness (host, gap_ms) VALUES (?, ?) ON CONFLICT (host) DO NOTHING').run(
          host,
          this.defaultGapMs,
        );
        const taken = stmt(
          this.db,
          'UPDATE host_politeness SET next_fetch_at = ?, holder = ? WHERE host = ? AND (next_fetch_at <= ? OR holder = ?)',
        ).run(now + holdMs, token, host, now, token).changes;
        if (taken === 1) return { acquired: true };
        const r = stmt(this.db, 'SELECT next_fetch_at FROM host_politeness WHERE host = ?').get(host) as { next_fetch_at: number };
        return { acquired: false, retryAt: r.next_fetch_at };
      })
      .immediate();
  }

  async release(host: string, token: string, nextFetchAt: number, now: number = Date.now()) {
    stmt(this.db, 'UPDATE host_politeness SET next_fetch_at = max(?, ? + gap_ms), holder = NULL WHERE host = ? AND holder = ?').run(
      nextFetchAt,
      now,
      host,
      token,
    );
  }

  async get(host: string) {
    const r = stmt(this.db, 'SELECT * FROM host_politeness WHERE host = ?').get(host) as
      | { host: string; gap_ms: number; next_fetch_at: number }
      | undefined;
    return r ? { host: r.host, gapMs: r.gap_ms, nextFetchAt: r.next_fetch_at } : null;
  }
}

class SqliteHostIds implements HostIdsRepo {
  constructor(readonly db: StateDb) {}

  async idFor(host: string) {
    const known = stmt(this.db, 'SELECT host_id FROM host_ids WHERE host = ?').get(host) as { host_id: number } | undefined;
    if (known) return known.host_id;
    return (
      stmt(this.db, 'INSERT INTO host_ids (host) VALUES (?) ON CONFLICT (host) DO UPDATE SET host = excluded.host RETURNING host_id').get(
        host,
      ) as { host_id: number }
    ).host_id;
  }

  async hostOf(id: number) {
    return (stmt(this.db, 'SELECT host FROM host_ids WHERE host_id = ?').get(id) as { host: string } | undefined)?.host ?? null;
  }
}

interface OutboxRow {
  id: number;
  page_ref: number;
  payload: string;
  enqueued_at: number;
  attempts: number;
}

const toOutboxEntry = (r: OutboxRow): OutboxEntry => ({
  id: r.id,
  pageRef: r.page_ref,
  payload: r.payload,
  enqueuedAt: r.enqueued_at,
  attempts: r.attempts,
});

class SqliteOutbox implements OutboxRepo {
  constructor(readonly db: StateDb) {}

  async enqueue(pageRef: number, payload: string, now: number = Date.now()) {
    return Number(
      stmt(this.db, 'INSERT INTO outbox (page_ref, payload, enqueued_at) VALUES (?, ?, ?)').run(pageRef, payload, now).lastInsertRowid,
    );
  }

  async claim(opts: { owner: string; limit: number; leaseMs: number; now?: number }): Promise<OutboxBatch | null> {
    const now = opts.now ?? Date.now();
    const lease = `${opts.owner}:${randomUUID()}`;
    const leaseUntil = now + opts.leaseMs;
    const rows = this.db
      .transaction(() => {
        const ids = (
          stmt(this.db, 'SELECT id FROM outbox WHERE lease_until <= ? ORDER BY id LIMIT ?').all(now, opts.limit) as { id: number }[]
        ).map((r) => r.id);
        if (ids.length === 0) return [];
        const marks = ids.map(() => '?').join(', ');
        // Prepared per call: the text varies with the number of ids.
        return this.db
          .prepare(
            `UPDATE outbox SET lease = ?, lease_until = ?, attempts = attempts + 1 WHERE id IN (${marks}) RETURNING id, page_ref, payload, enqueued_at, attempts`,
          )
          .all(lease, leaseUntil, ...ids) as OutboxRow[];
        // IMMEDIATE: the write lock before the read, so another process's claim waits (busy_timeout) instead of failing.
      })
      .immediate();
    if (rows.length === 0) return null;
    rows.sort((a, b) => a.id - b.id);
    return { lease, leaseUntil, entries: rows.map(toOutboxEntry) };
  }

  async extend(lease: string, leaseMs: number, now: number = Date.now()) {
    // A lapsed lease is only lost once someone else took the entries (they then carry another lease).
    return stmt(this.db, 'UPDATE outbox SET lease_until = ? WHERE lease = ?').run(now + leaseMs, lease).changes > 0;
  }

  async ack(lease: string) {
    return stmt(this.db, 'DELETE FROM outbox WHERE lease = ?').run(lease).changes;
  }

  async stats(now: number = Date.now()) {
    const r = stmt(
      this.db,
      'SELECT count(*) FILTER (WHERE lease_until <= ?) AS pending, count(*) FILTER (WHERE lease_until > ?) AS leased, min(enqueued_at) AS oldest FROM outbox',
    ).get(now, now) as { pending: number; leased: number; oldest: number | null };
    return { pending: r.pending, leased: r.leased, oldestAt: r.oldest };
  }
}

class SqliteDocuments implements DocumentsRepo {
  constructor(readonly db: StateDb) {}

  async allocate(url: string, host: string) {
    const r = stmt(
      this.db,
      'INSERT INTO documents (url, host) VALUES (?, ?) ON CONFLICT (url) DO UPDATE SET url = excluded.url RETURNING page_ref',
    ).get(url, host) as { page_ref: number };
    return r.page_ref;
  }

  async get(pageRef: number) {
    const r = stmt(this.db, 'SELECT * FROM documents WHERE page_ref = ?').get(pageRef) as DocRow | undefined;
    return r ? toDocument(r) : null;
  }

  async byUrl(url: string) {
    const r = stmt(this.db, 'SELECT * FROM documents WHERE url = ?').get(url) as DocRow | undefined;
    return r ? toDocument(r) : null;
  }

  async recordIndexed(pageRef: number, obs: { contentHash: string; title: string; at: string }) {
    return this.db
      .transaction(() => {
        const cur = stmt(this.db, 'SELECT * FROM documents WHERE page_ref = ?').get(pageRef) as DocRow | undefined;
        if (!cur) throw new Error(`documents: unknown page_ref ${pageRef}`);
        const c = classifyChange(cur, obs.contentHash, obs.at);
        stmt(
          this.db,
          `UPDATE documents SET title = ?, content_hash = ?, first_seen = ?, last_changed = ?, last_fetched = ?,
             status = 'indexed', reason = NULL WHERE page_ref = ?`,
        ).run(obs.title, obs.contentHash, c.firstSeen, c.lastChanged, obs.at, pageRef);
        return c.change;
      })
      .immediate();
  }

  async recordExcluded(pageRef: number, status: 'excluded' | 'removed' | 'gone', reason: string, at: string) {
    stmt(this.db, 'UPDATE documents SET status = ?, reason = ?, last_fetched = ? WHERE page_ref = ?').run(status, reason, at, pageRef);
  }

  async counts() {
    const rows = stmt(this.db, 'SELECT status, count(*) AS n FROM documents GROUP BY status').all() as {
      status: DocumentStatus;
      n: number;
    }[];
    return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Partial<Record<DocumentStatus, number>>;
  }

  async fresh(since: string, limit: number) {
    return (stmt(this.db, FRESH_SQL.replace('$1', '?').replace('$2', '?')).all(since, limit) as DocRow[]).map(freshRow);
  }
}

class SqliteRequests implements RequestsRepo {
  constructor(readonly db: StateDb) {}

  // The lifecycle is today's RequestStore (one BEGIN IMMEDIATE transaction per submission), unchanged; a store
  // per call because the clock and the quota come with the call.
  #store(now: Date = new Date(), perDay = 0): RequestStore {
    return new RequestStore(this.db, { perDay, now: () => now });
  }

  async submit(keyDigest: string, sub: RequestSubmission, opts: { perDay: number; now: Date }) {
    return this.#store(opts.now, opts.perDay).submit(keyDigest, sub);
  }

  async getForKey(id: string, keyDigest: string) {
    return this.#store().getForKey(id, keyDigest);
  }

  async find(id: string) {
    return this.#store().get(id);
  }

  async listByStatus(status: RequestStatus, limit?: number) {
    return this.#store().listByStatus(status, limit);
  }

  async transition(id: string, to: RequestStatus, detail: { outcome?: RequestOutcome; reason?: string } = {}, at?: Date) {
    return this.#store(at).transition(id, to, detail);
  }

  async counts() {
    return this.#store().counts();
  }

  async create(sub: Parameters<RequestsRepo['create']>[0]) {
    const at = sub.at ?? new Date().toISOString();
    const idem = sub.idempotencyDigest ?? null;
    const history = JSON.stringify([{ status: 'received', at }]);
    // The id is made by the database; the partial unique index on (key_digest, idempotency_digest) decides races.
    const inserted = stmt(
      this.db,
      `INSERT INTO url_requests (id, key_digest, type, url, host, note, idempotency_digest, status, history, received_at, updated_at)
         VALUES ('req_' || lower(hex(randomblob(16))), ?, ?, ?, ?, ?, ?, 'received', ?, ?, ?)
         ON CONFLICT (key_digest, idempotency_digest) WHERE idempotency_digest IS NOT NULL DO NOTHING RETURNING *`,
    ).get(sub.keyDigest, sub.type, sub.url, sub.host, sub.note ?? null, idem, history, at, at) as RequestRow | undefined;
    if (inserted) return { request: toRequest(inserted), deduplicated: false };
    const prior = stmt(this.db, 'SELECT * FROM url_requests WHERE key_digest = ? AND idempotency_digest = ?').get(
      sub.keyDigest,
      idem,
    ) as RequestRow;
    return prior.type === sub.type && prior.url === sub.url
      ? { request: toRequest(prior), deduplicated: true }
      : { conflict: toRequest(prior) };
  }

  async get(id: string) {
    const r = stmt(this.db, 'SELECT * FROM url_requests WHERE id = ?').get(id) as RequestRow | undefined;
    return r ? toRequest(r) : null;
  }

  async setStatus(id: string, status: Parameters<RequestsRepo['setStatus']>[1], at: string = new Date().toISOString()) {
    return stmt(this.db, 'UPDATE url_requests SET status = ?, updated_at = ? WHERE id = ?').run(status, at, id).changes === 1;
  }
}

/** The entities repository over today's EntityStore (its synchronous transactions, unchanged). */
export function sqliteEntities(store: EntityStore): EntitiesRepo {
  return {
    get: async (id) => store.get(id),
    search: async (q) => store.search(q),
    observePage: async (page, nodes, at, parseErrors) => store.observePage(page, nodes, at, parseErrors),
    withdrawPage: async (pageRef) => store.withdrawPage(pageRef),
    importRows: async (dataset, rows, at, verifiedAt) => store.importRows(dataset, rows, at, verifiedAt),
    parseErrors: async (hosts) => store.parseErrors(hosts),
    counts: async () => store.counts(),
  };
}

/** UsageCountersRepo over the in-process RateLimiter (see SqliteRepoOptions.inProcessUsage). */
function limiterUsage(limiter: RateLimiter, db: StateDb): UsageCountersRepo {
  return {
    consume: async (digestHex, limits, now) => limiter.consume(digestHex, limits, now),
    peek: async (digestHex, limits, now) => limiter.peek(digestHex, limits, now),
    // The limiter also prunes rows older than two days on its own timer; this is the on-demand form.
    prune: async (before) => db.prepare('DELETE FROM usage_counters WHERE window_start < ?').run(before).changes,
  };
}

/** Host facts over today's Hosts store (its statements and transactions, unchanged) and site-scope. */
function sqliteHostFacts(db: StateDb): HostFactsRepo {
  const hosts = new Hosts(db);
  return {
    evidence: async (host: string) => ({ facts: hosts.get(host), scope: hostScope(db, host) }),
    recordRobots: async (host, f) => hosts.recordRobots(host, f),
    recordLlms: async (host, f) => hosts.recordLlms(host, f),
    recordCrawl: async (host, at) => hosts.recordCrawl(host, at),
    recordExtraction: async (host, f) => hosts.recordExtraction(host, f),
    recordChangeInterval: async (host, ms, at) => hosts.recordChangeInterval(host, ms, at),
    recordPageLinks: async (pageRef, from, counts) => hosts.recordPageLinks(pageRef, from, counts),
    withdrawPageLinks: async (pageRef) => hosts.withdrawPageLinks(pageRef),
  };
}
