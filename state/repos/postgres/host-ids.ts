/** Stable numeric host ids on PostgreSQL (identity column; the index stores the id, not the name). */
import { type HostIdsRepo } from '../types.js';
import type { Db } from './db.js';

export class PgHostIds implements HostIdsRepo {
  constructor(readonly pool: Db) {}

  async idFor(host: string) {
    const known = (await this.pool.query<{ host_id: number }>('SELECT host_id FROM host_ids WHERE host = $1', [host])).rows[0];
    if (known) return known.host_id;
    const r = await this.pool.query<{ host_id: number }>(
      'INSERT INTO host_ids (host) VALUES ($1) ON CONFLICT (host) DO UPDATE SET host = excluded.host RETURNING host_id',
      [host],
    );
    return (r.rows[0] as { host_id: number }).host_id;
  }

  async hostOf(id: number) {
    return (await this.pool.query<{ host: string }>('SELECT host FROM host_ids WHERE host_id = $1', [id])).rows[0]?.host ?? null;
  }
}
