/** URL requests on PostgreSQL: submissions with their daily quota and idempotency, and their event history. */
import {
  checkSubmission,
  idempotencyConflict,
  nextEvent,
  submissionQuotaExceeded,
  toUrlRequest,
  utcDayStart,
  type RequestOutcome,
  type RequestStatus,
  type RequestSubmission,
  type UrlRequestRow,
} from '../../requests.js';
import { toRequest, type RequestRow } from '../rows.js';
import { type RequestsRepo } from '../types.js';
import type { Db } from './db.js';

export class PgRequests implements RequestsRepo {
  constructor(readonly pool: Db) {}

  async submit(keyDigest: string, sub: RequestSubmission, opts: { perDay: number; now: Date }) {
    const { type, url, host, note, idem } = checkSubmission(keyDigest, sub);
    return this.pool.transaction(async (c) => {
      // One key's submissions run one at a time across every replica (a transaction-scoped advisory lock on the
      // key), so the idempotency, open-request and daily-quota checks below see every earlier submission.
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`svc:requests:${keyDigest}`]);
      if (idem !== null) {
        const prior = (
          await c.query<UrlRequestRow>('SELECT * FROM url_requests WHERE key_digest = $1 AND idempotency_digest = $2', [keyDigest, idem])
        ).rows[0];
        if (prior) {
          if (prior.type !== type || prior.url !== url) throw idempotencyConflict();
          return { request: toUrlRequest(prior), deduplicated: true };
        }
      }
      const open = (
        await c.query<UrlRequestRow>(
          `SELECT * FROM url_requests WHERE key_digest = $1 AND type = $2 AND url = $3
             AND status IN ('received', 'queued', 'in_progress') ORDER BY received_at LIMIT 1`,
          [keyDigest, type, url],
        )
      ).rows[0];
      if (open) return { request: toUrlRequest(open), deduplicated: true };
      const used =
        (
          await c.query<{ n: number }>('SELECT count(*) AS n FROM url_requests WHERE key_digest = $1 AND received_at >= $2', [
            keyDigest,
            utcDayStart(opts.now),
          ])
        ).rows[0]?.n ?? 0;
      if (used >= opts.perDay) throw submissionQuotaExceeded(opts.perDay, opts.now);
      const at = opts.now.toISOString();
      const row = (
        await c.query<UrlRequestRow>(
          `INSERT INTO url_requests (id, key_digest, type, url, host, note, idempotency_digest, status, history, received_at, updated_at)
           VALUES ('req_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6, 'received', $7, $8, $8) RETURNING *`,
          [keyDigest, type, url, host, note, idem, JSON.stringify([{ status: 'received', at }]), at],
        )
      ).rows[0] as UrlRequestRow;
      return { request: toUrlRequest(row), deduplicated: false };
    });
  }

  async getForKey(id: string, keyDigest: string) {
    const r = (await this.pool.query<UrlRequestRow>('SELECT * FROM url_requests WHERE id = $1 AND key_digest = $2', [id, keyDigest]))
      .rows[0];
    return r ? toUrlRequest(r) : null;
  }

  async find(id: string) {
    const r = (await this.pool.query<UrlRequestRow>('SELECT * FROM url_requests WHERE id = $1', [id])).rows[0];
    return r ? toUrlRequest(r) : null;
  }

  async listByStatus(status: RequestStatus, limit = 100) {
    return (
      await this.pool.query<UrlRequestRow>('SELECT * FROM url_requests WHERE status = $1 ORDER BY updated_at, id LIMIT $2', [status, limit])
    ).rows.map(toUrlRequest);
  }

  async transition(id: string, to: RequestStatus, detail: { outcome?: RequestOutcome; reason?: string } = {}, at: Date = new Date()) {
    return this.pool.transaction(async (c) => {
      const row = (await c.query<UrlRequestRow>('SELECT * FROM url_requests WHERE id = $1 FOR UPDATE', [id])).rows[0];
      if (!row) throw new Error(`requests: unknown request ${id}`);
      const cur = toUrlRequest(row);
      const event = nextEvent(cur, to, detail, at.toISOString());
      const next = (
        await c.query<UrlRequestRow>(
          `UPDATE url_requests SET status = $1, outcome = $2, reason = $3, history = $4, updated_at = $5, attempts = attempts + $6
           WHERE id = $7 RETURNING *`,
          [
            to,
            detail.outcome ?? null,
            detail.reason ?? null,
            JSON.stringify([...cur.history, event]),
            event.at,
            to === 'in_progress' ? 1 : 0,
            id,
          ],
        )
      ).rows[0] as UrlRequestRow;
      return toUrlRequest(next);
    });
  }

  async counts() {
    const out: Record<RequestStatus, number> = { received: 0, queued: 0, in_progress: 0, completed: 0, failed: 0 };
    for (const r of (
      await this.pool.query<{ status: RequestStatus; n: number }>('SELECT status, count(*) AS n FROM url_requests GROUP BY status')
    ).rows)
      out[r.status] = r.n;
    return out;
  }

  async create(sub: Parameters<RequestsRepo['create']>[0]) {
    const at = sub.at ?? new Date().toISOString();
    const idem = sub.idempotencyDigest ?? null;
    const history = JSON.stringify([{ status: 'received', at }]);
    const inserted = (
      await this.pool.query<RequestRow>(
        `INSERT INTO url_requests (id, key_digest, type, url, host, note, idempotency_digest, status, history, received_at, updated_at)
         VALUES ('req_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6, 'received', $7, $8, $8)
         ON CONFLICT (key_digest, idempotency_digest) WHERE idempotency_digest IS NOT NULL DO NOTHING RETURNING *`,
        [sub.keyDigest, sub.type, sub.url, sub.host, sub.note ?? null, idem, history, at],
      )
    ).rows[0];
    if (inserted) return { request: toRequest(inserted), deduplicated: false };
    // ON CONFLICT DO NOTHING waited for the winner to commit, so its row is visible to this new statement.
    const prior = (
      await this.pool.query<RequestRow>('SELECT * FROM url_requests WHERE key_digest = $1 AND idempotency_digest = $2', [
        sub.keyDigest,
        idem,
      ])
    ).rows[0] as RequestRow;
    return prior.type === sub.type && prior.url === sub.url
      ? { request: toRequest(prior), deduplicated: true }
      : { conflict: toRequest(prior) };
  }

  async get(id: string) {
    const r = (await this.pool.query<RequestRow>('SELECT * FROM url_requests WHERE id = $1', [id])).rows[0];
    return r ? toRequest(r) : null;
  }

  async setStatus(id: string, status: Parameters<RequestsRepo['setStatus']>[1], at: string = new Date().toISOString()) {
    return (await this.pool.query('UPDATE url_requests SET status = $1, updated_at = $2 WHERE id = $3', [status, at, id])).rowCount === 1;
  }
}
