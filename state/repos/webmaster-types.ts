/**
 * The webmaster repository: properties, ownership proofs (hashes only), audit log and fast-lane submissions.
 * Planned, not exposed: only webmaster/ and `svc webmaster` use it (docs/webmaster.md). Both backends share the row
 * mappers below, so they return identical records.
 */

/** A domain property covers the domain and all its subdomains; a host property exactly one host name. */
export type PropertyKind = 'domain' | 'host';
export const PROPERTY_KINDS = ['domain', 'host'] as const satisfies readonly PropertyKind[];

/** How ownership is proven: a DNS TXT record (any property), a meta tag on the home page or a /.well-known/ file (host properties). */
export type ProofMethod = 'dns_txt' | 'meta_tag' | 'well_known';
export const PROOF_METHODS = ['dns_txt', 'meta_tag', 'well_known'] as const satisfies readonly ProofMethod[];

/**
 * pending: issued, not yet found; verified: found (and found again at each re-verification); revoked: by the owner or
 * an operator; expired: not verified (or not re-verified) in time; lost: a re-verification found the record gone.
 */
export type ProofState = 'pending' | 'verified' | 'revoked' | 'expired' | 'lost';
export const PROOF_STATES = ['pending', 'verified', 'revoked', 'expired', 'lost'] as const satisfies readonly ProofState[];

/** Closed sets: the audit log holds no free text, no IP, no URL and no secret (it cannot: the columns are CHECKed). */
export const AUDIT_EVENTS = [
  'property_created',
  'proof_issued',
  'proof_verified',
  'proof_check_failed',
  'proof_reverified',
  'proof_rotated',
  'proof_revoked',
  'proof_expired',
  'proof_lost',
  'ownership_gained',
  'ownership_lost',
  'fast_lane_submitted',
  'fast_lane_refused',
] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

export const AUDIT_OUTCOMES = [
  'ok',
  'no_match',
  'not_found',
  'blocked_address',
  'network_error',
  'expired',
  'revoked',
  'duplicate',
  'replayed',
  'conflict',
  'quota_exceeded',
  'not_verified',
  'out_of_property',
  'invalid_url',
] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

export interface WebmasterProperty {
  readonly id: string;
  readonly kind: PropertyKind;
  /** Lower-case ASCII (punycode) domain or host name, no port, no trailing dot. */
  readonly name: string;
  /** The owning account: a pseudonymous id derived from an authenticated OIDC identity (webmaster/accounts.ts). */
  readonly account: string;
  readonly createdAt: string;
}

export interface OwnershipProof {
  readonly id: string;
  readonly propertyId: string;
  readonly method: ProofMethod;
  /** SHA-256 of the challenge. The challenge itself is never stored. */
  readonly tokenHash: Buffer;
  readonly state: ProofState;
  readonly createdAt: string;
  /** After this instant the proof no longer counts (pending: not verified in time; verified: not re-verified in time). */
  readonly expiresAt: string;
  readonly verifiedAt: string | null;
  readonly checkedAt: string | null;
  /** Set when the proof was rotated: it keeps counting until then, beside its successor. */
  readonly graceUntil: string | null;
  /** When it was revoked, expired or lost. */
  readonly endedAt: string | null;
}

export interface AuditEntry {
  readonly seq: number;
  readonly at: string;
  readonly event: AuditEvent;
  readonly propertyId: string;
  readonly method: ProofMethod | null;
  readonly outcome: AuditOutcome;
}

export interface FastLaneSubmission {
  readonly id: number;
  readonly propertyId: string;
  readonly url: string;
  /** Start of the UTC day the submission counts against (ms). */
  readonly day: number;
  readonly at: string;
}

/**
 * accepted: recorded and counted; replayed: the same idempotency key again (the first answer, nothing counted);
 * duplicate: the same URL was already submitted for this property today (nothing counted); conflict: the key was
 * used for another URL; quota_exceeded: the day's quota is spent (`used` submissions).
 */
export type FastLaneDecision =
  | { readonly outcome: 'accepted' | 'replayed' | 'duplicate'; readonly submission: FastLaneSubmission }
  | { readonly outcome: 'conflict'; readonly submission: FastLaneSubmission }
  | { readonly outcome: 'quota_exceeded'; readonly used: number };

export interface ProofChange {
  readonly state?: ProofState;
  readonly verifiedAt?: string | null;
  readonly checkedAt?: string | null;
  readonly expiresAt?: string;
  readonly graceUntil?: string | null;
  readonly endedAt?: string | null;
}

export interface WebmasterRepo {
  /** Creates a property, or returns the account's existing one of the same kind and name (`created: false`). */
  createProperty(p: {
    account: string;
    kind: PropertyKind;
    name: string;
    at: string;
  }): Promise<{ property: WebmasterProperty; created: boolean }>;
  getProperty(id: string): Promise<WebmasterProperty | null>;
  /** Every property, or one account's, oldest first. */
  listProperties(account?: string): Promise<WebmasterProperty[]>;
  addProof(p: {
    propertyId: string;
    method: ProofMethod;
    tokenHash: Buffer;
    createdAt: string;
    expiresAt: string;
  }): Promise<OwnershipProof>;
  getProof(id: string): Promise<OwnershipProof | null>;
  /** The property's proofs, oldest first. */
  proofs(propertyId: string): Promise<OwnershipProof[]>;
  /** Applies the given fields; false when there is no such proof. */
  updateProof(id: string, change: ProofChange): Promise<boolean>;
  audit(e: { at: string; event: AuditEvent; propertyId: string; method: ProofMethod | null; outcome: AuditOutcome }): Promise<void>;
  /** The audit log (one property's, or all), in order. */
  auditLog(propertyId?: string): Promise<AuditEntry[]>;
  /**
   * One fast-lane submission decided atomically for every process sharing the database: idempotency key, then
   * same-URL-today dedup, then the daily quota. Only `accepted` counts against the quota.
   */
  submitFastLane(s: {
    propertyId: string;
    url: string;
    idempotencyDigest: Buffer | null;
    day: number;
    perDay: number;
    at: string;
  }): Promise<FastLaneDecision>;
  /** Submissions counted for the property on that day. */
  fastLaneUsed(propertyId: string, day: number): Promise<number>;
}

