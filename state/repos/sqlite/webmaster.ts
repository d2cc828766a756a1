/**
 * SQLite backend of the webmaster repository. Each operation is one better-sqlite3 transaction; the
 * fast-lane decision runs under BEGIN IMMEDIATE so every process sharing the file sees one order.
 */
import { randomUUID } from 'node:crypto';
import type { StateDb } from '../../db.js';
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

export class SqliteWebmaster implements WebmasterRepo {
  readonly #submit;

  constructor(readonly db: StateDb) {
    this.#submit = db.transaction((s: SubmitArgs): FastLaneDecision => {
      if (s.idempotencyDigest) {
        const prior = db
          .prepare('SELECT * FROM webmaster_submissions WHERE property_id = ? AND idempotency_digest = ?')
          .get(s.propertyId, s.idempotencyDigest) as SubmissionRow | undefined;
        if (prior) return { outcome: prior.url === s.url ? 'replayed' : 'conflict', submission: toSubmission(prior) };
      }
      const same = db
        .prepare('SELECT * FROM webmaster_submissions WHERE property_id = ? AND url = ? AND day = ?')
        .get(s.propertyId, s.url, s.day) as SubmissionRow | undefined;
      if (same) return { outcome: 'duplicate', submission: toSubmission(same) };
      const used = (
        db.prepare('SELECT count(*) AS n FROM webmaster_submissions WHERE property_id = ? AND day = ?').get(s.propertyId, s.day) as {
          n: number;
        }
      ).n;
      if (used >= s.perDay) return { outcome: 'quota_exceeded', used };
      const row = db
        .prepare(
          'INSERT INTO webmaster_submissions (property_id, url, day, idempotency_digest, at) VALUES (?, ?, ?, ?, ?) RETURNING id, property_id, url, day, at',
        )
        .get(s.propertyId, s.url, s.day, s.idempotencyDigest, s.at) as SubmissionRow;
      return { outcome: 'accepted', submission: toSubmission(row) };
    });
  }

  async createProperty(p: Parameters<WebmasterRepo['createProperty']>[0]) {
    return this.db
      .transaction(() => {
        const ins = this.db
          .prepare(
            'INSERT INTO webmaster_properties (id, kind, name, account, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (account, kind, name) DO NOTHING',
          )
          .run(randomUUID(), p.kind, p.name, p.account, p.at);
        const row = this.db
          .prepare('SELECT * FROM webmaster_properties WHERE account = ? AND kind = ? AND name = ?')
          .get(p.account, p.kind, p.name) as PropertyRow;
        return { property: toProperty(row), created: ins.changes === 1 };
      })
      .immediate();
  }

  async getProperty(id: string) {
    const row = this.db.prepare('SELECT * FROM webmaster_properties WHERE id = ?').get(id) as PropertyRow | undefined;
    return row ? toProperty(row) : null;
  }

  async listProperties(account?: string) {
    const rows = (
      account === undefined
        ? this.db.prepare('SELECT * FROM webmaster_properties ORDER BY created_at, rowid').all()
        : this.db.prepare('SELECT * FROM webmaster_properties WHERE account = ? ORDER BY created_at, rowid').all(account)
    ) as PropertyRow[];
    return rows.map(toProperty);
  }

  async addProof(p: Parameters<WebmasterRepo['addProof']>[0]) {
    const row = this.db
      .prepare(
        `INSERT INTO webmaster_proofs (id, property_id, method, token_hash, state, created_at, expires_at)
         VALUES (?, ?, ?, ?, 'pending', ?, ?) RETURNING *`,
      )
      .get(randomUUID(), p.propertyId, p.method, p.tokenHash, p.createdAt, p.expiresAt) as ProofRow;
    return toProof(row);
  }

  async getProof(id: string) {
    const row = this.db.prepare('SELECT * FROM webmaster_proofs WHERE id = ?').get(id) as ProofRow | undefined;
    return row ? toProof(row) : null;
  }

  async proofs(propertyId: string) {
    return (
      this.db.prepare('SELECT * FROM webmaster_proofs WHERE property_id = ? ORDER BY created_at, rowid').all(propertyId) as ProofRow[]
    ).map(toProof);
  }

  async updateProof(id: string, change: ProofChange) {
    const set = PROOF_CHANGE_COLUMNS.filter(([k]) => change[k] !== undefined);
    if (set.length === 0) return (await this.getProof(id)) !== null;
    const sql = `UPDATE webmaster_proofs SET ${set.map(([, c]) => `${c} = ?`).join(', ')} WHERE id = ?`;
    return this.db.prepare(sql).run(...set.map(([k]) => change[k] ?? null), id).changes === 1;
  }

  async audit(e: Parameters<WebmasterRepo['audit']>[0]) {
    this.db
      .prepare('INSERT INTO webmaster_audit (at, event, property_id, method, outcome) VALUES (?, ?, ?, ?, ?)')
      .run(e.at, e.event, e.propertyId, e.method, e.outcome);
  }

  async auditLog(propertyId?: string) {
    const rows = (
      propertyId === undefined
        ? this.db.prepare('SELECT * FROM webmaster_audit ORDER BY seq').all()
        : this.db.prepare('SELECT * FROM webmaster_audit WHERE property_id = ? ORDER BY seq').all(propertyId)
    ) as AuditRow[];
    return rows.map(toAudit);
  }

  async submitFastLane(s: SubmitArgs) {
    return this.#submit.immediate(s);
  }

  async fastLaneUsed(propertyId: string, day: number) {
    return (
      this.db.prepare('SELECT count(*) AS n FROM webmaster_submissions WHERE property_id = ? AND day = ?').get(propertyId, day) as {
        n: number;
      }
    ).n;
  }
}
