/**
 * The fast lane: a verified owner's URL goes into the durable frontier above every other priority, nothing else.
 * Because it only writes a frontier row, every crawler rule (robots, noindex, politeness, back-off) still applies.
 * Idempotent, deduplicated per property and UTC day, and quota-limited; the audit log never records the URL.
 */
import { createHash } from 'node:crypto';
import { PRIORITY } from '../crawler/frontier.js';
import { hostOf, normalizeUrl } from '../crawler/url.js';
import type { FrontierRepo } from '../state/repos/types.js';
import type { AuditOutcome, WebmasterRepo } from '../state/repos/webmaster-types.js';
import { accountIdOf, type OidcIdentity } from './accounts.js';
import { OwnershipError, type Ownership } from './ownership.js';
import { covers } from './properties.js';

/** Above URL requests (submitted), sitemaps and links: a verified owner's URL is the next of its host. */
export const FAST_LANE_PRIORITY = PRIORITY.submitted + 10;
/** The frontier row's reason. */
export const FAST_LANE_REASON = 'webmaster_fast_lane';

const DAY_MS = 86_400_000;

export interface FastLaneOptions {
  readonly repo: WebmasterRepo;
  readonly frontier: FrontierRepo;
  readonly ownership: Ownership;
  /** Submissions per property and UTC day. */
  readonly perDay: number;
  /** Clock (ms). @default Date.now */
  readonly now?: () => number;
}

export interface FastLaneResult {
  /** accepted, replayed, duplicate: the URL is in the frontier; the others: refused, nothing queued. */
  readonly outcome: Extract<
    AuditOutcome,
    'ok' | 'replayed' | 'duplicate' | 'conflict' | 'quota_exceeded' | 'not_verified' | 'out_of_property' | 'invalid_url'
  >;
  readonly url: string | null;
  /** The frontier row, when queued. */
  readonly frontierId: number | null;
  /** Submissions left today for the property. */
  readonly remainingToday: number;
}

export class FastLane {
  readonly #o: FastLaneOptions;

  constructor(opts: FastLaneOptions) {
    this.#o = opts;
  }

  async submit(identity: OidcIdentity, propertyId: string, rawUrl: string, idempotencyKey?: string): Promise<FastLaneResult> {
    const { repo, frontier, ownership, perDay } = this.#o;
    const now = (this.#o.now ?? Date.now)();
    const at = new Date(now).toISOString();
    const day = Math.floor(now / DAY_MS) * DAY_MS;
    const property = await repo.getProperty(propertyId);
    if (!property) throw new OwnershipError('no_such_property', 'no such property');
    if (property.account !== accountIdOf(identity)) throw new OwnershipError('not_owner', 'the property belongs to another account');
    const refuse = async (outcome: FastLaneResult['outcome'], url: string | null): Promise<FastLaneResult> => {
      await repo.audit({ at, event: 'fast_lane_refused', propertyId, method: null, outcome });
      return { outcome, url, frontierId: null, remainingToday: Math.max(0, perDay - (await repo.fastLaneUsed(propertyId, day))) };
    };
    if (!(await ownership.isOwned(propertyId))) return refuse('not_verified', null);
    const url = normalizeUrl(rawUrl);
    if (url === null || !/^https?:$/.test(new URL(url).protocol)) return refuse('invalid_url', null);
    if (!covers(property, hostOf(url))) return refuse('out_of_property', url);
    const idempotencyDigest =
      idempotencyKey === undefined ? null : createHash('sha256').update(`${propertyId}\0${idempotencyKey}`).digest();
    const d = await repo.submitFastLane({ propertyId, url, idempotencyDigest, day, perDay, at });
    if (d.outcome === 'quota_exceeded') return refuse('quota_exceeded', url);
    if (d.outcome === 'conflict') return refuse('conflict', url);
    // Enqueue on every admitted answer: the frontier row is idempotent, so a retry repairs a crash between recording
    // and enqueueing. Only a new submission makes a known done/queued URL due now, so back-off and dead letters stand.
    const { id } = await frontier.enqueue(
      {
        url: d.submission.url,
        host: hostOf(d.submission.url),
        reason: FAST_LANE_REASON,
        priority: FAST_LANE_PRIORITY,
        kind: 'page',
        at: now,
        expedite: d.outcome === 'accepted',
      },
      now,
    );
    const outcome = d.outcome === 'accepted' ? 'ok' : d.outcome;
    await repo.audit({ at, event: 'fast_lane_submitted', propertyId, method: null, outcome });
    return {
      outcome,
      url: d.submission.url,
      frontierId: id,
      remainingToday: Math.max(0, perDay - (await repo.fastLaneUsed(propertyId, day))),
    };
  }
}
