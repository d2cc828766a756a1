/**
 * Properties and their ownership proofs (planned, not exposed: only `svc webmaster` calls this).
 * Only a proof's SHA-256 is stored and candidates are compared in constant time, so a leaked table proves nothing;
 * lifecycle (pending, verified, lost, rotated, revoked): docs/webmaster.md#ownership-proof-lifecycle.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type {
  AuditEvent,
  AuditOutcome,
  OwnershipProof,
  ProofMethod,
  PropertyKind,
  WebmasterProperty,
  WebmasterRepo,
} from '../state/repos/webmaster-types.js';
import { accountIdOf, type OidcIdentity } from './accounts.js';
import type { CheckResult, ProofCheckers } from './checkers.js';
import { normalizePropertyName } from './properties.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Lifetimes, all with defaults. */
export interface OwnershipOptions {
  readonly repo: WebmasterRepo;
  readonly checkers: ProofCheckers;
  /** Clock (ms). @default Date.now */
  readonly now?: () => number;
  /** A challenge not verified within this expires. @default 7 days */
  readonly challengeTtlMs?: number;
  /** A verified proof not found again within this expires (re-verification renews it). @default 30 days */
  readonly proofValidityMs?: number;
  /** After rotate(), the current proofs stay valid this long beside the new one. @default 7 days */
  readonly rotationGraceMs?: number;
}

/** Errors of the ownership operations; `code` is stable. */
export class OwnershipError extends Error {
  override readonly name = 'OwnershipError';
  constructor(
    readonly code: 'no_such_property' | 'not_owner' | 'not_verified' | 'method_not_allowed' | 'no_such_proof' | 'proof_ended',
    message: string,
  ) {
    super(message);
  }
}

/** Methods a property kind may use: DNS for every property; page and file proofs only for one host. */
export const METHODS_FOR: Readonly<Record<PropertyKind, readonly ProofMethod[]>> = {
  domain: ['dns_txt'],
  host: ['dns_txt', 'meta_tag', 'well_known'],
};

/** Prefix of every challenge: lets an operator recognise one, and keeps it a valid meta content / TXT / file line. */
export const CHALLENGE_PREFIX = 'svc-verify-';

