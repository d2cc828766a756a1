/** The indexer's outbox on PostgreSQL: crawled pages waiting to be indexed, leased in batches. */
import { randomUUID } from 'node:crypto';
import { type OutboxBatch, type OutboxEntry, type OutboxRepo, type OutboxShards } from '../types.js';
import type { Db } from './db.js';

interface PgOutboxRow {
  id: number;
  page_ref: number;
  payload: string;
  enqueued_at: number;
  attempts: number;
}

const toPgOutboxEntry = (r: PgOutboxRow): OutboxEntry => ({
  id: r.id,
  pageRef: r.page_ref,
  payload: r.payload,
  enqueuedAt: r.enqueued_at,
  attempts: r.attempts,
});

export class PgOutbox implements OutboxRepo {
  constructor(readonly pool: Db) {}

  async enqueue(pageRef: number, payload: string, now: number = Date.now(), urlHash?: number) {
    const r = await this.pool.query<{ id: number }>(
      'INSERT INTO outbox (page_ref, payload, enqueued_at, url_hash) VALUES ($1, $2, $3, $4) RETURNING id',
      [pageRef, payload, now, urlHash ?? null],
    );
    return (r.rows[0] as { id: number }).id;
  }

  async claim(opts: { owner: string; limit: number; leaseMs: number; now?: number; shards?: OutboxShards }): Promise<OutboxBatch | null> {
    const now = opts.now ?? Date.now();
    const lease = `${opts.owner}:${randomUUID()}`;
    const leaseUntil = now + opts.leaseMs;
    const params: unknown[] = [now, opts.limit, lease, leaseUntil];
    let mine = '';
    if (opts.shards) {
      const all = opts.shards.mine.length >= opts.shards.count;
      params.push(opts.shards.count, [...opts.shards.mine]);
      mine = ` AND (url_hash % $5 = ANY($6::int[])${all ? ' OR url_hash IS NULL' : ''})`;
    }
    // Rows another claimer is taking right now are skipped, not waited for: two claimers never share an entry.
    const r = await this.pool.query<PgOutboxRow>(
      `WITH picked AS (SELECT id FROM outbox WHERE lease_until <= $1${mine} ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
       UPDATE outbox o SET lease = $3, lease_until = $4, attempts = o.attempts + 1 FROM picked WHERE o.id = picked.id
       RETURNING o.id, o.page_ref, o.payload, o.enqueued_at, o.attempts`,
      params,
    );
    if (r.rows.length === 0) return null;
    const rows = [...r.rows].sort((a, b) => a.id - b.id);
    return { lease, leaseUntil, entries: rows.map(toPgOutboxEntry) };
  }

  async extend(lease: string, leaseMs: number, now: number = Date.now()) {
    return ((await this.pool.query('UPDATE outbox SET lease_until = $1 WHERE lease = $2', [now + leaseMs, lease])).rowCount ?? 0) > 0;
  }

  async ack(lease: string) {
    return (await this.pool.query('DELETE FROM outbox WHERE lease = $1', [lease])).rowCount ?? 0;
  }

  async stats(now: number = Date.now()) {
    const r = (
      await this.pool.query<{ pending: number; leased: number; oldest: number | null }>(
        'SELECT count(*) FILTER (WHERE lease_until <= $1)::int AS pending, count(*) FILTER (WHERE lease_until > $1)::int AS leased, min(enqueued_at) AS oldest FROM outbox',
        [now],
      )
    ).rows[0] as { pending: number; leased: number; oldest: number | null };
    return { pending: r.pending, leased: r.leased, oldestAt: r.oldest };
  }
}
