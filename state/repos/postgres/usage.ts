/** Per-key usage counters on PostgreSQL: one conditional increment per decision (svc_consume_quota), exact across replicas. */
import { decide, peeked, windows } from '../quota.js';
import type { UsageCountersRepo } from '../types.js';
import type { Db } from './db.js';

export class PgUsage implements UsageCountersRepo {
  constructor(readonly pool: Db) {}

  async consume(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()) {
    const w = windows(now);
    // The whole decision runs in the database (migration repos-003): one round trip, exact for every replica.
    const r = await this.pool.query<{ admitted: boolean; day_count: number; minute_count: number }>(
      'SELECT * FROM svc_consume_quota($1, $2, $3, $4, $5)',
      [Buffer.from(digestHex, 'hex'), w.dayStart, w.minuteStart, limits.perDay, limits.perMinute],
    );
    const row = r.rows[0];
    if (!row) throw new Error('svc_consume_quota returned no row');
    const decision = decide(limits, w, row.minute_count, row.day_count);
    // decide() and the database apply the same rule to the same counts; a mismatch would be a bug in one of them.
    if (decision.allowed !== row.admitted) throw new Error('quota decision mismatch between svc_consume_quota and decide()');
    return decision;
  }

  async peek(digestHex: string, limits: { perMinute: number; perDay: number }, now: Date = new Date()) {
    const w = windows(now);
    const rows = (
      await this.pool.query<{ window: string; count: number }>(
        `SELECT "window", count FROM usage_counters
         WHERE digest = $1 AND (("window" = 'day' AND window_start = $2) OR ("window" = 'minute' AND window_start = $3))`,
        [Buffer.from(digestHex, 'hex'), w.dayStart, w.minuteStart],
      )
    ).rows;
    return peeked(limits, rows.find((r) => r.window === 'minute')?.count ?? 0, rows.find((r) => r.window === 'day')?.count ?? 0);
  }

  async prune(before: number) {
    return (await this.pool.query('DELETE FROM usage_counters WHERE window_start < $1', [before])).rowCount ?? 0;
  }
}
