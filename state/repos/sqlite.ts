/**
 * The SQLite backend of the repositories (the embedded default), assembled over one better-sqlite3 connection.
 * Every operation is one synchronous transaction (BEGIN IMMEDIATE when it reads then writes), so processes sharing
 * the file get PostgreSQL's semantics; the async signatures are only for parity.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { openStateDb, type StateDb } from '../db.js';
import { EntityStore } from '../entities.js';
import { RateLimiter } from '../rate-limits.js';
import { sqlitePropertyState } from './property-state.js';
import { SqliteDocuments } from './sqlite/documents.js';
import { sqliteEntities } from './sqlite/entities.js';
import { SqliteFrontier } from './sqlite/frontier.js';
import { sqliteHostFacts } from './sqlite/host-facts.js';
import { SqliteHostIds } from './sqlite/host-ids.js';
import { SqliteKeys } from './sqlite/keys.js';
import { SqliteOutbox } from './sqlite/outbox.js';
import { SqliteShardWriters } from './sqlite/shard-writers.js';
import { SqliteSearchers } from './sqlite/searchers.js';
import { SqlitePoliteness } from './sqlite/politeness.js';
import { SqliteRobots } from './sqlite/robots.js';
import { SqliteRequests } from './sqlite/requests.js';
import { limiterUsage, SqliteUsage } from './sqlite/usage.js';
import { SqliteWebmaster } from './sqlite/webmaster.js';
import type { Repositories } from './types.js';

export { sqliteEntities } from './sqlite/entities.js';

export interface SqliteRepoOptions {
  /** Gap between two fetch starts on a host not yet given its own (ms). @default 1000 */
  readonly defaultGapMs?: number;
  /**
   * Usage counters decided in memory and reserved in blocks (state/rate-limits.ts) instead of a transaction per
   * decision: exact in-process and never over-admitting after a crash. Only for one process owning the data dir.
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
    robots: new SqliteRobots(db),
    hostIds: new SqliteHostIds(db),
    documents: new SqliteDocuments(db),
    requests: new SqliteRequests(db),
    entities: sqliteEntities(new EntityStore(db)),
    hosts: sqliteHostFacts(db),
    webmaster: new SqliteWebmaster(db),
    propertyState: sqlitePropertyState(db),
    outbox: new SqliteOutbox(db),
    shardWriters: new SqliteShardWriters(db),
    searchers: new SqliteSearchers(db),
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
