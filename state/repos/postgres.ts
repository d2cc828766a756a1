/**
 * The PostgreSQL backend of the repositories (npm `pg`), selected by SVC_DATABASE_URL=postgres://…. Everything
 * that must hold for a fleet is decided inside the database: frontier claims take the URL row and its host's
 * politeness row with FOR UPDATE SKIP LOCKED in one transaction; quota checks lock their counter rows and increment
 * only when both have room; ids come from identity columns and gen_random_uuid(); idempotency is a unique index.
 */
import pg from 'pg';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../../errors.js';
import { extractionFacts, HOST_FACTS_SQL, hostFacts, type RawExtraction, type RawHost, type VerdictCount } from '../hosts.js';
import { digestKey, mintKey, parseKey } from '../keys.js';
import {
  checkSubmission,
  idempotencyConflict,
  nextEvent,
  submissionQuotaExceeded,
  toUrlRequest,
  utcDayStart,
  type RequestOutcome,
  type RequestStatus,
  type RequestSubmission,
  type UrlRequestRow,
} from '../requests.js';
import { SCOPE_SQL, scopeOf, type ScopeRow } from '../site-scope.js';
import type { Migration } from '../migrations.js';
import { pgMigrations } from './pg-migrations.js';
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
  type ClaimedItem,
  type CompleteFields,
  type FrontierEntry,
  type DocumentsRepo,
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
import { PgWebmaster } from './webmaster-postgres.js';
import { pgComplete, PgCrawlFrontier, pgFail, pgHostWrites, pgInsertEntry } from './crawl-postgres.js';
import { NO_HOST_CAP } from './crawl-sql.js';
import { PgEntities } from './entities-postgres.js';
import { pgPropertyState } from './property-state.js';

export interface PgRepoOptions {
  /** Gap between two fetch starts on a host not yet given its own (ms). @default 1000 */
  readonly defaultGapMs?: number;
  /** Connections this process may hold. @default 10 */
  readonly poolSize?: number;
}

const INT8 = 20;
// ms timestamps and identity ids are BIGINT; they stay far below 2^53, so numbers are exact and rows match SQLite's.
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/** True when `url` names a PostgreSQL database (what selects this backend). */
export const isPostgresUrl = (url: string | undefined): url is string => !!url && /^postgres(ql)?:\/\//i.test(url);

/** Seconds a client is told to wait when the database cannot be reached (Retry-After). */
export const STATE_RETRY_AFTER_S = 5;

// Connection-class failures: the server is down, restarting, refusing connections or out of slots. SQLSTATE
// classes 08 (connection exception) and 57P (operator intervention: shutdown, crash recovery), plus 53300
// (too_many_connections) and the socket errors Node reports.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '53300',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i;

/** True when `err` says the database cannot be reached right now (as opposed to a bad query). */
export function isConnectionFailure(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true;
  return err instanceof Error && UNAVAILABLE_MESSAGES.test(err.message);
}

/**
 * A temporary outage becomes the service's own `unavailable` error (503 with Retry-After on REST and MCP); the
 * pool reconnects on its own once the server is back, so nothing else has to recover. Other errors pass unchanged.
 */
function translate(err: unknown): never {
  if (isConnectionFailure(err))
    throw new SvcError('unavailable', 'the state database is unreachable; retry shortly', { retryAfter: STATE_RETRY_AFTER_S, cause: err });
  throw err;
}

/** What the repositories need of a connection: one query method (pool or a transaction's client). */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** The pool, with connection failures translated (see `translate`). */
export class Db implements Queryable {
  constructor(readonly pool: pg.Pool) {}

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(text, values).catch(translate);
  }

  async transaction<T>(fn: (c: Queryable) => Promise<T>): Promise<T> {
    const c = await this.pool.connect().catch(translate);
    let broken: unknown;
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      // A client whose connection failed must not go back to the pool.
      if (isConnectionFailure(err)) broken = err;
      await c.query('ROLLBACK').catch(() => undefined);
      return translate(err);
    } finally {
      c.release(broken instanceof Error ? broken : undefined);
    }
  }
}

