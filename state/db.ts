import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrations, repoMigrations, type Migration } from './migrations.js';

/** The transactional store: one SQLite file in WAL mode. */
export type StateDb = Database.Database;

// Statements by SQL text per database: preparing costs tens of µs, more than running these small queries.
const statements = new WeakMap<StateDb, Map<string, Database.Statement>>();

/**
 * The prepared statement for `sql` on `db`, prepared once. For `get`, `run` and `all`; a statement being iterated is
 * busy until its iterator ends, so `iterate` takes its own `db.prepare`.
 */
export function stmt(db: StateDb, sql: string): Database.Statement {
  let byText = statements.get(db);
  if (!byText) statements.set(db, (byText = new Map()));
  let st = byText.get(sql);
  if (!st) byText.set(sql, (st = db.prepare(sql)));
  return st;
}

/**
 * Opens (creating when needed) the SQLite state file and applies every pending migration in order.
 * WAL lets the HTTP server read while the crawler writes; busy_timeout absorbs short write contention.
 */
export function openStateDb(file: string, extra: readonly Migration[] = []): StateDb {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, [...migrations, ...repoMigrations, ...extra]);
  return db;
}

/** Applies migrations not yet recorded in schema_migrations, each in its own transaction, in list order. */
export function migrate(db: StateDb, list: readonly Migration[]): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    id TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const seen = new Set((db.prepare('SELECT id FROM schema_migrations').all() as { id: string }[]).map((r) => r.id));
  const ids = new Set<string>();
  const applied: string[] = [];
  for (const m of list) {
    if (ids.has(m.id)) throw new Error(`duplicate migration id ${m.id}`);
    ids.add(m.id);
    if (seen.has(m.id)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)').run(m.id, new Date().toISOString());
    })();
    applied.push(m.id);
  }
  return applied;
}
