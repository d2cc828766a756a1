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

interface Slot {
  count: number;
  dirty: boolean;
}

/**
 * Per-key minute and day quotas over fixed windows (UTC minute, UTC day), kept as aggregate counters.
 *
 * The counters live in memory and are written behind to SQLite (at most `flushMs` later, and on close), so a
 * check costs no disk write on the request path. Check-and-increment is synchronous (one JavaScript turn), so
 * concurrent requests are admitted exactly up to the quota. A window's counter is read from SQLite the first time
 * it is used, so a restart resumes the day's count (a crash can forget at most the last `flushMs` of counts).
 * One API process per data dir owns the counters; a scaled-out deployment moves them to a shared store.
 */
export class RateLimiter {
  readonly #db: StateDb;
  readonly #get;
  readonly #put;
  readonly #slots = new Map<string, Slot>();
  readonly #timer: NodeJS.Timeout;
  #lastPrune = 0;

  constructor(db: StateDb, opts: { flushMs?: number } = {}) {
    this.#db = db;
    this.#get = db.prepare<[Buffer, string, number], { count: number }>(
      'SELECT count FROM usage_counters WHERE digest = ? AND window = ? AND window_start = ?',
    );
    this.#put = db.prepare<[Buffer, string, number, number]>(
      `INSERT INTO usage_counters (digest, window, window_start, count) VALUES (?, ?, ?, ?)
       ON CONFLICT (digest, window, window_start) DO UPDATE SET count = max(count, excluded.count)`,
    );
    this.#timer = setInterval(() => this.flush(), opts.flushMs ?? 1000);
    this.#timer.unref();
  }

  #slot(digest: string, window: 'minute' | 'day', start: number): Slot {
    const k = `${digest}|${window}|${start}`;
    let s = this.#slots.get(k);
    if (!s) {
      s = { count: this.#get.get(Buffer.from(digest, 'hex'), window, start)?.count ?? 0, dirty: false };
      this.#slots.set(k, s);
    }
    return s;
  }

  /** Consumes one unit of both quotas if both have room; otherwise consumes nothing. */
  consume(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()): RateDecision {
    const t = now.getTime();
    const minuteStart = Math.floor(t / MINUTE) * MINUTE;
    const dayStart = Math.floor(t / DAY) * DAY;
    const minute = this.#slot(digestHex, 'minute', minuteStart);
    const day = this.#slot(digestHex, 'day', dayStart);
    const base = { limitMinute: limits.perMinute, limitDay: limits.perDay };
    if (day.count >= limits.perDay || minute.count >= limits.perMinute) {
      const waitMs = day.count >= limits.perDay ? dayStart + DAY - t : minuteStart + MINUTE - t;
      return {
        ...base,
        allowed: false,
        remainingMinute: Math.max(0, limits.perMinute - minute.count),
        remainingDay: Math.max(0, limits.perDay - day.count),
        retryAfter: Math.max(1, Math.ceil(waitMs / 1000)),
      };
    }
    minute.count++;
    day.count++;
    minute.dirty = day.dirty = true;
    return {
      ...base,
      allowed: true,
      remainingMinute: limits.perMinute - minute.count,
      remainingDay: limits.perDay - day.count,
      retryAfter: 0,
    };
  }

  /** Writes changed counters to SQLite in one transaction and forgets windows that can no longer matter. */
  flush(now: number = Date.now()): void {
    const dirty = [...this.#slots.entries()].filter(([, s]) => s.dirty);
    if (dirty.length > 0 && this.#db.open) {
      this.#db.transaction(() => {
        for (const [k, s] of dirty) {
          const [digest, window, start] = k.split('|') as [string, string, string];
          this.#put.run(Buffer.from(digest, 'hex'), window, Number(start), s.count);
          s.dirty = false;
        }
      })();
    }
    for (const [k, s] of this.#slots) {
      const [, window, start] = k.split('|') as [string, string, string];
      const end = Number(start) + (window === 'minute' ? MINUTE : DAY);
      if (!s.dirty && end < now) this.#slots.delete(k);
    }
    if (now - this.#lastPrune >= MINUTE && this.#db.open) {
      this.#lastPrune = now;
      this.#db.prepare('DELETE FROM usage_counters WHERE window_start < ?').run(now - 2 * DAY);
    }
  }

  /** Stops the flush timer and writes what is pending. Call before closing the database. */
  close(): void {
    clearInterval(this.#timer);
    this.flush();
  }
}
