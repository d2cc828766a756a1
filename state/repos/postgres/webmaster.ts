/**
 * PostgreSQL backend of the webmaster repository. The fast-lane decision takes a transaction-scoped
 * advisory lock on the property, so concurrent submissions from any replica are decided one at a time and the
 * daily quota is exact; the unique indexes back idempotency and same-day dedup.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from './db.js';
import {
  PROOF_CHANGE_COLUMNS,
  toAudit,
  toProof,
  toProperty,
  toSubmission,
  type AuditRow,
  type FastLaneDecision,
  type ProofChange,
  type ProofRow,
  type PropertyRow,
  type SubmissionRow,
  type WebmasterRepo,
} from '../webmaster-types.js';

type SubmitArgs = Parameters<WebmasterRepo['submitFastLane']>[0];

export class PgWebmaster implements WebmasterRepo {
  // Through Db, so an outage is the service's `unavailable` error (503 with Retry-After), as for every repository.
  constructor(readonly db: Db) {}

  async createProperty(p: Parameters<WebmasterRepo['createProperty']>[0]) {
    const ins = await this.db.query<PropertyRow>(
      `INSERT INTO webmaster_properties (id, kind, name, account, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (account, kind, name) DO NOTHING RETURNING *`,
      [randomUUID(), p.kind, p.name, p.account, p.at],
    );
    if (ins.rows[0]) return { property: toProperty(ins.rows[0]), created: true };
    const row = (
      await this.db.query<PropertyRow>('SELECT * FROM webmaster_properties WHERE account = $1 AND kind = $2 AND name = $3', [
        p.account,
        p.kind,
        p.name,
      ])
    ).rows[0];
    if (!row) throw new Error('webmaster property vanished between insert and read');
    return { property: toProperty(row), created: false };
  }

  async getProperty(id: string) {
    const row = (await this.db.query<PropertyRow>('SELECT * FROM webmaster_properties WHERE id = $1', [id])).rows[0];
    return row ? toProperty(row) : null;
  }

  async listProperties(account?: string) {
    const res =
      account === undefined
        ? await this.db.query<PropertyRow>('SELECT * FROM webmaster_properties ORDER BY created_at, id')
        : await this.db.query<PropertyRow>('SELECT * FROM webmaster_properties WHERE account = $1 ORDER BY created_at, id', [account]);
    return res.rows.map(toProperty);
  }

  async addProof(p: Parameters<WebmasterRepo['addProof']>[0]) {
    const res = await this.db.query<ProofRow>(
      `INSERT INTO webmaster_proofs (id, property_id, method, token_hash, state, created_at, expires_at)
       VALUES ($1, $2, $3, $4, 'pending', $5, $6) RETURNING *`,
      [randomUUID(), p.propertyId, p.method, p.tokenHash, p.createdAt, p.expiresAt],
    );
    return toProof(res.rows[0] as ProofRow);
  }

  async getProof(id: string) {
    const row = (await this.db.query<ProofRow>('SELECT * FROM webmaster_proofs WHERE id = $1', [id])).rows[0];
    return row ? toProof(row) : null;
  }

  async proofs(propertyId: string) {
    // created_at is ISO text at ms precision; id breaks ties so the order is stable (SQLite uses its rowid).
    return (
      await this.db.query<ProofRow>('SELECT * FROM webmaster_proofs WHERE property_id = $1 ORDER BY created_at, id', [propertyId])
    ).rows.map(toProof);
  }

  async updateProof(id: string, change: ProofChange) {
    const set = PROOF_CHANGE_COLUMNS.filter(([k]) => change[k] !== undefined);
    if (set.length === 0) return (await this.getProof(id)) !== null;
    const sql = `UPDATE webmaster_proofs SET ${set.map(([, c], i) => `${c} = $${i + 1}`).join(', ')} WHERE id = $${set.length + 1}`;
    return (await this.db.query(sql, [...set.map(([k]) => change[k] ?? null), id])).rowCount === 1;
  }

  async audit(e: Parameters<WebmasterRepo['audit']>[0]) {
    await this.db.query('INSERT INTO webmaster_audit (at, event, property_id, method, outcome) VALUES ($1, $2, $3, $4, $5)', [
      e.at,
      e.event,
      e.propertyId,
      e.method,
      e.outcome,
    ]);
  }

  async auditLog(propertyId?: string) {
    const res =
      propertyId === undefined
        ? await this.db.query<AuditRow>('SELECT * FROM webmaster_audit ORDER BY seq')
        : await this.db.query<AuditRow>('SELECT * FROM webmaster_audit WHERE property_id = $1 ORDER BY seq', [propertyId]);
    return res.rows.map(toAudit);
  }

  submitFastLane(s: SubmitArgs): Promise<FastLaneDecision> {
    return this.db.transaction(async (c) => {
      await c.query(`SELECT pg_advisory_xact_lock(hashtext('svc:fast-lane:' || $1))`, [s.propertyId]);
      return decide(c, s);
    });
  }

  async fastLaneUsed(propertyId: string, day: number) {
    const res = await this.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webmaster_submissions WHERE property_id = $1 AND day = $2',
      [propertyId, day],
    );
    return res.rows[0]?.n ?? 0;
  }
}

async function decide(c: Queryable, s: SubmitArgs): Promise<FastLaneDecision> {
  const cols = 'id, property_id, url, day, at';
  if (s.idempotencyDigest) {
    const prior = (
      await c.query<SubmissionRow>(`SELECT ${cols} FROM webmaster_submissions WHERE property_id = $1 AND idempotency_digest = $2`, [
        s.propertyId,
        s.idempotencyDigest,
      ])
    ).rows[0];
    if (prior) return { outcome: prior.url === s.url ? 'replayed' : 'conflict', submission: toSubmission(prior) };
  }
  const same = (
    await c.query<SubmissionRow>(`SELECT ${cols} FROM webmaster_submissions WHERE property_id = $1 AND url = $2 AND day = $3`, [
      s.propertyId,
      s.url,
      s.day,
    ])
  ).rows[0];
  if (same) return { outcome: 'duplicate', submission: toSubmission(same) };
  const used =
    (
      await c.query<{ n: number }>('SELECT count(*)::int AS n FROM webmaster_submissions WHERE property_id = $1 AND day = $2', [
        s.propertyId,
        s.day,
      ])
    ).rows[0]?.n ?? 0;
  if (used >= s.perDay) return { outcome: 'quota_exceeded', used };
  const row = (
    await c.query<SubmissionRow>(
      `INSERT INTO webmaster_submissions (property_id, url, day, idempotency_digest, at) VALUES ($1, $2, $3, $4, $5) RETURNING ${cols}`,
      [s.propertyId, s.url, s.day, s.idempotencyDigest, s.at],
    )
  ).rows[0] as SubmissionRow;
  return { outcome: 'accepted', submission: toSubmission(row) };
}
