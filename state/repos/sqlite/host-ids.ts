/** Stable numeric host ids on SQLite (the index stores the id, not the name). */
import { stmt, type StateDb } from '../../db.js';
import { type HostIdsRepo } from '../types.js';

export class SqliteHostIds implements HostIdsRepo {
  constructor(readonly db: StateDb) {}

  async idFor(host: string) {
    const known = stmt(this.db, 'SELECT host_id FROM host_ids WHERE host = ?').get(host) as { host_id: number } | undefined;
    if (known) return known.host_id;
    return (
      stmt(this.db, 'INSERT INTO host_ids (host) VALUES (?) ON CONFLICT (host) DO UPDATE SET host = excluded.host RETURNING host_id').get(
        host,
      ) as { host_id: number }
    ).host_id;
  }

  async hostOf(id: number) {
    return (stmt(this.db, 'SELECT host FROM host_ids WHERE host_id = ?').get(id) as { host: string } | undefined)?.host ?? null;
  }
}