async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const out = await fn(c);
    await c.query('COMMIT');
    return out;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

/**
 * Applies pending migrations in one transaction under an advisory lock, so processes starting together neither
 * race nor half-apply (DDL is transactional in PostgreSQL). Returns the ids applied now.
 */
export async function migratePostgres(pool: pg.Pool, list: readonly Migration[] = pgMigrations): Promise<string[]> {
  return inTransaction(pool, async (c) => {
    await c.query(`SELECT pg_advisory_xact_lock(hashtext('svc:migrate'))`);
    await c.query('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
    const seen = new Set((await c.query<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id));
    const applied: string[] = [];
    for (const m of list) {
      if (seen.has(m.id)) continue;
      await c.query(m.sql);
      await c.query('INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2)', [m.id, new Date().toISOString()]);
      applied.push(m.id);
    }
    return applied;
  });
}

/** Connects to PostgreSQL, applies pending migrations and returns the repositories (close() ends the pool). */
export async function openPostgresRepositories(url: string, opts: PgRepoOptions = {}): Promise<Repositories> {
  // A connection attempt to a server that is down but whose port still accepts (restarting) gives up after 3 s
  // rather than holding the request for ever.
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10, types, connectionTimeoutMillis: 3000 });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    const applied = await migratePostgres(pool).catch(translate);
    const gap = opts.defaultGapMs ?? 1000;
    const db = new Db(pool);
    return {
      backend: 'postgres',
      keys: new PgKeys(db),
      usage: new PgUsage(db),
      frontier: new PgFrontier(db, gap),
      politeness: new PgPoliteness(db, gap),
      hostIds: new PgHostIds(db),
      documents: new PgDocuments(db),
      requests: new PgRequests(db),
      hosts: new PgHostFacts(db),
      entities: new PgEntities(db),
      webmaster: new PgWebmaster(db),
      propertyState: pgPropertyState(db),
      outbox: new PgOutbox(db),
      applied,
      ping: async () => {
        await db.query('SELECT 1');
      },
      close: () => pool.end(),
    };
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}

class PgKeys implements KeysRepo {
  constructor(readonly pool: Db) {}

  async create(opts: { name: string; perMinute: number; perDay: number; now?: Date }) {
    const { id, key } = mintKey();
    const createdAt = (opts.now ?? new Date()).toISOString();
    await this.pool.query('INSERT INTO api_keys (id, name, digest, per_minute, per_day, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      id,
      opts.name,
      digestKey(key),
      opts.perMinute,
      opts.perDay,
      createdAt,
    ]);
    return { record: { id, name: opts.name, perMinute: opts.perMinute, perDay: opts.perDay, createdAt, revokedAt: null }, key };
  }

  async list() {
    return (await this.pool.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).rows.map(toKeyRecord);
  }

  async revoke(id: string, now: Date = new Date()) {
    const r = await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now.toISOString(), id]);
    return r.rowCount === 1;
  }

  async verify(key: string) {
    const parsed = parseKey(key);
    const digest = digestKey(key);
    const row = parsed ? (await this.pool.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [parsed.id])).rows[0] : undefined;
    const same = timingSafeEqual(row?.digest ?? Buffer.alloc(32), digest);
    if (!row || !same || row.revoked_at !== null) return null;
    return { ...toKeyRecord(row), digest: digest.toString('hex') };
  }
}

class PgUsage implements UsageCountersRepo {
  constructor(readonly pool: Db) {}

