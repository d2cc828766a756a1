/** robots.txt shared by every crawler worker of the fleet (RobotsRepo) on PostgreSQL: the row, and who is fetching it. */
import { type RobotsRepo, type SharedRobots } from '../types.js';
import { robotsOfRow, type RobotsRow } from '../rows.js';
import type { Db } from './db.js';

export class PgRobots implements RobotsRepo {
  constructor(readonly pool: Db) {}

  async get(origin: string) {
    const r = (await this.pool.query<RobotsRow>('SELECT * FROM robots_files WHERE origin = $1 AND status IS NOT NULL', [origin])).rows[0];
    return r ? robotsOfRow(r) : null;
  }

  async lease(origin: string, token: string, holdMs: number, now: number = Date.now()) {
    // One statement: the row lock serialises concurrent takers; a new origin is created taken.
    const r = await this.pool.query(
      `INSERT INTO robots_files AS f (origin, lease_token, lease_until) VALUES ($1, $2, $3)
       ON CONFLICT (origin) DO UPDATE SET lease_token = excluded.lease_token, lease_until = excluded.lease_until
       WHERE f.lease_until <= $4 OR f.lease_token = $2
       RETURNING 1`,
      [origin, token, now + holdMs, now],
    );
    return (r.rowCount ?? 0) === 1;
  }

  async put(e: SharedRobots) {
    await this.pool.query(
      `INSERT INTO robots_files (origin, status, fetched_at, expires_at, http_status, url, error, truncated, body, lease_token, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, 0)
       ON CONFLICT (origin) DO UPDATE SET status = excluded.status, fetched_at = excluded.fetched_at,
         expires_at = excluded.expires_at, http_status = excluded.http_status, url = excluded.url, error = excluded.error,
         truncated = excluded.truncated, body = excluded.body, lease_token = NULL, lease_until = 0`,
      [e.origin, e.status, e.fetchedAt, e.expiresAt, e.httpStatus, e.url, e.error, e.truncated, e.body ? Buffer.from(e.body) : null],
    );
  }

  async release(origin: string, token: string) {
    await this.pool.query('UPDATE robots_files SET lease_token = NULL, lease_until = 0 WHERE origin = $1 AND lease_token = $2', [
      origin,
      token,
    ]);
  }

  async forget(origin: string) {
    await this.pool.query('DELETE FROM robots_files WHERE origin = $1', [origin]);
  }
}
