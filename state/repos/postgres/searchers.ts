/** The searcher registry on PostgreSQL: heartbeats stamped and aged by the database's clock. */
import type { SearcherEntry, SearchersRepo } from '../types.js';
import type { Db } from './db.js';

const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

export class PgSearchers implements SearchersRepo {
  constructor(readonly pool: Db) {}

  async heartbeat(e: Omit<SearcherEntry, 'ageMs'>): Promise<void> {
    await this.pool.query(
      `INSERT INTO searchers (id, url, shards, shard_count, index_label, heartbeat_at) VALUES ($1, $2, $3, $4, $5, ${NOW_MS})
       ON CONFLICT (id) DO UPDATE SET url = excluded.url, shards = excluded.shards, shard_count = excluded.shard_count,
         index_label = excluded.index_label, heartbeat_at = excluded.heartbeat_at`,
      [e.id, e.url, JSON.stringify(e.shards), e.shardCount, e.index],
    );
  }

  async remove(id: string): Promise<void> {
    await this.pool.query('DELETE FROM searchers WHERE id = $1', [id]);
  }

  async live(ttlMs: number): Promise<SearcherEntry[]> {
    const r = await this.pool.query<{ id: string; url: string; shards: string; shard_count: number; index_label: string; age: string }>(
      `SELECT id, url, shards, shard_count, index_label, ${NOW_MS} - heartbeat_at AS age FROM searchers
       WHERE heartbeat_at > ${NOW_MS} - $1 ORDER BY id`,
      [ttlMs],
    );
    return r.rows.map((row) => ({
      id: row.id,
      url: row.url,
      shards: JSON.parse(row.shards) as number[],
      shardCount: row.shard_count,
      index: row.index_label,
      ageMs: Number(row.age),
    }));
  }
}
