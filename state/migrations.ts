/**
 * Versioned schema migrations, applied in this order and recorded in schema_migrations.
 * Never edit a migration that has shipped: add a new one. Ids are `<area>-<nnn>-<what>`;
 * each area (keys, documents, crawler, entities, requests, …) appends its own.
 */
import { webmasterTablesSql } from './repos/webmaster-types.js';

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
  {
    id: 'crawler-001-frontier-hosts-links',
    sql: `
      -- The crawl frontier: one row per normalised URL (pages, sitemaps, llms.txt), durable across crashes.
      -- state: queued (waiting for next_at) | leased (a worker has it until lease_until) | retrying (failed, backing
      -- off until next_at) | done (completed; recrawl due at next_at) | dead (dead-lettered with dead_reason).
      CREATE TABLE frontier (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL UNIQUE,
        host TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'page' CHECK (kind IN ('page', 'sitemap', 'llms')),
        priority INTEGER NOT NULL,
        reason TEXT NOT NULL,
        request_id TEXT,
        state TEXT NOT NULL CHECK (state IN ('queued', 'leased', 'retrying', 'done', 'dead')),
        next_at INTEGER NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        dead_reason TEXT,
        etag TEXT,
        last_modified TEXT,
        last_status INTEGER,
        last_outcome TEXT,
        fetched_at INTEGER,
        changed_at INTEGER,
        recrawl_ms INTEGER,
        completions INTEGER NOT NULL DEFAULT 0,
        depth INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX frontier_ready ON frontier (host, state, next_at);
      CREATE INDEX frontier_due ON frontier (state, next_at);
      -- Per-host facts for svc_site (robots, llms.txt, last crawl). Aggregates only.
      CREATE TABLE crawl_hosts (
        host TEXT PRIMARY KEY,
        robots_status TEXT,
        robots_http_status INTEGER,
        robots_fetched_at TEXT,
        robots_rules TEXT,
        robots_sitemaps TEXT,
        robots_crawl_delay REAL,
        llms_present INTEGER,
        llms_fetched_at TEXT,
        llms_title TEXT,
        llms_summary TEXT,
        llms_link_count INTEGER,
        last_crawl_at TEXT,
        pages_fetched INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      -- Observed intervals between two content changes of a page, per host (the median is the host's change rate).
      CREATE TABLE host_change_intervals (
        host TEXT NOT NULL,
        at TEXT NOT NULL,
        interval_ms INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX host_change_intervals_host ON host_change_intervals (host, at);
      -- What each indexed page links to, aggregated per target host (replaced on every fetch of the page), so host
      -- aggregates (outbound links, inbound distinct hosts) stay right when pages change or go.
      CREATE TABLE page_host_links (
        page_ref INTEGER NOT NULL,
        from_host TEXT NOT NULL,
        to_host TEXT NOT NULL,
        links INTEGER NOT NULL,
        PRIMARY KEY (page_ref, to_host)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX page_host_links_to ON page_host_links (to_host, from_host);
      CREATE INDEX page_host_links_from ON page_host_links (from_host);
    `,
  },
  {
    id: 'crawler-002-frontier-due-index',
    sql: `
      -- A leased row's next_at is its lease expiry, so "due" is just next_at <= now, served by these indexes.
      CREATE INDEX frontier_next_at ON frontier (next_at);
      CREATE INDEX frontier_host_next_at ON frontier (host, next_at);
    `,
  },
  {
    id: 'entities-002-source-verified-at',
    sql: `
      -- When the source itself last confirmed its statement (a dataset's release date, a page's fetch), as opposed to
      -- observed_at, when svc read it. last_verified_at is the newest of these (issue 13). NULL: use observed_at.
      ALTER TABLE entity_sources ADD COLUMN verified_at TEXT;
    `,
  },
  {
    id: 'crawler-003-frontier-scope',
    sql: `
      -- Where links found under an entry may lead: a JSON array of hosts, or NULL for the open web. Links and sitemap
      -- entries inherit it, so every process crawling the frontier keeps a seed's scope (issue 13).
      ALTER TABLE frontier ADD COLUMN scope TEXT;
    `,
  },
  {
    id: 'entities-003-jsonld-parse-errors',
    sql: `
      -- JSON-LD blocks of a page that failed to parse, counted per closed-vocabulary reason, with provenance (page
      -- ref, URL, host) and no page text: webmaster diagnostics report them (issue 11). Replaced at every fetch.
      CREATE TABLE entity_parse_errors (
        page_ref INTEGER NOT NULL,
        page_url TEXT NOT NULL,
        host TEXT NOT NULL,
        reason TEXT NOT NULL CHECK (reason IN ('empty_block', 'invalid_json')),
        blocks INTEGER NOT NULL CHECK (blocks > 0),
        observed_at TEXT NOT NULL,
        PRIMARY KEY (page_ref, reason)
      ) STRICT;
      CREATE INDEX entity_parse_errors_host ON entity_parse_errors (host);
    `,
  },
];

/**
 * Migrations of the repository layer (state/repos/), appended after every area's own. Kept in their own list so
 * other areas can keep appending to `migrations` without id clashes; openStateDb applies both.
 */
