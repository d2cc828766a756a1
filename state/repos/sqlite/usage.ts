/** Per-key usage counters on SQLite: one write transaction per decision, or the in-process RateLimiter's blocks. */
import { stmt, type StateDb } from '../../db.js';
import type { RateLimiter } from '../../rate-limits.js';
import { decide, peeked, windows } from '../quota.js';
import type { UsageCountersRepo } from '../types.js';

export class SqliteUsage implements UsageCountersRepo {
  readonly #consume;
  readonly #get;

  constructor(readonly db: StateDb) {
    const get = (this.#get = db.prepare<[Buffer, string, number], { count: number }>(
      'SELECT count FROM usage_counters WHERE digest = ? AND window = ? AND window_start = ?',
    ));
    const bump = db.prepare<[Buffer, string, number]>(
      `INSERT INTO usage_counters (digest, window, window_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (digest, window, window_start) DO UPDATE SET count = count + 1`,
    );
    // Read and conditional increment in one write transaction: exact for every process sharing the file.
    this.#consume = db.transaction((digestHex: string, limits: { perMinute: number; perDay: number }, now: Date) => {
      const w = windows(now);
      const d = Buffer.from(digestHex, 'hex');
      const minute = get.get(d, 'minute', w.minuteStart)?.count ?? 0;
      const day = get.get(d, 'day', w.dayStart)?.count ?? 0;
      const decision = decide(limits, w, minute, day);
      if (decision.allowed) {
        bump.run(d, 'minute', w.minuteStart);
        bump.run(d, 'day', w.dayStart);
      }
      return decision;
    });
  }

  async consume(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()) {
    return this.#consume.immediate(digestHex, limits, now);
  }

  async peek(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()) {
    const w = windows(now);
    const d = Buffer.from(digestHex, 'hex');
    return peeked(limits, this.#get.get(d, 'minute', w.minuteStart)?.count ?? 0, this.#get.get(d, 'day', w.dayStart)?.count ?? 0);
  }

  async prune(before: number) {
    return stmt(this.db, 'DELETE FROM usage_counters WHERE window_start < ?').run(before).changes;
  }
}

/** UsageCountersRepo over the in-process RateLimiter (see SqliteRepoOptions.inProcessUsage in ../sqlite.ts). */
export function limiterUsage(limiter: RateLimiter, db: StateDb): UsageCountersRepo {
  return {
    consume: async (digestHex, limits, now) => limiter.consume(digestHex, limits, now),
    peek: async (digestHex, limits, now) => limiter.peek(digestHex, limits, now),
    // The limiter also prunes rows older than two days on its own timer; this is the on-demand form.
    prune: async (before) => db.prepare('DELETE FROM usage_counters WHERE window_start < ?').run(before).changes,
  };
}