  async consume(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()) {
    const w = windows(now);
    // The whole decision runs in the database (migration repos-003): one round trip, exact for every replica.
    const r = await this.pool.query<{ admitted: boolean; day_count: number; minute_count: number }>(
      'SELECT * FROM svc_consume_quota($1, $2, $3, $4, $5)',
      [Buffer.from(digestHex, 'hex'), w.dayStart, w.minuteStart, limits.perDay, limits.perMinute],
    );
    const row = r.rows[0];
    if (!row) throw new Error('svc_consume_quota returned no row');
    const decision = decide(limits, w, row.minute_count, row.day_count);
    // decide() and the database apply the same rule to the same counts; a mismatch would be a bug in one of them.
    if (decision.allowed !== row.admitted) throw new Error('quota decision mismatch between svc_consume_quota and decide()');
    return decision;
  }

  async peek(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()) {
    const w = windows(now);
    const rows = (
      await this.pool.query<{ window: string; count: number }>(
        `SELECT "window", count FROM usage_counters
         WHERE digest = $1 AND (("window" = 'day' AND window_start = $2) OR ("window" = 'minute' AND window_start = $3))`,
        [Buffer.from(digestHex, 'hex'), w.dayStart, w.minuteStart],
      )
    ).rows;
    return peeked(limits, rows.find((r) => r.window === 'minute')?.count ?? 0, rows.find((r) => r.window === 'day')?.count ?? 0);
  }

  async prune(before: number) {
    return (await this.pool.query('DELETE FROM usage_counters WHERE window_start < $1', [before])).rowCount ?? 0;
  }
}

class PgFrontier implements FrontierRepo {
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
    // One statement (one round trip, its own transaction): the URL and its host are locked together and rows another
    // worker holds are skipped. If another worker committed a claim on this host after our snapshot, the re-check on
    // the locked row sees its new next_fetch_at and drops the row, so two workers never start on one host within its
    // gap. An expired lease (state 'leased', next_at = lease_until <= now) is due like any other row: no process-id
    // checks.
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

  // The crawler's admission and bookkeeping (crawl-postgres.ts, rules shared with SQLite in crawl-sql.ts).
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

class PgPoliteness implements PolitenessRepo {
  constructor(
    readonly pool: Db,
    readonly defaultGapMs: number,
  ) {}

  async acquire(host: string, token: string, holdMs: number, now: number = Date.now()) {
    // One statement, one round trip: the row lock serialises concurrent takers (a new host is created taken). A taker
    // that loses reads the row as its snapshot had it, which is when to try again (the winner's hold or gap may push it
    // later still: the retry simply fails once more).
    const r = await this.pool.query<{ taken: boolean; next_fetch_at: number | null }>(
      `WITH taken AS (
         INSERT INTO host_politeness AS h (host, gap_ms, next_fetch_at, holder) VALUES ($3, $5, $1, $2)
         ON CONFLICT (host) DO UPDATE SET next_fetch_at = excluded.next_fetch_at, holder = excluded.holder
         WHERE h.next_fetch_at <= $4 OR h.holder = $2
         RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM taken) AS taken, (SELECT next_fetch_at FROM host_politeness WHERE host = $3) AS next_fetch_at`,
      [now + holdMs, token, host, now, this.defaultGapMs],
    );
    const row = r.rows[0];
    if (row?.taken) return { acquired: true } as const;
    return { acquired: false, retryAt: Math.max(now + 1, Number(row?.next_fetch_at ?? now)) } as const;
  }

  async release(host: string, token: string, nextFetchAt: number, now: number = Date.now()) {
    await this.pool.query(
      'UPDATE host_politeness SET next_fetch_at = greatest($1::bigint, $2::bigint + gap_ms), holder = NULL WHERE host = $3 AND holder = $4',
      [nextFetchAt, now, host, token],
    );
  }

  async setGap(host: string, gapMs: number) {
    await this.pool.query(
      'INSERT INTO host_politeness (host, gap_ms) VALUES ($1, $2) ON CONFLICT (host) DO UPDATE SET gap_ms = excluded.gap_ms',
      [host, gapMs],
    );
  }

