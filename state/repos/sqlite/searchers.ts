/** The searcher registry on SQLite (processes sharing one state file, e.g. on one machine). */
import { stmt, type StateDb } from '../../db.js';
import type { SearcherEntry, SearchersRepo } from '../types.js';

interface SearcherRow {
  id: string;
  url: string;
  shards: string;
  shard_count: number;
  index_label: string;
  heartbeat_at: number;
}

export class SqliteSearchers implements SearchersRepo {
  constructor(
    readonly db: StateDb,
    readonly now: () => number = Date.now,
  ) {}

  async heartbeat(e: Omit<SearcherEntry, 'ageMs'>): Promise<void> {
    stmt(
      this.db,
      `INSERT INTO searchers (id, url, shards, shard_count, index_label, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET url = excluded.url, shards = excluded.shards, shard_count = excluded.shard_count,
         index_label = excluded.index_label, heartbeat_at = excluded.heartbeat_at`,
    ).run(e.id, e.url, JSON.stringify(e.shards), e.shardCount, e.index, this.now());
  }

  async remove(id: string): Promise<void> {
    stmt(this.db, 'DELETE FROM searchers WHERE id = ?').run(id);
  }

  async live(ttlMs: number): Promise<SearcherEntry[]> {
    const now = this.now();
    const rows = stmt(this.db, 'SELECT * FROM searchers WHERE heartbeat_at > ? ORDER BY id').all(now - ttlMs) as SearcherRow[];
    return rows.map((r) => ({
      id: r.id,
      url: r.url,
      shards: JSON.parse(r.shards) as number[],
      shardCount: r.shard_count,
      index: r.index_label,
      ageMs: now - r.heartbeat_at,
    }));
  }
}
