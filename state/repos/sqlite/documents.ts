/** The document registry on SQLite: durable page refs, first seen and last changed (the fresh feed). */
import { stmt, type StateDb } from '../../db.js';
import { classifyChange, FRESH_SQL, freshRow, toDocument, type DocRow } from '../rows.js';
import { type DocumentsRepo, type DocumentStatus } from '../types.js';

export class SqliteDocuments implements DocumentsRepo {
  constructor(readonly db: StateDb) {}

  async allocate(url: string, host: string) {
    const r = stmt(
      this.db,
      'INSERT INTO documents (url, host) VALUES (?, ?) ON CONFLICT (url) DO UPDATE SET url = excluded.url RETURNING page_ref',
    ).get(url, host) as { page_ref: number };
    return r.page_ref;
  }

  async get(pageRef: number) {
    const r = stmt(this.db, 'SELECT * FROM documents WHERE page_ref = ?').get(pageRef) as DocRow | undefined;
    return r ? toDocument(r) : null;
  }

  async byUrl(url: string) {
    const r = stmt(this.db, 'SELECT * FROM documents WHERE url = ?').get(url) as DocRow | undefined;
    return r ? toDocument(r) : null;
  }

  async recordIndexed(pageRef: number, obs: { contentHash: string; title: string; at: string }) {
    return this.db
      .transaction(() => {
        const cur = stmt(this.db, 'SELECT * FROM documents WHERE page_ref = ?').get(pageRef) as DocRow | undefined;
        if (!cur) throw new Error(`documents: unknown page_ref ${pageRef}`);
        const c = classifyChange(cur, obs.contentHash, obs.at);
        stmt(
          this.db,
          `UPDATE documents SET title = ?, content_hash = ?, first_seen = ?, last_changed = ?, last_fetched = ?,
             status = 'indexed', reason = NULL WHERE page_ref = ?`,
        ).run(obs.title, obs.contentHash, c.firstSeen, c.lastChanged, obs.at, pageRef);
        return c.change;
      })
      .immediate();
  }

  async recordExcluded(pageRef: number, status: 'excluded' | 'removed' | 'gone', reason: string, at: string) {
    stmt(this.db, 'UPDATE documents SET status = ?, reason = ?, last_fetched = ? WHERE page_ref = ?').run(status, reason, at, pageRef);
  }

  async counts() {
    const rows = stmt(this.db, 'SELECT status, count(*) AS n FROM documents GROUP BY status').all() as {
      status: DocumentStatus;
      n: number;
    }[];
    return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Partial<Record<DocumentStatus, number>>;
  }

  async fresh(since: string, limit: number) {
    return (stmt(this.db, FRESH_SQL.replace('$1', '?').replace('$2', '?')).all(since, limit) as DocRow[]).map(freshRow);
  }
}
