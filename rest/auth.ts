import type { Context } from 'koa';
import { SvcError } from '../errors.js';
import type { KeysRepo, RateDecision, UsageCountersRepo, VerifiedKey } from '../state/repos/types.js';

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * The caller's verified key from `Authorization: Bearer <key>`. Missing, malformed, unknown and revoked keys all
 * get the same 401 body, so the answer says nothing about which keys exist.
 */
export async function authenticate(ctx: Context, keys: KeysRepo): Promise<VerifiedKey> {
  // Node keeps only the first of repeated Authorization headers; two credentials are ambiguous, so refuse them.
  if ((ctx.req.headersDistinct.authorization?.length ?? 0) > 1) {
    throw new SvcError('bad_request', 'send exactly one Authorization header');
  }
  const header = ctx.get('authorization');
  const m = BEARER.exec(header);
  const verified = m?.[1] ? await keys.verify(m[1]) : null;
  if (!verified) {
    ctx.set('WWW-Authenticate', 'Bearer realm="svc"');
    throw new SvcError('unauthorized', 'provide a valid key as Authorization: Bearer <API_KEY>');
  }
  return verified;
}

/** Sets the four X-RateLimit-* headers (and Retry-After when refused). */
export function setRateHeaders(set: (name: string, value: string) => void, d: RateDecision): void {
  set('X-RateLimit-Limit-Minute', String(d.limitMinute));
  set('X-RateLimit-Remaining-Minute', String(d.remainingMinute));
  set('X-RateLimit-Limit-Day', String(d.limitDay));
  set('X-RateLimit-Remaining-Day', String(d.remainingDay));
  if (!d.allowed) set('Retry-After', String(d.retryAfter));
}

/**
 * Consumes one request of the key's quotas (one atomic conditional increment in the state database, so the quota
 * holds across replicas); over quota → 429 rate_limited with Retry-After.
 */
export async function enforceRate(
  usage: UsageCountersRepo,
  key: VerifiedKey,
  set: (name: string, value: string) => void,
  now: Date,
): Promise<void> {
  const d = await usage.consume(key.digest, { perMinute: key.perMinute, perDay: key.perDay }, now);
  setRateHeaders(set, d);
  if (!d.allowed) {
    throw new SvcError('rate_limited', `quota exceeded; retry in ${d.retryAfter} s`, { retryAfter: d.retryAfter });
  }
}
