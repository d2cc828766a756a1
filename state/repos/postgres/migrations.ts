/**
 * Versioned PostgreSQL migrations of the repositories, applied in order and recorded in schema_migrations (same
 * ids as the SQLite migrations where the tables match). Never edit a shipped migration: append one.
 * Times stay ISO-8601 TEXT and ms BIGINT exactly as in SQLite, so both backends share row mappers.
 */
import type { Migration } from '../../migrations.js';
import { webmasterTablesSql } from '../webmaster-types.js';

export const pgMigrations: readonly Migration[] = [
  {
    id: 'keys-001-keys-and-counters',
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        digest BYTEA NOT NULL UNIQUE,
        per_minute INTEGER NOT NULL,
        per_day INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      -- Aggregate counters only ("window" is a reserved word in PostgreSQL, hence the quotes).
      CREATE TABLE usage_counters (
        digest BYTEA NOT NULL,
        "window" TEXT NOT NULL CHECK ("window" IN ('minute', 'day')),
        window_start BIGINT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (digest, "window", window_start)
      );
    `,
  },
  {
    id: 'documents-001-documents',
    sql: `
      CREATE TABLE documents (
        page_ref BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        url TEXT NOT NULL UNIQUE,
        host TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        content_hash TEXT,
        first_seen TEXT,
        last_changed TEXT,
        last_fetched TEXT,
        status TEXT NOT NULL DEFAULT 'known' CHECK (status IN ('known', 'indexed', 'excluded', 'removed', 'gone')),
        reason TEXT
      );
      CREATE INDEX documents_host ON documents (host);
      CREATE INDEX documents_last_changed ON documents (last_changed) WHERE status = 'indexed';
      CREATE INDEX documents_first_seen ON documents (first_seen) WHERE status = 'indexed';
    `,
  },
  {
    id: 'requests-001-requests',
    sql: `
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
      );
      CREATE INDEX url_requests_open ON url_requests (key_digest, type, url) WHERE status IN ('received', 'queued', 'in_progress');
      CREATE UNIQUE INDEX url_requests_idem ON url_requests (key_digest, idempotency_digest) WHERE idempotency_digest IS NOT NULL;
      CREATE INDEX url_requests_quota ON url_requests (key_digest, received_at);
      CREATE INDEX url_requests_status ON url_requests (status, updated_at);
    `,
  },
  {
    id: 'crawler-001-frontier',
    sql: `
      -- The crawl frontier; a leased row's next_at is its lease expiry, so "due" is next_at <= now for every state.
      CREATE TABLE frontier (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        url TEXT NOT NULL UNIQUE,
        host TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'page' CHECK (kind IN ('page', 'sitemap', 'llms')),
        priority INTEGER NOT NULL,
        reason TEXT NOT NULL,
        request_id TEXT,
        state TEXT NOT NULL CHECK (state IN ('queued', 'leased', 'retrying', 'done', 'dead')),
        next_at BIGINT NOT NULL,
        lease_owner TEXT,
        lease_until BIGINT,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        dead_reason TEXT,
        etag TEXT,
        last_modified TEXT,
        last_status INTEGER,
        last_outcome TEXT,
        fetched_at BIGINT,
        changed_at BIGINT,
        recrawl_ms BIGINT,
        completions INTEGER NOT NULL DEFAULT 0,
        depth INTEGER NOT NULL DEFAULT 0,
        scope TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE INDEX frontier_due ON frontier (state, next_at);
      CREATE INDEX frontier_host_next_at ON frontier (host, next_at);
    `,
  },
  {
    id: 'repos-001-host-politeness',
    sql: `
      -- Per-host politeness shared by every crawler worker (see the SQLite migration of the same id).
      CREATE TABLE host_politeness (
        host TEXT PRIMARY KEY,
        gap_ms INTEGER NOT NULL,
        next_fetch_at BIGINT NOT NULL DEFAULT 0
      );
    `,
  },
  {
    id: 'repos-002-host-ids',
    sql: `
      -- Host ids from the database; INTEGER because the index stores host_id as Int32.
      CREATE TABLE host_ids (
        host_id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        host TEXT NOT NULL UNIQUE
      );
    `,
  },
  {
    id: 'repos-003-consume-quota-function',
    sql: `
      -- One quota decision in one round trip: make sure both counter rows exist, lock them in a fixed order
      -- (day, then minute: no deadlocks), and increment both only when both have room. Every replica serialises on
      -- these two rows, so N concurrent calls against a remaining quota Q admit exactly Q. Counts are before the call.
      CREATE FUNCTION svc_consume_quota(p_digest BYTEA, p_day BIGINT, p_minute BIGINT, p_per_day INTEGER, p_per_minute INTEGER)
      RETURNS TABLE (admitted BOOLEAN, day_count INTEGER, minute_count INTEGER)
      LANGUAGE plpgsql AS $$
      DECLARE
        d INTEGER;
        m INTEGER;
      BEGIN
        INSERT INTO usage_counters (digest, "window", window_start, count)
          VALUES (p_digest, 'day', p_day, 0), (p_digest, 'minute', p_minute, 0)
          ON CONFLICT DO NOTHING;
        SELECT u.count INTO d FROM usage_counters u
          WHERE u.digest = p_digest AND u."window" = 'day' AND u.window_start = p_day FOR UPDATE;
        SELECT u.count INTO m FROM usage_counters u
          WHERE u.digest = p_digest AND u."window" = 'minute' AND u.window_start = p_minute FOR UPDATE;
        IF d < p_per_day AND m < p_per_minute THEN
          UPDATE usage_counters u SET count = u.count + 1
            WHERE u.digest = p_digest
              AND ((u."window" = 'day' AND u.window_start = p_day) OR (u."window" = 'minute' AND u.window_start = p_minute));
          RETURN QUERY SELECT true, d, m;
        ELSE
          RETURN QUERY SELECT false, d, m;
        END IF;
      END
      $$;
    `,
  },
  {
    // Same tables as SQLite's webmaster-001; CHECK vocabularies frozen with it.
    id: 'webmaster-001-properties-proofs-audit-fast-lane',
    sql: webmasterTablesSql('postgres'),
  },
  {
    id: 'repos-004-host-facts',
    sql: `
      -- Host facts svc_site reads (the SQLite tables of crawler-001, same columns; written by the crawler).
      CREATE TABLE IF NOT EXISTS crawl_hosts (
        host TEXT PRIMARY KEY,
        robots_status TEXT,
        robots_http_status INTEGER,
        robots_fetched_at TEXT,
        robots_rules TEXT,
        robots_sitemaps TEXT,
        robots_crawl_delay DOUBLE PRECISION,
        llms_present INTEGER,
        llms_fetched_at TEXT,
        llms_title TEXT,
        llms_summary TEXT,
        llms_link_count INTEGER,
        last_crawl_at TEXT,
        pages_fetched INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE IF NOT EXISTS host_change_intervals (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        host TEXT NOT NULL,
        at TEXT NOT NULL,
        interval_ms BIGINT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS host_change_intervals_host ON host_change_intervals (host, at);
      CREATE TABLE IF NOT EXISTS page_host_links (
        page_ref BIGINT NOT NULL,
        from_host TEXT NOT NULL,
        to_host TEXT NOT NULL,
        links INTEGER NOT NULL,
        PRIMARY KEY (page_ref, to_host)
      );
      CREATE INDEX IF NOT EXISTS page_host_links_to ON page_host_links (to_host, from_host);
      CREATE INDEX IF NOT EXISTS page_host_links_from ON page_host_links (from_host);
    `,
  },
  {
    id: 'repos-005-politeness-holder',
    sql: `
      -- Who holds a host's slot (see the SQLite migration of the same id).
      ALTER TABLE host_politeness ADD COLUMN holder TEXT;
    `,
  },
  {
    id: 'outbox-001-outbox',
    sql: `
      -- Extracted pages from crawler workers to the indexer (see the SQLite migration of the same id).
      CREATE TABLE outbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        page_ref BIGINT NOT NULL,
        payload TEXT NOT NULL,
        enqueued_at BIGINT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        lease TEXT,
        lease_until BIGINT NOT NULL DEFAULT 0
      );
      CREATE INDEX outbox_claimable ON outbox (lease_until, id);
      CREATE INDEX outbox_lease ON outbox (lease);
    `,
  },
  {
    id: 'entities-pg-001-entities',
    sql: `
      -- Entities on PostgreSQL (the SQLite tables of entities-001/002/003, same columns), plus what the name search
      -- needs instead of FTS5 (state/repos/postgres/entities.ts says why): name_tokens, the folded words of all the
      -- entity's names, name_tsv = array_to_tsvector(name_tokens) under GIN, name_sort (SQLite's NOCASE order) and
      -- entity_name_stats (bm25's totals).
      CREATE TABLE entities (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        name_sort TEXT NOT NULL,
        kind TEXT NOT NULL,
        street TEXT,
        locality TEXT,
        locality_key TEXT,
        province TEXT,
        postal_code TEXT,
        country TEXT NOT NULL DEFAULT 'CA',
        lat DOUBLE PRECISION,
        lon DOUBLE PRECISION,
        telephone TEXT,
        url TEXT,
        last_verified_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        name_tokens TEXT[] NOT NULL DEFAULT '{}',
        name_tsv TSVECTOR NOT NULL DEFAULT ''
      );
      CREATE INDEX entities_place ON entities (province, locality_key);
      CREATE INDEX entities_kind ON entities (kind);
      CREATE INDEX entities_name_tsv ON entities USING GIN (name_tsv);
      CREATE TABLE entity_sources (
        source_key TEXT PRIMARY KEY,
        entity_seq BIGINT NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
        type TEXT NOT NULL CHECK (type IN ('page', 'dataset')),
        page_ref BIGINT,
        page_url TEXT,
        dataset TEXT,
        row_id TEXT,
        facts TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        verified_at TEXT
      );
      CREATE INDEX entity_sources_page ON entity_sources (page_ref) WHERE page_ref IS NOT NULL;
      CREATE INDEX entity_sources_entity ON entity_sources (entity_seq);
      CREATE TABLE entity_keys (
        key TEXT NOT NULL,
        source_key TEXT NOT NULL REFERENCES entity_sources (source_key) ON DELETE CASCADE,
        entity_seq BIGINT NOT NULL,
        PRIMARY KEY (key, source_key)
      );
      CREATE INDEX entity_keys_source ON entity_keys (source_key);
      -- bm25's table totals (entities, name tokens), kept by every entity write under the entity write lock, so a
      -- search reads one row instead of scanning the tokens.
      CREATE TABLE entity_name_stats (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        entities BIGINT NOT NULL,
        tokens BIGINT NOT NULL
      );
      INSERT INTO entity_name_stats (id, entities, tokens) VALUES (1, 0, 0);
      -- JSON-LD blocks of a page that failed to parse (see the SQLite migration entities-003-jsonld-parse-errors).
      CREATE TABLE entity_parse_errors (
        page_ref BIGINT NOT NULL,
        page_url TEXT NOT NULL,
        host TEXT NOT NULL,
        reason TEXT NOT NULL CHECK (reason IN ('empty_block', 'invalid_json')),
        blocks INTEGER NOT NULL CHECK (blocks > 0),
        observed_at TEXT NOT NULL,
        PRIMARY KEY (page_ref, reason)
      );
      CREATE INDEX entity_parse_errors_host ON entity_parse_errors (host);
    `,
  },
  {
    id: 'crawler-pg-002-frontier-claim-order',
    sql: `
      -- The order FrontierRepo.claim takes due URLs in (priority DESC, next_at, id; dead rows never): the claim walks
      -- this index and stops at the first due row whose host is free, instead of sorting every due row
      -- (bench/frontier-claim-pg.ts, docs/benchmarks.md).
      CREATE INDEX frontier_claim_order ON frontier (priority DESC, next_at, id) WHERE state <> 'dead';
    `,
  },
  {
    id: 'repos-006-frontier-host-rows',
    sql: `
      -- Frontier rows per host, kept with every insert (the per-host admission cap): a new row takes one from its
      -- host's count with a conditional upsert that locks the count row, so the cap is exact for the whole fleet
      -- (each worker used to count once and then keep its own tally). Frontier rows are never deleted.
      CREATE TABLE frontier_host_rows (
        host TEXT PRIMARY KEY,
        n BIGINT NOT NULL
      );
      INSERT INTO frontier_host_rows (host, n) SELECT host, count(*) FROM frontier GROUP BY host;
    `,
  },
  {
    id: 'crawler-pg-003-page-extraction',
    sql: `
      -- How much main text each page's extraction kept and why a page yielded little (svc_site "extraction").
      CREATE TABLE page_extraction (
        url TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        page_chars INTEGER NOT NULL,
        kept_chars INTEGER NOT NULL,
        verdict TEXT NOT NULL,
        at TEXT NOT NULL
      );
      CREATE INDEX page_extraction_host ON page_extraction (host, verdict, at);
    `,
  },
  {
    id: 'crawler-pg-004-robots-fleet',
    sql: `
      -- Each origin's robots.txt as last fetched, shared by every crawler worker (see the SQLite migration
      -- crawler-004-robots-fleet).
      CREATE TABLE robots_files (
        origin TEXT PRIMARY KEY,
        status TEXT,
        fetched_at BIGINT,
        expires_at BIGINT NOT NULL DEFAULT 0,
        http_status INTEGER,
        url TEXT,
        error TEXT,
        truncated BOOLEAN NOT NULL DEFAULT false,
        body BYTEA,
        lease_token TEXT,
        lease_until BIGINT NOT NULL DEFAULT 0
      );
    `,
  },
  {
    id: 'shards-pg-001-outbox-url-hash',
    sql: `
      -- The FNV-1a of each outbox entry's URL, for claims by shard (see the SQLite migration shards-001-outbox-url-hash).
      ALTER TABLE outbox ADD COLUMN url_hash BIGINT;
    `,
  },
  {
    id: 'shards-pg-002-writer-leases',
    sql: `
      -- One writer per index shard, fenced (see the SQLite migration shards-002-writer-leases); tokens come from
      -- shard_writer_tokens so a shard's token only grows, whoever takes it.
      CREATE TABLE shard_writers (
        shard INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        token BIGINT NOT NULL,
        lease_until BIGINT NOT NULL
      );
      CREATE SEQUENCE shard_writer_tokens;
    `,
  },
  {
    id: 'searchers-pg-001-registry',
    sql: `
      -- Searcher processes (svc serve --role searcher) and the shards they serve; heartbeat_at is the database's
      -- clock in ms, so an entry's age never depends on the machines' clocks.
      CREATE TABLE searchers (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        shards TEXT NOT NULL,
        shard_count INTEGER NOT NULL,
        index_label TEXT NOT NULL,
        heartbeat_at BIGINT NOT NULL
      );
    `,
  },
];