  async get(host: string) {
    const r = (
      await this.pool.query<{ host: string; gap_ms: number; next_fetch_at: number }>('SELECT * FROM host_politeness WHERE host = $1', [
        host,
      ])
    ).rows[0];
    return r ? { host: r.host, gapMs: r.gap_ms, nextFetchAt: r.next_fetch_at } : null;
  }
}

interface PgOutboxRow {
  id: number;
  page_ref: number;
  payload: string;
  enqueued_at: number;
  attempts: number;
}

const toPgOutboxEntry = (r: PgOutboxRow): OutboxEntry => ({
  id: r.id,
  pageRef: r.page_ref,
  payload: r.payload,
  enqueuedAt: r.enqueued_at,
  attempts: r.attempts,
});

class PgOutbox implements OutboxRepo {
  constructor(readonly pool: Db) {}

  async enqueue(pageRef: number, payload: string, now: number = Date.now()) {
    const r = await this.pool.query<{ id: number }>(
      'INSERT INTO outbox (page_ref, payload, enqueued_at) VALUES ($1, $2, $3) RETURNING id',
      [pageRef, payload, now],
    );
    return (r.rows[0] as { id: number }).id;
  }

  async claim(opts: { owner: string; limit: number; leaseMs: number; now?: number }): Promise<OutboxBatch | null> {
    const now = opts.now ?? Date.now();
    const lease = `${opts.owner}:${randomUUID()}`;
    const leaseUntil = now + opts.leaseMs;
    // Rows another claimer is taking right now are skipped, not waited for: two claimers never share an entry.
    const r = await this.pool.query<PgOutboxRow>(
      `WITH picked AS (SELECT id FROM outbox WHERE lease_until <= $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
       UPDATE outbox o SET lease = $3, lease_until = $4, attempts = o.attempts + 1 FROM picked WHERE o.id = picked.id
       RETURNING o.id, o.page_ref, o.payload, o.enqueued_at, o.attempts`,
      [now, opts.limit, lease, leaseUntil],
    );
    if (r.rows.length === 0) return null;
    const rows = [...r.rows].sort((a, b) => a.id - b.id);
    return { lease, leaseUntil, entries: rows.map(toPgOutboxEntry) };
  }

  async extend(lease: string, leaseMs: number, now: number = Date.now()) {
    return ((await this.pool.query('UPDATE outbox SET lease_until = $1 WHERE lease = $2', [now + leaseMs, lease])).rowCount ?? 0) > 0;
  }

  async ack(lease: string) {
    return (await this.pool.query('DELETE FROM outbox WHERE lease = $1', [lease])).rowCount ?? 0;
  }

  async stats(now: number = Date.now()) {
    const r = (
      await this.pool.query<{ pending: number; leased: number; oldest: number | null }>(
        'SELECT count(*) FILTER (WHERE lease_until <= $1)::int AS pending, count(*) FILTER (WHERE lease_until > $1)::int AS leased, min(enqueued_at) AS oldest FROM outbox',
        [now],
      )
    ).rows[0] as { pending: number; leased: number; oldest: number | null };
    return { pending: r.pending, leased: r.leased, oldestAt: r.oldest };
  }
}

class PgHostIds implements HostIdsRepo {
  constructor(readonly pool: Db) {}

  async idFor(host: string) {
    const known = (await this.pool.query<{ host_id: number }>('SELECT host_id FROM host_ids WHERE host = $1', [host])).rows[0];
    if (known) return known.host_id;
    const r = await this.pool.query<{ host_id: number }>(
      'INSERT INTO host_ids (host) VALUES ($1) ON CONFLICT (host) DO UPDATE SET host = excluded.host RETURNING host_id',
      [host],
    );
    return (r.rows[0] as { host_id: number }).host_id;
  }

