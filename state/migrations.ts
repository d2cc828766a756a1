/**
 * Versioned schema migrations, applied in this order and recorded in schema_migrations.
 * Never edit a migration that has shipped: add a new one. Ids are `<area>-<nnn>-<what>`;
 * each area (keys, documents, crawler, entities, requests, …) appends its own.
 */
export interface Migration {
  readonly id: string;
  readonly sql: string;
}

export const migrations: readonly Migration[] = [
  {
    id: 'keys-001-keys-and-counters',
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        digest BLOB NOT NULL UNIQUE,
        per_minute INTEGER NOT NULL,
        per_day INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;
      -- Aggregate counters only: one row per key digest and window start. Nothing else about callers.
      CREATE TABLE usage_counters (
        digest BLOB NOT NULL,
        window TEXT NOT NULL CHECK (window IN ('minute', 'day')),
        window_start INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (digest, window, window_start)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    id: 'documents-001-documents',
    sql: `
      -- One row per normalised URL ever admitted to the index pipeline: the durable page_ref and the
      -- change history the fresh feed reads (first_seen, last_changed from the content hash).
      CREATE TABLE documents (
        page_ref INTEGER PRIMARY KEY AUTOINCREMENT,
        url TEXT NOT NULL UNIQUE,
        host TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        content_hash TEXT,
        first_seen TEXT,
        last_changed TEXT,
        last_fetched TEXT,
        status TEXT NOT NULL DEFAULT 'known'
          CHECK (status IN ('known', 'indexed', 'excluded', 'removed', 'gone')),
        reason TEXT
      );
      CREATE INDEX documents_host ON documents (host);
      CREATE INDEX documents_last_changed ON documents (last_changed) WHERE status = 'indexed';
      CREATE INDEX documents_first_seen ON documents (first_seen) WHERE status = 'indexed';
    `,
  },
];
