import type { StateDb } from './db.js';

/** What a quota check tells the caller; mapped onto the X-RateLimit-* headers. */
export interface RateDecision {
  readonly allowed: boolean;
  readonly limitMinute: number;
  readonly remainingMinute: number;
  readonly limitDay: number;
  readonly remainingDay: number;
  /** Seconds until a slot frees (only when refused). */
  readonly retryAfter: number;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/**
 * Per-key minute and day quotas over fixed windows (UTC minute, UTC day), kept as aggregate counters in SQLite.
 * The check-and-increment runs in one synchronous transaction, so concurrent requests are admitted exactly up to
 * the quota even across processes sharing the file (SQLite serialises writers).
 */
export class RateLimiter {
  readonly #db: StateDb;
  readonly #get;
  readonly #bump;
  #lastPrune = 0;

  constructor(db: StateDb) {
    this.#db = db;
    this.#get = db.prepare<[Buffer, string, number], { count: number }>(
      'SELECT count FROM usage_counters WHERE digest = ? AND window = ? AND window_start = ?',
    );
    this.#bump = db.prepare<[Buffer, string, number]>(
      `INSERT INTO usage_counters (digest, window, window_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (digest, window, window_start) DO UPDATE SET count = count + 1`,
    );
  }

  /** Consumes one unit of both quotas if both have room; otherwise consumes nothing. */
  consume(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()): RateDecision {
    const digest = Buffer.from(digestHex, 'hex');
    const t = now.getTime();
    const minuteStart = Math.floor(t / MINUTE) * MINUTE;
    const dayStart = Math.floor(t / DAY) * DAY;
    const decision = this.#db.transaction((): RateDecision => {
      const usedMinute = this.#get.get(digest, 'minute', minuteStart)?.count ?? 0;
      const usedDay = this.#get.get(digest, 'day', dayStart)?.count ?? 0;
      const base = { limitMinute: limits.perMinute, limitDay: limits.perDay };
      if (usedDay >= limits.perDay || usedMinute >= limits.perMinute) {
        const waitMs = usedDay >= limits.perDay ? dayStart + DAY - t : minuteStart + MINUTE - t;
        return {
          ...base,
          allowed: false,
          remainingMinute: Math.max(0, limits.perMinute - usedMinute),
          remainingDay: Math.max(0, limits.perDay - usedDay),
          retryAfter: Math.max(1, Math.ceil(waitMs / 1000)),
        };
      }
      this.#bump.run(digest, 'minute', minuteStart);
      this.#bump.run(digest, 'day', dayStart);
      return {
        ...base,
        allowed: true,
        remainingMinute: limits.perMinute - usedMinute - 1,
        remainingDay: limits.perDay - usedDay - 1,
        retryAfter: 0,
      };
    }).immediate();
    this.#prune(t);
    return decision;
  }

  /** Drops windows that can no longer matter (older than two days), at most once a minute. */
  #prune(t: number): void {
    if (t - this.#lastPrune < MINUTE) return;
    this.#lastPrune = t;
    this.#db.prepare('DELETE FROM usage_counters WHERE window_start < ?').run(t - 2 * DAY);
  }
}
