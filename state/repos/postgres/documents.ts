/** The document registry on PostgreSQL: durable page refs, first seen and last changed (the fresh feed). */
import { classifyChange, FRESH_SQL, freshRow, toDocument, type DocRow } from '../rows.js';
import { type DocumentsRepo, type DocumentStatus } from '../types.js';
import type { Db } from './db.js';

export class PgDocuments implements DocumentsRepo {
  constructor(readonly pool: Db) {}

  async allocate(url: string, host: string) {
    // Known URLs (the common case) cost one read and write nothing. For a new one, DO UPDATE (a no-op) rather than
    // DO NOTHING so RETURNING also gives the page_ref a concurrent allocator of the same URL just created.
    const known = (await this.pool.query<{ page_ref: number }>('SELECT page_ref FROM documents WHERE url = $1', [url])).rows[0];
    if (known) return known.page_ref;
    const r = await this.pool.query<{ page_ref: number }>(
      'INSERT INTO documents (url, host) VALUES ($1, $2) ON CONFLICT (url) DO UPDATE SET url = excluded.url RETURNING page_ref',
      [url, host],
    );
    return (r.rows[0] as { page_ref: number }).page_ref;
  }

  async get(pageRef: number) {
    const r = (await this.pool.query<DocRow>('SELECT * FROM documents WHERE page_ref = $1', [pageRef])).rows[0];
    return r ? toDocument(r) : null;
  }

  async byUrl(url: string) {
    const r = (await this.pool.query<DocRow>('SELECT * FROM documents WHERE url = $1', [url])).rows[0];
    return r ? toDocument(r) : null;
  }

  async recordIndexed(pageRef: number, obs: { contentHash: string; title: string; at: string }) {
    return this.pool.transaction(async (c) => {
      const cur = (await c.query<DocRow>('SELECT * FROM documents WHERE page_ref = $1 FOR UPDATE', [pageRef])).rows[0];
      if (!cur) throw new Error(`documents: unknown page_ref ${pageRef}`);
      const ch = classifyChange(cur, obs.contentHash, obs.at);
      await c.query(
        `UPDATE documents SET title = $1, content_hash = $2, first_seen = $3, last_changed = $4, last_fetched = $5,
           status = 'indexed', reason = NULL WHERE page_ref = $6`,
        [obs.title, obs.contentHash, ch.firstSeen, ch.lastChanged, obs.at, pageRef],
      );
      return ch.change;
    });
  }

  async recordExcluded(pageRef: number, status: 'excluded' | 'removed' | 'gone', reason: string, at: string) {
    await this.pool.query('UPDATE documents SET status = $1, reason = $2, last_fetched = $3 WHERE page_ref = $4', [
      status,
      reason,
      at,
      pageRef,
    ]);
  }

  async counts() {
    const rows = (
      await this.pool.query<{ status: DocumentStatus; n: number }>('SELECT status, count(*) AS n FROM documents GROUP BY status')
    ).rows;
    return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Partial<Record<DocumentStatus, number>>;
  }

  async fresh(since: string, limit: number) {
    return (await this.pool.query<DocRow>(FRESH_SQL, [since, limit])).rows.map(freshRow);
  }
}