  async hostOf(id: number) {
    return (await this.pool.query<{ host: string }>('SELECT host FROM host_ids WHERE host_id = $1', [id])).rows[0]?.host ?? null;
  }
}

class PgDocuments implements DocumentsRepo {
  constructor(readonly pool: Db) {}

  async allocate(url: string, host: string) {
    // Known URLs (the common case) cost one read and write nothing. For a new one, DO UPDATE (a no-op) rather than
    // DO NOTHING so RETURNING also gives the page_ref a concurrent allocator of the same URL just created.
    const known = (await this.pool.query<{ page_ref: number }>('SELECT page_ref FROM documents WHERE url = $1', [url])).rows[0];
    if (known) return known.page_ref;
    const r = await this.pool.query<{ page_ref: number }>(
      'INSERT INTO documents (url, host) VALUES ($1, $2) ON CONFLICT (url) DO UPDATE SET url = excluded.url RETURNING page_ref',
      [url, host],
    );
    return (r.rows[0] as { page_ref: number }).page_ref;
  }

  async get(pageRef: number) {
    const r = (await this.pool.query<DocRow>('SELECT * FROM documents WHERE page_ref = $1', [pageRef])).rows[0];
    return r ? toDocument(r) : null;
  }

  async byUrl(url: string) {
    const r = (await this.pool.query<DocRow>('SELECT * FROM documents WHERE url = $1', [url])).rows[0];
    return r ? toDocument(r) : null;
  }

  async recordIndexed(pageRef: number, obs: { contentHash: string; title: string; at: string }) {
    return this.pool.transaction(async (c) => {
      const cur = (await c.query<DocRow>('SELECT * FROM documents WHERE page_ref = $1 FOR UPDATE', [pageRef])).rows[0];
      if (!cur) throw new Error(`documents: unknown page_ref ${pageRef}`);
      const ch = classifyChange(cur, obs.contentHash, obs.at);
      await c.query(
        `UPDATE documents SET title = $1, content_hash = $2, first_seen = $3, last_changed = $4, last_fetched = $5,
           status = 'indexed', reason = NULL WHERE page_ref = $6`,
        [obs.title, obs.contentHash, ch.firstSeen, ch.lastChanged, obs.at, pageRef],
      );
      return ch.change;
    });
  }

  async recordExcluded(pageRef: number, status: 'excluded' | 'removed' | 'gone', reason: string, at: string) {
    await this.pool.query('UPDATE documents SET status = $1, reason = $2, last_fetched = $3 WHERE page_ref = $4', [
      status,
      reason,
      at,
      pageRef,
    ]);
  }

  async counts() {
    const rows = (
      await this.pool.query<{ status: DocumentStatus; n: number }>('SELECT status, count(*) AS n FROM documents GROUP BY status')
    ).rows;
    return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Partial<Record<DocumentStatus, number>>;
  }

  async fresh(since: string, limit: number) {
    return (await this.pool.query<DocRow>(FRESH_SQL, [since, limit])).rows.map(freshRow);
  }
}

class PgRequests implements RequestsRepo {
  constructor(readonly pool: Db) {}