/** A fresh challenge: the prefix and 32 random bytes (256 bits) in base64url. */
export function mintChallenge(): string {
  return `${CHALLENGE_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export const hashChallenge = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Which proofs any candidate matches. Every candidate is compared with every proof in constant time (fixed-length
 * digests, no early exit), so timing tells nothing about how close a guess was or which proof it hit.
 */
export function matchingProofs(candidates: readonly string[], proofs: readonly OwnershipProof[]): Set<string> {
  const hit = new Set<string>();
  for (const c of candidates) {
    const h = hashChallenge(c);
    for (const p of proofs) if (timingSafeEqual(h, p.tokenHash)) hit.add(p.id);
  }
  return hit;
}

/** Whether a proof counts at `now` (pending or verified, not expired, not past its rotation grace). */
export function isLive(p: OwnershipProof, now: number): boolean {
  if (p.state !== 'pending' && p.state !== 'verified') return false;
  if (Date.parse(p.expiresAt) <= now) return false;
  return p.graceUntil === null || Date.parse(p.graceUntil) > now;
}

export interface VerifyResult {
  /** ok when at least one proof of the method was found; else why not. */
  readonly outcome: AuditOutcome;
  /** Proofs that matched. */
  readonly matched: readonly string[];
  /** Whether the property is owned after this check. */
  readonly owned: boolean;
}

export interface PropertyStatus {
  readonly property: WebmasterProperty;
  readonly owned: boolean;
  readonly proofs: readonly Omit<OwnershipProof, 'tokenHash'>[];
}

export class Ownership {
  readonly #repo: WebmasterRepo;
  readonly #checkers: ProofCheckers;
  readonly #now: () => number;
  readonly #ttl: number;
  readonly #validity: number;
  readonly #grace: number;

  constructor(opts: OwnershipOptions) {
    this.#repo = opts.repo;
    this.#checkers = opts.checkers;
    this.#now = opts.now ?? Date.now;
    this.#ttl = opts.challengeTtlMs ?? 7 * DAY;
    this.#validity = opts.proofValidityMs ?? 30 * DAY;
    this.#grace = opts.rotationGraceMs ?? 7 * DAY;
  }

  #iso(ms = this.#now()): string {
    return new Date(ms).toISOString();
  }

  async #audit(event: AuditEvent, propertyId: string, method: ProofMethod | null, outcome: AuditOutcome): Promise<void> {
    await this.#repo.audit({ at: this.#iso(), event, propertyId, method, outcome });
  }

  /** The property, when `account` owns the record (whether or not it is verified yet). */
  async #owned(account: string, propertyId: string): Promise<WebmasterProperty> {
    const p = await this.#repo.getProperty(propertyId);
    if (!p) throw new OwnershipError('no_such_property', 'no such property');
    if (p.account !== account) throw new OwnershipError('not_owner', 'the property belongs to another account');
    return p;
  }

  /** Creates (or returns) a property for an authenticated identity. */
  async createProperty(
    identity: OidcIdentity,
    kind: PropertyKind,
    rawName: string,
  ): Promise<{ property: WebmasterProperty; created: boolean }> {
    const account = accountIdOf(identity);
    const name = normalizePropertyName(rawName);
    const out = await this.#repo.createProperty({ account, kind, name, at: this.#iso() });
    if (out.created) await this.#audit('property_created', out.property.id, null, 'ok');
    return out;
  }

  /**
   * Issues a proof. The challenge is in the answer and nowhere else: it is not stored, not logged and cannot be
   * shown again (a lost challenge means issuing a new proof).
   */
  async issueProof(identity: OidcIdentity, propertyId: string, method: ProofMethod): Promise<{ proof: OwnershipProof; challenge: string }> {
    const property = await this.#owned(accountIdOf(identity), propertyId);
    if (!METHODS_FOR[property.kind].includes(method))
      throw new OwnershipError('method_not_allowed', `a ${property.kind} property cannot use ${method}`);
    const challenge = mintChallenge();
    const now = this.#now();
    const proof = await this.#repo.addProof({
      propertyId,
      method,
      tokenHash: hashChallenge(challenge),
      createdAt: this.#iso(now),
      expiresAt: this.#iso(now + this.#ttl),
    });
    await this.#audit('proof_issued', propertyId, method, 'ok');
    return { proof, challenge };
  }

  /** Whether the property is owned now (at least one live verified proof). */
  async isOwned(propertyId: string): Promise<boolean> {
    const now = this.#now();
    return (await this.#repo.proofs(propertyId)).some((p) => p.state === 'verified' && isLive(p, now));
  }

  /** Ends proofs whose time ran out (expired challenges, verified proofs not re-verified, grace passed). */
  async #sweep(propertyId: string): Promise<void> {
    const now = this.#now();
    let verifiedEnded = false;
    for (const p of await this.#repo.proofs(propertyId)) {
      if ((p.state === 'pending' || p.state === 'verified') && !isLive(p, now)) {
        await this.#repo.updateProof(p.id, { state: 'expired', endedAt: this.#iso(now) });
        await this.#audit('proof_expired', propertyId, p.method, 'expired');
        if (p.state === 'verified') verifiedEnded = true;
      }
    }
    // Ownership ended with time (isOwned already says so); the log says when it was noticed.
    if (verifiedEnded && !(await this.isOwned(propertyId))) await this.#audit('ownership_lost', propertyId, null, 'expired');
  }

  async #check(property: WebmasterProperty, method: ProofMethod): Promise<CheckResult> {
    if (method === 'dns_txt') return this.#checkers.dnsTxt(property.name);
    if (method === 'meta_tag') return this.#checkers.metaTag(property.name);
    return this.#checkers.wellKnown(property.name);
  }

  /**
   * Looks for the property's live proofs of `method` and records what was found. Used for the first verification
   * (by the owner) and for re-verification (reverifyAll).
   */
  async verify(identity: OidcIdentity, propertyId: string, method: ProofMethod): Promise<VerifyResult> {
    const property = await this.#owned(accountIdOf(identity), propertyId);
    return this.#verify(property, method);
  }

  async #verify(property: WebmasterProperty, method: ProofMethod): Promise<VerifyResult> {
    const ownedBefore = await this.isOwned(property.id);
    await this.#sweep(property.id);
    const now = this.#now();
    const ofMethod = (await this.#repo.proofs(property.id)).filter((p) => p.method === method);
    const live = ofMethod.filter((p) => isLive(p, now));
    let outcome: AuditOutcome;
    let matched = new Set<string>();
    if (live.length === 0) {
      // Nothing to look for: say whether the proof that ended last was revoked or ran out of time.
      const lastEnd = ofMethod.reduce((m, p) => (p.endedAt !== null && p.endedAt > m ? p.endedAt : m), '');
      outcome = ofMethod.some((p) => p.state === 'revoked' && p.endedAt === lastEnd) ? 'revoked' : 'expired';
      await this.#audit('proof_check_failed', property.id, method, outcome);
    } else {
      const found = await this.#check(property, method);
      matched = found.found ? matchingProofs(found.candidates, live) : new Set();
      outcome = matched.size > 0 ? 'ok' : found.found ? 'no_match' : found.outcome;
      const at = this.#iso();
      for (const p of live) {
        if (matched.has(p.id)) {
          await this.#repo.updateProof(p.id, {
            state: 'verified',
            verifiedAt: p.verifiedAt ?? at,
            checkedAt: at,
            // A rotated proof keeps its grace limit: finding it again does not extend its life past the rotation.
            expiresAt: this.#iso(now + this.#validity),
          });
          await this.#audit(p.state === 'verified' ? 'proof_reverified' : 'proof_verified', property.id, method, 'ok');
        } else if (p.state === 'verified' && p.graceUntil === null && outcome !== 'network_error' && outcome !== 'blocked_address') {
          // A definitive answer without this proof: the record was removed or replaced, so the proof is lost now.
          // (A rotated proof is left to its grace limit: the owner may already have swapped in the successor.)
          await this.#repo.updateProof(p.id, { state: 'lost', checkedAt: at, endedAt: at });
          await this.#audit('proof_lost', property.id, method, outcome === 'ok' ? 'no_match' : outcome);
        } else {
          await this.#repo.updateProof(p.id, { checkedAt: at });
          if (p.state === 'pending') await this.#audit('proof_check_failed', property.id, method, outcome === 'ok' ? 'no_match' : outcome);
        }
      }
    }
    const ownedAfter = await this.isOwned(property.id);
    await this.#ownershipChange(property.id, ownedBefore, ownedAfter, method, outcome);
    return { outcome, matched: [...matched], owned: ownedAfter };
  }

  async #ownershipChange(
    propertyId: string,
    before: boolean,
    after: boolean,
    method: ProofMethod | null,
    outcome: AuditOutcome,
  ): Promise<void> {
    if (!before && after) await this.#audit('ownership_gained', propertyId, method, 'ok');
    if (before && !after) await this.#audit('ownership_lost', propertyId, method, outcome === 'ok' ? 'expired' : outcome);
  }

  /**
   * Issues a successor proof of `method` and gives every current live proof of the property `rotationGraceMs` to
   * live beside it (old and new both count meanwhile).
   */
  async rotate(identity: OidcIdentity, propertyId: string, method: ProofMethod): Promise<{ proof: OwnershipProof; challenge: string }> {
    await this.#owned(accountIdOf(identity), propertyId);
    const now = this.#now();
    const graceUntil = now + this.#grace;
    for (const p of await this.#repo.proofs(propertyId)) {
      if (!isLive(p, now)) continue;
      const until = p.graceUntil === null ? graceUntil : Math.min(graceUntil, Date.parse(p.graceUntil));
      await this.#repo.updateProof(p.id, { graceUntil: this.#iso(until) });
      await this.#audit('proof_rotated', propertyId, p.method, 'ok');
    }
    return this.issueProof(identity, propertyId, method);
  }

  /** Revokes a proof at once; ownership ends when it was the last live verified one. */
  async revoke(identity: OidcIdentity, proofId: string): Promise<{ owned: boolean }> {
    const proof = await this.#repo.getProof(proofId);
    if (!proof) throw new OwnershipError('no_such_proof', 'no such proof');
    await this.#owned(accountIdOf(identity), proof.propertyId);
    if (proof.state !== 'pending' && proof.state !== 'verified')
      throw new OwnershipError('proof_ended', `the proof is already ${proof.state}`);
    const before = await this.isOwned(proof.propertyId);
    await this.#repo.updateProof(proofId, { state: 'revoked', endedAt: this.#iso() });
    await this.#audit('proof_revoked', proof.propertyId, proof.method, 'revoked');
    const after = await this.isOwned(proof.propertyId);
    await this.#ownershipChange(proof.propertyId, before, after, proof.method, 'revoked');
    return { owned: after };
  }

  /**
   * The periodic re-verification (svc webmaster reverify; an operator's timer): every verified proof is looked up
   * again; lost and expired proofs end, and with the last of them the ownership.
   */
  async reverifyAll(): Promise<{ checked: number; lost: number; expired: number }> {
    const out = { checked: 0, lost: 0, expired: 0 };
    for (const property of await this.#repo.listProperties()) {
      const before = await this.#repo.proofs(property.id);
      for (const m of new Set(before.filter((p) => p.state === 'verified').map((p) => p.method))) {
        out.checked++;
        await this.#verify(property, m);
      }
      await this.#sweep(property.id);
      for (const p of await this.#repo.proofs(property.id)) {
        if (before.find((x) => x.id === p.id)?.state !== 'verified') continue;
        if (p.state === 'lost') out.lost++;
        if (p.state === 'expired') out.expired++;
      }
    }
    return out;
  }

  /** A property with its proofs (hashes left out) and whether it is owned now. */
  async status(identity: OidcIdentity, propertyId: string): Promise<PropertyStatus> {
    const property = await this.#owned(accountIdOf(identity), propertyId);
    await this.#sweep(propertyId);
    const proofs = (await this.#repo.proofs(propertyId)).map(({ tokenHash: _h, ...rest }) => rest);
    return { property, owned: await this.isOwned(propertyId), proofs };
  }

  /** The account's properties. */
  async list(identity: OidcIdentity): Promise<WebmasterProperty[]> {
    return this.#repo.listProperties(accountIdOf(identity));
  }
}

/**
 * Runs `ownership.reverifyAll()` now and then every `everyMs` until `signal` aborts (svc webmaster reverify --every).
 * One pass at a time: the next starts `everyMs` after the previous one ended. A failing pass is reported and the
 * loop goes on (a DNS outage must not stop re-verification for good).
 */
export async function reverifyPeriodically(
  ownership: Pick<Ownership, 'reverifyAll'>,
  opts: {
    everyMs: number;
    signal: AbortSignal;
    onPass?: (r: { checked: number; lost: number; expired: number } | { error: unknown }) => void;
  },
): Promise<number> {
  let passes = 0;
  while (!opts.signal.aborted) {
    try {
      opts.onPass?.(await ownership.reverifyAll());
    } catch (error) {
      opts.onPass?.({ error });
    }
    passes++;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, opts.everyMs);
      function done(): void {
        clearTimeout(timer);
        opts.signal.removeEventListener('abort', done);
        resolve();
      }
      opts.signal.addEventListener('abort', done, { once: true });
    });
  }
  return passes;
}
