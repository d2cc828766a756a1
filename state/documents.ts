import type { Statement } from 'better-sqlite3';
import { stmt, type StateDb } from './db.js';

/** Lifecycle of a URL in the index pipeline. */
export type DocumentStatus = 'known' | 'indexed' | 'excluded' | 'removed' | 'gone';

export interface DocumentRow {
  readonly pageRef: number;
  readonly url: string;
  readonly host: string;
  readonly title: string;
  readonly contentHash: string | null;
  readonly firstSeen: string | null;
  readonly lastChanged: string | null;
  readonly lastFetched: string | null;
  readonly status: DocumentStatus;
  readonly reason: string | null;
}

/** What an observation of fresh content changed, for the fresh feed. */
export type ContentChange = 'new' | 'changed' | 'unchanged';

/** A `documents` row (the same columns in SQLite and PostgreSQL). */
export interface DocRow {
  page_ref: number;
  url: string;
  host: string;
  title: string;
  content_hash: string | null;
  first_seen: string | null;
  last_changed: string | null;
  last_fetched: string | null;
  status: DocumentStatus;
  reason: string | null;
}

/**
 * What an indexed observation changes for the fresh feed: new (first time live), changed (other content) or
 * unchanged, and the first-seen / last-changed times that follow. One rule for every backend.
 */
export function classifyChange(
  cur: DocRow,
  contentHash: string,
  at: string,
): { change: ContentChange; firstSeen: string | null; lastChanged: string | null } {
  const change: ContentChange =
    cur.status !== 'indexed' || cur.first_seen === null ? 'new' : cur.content_hash !== contentHash ? 'changed' : 'unchanged';
  return { change, firstSeen: change === 'new' ? at : cur.first_seen, lastChanged: change === 'unchanged' ? cur.last_changed : at };
}

/** A `documents` row as a DocumentRow. */
export const toDocument = (r: DocRow): DocumentRow => ({
  pageRef: r.page_ref,
  url: r.url,
  host: r.host,
  title: r.title,
  contentHash: r.content_hash,
  firstSeen: r.first_seen,
  lastChanged: r.last_changed,
  lastFetched: r.last_fetched,
  status: r.status,
  reason: r.reason,
});

/**
 * The durable page_ref registry and per-page change history (SQLite).
 * page_ref values are never reused: a removed page keeps its number, and coming back restores it.
 */
export class Documents {
  readonly #db: StateDb;
  readonly #byUrl;
  readonly #byRef;
  readonly #insert;
  #fresh: Statement<[string, number], DocRow> | undefined;

  constructor(db: StateDb) {
    this.#db = db;
    this.#byUrl = db.prepare<[string], DocRow>('SELECT * FROM documents WHERE url = ?');
    this.#byRef = db.prepare<[number], DocRow>('SELECT * FROM documents WHERE page_ref = ?');
    this.#insert = db.prepare<[string, string]>('INSERT INTO documents (url, host) VALUES (?, ?) ON CONFLICT (url) DO NOTHING');
  }

  /** The page_ref for a normalised URL, allocated on first sight. */
  allocate(url: string, host: string): number {
    this.#insert.run(url, host);
    const row = this.#byUrl.get(url);
    if (!row) throw new Error('documents: allocation failed');
    return row.page_ref;
  }

  byUrl(url: string): DocumentRow | undefined {
    const r = this.#byUrl.get(url);
    return r ? toDocument(r) : undefined;
  }

  get(pageRef: number): DocumentRow | undefined {
    const r = this.#byRef.get(pageRef);
    return r ? toDocument(r) : undefined;
  }

  /**
   * Records that the page was fetched and indexed with this content hash. Returns whether the content is new
   * (first time indexed, or indexed again after removal), changed, or unchanged since the last observation.
   */
  recordIndexed(pageRef: number, obs: { contentHash: string; title: string; at: string }): ContentChange {
    return this.#db
      .transaction((): ContentChange => {
        const cur = this.#byRef.get(pageRef);
        if (!cur) throw new Error(`documents: unknown page_ref ${pageRef}`);
        const { change, firstSeen, lastChanged } = classifyChange(cur, obs.contentHash, obs.at);
        stmt(
          this.#db,
          `UPDATE documents SET title = ?, content_hash = ?, first_seen = ?, last_changed = ?, last_fetched = ?,
             status = 'indexed', reason = NULL WHERE page_ref = ?`,
        ).run(obs.title, obs.contentHash, firstSeen, lastChanged, obs.at, pageRef);
        return change;
      })
      .immediate();
  }

  /** Marks a page as not (or no longer) in the index, with the reason (noindex, robots, removal, 404, …). */
  recordExcluded(pageRef: number, status: Exclude<DocumentStatus, 'indexed' | 'known'>, reason: string, at: string): void {
    stmt(this.#db, 'UPDATE documents SET status = ?, reason = ?, last_fetched = ? WHERE page_ref = ?').run(status, reason, at, pageRef);
  }

  /** Crawled pages indexed now whose first sighting or last content change is at or after `since`, newest first. */
  fresh(since: string, limit: number): (DocumentRow & { change: 'new' | 'changed' })[] {
    this.#fresh ??= this.#db.prepare<[string, number], DocRow>(
      `SELECT * FROM documents WHERE status = 'indexed' AND last_changed >= ? AND url NOT LIKE 'corpus:%'
       ORDER BY last_changed DESC, page_ref DESC LIMIT ?`,
    );
    const rows = this.#fresh.all(since, limit);
    return rows.map((r) => ({ ...toDocument(r), change: r.first_seen === r.last_changed ? 'new' : 'changed' }));
  }

  /** Counts per status for a host (site evidence). */
  countsForHost(host: string): Record<DocumentStatus, number> {
    const out: Record<DocumentStatus, number> = { known: 0, indexed: 0, excluded: 0, removed: 0, gone: 0 };
    const rows = this.#db
      .prepare<
        [string],
        { status: DocumentStatus; n: number }
      >('SELECT status, count(*) AS n FROM documents WHERE host = ? GROUP BY status')
      .all(host);
    for (const r of rows) out[r.status] = r.n;
    return out;
  }
}
