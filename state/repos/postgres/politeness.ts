/** Per-host politeness on PostgreSQL: the gap between two fetch starts, taken atomically by one statement. */
import { type PolitenessRepo } from '../types.js';
import type { Db } from './db.js';

export class PgPoliteness implements PolitenessRepo {
  constructor(
    readonly pool: Db,
    readonly defaultGapMs: number,
  ) {}

  async acquire(host: string, token: string, holdMs: number, now: number = Date.now()) {
    // One statement, one round trip: the row lock serialises concurrent takers (a new host is created taken). A taker
    // that loses reads the row as its snapshot had it, which is when to try again (the winner's hold or gap may push it
    // later still: the retry simply fails once more).
    const r = await this.pool.query<{ taken: boolean; next_fetch_at: number | null }>(
      `WITH taken AS (
         INSERT INTO host_politeness AS h (host, gap_ms, next_fetch_at, holder) VALUES ($3, $5, $1, $2)
         ON CONFLICT (host) DO UPDATE SET next_fetch_at = excluded.next_fetch_at, holder = excluded.holder
         WHERE h.next_fetch_at <= $4 OR h.holder = $2
         RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM taken) AS taken, (SELECT next_fetch_at FROM host_politeness WHERE host = $3) AS next_fetch_at`,
      [now + holdMs, token, host, now, this.defaultGapMs],
    );
    const row = r.rows[0];
    if (row?.taken) return { acquired: true } as const;
    return { acquired: false, retryAt: Math.max(now + 1, Number(row?.next_fetch_at ?? now)) } as const;
  }

  async release(host: string, token: string, nextFetchAt: number, now: number = Date.now()) {
    await this.pool.query(
      'UPDATE host_politeness SET next_fetch_at = greatest($1::bigint, $2::bigint + gap_ms), holder = NULL WHERE host = $3 AND holder = $4',
      [nextFetchAt, now, host, token],
    );
  }

  async setGap(host: string, gapMs: number) {
    await this.pool.query(
      'INSERT INTO host_politeness (host, gap_ms) VALUES ($1, $2) ON CONFLICT (host) DO UPDATE SET gap_ms = excluded.gap_ms',
      [host, gapMs],
    );
  }

  async get(host: string) {
    const r = (
      await this.pool.query<{ host: string; gap_ms: number; next_fetch_at: number }>('SELECT * FROM host_politeness WHERE host = $1', [
        host,
      ])
    ).rows[0];
    return r ? { host: r.host, gapMs: r.gap_ms, nextFetchAt: r.next_fetch_at } : null;
  }
}
