/** URL requests on SQLite, over the RequestStore (submissions, daily quota, idempotency, event history). */
import { stmt, type StateDb } from '../../db.js';
import { RequestStore, type RequestOutcome, type RequestStatus, type RequestSubmission } from '../../requests.js';
import { toRequest, type RequestRow } from '../rows.js';
import { type RequestsRepo } from '../types.js';

export class SqliteRequests implements RequestsRepo {
  constructor(readonly db: StateDb) {}

  // The lifecycle is today's RequestStore (one BEGIN IMMEDIATE transaction per submission), unchanged; a store
  // per call because the clock and the quota come with the call.
  #store(now: Date = new Date(), perDay = 0): RequestStore {
    return new RequestStore(this.db, { perDay, now: () => now });
  }

  async submit(keyDigest: string, sub: RequestSubmission, opts: { perDay: number; now: Date }) {
    return this.#store(opts.now, opts.perDay).submit(keyDigest, sub);
  }

  async getForKey(id: string, keyDigest: string) {
    return this.#store().getForKey(id, keyDigest);
  }

  async find(id: string) {
    return this.#store().get(id);
  }

  async listByStatus(status: RequestStatus, limit?: number) {
    return this.#store().listByStatus(status, limit);
  }

  async transition(id: string, to: RequestStatus, detail: { outcome?: RequestOutcome; reason?: string } = {}, at?: Date) {
    return this.#store(at).transition(id, to, detail);
  }

  async counts() {
    return this.#store().counts();
  }

  async create(sub: Parameters<RequestsRepo['create']>[0]) {
    const at = sub.at ?? new Date().toISOString();
    const idem = sub.idempotencyDigest ?? null;
    const history = JSON.stringify([{ status: 'received', at }]);
    // The id is made by the database; the partial unique index on (key_digest, idempotency_digest) decides races.
    const inserted = stmt(
      this.db,
      `INSERT INTO url_requests (id, key_digest, type, url, host, note, idempotency_digest, status, history, received_at, updated_at)
         VALUES ('req_' || lower(hex(randomblob(16))), ?, ?, ?, ?, ?, ?, 'received', ?, ?, ?)
         ON CONFLICT (key_digest, idempotency_digest) WHERE idempotency_digest IS NOT NULL DO NOTHING RETURNING *`,
    ).get(sub.keyDigest, sub.type, sub.url, sub.host, sub.note ?? null, idem, history, at, at) as RequestRow | undefined;
    if (inserted) return { request: toRequest(inserted), deduplicated: false };
    const prior = stmt(this.db, 'SELECT * FROM url_requests WHERE key_digest = ? AND idempotency_digest = ?').get(
      sub.keyDigest,
      idem,
    ) as RequestRow;
    return prior.type === sub.type && prior.url === sub.url
      ? { request: toRequest(prior), deduplicated: true }
      : { conflict: toRequest(prior) };
  }

  async get(id: string) {
    const r = stmt(this.db, 'SELECT * FROM url_requests WHERE id = ?').get(id) as RequestRow | undefined;
    return r ? toRequest(r) : null;
  }

  async setStatus(id: string, status: Parameters<RequestsRepo['setStatus']>[1], at: string = new Date().toISOString()) {
    return stmt(this.db, 'UPDATE url_requests SET status = ?, updated_at = ? WHERE id = ?').run(status, at, id).changes === 1;
  }
}