/** Row shapes (same column names on both backends). */
export interface PropertyRow {
  id: string;
  kind: string;
  name: string;
  account: string;
  created_at: string;
}
export interface ProofRow {
  id: string;
  property_id: string;
  method: string;
  token_hash: Buffer;
  state: string;
  created_at: string;
  expires_at: string;
  verified_at: string | null;
  checked_at: string | null;
  grace_until: string | null;
  ended_at: string | null;
}
export interface AuditRow {
  seq: number;
  at: string;
  event: string;
  property_id: string;
  method: string | null;
  outcome: string;
}
export interface SubmissionRow {
  id: number;
  property_id: string;
  url: string;
  day: number;
  at: string;
}

export const toProperty = (r: PropertyRow): WebmasterProperty => ({
  id: r.id,
  kind: r.kind as PropertyKind,
  name: r.name,
  account: r.account,
  createdAt: r.created_at,
});
export const toProof = (r: ProofRow): OwnershipProof => ({
  id: r.id,
  propertyId: r.property_id,
  method: r.method as ProofMethod,
  tokenHash: Buffer.from(r.token_hash),
  state: r.state as ProofState,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  verifiedAt: r.verified_at,
  checkedAt: r.checked_at,
  graceUntil: r.grace_until,
  endedAt: r.ended_at,
});
export const toAudit = (r: AuditRow): AuditEntry => ({
  seq: r.seq,
  at: r.at,
  event: r.event as AuditEvent,
  propertyId: r.property_id,
  method: r.method as ProofMethod | null,
  outcome: r.outcome as AuditOutcome,
});
export const toSubmission = (r: SubmissionRow): FastLaneSubmission => ({
  id: r.id,
  propertyId: r.property_id,
  url: r.url,
  day: r.day,
  at: r.at,
});

/** The proof columns an update may set, in a fixed order (both backends build their UPDATE from it). */
export const PROOF_CHANGE_COLUMNS: readonly (readonly [keyof ProofChange, string])[] = [
  ['state', 'state'],
  ['verifiedAt', 'verified_at'],
  ['checkedAt', 'checked_at'],
  ['expiresAt', 'expires_at'],
  ['graceUntil', 'grace_until'],
  ['endedAt', 'ended_at'],
];

const sqlList = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(', ');

/** Table definitions shared by both migrations (types differ only in the id / blob columns). */
export function webmasterTablesSql(dialect: 'sqlite' | 'postgres'): string {
  const blob = dialect === 'sqlite' ? 'BLOB' : 'BYTEA';
  const serial = dialect === 'sqlite' ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY';
  const ms = dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
  return `
      -- Webmaster foundation (issue 11, planned and not exposed). Properties belong to a pseudonymous account id.
      CREATE TABLE webmaster_properties (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN (${sqlList(PROPERTY_KINDS)})),
        name TEXT NOT NULL,
        account TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (account, kind, name)
      );
      -- Ownership proofs: only the SHA-256 of the challenge is kept, never the challenge.
      CREATE TABLE webmaster_proofs (
        id TEXT PRIMARY KEY,
        property_id TEXT NOT NULL REFERENCES webmaster_properties (id),
        method TEXT NOT NULL CHECK (method IN (${sqlList(PROOF_METHODS)})),
        token_hash ${blob} NOT NULL,
        state TEXT NOT NULL CHECK (state IN (${sqlList(PROOF_STATES)})),
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        verified_at TEXT,
        checked_at TEXT,
        grace_until TEXT,
        ended_at TEXT
      );
      CREATE INDEX webmaster_proofs_property ON webmaster_proofs (property_id);
      -- The audit log: closed vocabularies only (no IP, URL, secret or free text can be written).
      CREATE TABLE webmaster_audit (
        seq ${serial},
        at TEXT NOT NULL,
        event TEXT NOT NULL CHECK (event IN (${sqlList(AUDIT_EVENTS)})),
        property_id TEXT NOT NULL,
        method TEXT CHECK (method IS NULL OR method IN (${sqlList(PROOF_METHODS)})),
        outcome TEXT NOT NULL CHECK (outcome IN (${sqlList(AUDIT_OUTCOMES)}))
      );
      CREATE INDEX webmaster_audit_property ON webmaster_audit (property_id, seq);
      -- Fast-lane submissions: the daily quota counts rows of (property, day); a URL counts once a day.
      CREATE TABLE webmaster_submissions (
        id ${serial},
        property_id TEXT NOT NULL REFERENCES webmaster_properties (id),
        url TEXT NOT NULL,
        day ${ms} NOT NULL,
        idempotency_digest ${blob},
        at TEXT NOT NULL,
        UNIQUE (property_id, url, day),
        UNIQUE (property_id, idempotency_digest)
      );
  `;
}