  async submit(keyDigest: string, sub: RequestSubmission, opts: { perDay: number; now: Date }) {
    const { type, url, host, note, idem } = checkSubmission(keyDigest, sub);
    return this.pool.transaction(async (c) => {
      // One key's submissions run one at a time across every replica (a transaction-scoped advisory lock on the
      // key), so the idempotency, open-request and daily-quota checks below see every earlier submission.
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`svc:requests:${keyDigest}`]);
      if (idem !== null) {
        const prior = (
          await c.query<UrlRequestRow>('SELECT * FROM url_requests WHERE key_digest = $1 AND idempotency_digest = $2', [keyDigest, idem])
        ).rows[0];
        if (prior) {
          if (prior.type !== type || prior.url !== url) throw idempotencyConflict();
          return { request: toUrlRequest(prior), deduplicated: true };
        }
      }
      const open = (
        await c.query<UrlRequestRow>(
          `SELECT * FROM url_requests WHERE key_digest = $1 AND type = $2 AND url = $3
             AND status IN ('received', 'queued', 'in_progress') ORDER BY received_at LIMIT 1`,
          [keyDigest, type, url],
        )
      ).rows[0];
      if (open) return { request: toUrlRequest(open), deduplicated: true };
      const used =
        (
          await c.query<{ n: number }>('SELECT count(*) AS n FROM url_requests WHERE key_digest = $1 AND received_at >= $2', [
            keyDigest,
            utcDayStart(opts.now),
          ])
        ).rows[0]?.n ?? 0;
      if (used >= opts.perDay) throw submissionQuotaExceeded(opts.perDay, opts.now);
      const at = opts.now.toISOString();
      const row = (
        await c.query<UrlRequestRow>(
          `INSERT INTO url_requests (id, key_digest, type, url, host, note, idempotency_digest, status, history, received_at, updated_at)
           VALUES ('req_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6, 'received', $7, $8, $8) RETURNING *`,
          [keyDigest, type, url, host, note, idem, JSON.stringify([{ status: 'received', at }]), at],
        )
      ).rows[0] as UrlRequestRow;
      return { request: toUrlRequest(row), deduplicated: false };
    });
  }

  async getForKey(id: string, keyDigest: string) {
    const r = (await this.pool.query<UrlRequestRow>('SELECT * FROM url_requests WHERE id = $1 AND key_digest = $2', [id, keyDigest]))
      .rows[0];
    return r ? toUrlRequest(r) : null;
  }

  async find(id: string) {
    const r = (await this.pool.query<UrlRequestRow>('SELECT * FROM url_requests WHERE id = $1', [id])).rows[0];
    return r ? toUrlRequest(r) : null;
  }

  async listByStatus(status: RequestStatus, limit = 100) {
    return (
      await this.pool.query<UrlRequestRow>('SELECT * FROM url_requests WHERE status = $1 ORDER BY updated_at, id LIMIT $2', [status, limit])
    ).rows.map(toUrlRequest);
  }

  async transition(id: string, to: RequestStatus, detail: { outcome?: RequestOutcome; reason?: string } = {}, at: Date = new Date()) {
    return this.pool.transaction(async (c) => {
      const row = (await c.query<UrlRequestRow>('SELECT * FROM url_requests WHERE id = $1 FOR UPDATE', [id])).rows[0];
      if (!row) throw new Error(`requests: unknown request ${id}`);
      const cur = toUrlRequest(row);
      const event = nextEvent(cur, to, detail, at.toISOString());
      const next = (
        await c.query<UrlRequestRow>(
          `UPDATE url_requests SET status = $1, outcome = $2, reason = $3, history = $4, updated_at = $5, attempts = attempts + $6
           WHERE id = $7 RETURNING *`,
          [
            to,
            detail.outcome ?? null,
            detail.reason ?? null,
            JSON.stringify([...cur.history, event]),
            event.at,
            to === 'in_progress' ? 1 : 0,
            id,
          ],
        )
      ).rows[0] as UrlRequestRow;
      return toUrlRequest(next);
    });
  }

  async counts() {
    const out: Record<RequestStatus, number> = { received: 0, queued: 0, in_progress: 0, completed: 0, failed: 0 };
    for (const r of (
      await this.pool.query<{ status: RequestStatus; n: number }>('SELECT status, count(*) AS n FROM url_requests GROUP BY status')
    ).rows)
      out[r.status] = r.n;
    return out;
  }

  async create(sub: Parameters<RequestsRepo['create']>[0]) {
    const at = sub.at ?? new Date().toISOString();
    const idem = sub.idempotencyDigest ?? null;
    const history = JSON.stringify([{ status: 'received', at }]);
    const inserted = (
      await this.pool.query<RequestRow>(
        `INSERT INTO url_requests (id, key_digest, type, url, host, note, idempotency_digest, status, history, received_at, updated_at)
         VALUES ('req_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6, 'received', $7, $8, $8)
         ON CONFLICT (key_digest, idempotency_digest) WHERE idempotency_digest IS NOT NULL DO NOTHING RETURNING *`,
        [sub.keyDigest, sub.type, sub.url, sub.host, sub.note ?? null, idem, history, at],
      )
    ).rows[0];
    if (inserted) return { request: toRequest(inserted), deduplicated: false };
    // ON CONFLICT DO NOTHING waited for the winner to commit, so its row is visible to this new statement.
    const prior = (
      await this.pool.query<RequestRow>('SELECT * FROM url_requests WHERE key_digest = $1 AND idempotency_digest = $2', [
        sub.keyDigest,
        idem,
      ])
    ).rows[0] as RequestRow;
    return prior.type === sub.type && prior.url === sub.url
      ? { request: toRequest(prior), deduplicated: true }
      : { conflict: toRequest(prior) };
  }

  async get(id: string) {
    const r = (await this.pool.query<RequestRow>('SELECT * FROM url_requests WHERE id = $1', [id])).rows[0];
    return r ? toRequest(r) : null;
  }

  async setStatus(id: string, status: Parameters<RequestsRepo['setStatus']>[1], at: string = new Date().toISOString()) {
    return (await this.pool.query('UPDATE url_requests SET status = $1, updated_at = $2 WHERE id = $3', [status, at, id])).rowCount === 1;
  }
}

