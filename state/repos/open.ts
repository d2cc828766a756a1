/**
 * Chooses the backend: SVC_DATABASE_URL=postgres://… → PostgreSQL; otherwise the embedded SQLite file in the data
 * dir (the default, unchanged for users). Opening migrates.
 */
import { join } from 'node:path';
import { isPostgresUrl, openPostgresRepositories } from './postgres.js';
import { openSqliteRepositories } from './sqlite.js';
import type { Repositories } from './types.js';

export interface OpenRepositoriesOptions {
  readonly dataDir: string;
  readonly databaseUrl?: string | undefined;
  /** Gap between two fetch starts on a host not yet given its own (ms). @default 1000 */
  readonly defaultGapMs?: number;
}

export async function openRepositories(opts: OpenRepositoriesOptions): Promise<Repositories> {
  const gap = opts.defaultGapMs === undefined ? {} : { defaultGapMs: opts.defaultGapMs };
  if (isPostgresUrl(opts.databaseUrl)) return openPostgresRepositories(opts.databaseUrl, gap);
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
