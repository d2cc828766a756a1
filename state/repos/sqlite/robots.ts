/** robots.txt shared by the crawler workers of one state file (RobotsRepo): the row, and who is fetching it. */
import { stmt, type StateDb } from '../../db.js';
import { type RobotsRepo, type SharedRobots } from '../types.js';
import { robotsOfRow, type RobotsRow } from '../rows.js';

export class SqliteRobots implements RobotsRepo {
  constructor(readonly db: StateDb) {}

  async get(origin: string) {
    const r = stmt(this.db, 'SELECT * FROM robots_files WHERE origin = ? AND status IS NOT NULL').get(origin) as RobotsRow | undefined;
    return r ? robotsOfRow(r) : null;
  }

  async lease(origin: string, token: string, holdMs: number, now: number = Date.now()) {
    return this.db
      .transaction((): boolean => {
        stmt(this.db, 'INSERT INTO robots_files (origin) VALUES (?) ON CONFLICT (origin) DO NOTHING').run(origin);
        return (
          stmt(
            this.db,
            'UPDATE robots_files SET lease_token = ?, lease_until = ? WHERE origin = ? AND (lease_until <= ? OR lease_token = ?)',
          ).run(token, now + holdMs, origin, now, token).changes === 1
        );
      })
      .immediate();
  }

  async put(e: SharedRobots) {
    stmt(
      this.db,
      `INSERT INTO robots_files (origin, status, fetched_at, expires_at, http_status, url, error, truncated, body, lease_token, lease_until)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0)
       ON CONFLICT (origin) DO UPDATE SET status = excluded.status, fetched_at = excluded.fetched_at,
         expires_at = excluded.expires_at, http_status = excluded.http_status, url = excluded.url, error = excluded.error,
         truncated = excluded.truncated, body = excluded.body, lease_token = NULL, lease_until = 0`,
    ).run(
      e.origin,
      e.status,
      e.fetchedAt,
      e.expiresAt,
      e.httpStatus,
      e.url,
      e.error,
      e.truncated ? 1 : 0,
      e.body ? Buffer.from(e.body) : null,
    );
  }

  async release(origin: string, token: string) {
    stmt(this.db, 'UPDATE robots_files SET lease_token = NULL, lease_until = 0 WHERE origin = ? AND lease_token = ?').run(origin, token);
  }

  async forget(origin: string) {
    stmt(this.db, 'DELETE FROM robots_files WHERE origin = ?').run(origin);
  }
}