export const repoMigrations: readonly Migration[] = [
  {
    id: 'repos-001-host-politeness',
    sql: `
      -- Per-host politeness shared by every crawler worker: a fetch of the host may start at next_fetch_at (ms) at
      -- the earliest; claiming a URL moves it by gap_ms in the same transaction (issue 10).
      CREATE TABLE host_politeness (
        host TEXT PRIMARY KEY,
        gap_ms INTEGER NOT NULL,
        next_fetch_at INTEGER NOT NULL DEFAULT 0
      ) STRICT;
    `,
  },
  {
    id: 'repos-002-host-ids',
    sql: `
      -- Host ids from the database (the index's host_id column is Int32), so several index writers agree (issue 10).
      CREATE TABLE host_ids (
        host_id INTEGER PRIMARY KEY AUTOINCREMENT,
        host TEXT NOT NULL UNIQUE
      );
    `,
  },
  {
    // The vocabularies in its CHECKs are frozen with this migration: widening them takes a new migration (the
    // webmaster contract test writes every AUDIT_EVENTS / AUDIT_OUTCOMES value, so a forgotten one fails there).
    id: 'webmaster-001-properties-proofs-audit-fast-lane',
    sql: webmasterTablesSql('sqlite'),
  },
  {
    id: 'repos-005-politeness-holder',
    sql: `
      -- Who holds a host's slot (a frontier lease token): claim() reserves the host for the item it hands out, so
      -- that item's first request starts at once while other workers wait for the gap (issue 10).
      ALTER TABLE host_politeness ADD COLUMN holder TEXT;
    `,
  },
  {
    id: 'outbox-001-outbox',
    sql: `
      -- Extracted pages from crawler workers to the indexer (svc serve --role crawler|indexer, issue 10). An entry
      -- is claimable while lease_until <= now (0: never claimed); acked entries are deleted.
      CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        page_ref INTEGER NOT NULL,
        payload TEXT NOT NULL,
        enqueued_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        lease TEXT,
        lease_until INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX outbox_claimable ON outbox (lease_until, id);
      CREATE INDEX outbox_lease ON outbox (lease);
    `,
  },
  {
    id: 'repos-006-frontier-host-rows',
    sql: `
      -- Frontier rows per host, kept with every insert (the per-host admission cap): exact for every process sharing
      -- the file, where each process used to count once and then keep its own tally (issue 10). Rows are never
      -- deleted from the frontier, so the count only grows.
      CREATE TABLE frontier_host_rows (
        host TEXT PRIMARY KEY,
        n INTEGER NOT NULL
      ) STRICT;
      INSERT INTO frontier_host_rows (host, n) SELECT host, count(*) FROM frontier GROUP BY host;
    `,
  },
  {
    id: 'repos-007-frontier-claim-by-host',
    sql: `
      -- claim() goes host by host: each host past its gap offers its best due row, one step down this index (issue
      -- 10; it used to read and sort every due row, even when every host was in its gap). nextClaimAt() reads each
      -- host's earliest live row along frontier_host_next_at. Both go through host_politeness, so every frontier host
      -- gets its row (those of data dirs older than the repositories had none; 1000 ms is the default gap).
      CREATE INDEX frontier_host_claim ON frontier (host, priority DESC, next_at, id) WHERE state <> 'dead';
      INSERT INTO host_politeness (host, gap_ms) SELECT DISTINCT host, 1000 FROM frontier WHERE true
        ON CONFLICT (host) DO NOTHING;
    `,
  },
  {
    id: 'crawler-003-page-extraction',
    sql: `
      -- How much main text each page's extraction kept and why a page yielded little (svc_site "extraction").
      CREATE TABLE page_extraction (
        url TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        page_chars INTEGER NOT NULL,
        kept_chars INTEGER NOT NULL,
        verdict TEXT NOT NULL,
        at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX page_extraction_host ON page_extraction (host, verdict, at);
    `,
  },
  {
    id: 'crawler-004-robots-fleet',
    sql: `
      -- Each origin's robots.txt as last fetched, shared by every crawler worker (RobotsRepo): one fetch per validity
      -- period for the fleet; lease_token / lease_until say who is fetching it now (times in ms).
      CREATE TABLE robots_files (
        origin TEXT PRIMARY KEY,
        status TEXT,
        fetched_at INTEGER,
        expires_at INTEGER NOT NULL DEFAULT 0,
        http_status INTEGER,
        url TEXT,
        error TEXT,
        truncated INTEGER NOT NULL DEFAULT 0,
        body BLOB,
        lease_token TEXT,
        lease_until INTEGER NOT NULL DEFAULT 0
      ) STRICT;
    `,
  },
  {
    id: 'shards-001-outbox-url-hash',
    sql: `
      -- The FNV-1a (32 bits) of the page's URL with each outbox entry, so an indexer owning some shards claims only
      -- theirs (url_hash % shard count); NULL for entries enqueued before it (claimed only by an indexer owning
      -- every shard).
      ALTER TABLE outbox ADD COLUMN url_hash INTEGER;
    `,
  },
  {
    id: 'shards-002-writer-leases',
    sql: `
      -- One writer per index shard (svc serve --role indexer --shards): who holds it, under which fencing token, and
      -- until when (ms); a lapsed lease may be taken by another indexer. token only grows.
      CREATE TABLE shard_writers (
        shard INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        token INTEGER NOT NULL,
        lease_until INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    id: 'searchers-001-registry',
    sql: `
      -- Searcher processes and the shards they serve (SearchersRepo); heartbeat_at in ms.
      CREATE TABLE searchers (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        shards TEXT NOT NULL,
        shard_count INTEGER NOT NULL,
        index_label TEXT NOT NULL,
        heartbeat_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
];
