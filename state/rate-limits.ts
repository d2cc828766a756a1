import { stmt, type StateDb } from './db.js';

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
  /** Requests admitted in this window by this process (plus what earlier runs left stored). */
  admitted: number;
  /** Slots durably reserved in SQLite for this window: never below `admitted`. */
  reserved: number;
}

/**
 * Slots reserved per SQLite write: a tenth of the window's quota, between 1 and 100. This is also the most a
 * crash can cost a key in one window (the reserved but unused slots of the block it was admitting from).
 */
export function reservationBlock(limit: number): number {
  return Math.min(100, Math.max(1, Math.ceil(limit / 10)));
}

/**
 * Per-key minute and day quotas over fixed UTC windows. Admission is decided in memory in one turn, so it is exact
 * under concurrency; blocks of slots are reserved in SQLite first, so a crash can only under-admit (at most one block).
 * One API process per data dir owns the counters.
 */
export class RateLimiter {
  readonly #db: StateDb;
  readonly #get;
  readonly #reserve;
  readonly #giveBack;
  readonly #slots = new Map<string, Slot>();
  readonly #timer: NodeJS.Timeout;
  #lastPrune = 0;

  constructor(db: StateDb, opts: { pruneMs?: number } = {}) {
    this.#db = db;
    this.#get = db.prepare<[Buffer, string, number], { count: number }>(
      'SELECT count FROM usage_counters WHERE digest = ? AND window = ? AND window_start = ?',
    );
    this.#reserve = db.prepare<[Buffer, string, number, number]>(
      `INSERT INTO usage_counters (digest, window, window_start, count) VALUES (?, ?, ?, ?)
       ON CONFLICT (digest, window, window_start) DO UPDATE SET count = max(count, excluded.count)`,
    );
    this.#giveBack = db.prepare<[number, Buffer, string, number]>(
      'UPDATE usage_counters SET count = ? WHERE digest = ? AND window = ? AND window_start = ?',
    );
    this.#timer = setInterval(() => this.flush(), opts.pruneMs ?? 10_000);
    this.#timer.unref();
  }

  #slot(digest: string, window: 'minute' | 'day', start: number): Slot {
    const k = `${digest}|${window}|${start}`;
    let s = this.#slots.get(k);
    if (!s) {
      const stored = this.#get.get(Buffer.from(digest, 'hex'), window, start)?.count ?? 0;
      s = { admitted: stored, reserved: stored };
      this.#slots.set(k, s);
    }
    return s;
  }

  #decision(limits: { perMinute: number; perDay: number }, minute: Slot, day: Slot, allowed: boolean, retryAfter: number): RateDecision {
    return {
      allowed,
      limitMinute: limits.perMinute,
      limitDay: limits.perDay,
      remainingMinute: Math.max(0, limits.perMinute - minute.admitted),
      remainingDay: Math.max(0, limits.perDay - day.admitted),
      retryAfter,
    };
  }

  #windows(digestHex: string, t: number) {
    const minuteStart = Math.floor(t / MINUTE) * MINUTE;
    const dayStart = Math.floor(t / DAY) * DAY;
    return { minuteStart, dayStart, minute: this.#slot(digestHex, 'minute', minuteStart), day: this.#slot(digestHex, 'day', dayStart) };
  }

  /** The quota state without consuming anything (for the rate headers of calls that do not count). */
  peek(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()): RateDecision {
    const { minute, day } = this.#windows(digestHex, now.getTime());
    return this.#decision(limits, minute, day, true, 0);
  }

  /** Consumes one unit of both quotas if both have room; otherwise consumes nothing. */
  consume(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()): RateDecision {
    const t = now.getTime();
    const { minuteStart, dayStart, minute, day } = this.#windows(digestHex, t);
    if (day.admitted >= limits.perDay || minute.admitted >= limits.perMinute) {
      const waitMs = day.admitted >= limits.perDay ? dayStart + DAY - t : minuteStart + MINUTE - t;
      return this.#decision(limits, minute, day, false, Math.max(1, Math.ceil(waitMs / 1000)));
    }
    if (minute.admitted >= minute.reserved || day.admitted >= day.reserved) {
      // Durable before admitting: the stored counter covers this request before it is answered.
      const key = Buffer.from(digestHex, 'hex');
      const minuteTo = Math.max(minute.reserved, Math.min(limits.perMinute, minute.admitted + reservationBlock(limits.perMinute)));
      const dayTo = Math.max(day.reserved, Math.min(limits.perDay, day.admitted + reservationBlock(limits.perDay)));
      this.#db
        .transaction(() => {
          if (minuteTo !== minute.reserved) this.#reserve.run(key, 'minute', minuteStart, minuteTo);
          if (dayTo !== day.reserved) this.#reserve.run(key, 'day', dayStart, dayTo);
        })
        .immediate();
      minute.reserved = minuteTo;
      day.reserved = dayTo;
    }
    minute.admitted++;
    day.admitted++;
    return this.#decision(limits, minute, day, true, 0);
  }

  /**
   * Forgets windows that can no longer matter (giving back their unused slots is pointless: they are over) and
   * prunes old rows. `giveBack` also lowers each stored counter to what was admitted (used on close).
   */
  flush(now: number = Date.now(), giveBack = false): void {
    if (giveBack && this.#db.open) {
      this.#db
        .transaction(() => {
          for (const [k, s] of this.#slots) {
            if (s.reserved === s.admitted) continue;
            const [digest, window, start] = k.split('|') as [string, string, string];
            this.#giveBack.run(s.admitted, Buffer.from(digest, 'hex'), window, Number(start));
            s.reserved = s.admitted;
          }
        })
        .immediate();
    }
    for (const k of this.#slots.keys()) {
      const [, window, start] = k.split('|') as [string, string, string];
      const end = Number(start) + (window === 'minute' ? MINUTE : DAY);
      if (end < now) this.#slots.delete(k);
    }
    if (now - this.#lastPrune >= MINUTE && this.#db.open) {
      this.#lastPrune = now;
      stmt(this.#db, 'DELETE FROM usage_counters WHERE window_start < ?').run(now - 2 * DAY);
    }
  }

  /** Stops the timer and gives unused reserved slots back. Call before closing the database. */
  close(): void {
    clearInterval(this.#timer);
    this.flush(Date.now(), true);
  }
}