class PgHostFacts implements HostFactsRepo {
  // The crawler's writes (crawl-postgres.ts).
  readonly recordRobots: HostFactsRepo['recordRobots'];
  readonly recordLlms: HostFactsRepo['recordLlms'];
  readonly recordCrawl: HostFactsRepo['recordCrawl'];
  readonly recordExtraction: HostFactsRepo['recordExtraction'];
  readonly recordChangeInterval: HostFactsRepo['recordChangeInterval'];
  readonly recordPageLinks: HostFactsRepo['recordPageLinks'];
  readonly withdrawPageLinks: HostFactsRepo['withdrawPageLinks'];

  constructor(readonly pool: Db) {
    ({
      recordRobots: this.recordRobots,
      recordLlms: this.recordLlms,
      recordCrawl: this.recordCrawl,
      recordExtraction: this.recordExtraction,
      recordChangeInterval: this.recordChangeInterval,
      recordPageLinks: this.recordPageLinks,
      withdrawPageLinks: this.withdrawPageLinks,
    } = pgHostWrites(pool));
  }

  async evidence(host: string) {
    const h = host.toLowerCase();
    // Independent reads; the pool runs them on separate connections at once.
    const [raw, intervals, outbound, inbound, scope, counts, thin] = await Promise.all([
      this.pool.query<RawHost>(HOST_FACTS_SQL.host, [h]),
      this.pool.query<{ interval_ms: number }>(HOST_FACTS_SQL.intervals, [h]),
      this.pool.query<{ n: number | null }>(HOST_FACTS_SQL.outbound, [h]),
      this.pool.query<{ n: number }>(HOST_FACTS_SQL.inbound, [h]),
      this.pool.query<ScopeRow>(SCOPE_SQL, [h]),
      this.pool.query<VerdictCount>(HOST_FACTS_SQL.extractionCounts, [h]),
      this.pool.query<RawExtraction>(HOST_FACTS_SQL.extractionThin, [h]),
    ]);
    return {
      facts: hostFacts(
        h,
        raw.rows[0],
        intervals.rows.map((x) => x.interval_ms),
        Number(outbound.rows[0]?.n ?? 0),
        Number(inbound.rows[0]?.n ?? 0),
        extractionFacts(counts.rows, thin.rows),
      ),
      scope: scopeOf(scope.rows),
    };
  }
}
