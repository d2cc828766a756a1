/**
 * The PostgreSQL driver every PostgreSQL repository shares: the pool with its bounded waits, the `Db`/`Queryable`
 * the repositories query through, the translation of an unreachable or stalled database into the service's
 * `unavailable` error, and the migration runner.
 */
import pg from 'pg';
import { SvcError } from '../../../errors.js';
import type { Migration } from '../../migrations.js';
import { pgMigrations } from './migrations.js';

/** How long the driver waits for the database; every wait is bounded (config.ts says how each is set). */
export interface PgTimeouts {
  /**
   * A statement running longer is cancelled by the server (statement_timeout); the client gives up on an answer
   * this long plus `QUERY_GRACE_MS` after sending it (a stalled server cancels nothing). @default 3000
   */
  readonly statementTimeoutMs?: number;
  /** Opening a connection, or waiting for a free one of the pool, gives up after this long. @default 3000 */
  readonly connectTimeoutMs?: number;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 3000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;
/** Time the server's own cancellation gets to arrive before the client stops waiting (it keeps the connection usable). */
export const QUERY_GRACE_MS = 1000;

const INT8 = 20;
// ms timestamps and identity ids are BIGINT; they stay far below 2^53, so numbers are exact and rows match SQLite's.
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

export { isPostgresUrl } from '../database-url.js';

/** Seconds a client is told to wait when the database cannot be reached (Retry-After). */
export const STATE_RETRY_AFTER_S = 5;

/**
 * A pool whose every wait is bounded: connecting and waiting for a free client (connectionTimeoutMillis), each
 * statement on the server (statement_timeout), each answer on the client (query_timeout, for a server that is
 * stalled rather than down), and a transaction left idle by a stalled client (it would hold its row locks).
 */
export function createPool(url: string, max: number, timeouts: PgTimeouts = {}): pg.Pool {
  const statement = timeouts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types,
    connectionTimeoutMillis: timeouts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    statement_timeout: statement,
    query_timeout: statement + QUERY_GRACE_MS,
    idle_in_transaction_session_timeout: 2 * (statement + QUERY_GRACE_MS),
    // A peer that vanished without closing (host down, network cut) is noticed by TCP keepalive, not never.
    keepAlive: true,
  });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

// Connection-class failures: the server is down, restarting, refusing connections, out of slots or not answering.
// SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, crash recovery), 53300
// (too_many_connections), 57014 (statement_timeout cancelled it), and the socket errors Node reports.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '53300',
  '57014',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Query read timeout/i;

/** True when `err` says the database cannot be reached or does not answer in time (as opposed to a bad query). */
export function isConnectionFailure(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true;
  return err instanceof Error && UNAVAILABLE_MESSAGES.test(err.message);
}

/** True when the client gave up waiting for an answer: that connection's protocol state is unknown, so it is dropped. */
const isReadTimeout = (err: unknown): boolean => err instanceof Error && /Query read timeout/.test(err.message);

/**
 * A temporary outage becomes the service's own `unavailable` error (503 with Retry-After on REST and MCP); the
 * pool reconnects on its own once the server is back, so nothing else has to recover. Other errors pass unchanged.
 */
export function translate(err: unknown): never {
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
      // A client whose connection failed must not go back to the pool; a stalled one would not answer ROLLBACK
      // either (the server rolls back when the connection closes).
      if (isConnectionFailure(err)) broken = err;
      if (!isReadTimeout(err)) await c.query('ROLLBACK').catch(() => undefined);
      return translate(err);
    } finally {
      c.release(broken instanceof Error ? broken : undefined);
    }
  }
}

/**
 * Applies pending migrations in one transaction under an advisory lock, so processes starting together neither
 * race nor half-apply (DDL is transactional in PostgreSQL). Returns the ids applied now. A migration may take
 * longer than a request's statement bound (an index build on a large table), so the bound is lifted for it.
 */
export async function migratePostgres(pool: pg.Pool, list: readonly Migration[] = pgMigrations): Promise<string[]> {
  // Nothing to apply (every start but the first after an upgrade): a bounded read, so a stalled database fails fast.
  const recorded = await pool.query<{ id: string }>('SELECT id FROM schema_migrations').then(
    (r) => new Set(r.rows.map((row) => row.id)),
    (err: unknown) => {
      if ((err as { code?: unknown })?.code === UNDEFINED_TABLE) return new Set<string>();
      throw err;
    },
  );
  if (list.every((m) => recorded.has(m.id))) return [];
  const c = await pool.connect();
  // query_timeout per query is read by pg's Client.query but missing from @types/pg's QueryConfig.
  const unbounded = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
    c.query<R>({ text, values, query_timeout: MIGRATION_WAIT_MS } as pg.QueryConfig);
  try {
    await unbounded('BEGIN');
    await unbounded('SET LOCAL statement_timeout = 0');
    await unbounded(`SELECT pg_advisory_xact_lock(hashtext('svc:migrate'))`);
    await unbounded('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
    const seen = new Set((await unbounded<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id));
    const applied: string[] = [];
    for (const m of list) {
      if (seen.has(m.id)) continue;
      await unbounded(m.sql);
      await unbounded('INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2)', [m.id, new Date().toISOString()]);
      applied.push(m.id);
    }
    await unbounded('COMMIT');
    return applied;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

/** How long the client waits on one migration statement (the server does not bound it). */
const MIGRATION_WAIT_MS = 30 * 60_000;
const UNDEFINED_TABLE = '42P01';
