/** The indexer's outbox on SQLite: crawled pages waiting to be indexed, leased in batches. */
import { randomUUID } from 'node:crypto';
import { stmt, type StateDb } from '../../db.js';
import { type OutboxBatch, type OutboxEntry, type OutboxRepo, type OutboxShards } from '../types.js';

interface OutboxRow {
  id: number;
  page_ref: number;
  payload: string;
  enqueued_at: number;
  attempts: number;
}

const toOutboxEntry = (r: OutboxRow): OutboxEntry => ({
  id: r.id,
  pageRef: r.page_ref,
  payload: r.payload,
  enqueuedAt: r.enqueued_at,
  attempts: r.attempts,
});

export class SqliteOutbox implements OutboxRepo {
  constructor(readonly db: StateDb) {}

  async enqueue(pageRef: number, payload: string, now: number = Date.now(), urlHash?: number) {
    return Number(
      stmt(this.db, 'INSERT INTO outbox (page_ref, payload, enqueued_at, url_hash) VALUES (?, ?, ?, ?)').run(
        pageRef,
        payload,
        now,
        urlHash ?? null,
      ).lastInsertRowid,
    );
  }

  async claim(opts: { owner: string; limit: number; leaseMs: number; now?: number; shards?: OutboxShards }): Promise<OutboxBatch | null> {
    const now = opts.now ?? Date.now();
    const lease = `${opts.owner}:${randomUUID()}`;
    const leaseUntil = now + opts.leaseMs;
    const shards = opts.shards;
    // Shard numbers are checked integers (cli/shard-list.ts), so they are written into the text.
    const mine = shards
      ? ` AND (url_hash % ${Math.floor(shards.count)} IN (${shards.mine.map((i) => Math.floor(i)).join(', ')})${
          shards.mine.length >= shards.count ? ' OR url_hash IS NULL' : ''
        })`
      : '';
    const rows = this.db
      .transaction(() => {
        const ids = (
          stmt(this.db, `SELECT id FROM outbox WHERE lease_until <= ?${mine} ORDER BY id LIMIT ?`).all(now, opts.limit) as { id: number }[]
        ).map((r) => r.id);
        if (ids.length === 0) return [];
        const marks = ids.map(() => '?').join(', ');
        // Prepared per call: the text varies with the number of ids.
        return this.db
          .prepare(
            `UPDATE outbox SET lease = ?, lease_until = ?, attempts = attempts + 1 WHERE id IN (${marks}) RETURNING id, page_ref, payload, enqueued_at, attempts`,
          )
          .all(lease, leaseUntil, ...ids) as OutboxRow[];
        // IMMEDIATE: the write lock before the read, so another process's claim waits (busy_timeout) instead of failing.
      })
      .immediate();
    if (rows.length === 0) return null;
    rows.sort((a, b) => a.id - b.id);
    return { lease, leaseUntil, entries: rows.map(toOutboxEntry) };
  }

  async extend(lease: string, leaseMs: number, now: number = Date.now()) {
    // A lapsed lease is only lost once someone else took the entries (they then carry another lease).
    return stmt(this.db, 'UPDATE outbox SET lease_until = ? WHERE lease = ?').run(now + leaseMs, lease).changes > 0;
  }

  async ack(lease: string) {
    return stmt(this.db, 'DELETE FROM outbox WHERE lease = ?').run(lease).changes;
  }

  async stats(now: number = Date.now()) {
    const r = stmt(
      this.db,
      'SELECT count(*) FILTER (WHERE lease_until <= ?) AS pending, count(*) FILTER (WHERE lease_until > ?) AS leased, min(enqueued_at) AS oldest FROM outbox',
    ).get(now, now) as { pending: number; leased: number; oldest: number | null };
    return { pending: r.pending, leased: r.leased, oldestAt: r.oldest };
  }
}
