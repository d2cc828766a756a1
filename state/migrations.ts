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
  {
    id: 'entities-001-entities',
    sql: `
      -- Canadian establishments merged from sources (crawled JSON-LD, open-data rows). seq feeds the FTS rowid.
      CREATE TABLE entities (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        street TEXT,
        locality TEXT,
        locality_key TEXT,
        province TEXT,
        postal_code TEXT,
        country TEXT NOT NULL DEFAULT 'CA',
        lat REAL,
        lon REAL,
        telephone TEXT,
        url TEXT,
        last_verified_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX entities_place ON entities (province, locality_key);
      CREATE INDEX entities_kind ON entities (kind);
      -- One row per source statement: a JSON-LD node of a page, or a dataset row. facts = the mapped JSON.
      CREATE TABLE entity_sources (
        source_key TEXT PRIMARY KEY,
        entity_seq INTEGER NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
        type TEXT NOT NULL CHECK (type IN ('page', 'dataset')),
        page_ref INTEGER,
        page_url TEXT,
        dataset TEXT,
        row_id TEXT,
        facts TEXT NOT NULL,
        observed_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX entity_sources_page ON entity_sources (page_ref) WHERE page_ref IS NOT NULL;
      CREATE INDEX entity_sources_entity ON entity_sources (entity_seq);
      -- Matching keys contributed by each source (a source's keys go with it).
      CREATE TABLE entity_keys (
        key TEXT NOT NULL,
        source_key TEXT NOT NULL REFERENCES entity_sources (source_key) ON DELETE CASCADE,
        entity_seq INTEGER NOT NULL,
        PRIMARY KEY (key, source_key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX entity_keys_source ON entity_keys (source_key);
      CREATE VIRTUAL TABLE entity_names USING fts5 (name, tokenize = 'unicode61 remove_diacritics 2');
    `,
  },
  {
    id: 'requests-001-requests',
    sql: `
      -- URL requests (discovery, recrawl, correction, removal). key_digest = SHA-256 of the API key, never the key.
      CREATE TABLE url_requests (
        id TEXT PRIMARY KEY,
        key_digest TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('discovery', 'recrawl', 'correction', 'removal')),
        url TEXT NOT NULL,
        host TEXT NOT NULL,
        note TEXT,
        idempotency_digest TEXT,
        status TEXT NOT NULL CHECK (status IN ('received', 'queued', 'in_progress', 'completed', 'failed')),
        outcome TEXT,
        reason TEXT,
        history TEXT NOT NULL,
        received_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX url_requests_open ON url_requests (key_digest, type, url) WHERE status IN ('received', 'queued', 'in_progress');
      CREATE UNIQUE INDEX url_requests_idem ON url_requests (key_digest, idempotency_digest) WHERE idempotency_digest IS NOT NULL;
      CREATE INDEX url_requests_quota ON url_requests (key_digest, received_at);
      CREATE INDEX url_requests_status ON url_requests (status, updated_at);
    `,
  },
];
