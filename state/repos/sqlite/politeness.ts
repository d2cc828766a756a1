/** Per-host politeness on SQLite: the gap between two fetch starts, taken in one immediate transaction. */
import { stmt, type StateDb } from '../../db.js';
import { type PolitenessRepo } from '../types.js';

export class SqlitePoliteness implements PolitenessRepo {
  constructor(
    readonly db: StateDb,
    readonly defaultGapMs: number,
  ) {}

  async setGap(host: string, gapMs: number) {
    stmt(this.db, 'INSERT INTO host_politeness (host, gap_ms) VALUES (?, ?) ON CONFLICT (host) DO UPDATE SET gap_ms = excluded.gap_ms').run(
      host,
      gapMs,
    );
  }

  async acquire(host: string, token: string, holdMs: number, now: number = Date.now()) {
    return this.db
      .transaction((): { acquired: true } | { acquired: false; retryAt: number } => {
        stmt(this.db, 'INSERT INTO host_politeness (host, gap_ms) VALUES (?, ?) ON CONFLICT (host) DO NOTHING').run(
          host,
          this.defaultGapMs,
        );
        const taken = stmt(
          this.db,
          'UPDATE host_politeness SET next_fetch_at = ?, holder = ? WHERE host = ? AND (next_fetch_at <= ? OR holder = ?)',
        ).run(now + holdMs, token, host, now, token).changes;
        if (taken === 1) return { acquired: true };
        const r = stmt(this.db, 'SELECT next_fetch_at FROM host_politeness WHERE host = ?').get(host) as { next_fetch_at: number };
        return { acquired: false, retryAt: r.next_fetch_at };
      })
      .immediate();
  }

  async release(host: string, token: string, nextFetchAt: number, now: number = Date.now()) {
    stmt(this.db, 'UPDATE host_politeness SET next_fetch_at = max(?, ? + gap_ms), holder = NULL WHERE host = ? AND holder = ?').run(
      nextFetchAt,
      now,
      host,
      token,
    );
  }

  async get(host: string) {
    const r = stmt(this.db, 'SELECT * FROM host_politeness WHERE host = ?').get(host) as
      | { host: string; gap_ms: number; next_fetch_at: number }
      | undefined;
    return r ? { host: r.host, gapMs: r.gap_ms, nextFetchAt: r.next_fetch_at } : null;
  }
}
