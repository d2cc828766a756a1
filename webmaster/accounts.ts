/**
 * Owner accounts, keyed by an id derived from a verified OIDC identity (no passwords, sign-up or login endpoint yet).
 * The id is SHA-256 over issuer and subject, so the store holds no e-mail, name or raw subject.
 */
import { createHash } from 'node:crypto';

/** An authenticated identity as an OIDC provider asserts it. */
export interface OidcIdentity {
  /** The `iss` claim, an https URL. */
  readonly issuer: string;
  /** The `sub` claim: stable and unique within the issuer. */
  readonly subject: string;
}

/** Thrown for an identity that cannot own anything (empty subject, issuer not https). */
export class IdentityError extends Error {
  override readonly name = 'IdentityError';
  readonly code = 'invalid_identity';
}

/** `acct_` + 32 hex chars of SHA-256(issuer NUL subject): stable per identity, opaque, no personal data. */
export function accountIdOf(id: OidcIdentity): string {
  let iss: URL;
  try {
    iss = new URL(id.issuer);
  } catch {
    throw new IdentityError('the OIDC issuer must be an https URL');
  }
  if (iss.protocol !== 'https:') throw new IdentityError('the OIDC issuer must be an https URL');
  if (id.subject.trim() === '' || id.subject.length > 255) throw new IdentityError('the OIDC subject must be 1-255 characters');
  const issuer = iss.toString().replace(/\/$/, '');
  return `acct_${createHash('sha256').update(issuer).update('\0').update(id.subject).digest('hex').slice(0, 32)}`;
}
