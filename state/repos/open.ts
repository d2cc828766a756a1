/**
 * Chooses the backend: SVC_DATABASE_URL=postgres://… → PostgreSQL; otherwise the embedded SQLite file in the data
 * dir (the default, unchanged for users). Opening migrates.
 */
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { isPostgresUrl } from './database-url.js';
import type { StateDb } from '../db.js';
import { openSqliteRepositories, sqliteRepositories } from './sqlite.js';
import type { Repositories } from './types.js';

export interface OpenRepositoriesOptions {
  readonly dataDir: string;
  readonly databaseUrl?: string | undefined;
  /** Gap between two fetch starts on a host not yet given its own (ms). @default 1000 */
  readonly defaultGapMs?: number;
  /**
   * For the SQLite backend only: the data dir's state file already open in this process (svc serve: the crawler
   * writes through it), so the repositories share that one connection instead of opening a second one; the caller
   * keeps owning it. `inProcessUsage` keeps the usage counters in memory (see SqliteRepoOptions).
   */
  readonly embedded?: { readonly db: StateDb; readonly inProcessUsage?: boolean };
  /** PostgreSQL: statement bound (ms). @default 3000 (config.ts databaseStatementTimeoutMs) */
  readonly statementTimeoutMs?: number;
  /** PostgreSQL: connection and pool-acquisition bound (ms). @default 3000 (config.ts databaseConnectTimeoutMs) */
  readonly connectTimeoutMs?: number;
}

/** What the configuration says about where the state is and how long to wait for it. */
export function stateOptions(
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'databaseStatementTimeoutMs' | 'databaseConnectTimeoutMs'>,
): OpenRepositoriesOptions {
  return {
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  };
}

export async function openRepositories(opts: OpenRepositoriesOptions): Promise<Repositories> {
  const gap = opts.defaultGapMs === undefined ? {} : { defaultGapMs: opts.defaultGapMs };
  if (isPostgresUrl(opts.databaseUrl)) {
    const { statementTimeoutMs, connectTimeoutMs } = opts;
    // Loaded only here: a process on the SQLite state never loads the PostgreSQL client.
    const { openPostgresRepositories } = await import('./postgres.js');
    return openPostgresRepositories(opts.databaseUrl, { ...gap, statementTimeoutMs, connectTimeoutMs });
  }
  if (opts.embedded) return sqliteRepositories(opts.embedded.db, { ...gap, inProcessUsage: opts.embedded.inProcessUsage ?? false });
  return openSqliteRepositories(join(opts.dataDir, 'state.sqlite'), gap);
}

/** The database URL with any password replaced, for messages and logs (credentials are never printed). */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
