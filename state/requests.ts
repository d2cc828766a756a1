/**
 * URL requests (discovery, recrawl, correction, exact removal): validation, idempotency, the per-key daily quota
 * and the status lifecycle (docs/api-requests.md). Records keep the SHA-256 digest of the submitting key, never the
 * key. tools/request-processor.ts moves requests through the crawler; this store only records and checks.
 */
import { createHash, randomBytes } from 'node:crypto';
import { SvcError, type FieldIssue } from '../errors.js';
import { stmt, type StateDb } from './db.js';

export const REQUEST_TYPES = ['discovery', 'recrawl', 'correction', 'removal'] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];

export const REQUEST_STATUSES = ['received', 'queued', 'in_progress', 'completed', 'failed'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export const REQUEST_OUTCOMES = [
  'indexed',
  'updated',
  'unchanged',
  'removed',
  'excluded_by_robots',
  'excluded_by_noindex',
  'not_found',
  'rejected',
] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];

/** Bounds (documented in docs/api-requests.md). */
export const REQUEST_LIMITS = {
  /** Longest accepted URL, in characters. */
  urlMaxLength: 2048,
  /** Longest note, in characters. */
  noteMaxLength: 1000,
  /** Longest Idempotency-Key, in characters. */
  idempotencyKeyMaxLength: 255,
} as const;

/** Said in every response about a request. */
export const SUBMISSION_NOTICE =
  'A submission guarantees neither indexing nor position: the URL is crawled under the same robots.txt, noindex, politeness, DNS/redirect re-validation, back-off and dead-letter rules as any other URL.';

/** Allowed status transitions: received → queued → in_progress → completed | failed (and the shortcuts below). */
export const REQUEST_TRANSITIONS: Readonly<Record<RequestStatus, readonly RequestStatus[]>> = {
  received: ['queued', 'in_progress', 'completed', 'failed'],
  queued: ['in_progress', 'completed', 'failed'],
  // Back to queued when a crawl attempt must be retried later (back-off).
  in_progress: ['queued', 'completed', 'failed'],
  completed: [],
  failed: [],
};

/** One step of a request's history. */
export interface RequestEvent {
  readonly status: RequestStatus;
  readonly at: string;
  readonly outcome?: RequestOutcome;
  readonly reason?: string;
}

/** The stored request (the public record adds the notice; the key digest never leaves the store). */
export interface UrlRequest {
  readonly id: string;
  readonly type: RequestType;
  readonly url: string;
  readonly host: string;
  readonly note: string | null;
  readonly status: RequestStatus;
  readonly outcome: RequestOutcome | null;
  readonly reason: string | null;
  readonly receivedAt: string;
  readonly updatedAt: string;
  readonly history: readonly RequestEvent[];
  readonly attempts: number;
}

/**
 * What a caller submits. `url` and `host` were already checked and normalised by the submitting tool
 * (tools/submit-url.ts validateSubmissionUrl: absolute http(s), ≤ 2048 chars, no credentials, public host).
 */
export interface RequestSubmission {
  readonly type: string;
  readonly url: string;
  readonly host: string;
  readonly note?: string | undefined;
  readonly idempotencyKey?: string | undefined;
}

export interface RequestStoreOptions {
  /** Submissions one key may make per UTC day (config.submissionsPerDay). */
  readonly perDay: number;
  readonly now?: () => Date;
}

/** A url_requests row (both state backends: same columns). */
export interface UrlRequestRow {
  id: string;
  key_digest: string;
  type: RequestType;
  url: string;
  host: string;
  note: string | null;
  idempotency_digest: string | null;
  status: RequestStatus;
  outcome: RequestOutcome | null;
  reason: string | null;
  history: string;
  received_at: string;
  updated_at: string;
  attempts: number;
}

type Raw = UrlRequestRow;

export const toUrlRequest = (r: Raw): UrlRequest => ({
  id: r.id,
  type: r.type,
  url: r.url,
  host: r.host,
  note: r.note,
  status: r.status,
  outcome: r.outcome,
  reason: r.reason,
  receivedAt: r.received_at,
  updatedAt: r.updated_at,
  history: JSON.parse(r.history) as RequestEvent[],
  attempts: r.attempts,
});

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/**
 * A submission checked and put in stored form (both backends): the type is one of the four, the note trimmed and
 * bounded, the Idempotency-Key replaced by its digest under the caller's key. Throws bad_request / validation_failed.
 */
export function checkSubmission(
  keyDigest: string,
  sub: RequestSubmission,
): { type: RequestType; url: string; host: string; note: string | null; idem: string | null } {
  const errors: FieldIssue[] = [];
  if (!(REQUEST_TYPES as readonly string[]).includes(sub.type)) {
    errors.push({ path: ['type'], issue: `must be one of ${REQUEST_TYPES.join(', ')}` });
    throw new SvcError('bad_request', `type must be one of ${REQUEST_TYPES.join(', ')}`, { errors });
  }
  const note = sub.note === undefined ? null : sub.note.trim() === '' ? null : sub.note.trim();
  if (note !== null && note.length > REQUEST_LIMITS.noteMaxLength) {
    throw new SvcError('validation_failed', `note is longer than ${REQUEST_LIMITS.noteMaxLength} characters`, {
      errors: [{ path: ['note'], issue: `at most ${REQUEST_LIMITS.noteMaxLength} characters` }],
    });
  }
  const idem = sub.idempotencyKey !== undefined && sub.idempotencyKey !== '' ? sha256(`${keyDigest}\n${sub.idempotencyKey}`) : null;
  return { type: sub.type as RequestType, url: sub.url, host: sub.host, note, idem };
}

/** The answer when an Idempotency-Key comes back with another type or URL. */
export const idempotencyConflict = (): SvcError =>
  new SvcError('conflict', 'this Idempotency-Key was already used for a different request', {
    errors: [{ path: ['idempotency_key'], issue: 'already used with another type or url' }],
  });

/** The answer when a key has used its daily submissions. */
export const submissionQuotaExceeded = (perDay: number, now: Date): SvcError =>
  new SvcError('submission_quota_exceeded', `this key may submit ${perDay} URL requests per day (UTC)`, {
    retryAfter: secondsToUtcMidnight(now),
  });

/** Start of the UTC day of `now` (ISO), the daily submission quota's window. */
export const utcDayStart = (now: Date): string =>
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();

/**
 * Checks a transition (REQUEST_TRANSITIONS, outcome and reason rules) and returns the new history event; throws
 * when it is not allowed.
 */
export function nextEvent(
  cur: UrlRequest,
  to: RequestStatus,
  detail: { outcome?: RequestOutcome; reason?: string },
  at: string,
): RequestEvent {
  if (!REQUEST_TRANSITIONS[cur.status].includes(to)) throw new Error(`requests: ${cur.status} → ${to} is not allowed (${cur.id})`);
  if (to === 'completed' && detail.outcome === undefined) throw new Error('requests: completed needs an outcome');
  if ((to === 'failed' || detail.outcome === 'rejected') && (detail.reason === undefined || detail.reason === '')) {
    throw new Error('requests: failed and rejected need a reason');
  }
  return {
    status: to,
    at,
    ...(detail.outcome !== undefined ? { outcome: detail.outcome } : {}),
    ...(detail.reason !== undefined ? { reason: detail.reason } : {}),
  };
}

/** Seconds from `now` to the next UTC midnight (when the daily quota resets). */
function secondsToUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** SQLite-backed store of URL requests. */
export class RequestStore {
  readonly #db: StateDb;
  readonly #opts: RequestStoreOptions;

  constructor(db: StateDb, opts: RequestStoreOptions) {
    this.#db = db;
    this.#opts = opts;
  }

  #now(): Date {
    return this.#opts.now?.() ?? new Date();
  }

  /**
   * Records a submission for `keyDigest` (hex SHA-256 of the API key). Idempotent by Idempotency-Key (409 if reused
   * for another type or URL) and deduplicated against this key's open request for the same URL; only new requests
   * count against the daily quota (429). Bad input throws and stores nothing.
   */
  submit(keyDigest: string, sub: RequestSubmission): { request: UrlRequest; deduplicated: boolean } {
    const { type, url, host, note, idem } = checkSubmission(keyDigest, sub);

    return this.#db
      .transaction(() => {
        if (idem !== null) {
          const prior = this.#db
            .prepare<[string, string], Raw>('SELECT * FROM url_requests WHERE key_digest = ? AND idempotency_digest = ?')
            .get(keyDigest, idem);
          if (prior) {
            if (prior.type !== type || prior.url !== url) throw idempotencyConflict();
            return { request: toUrlRequest(prior), deduplicated: true };
          }
        }
        const open = this.#db
          .prepare<[string, string, string], Raw>(
            `SELECT * FROM url_requests WHERE key_digest = ? AND type = ? AND url = ?
             AND status IN ('received', 'queued', 'in_progress') ORDER BY received_at LIMIT 1`,
          )
          .get(keyDigest, type, url);
        if (open) return { request: toUrlRequest(open), deduplicated: true };

        const now = this.#now();
        const dayStart = utcDayStart(now);
        const used =
          this.#db
            .prepare<[string, string], { n: number }>('SELECT count(*) AS n FROM url_requests WHERE key_digest = ? AND received_at >= ?')
            .get(keyDigest, dayStart)?.n ?? 0;
        if (used >= this.#opts.perDay) throw submissionQuotaExceeded(this.#opts.perDay, now);
        const at = now.toISOString();
        const id = `req_${randomBytes(16).toString('base64url')}`;
        const history: RequestEvent[] = [{ status: 'received', at }];
        stmt(
          this.#db,
          `INSERT INTO url_requests (id, key_digest, type, url, host, note, idempotency_digest, status, history, received_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, 'received', ?, ?, ?)`,
        ).run(id, keyDigest, type, url, host, note, idem, JSON.stringify(history), at, at);
        return { request: this.#get(id)!, deduplicated: false };
      })
      .immediate();
  }

  /** A request as its submitter sees it; null for an unknown id or another key's request (same answer: 404). */
  getForKey(id: string, keyDigest: string): UrlRequest | null {
    const r = this.#db.prepare<[string, string], Raw>('SELECT * FROM url_requests WHERE id = ? AND key_digest = ?').get(id, keyDigest);
    return r ? toUrlRequest(r) : null;
  }

  /** A request by id regardless of key (the processor only). */
  get(id: string): UrlRequest | null {
    return this.#get(id);
  }

  #get(id: string): UrlRequest | null {
    const r = this.#db.prepare<[string], Raw>('SELECT * FROM url_requests WHERE id = ?').get(id);
    return r ? toUrlRequest(r) : null;
  }

  /** Requests in a status, oldest update first (the processor's work list). */
  listByStatus(status: RequestStatus, limit = 100): UrlRequest[] {
    return this.#db
      .prepare<[string, number], Raw>('SELECT * FROM url_requests WHERE status = ? ORDER BY updated_at, id LIMIT ?')
      .all(status, limit)
      .map(toUrlRequest);
  }

  /**
   * Moves a request to `to`, appending to its history. Throws when the transition is not in REQUEST_TRANSITIONS
   * (a completed or failed request never changes again). `completed` needs an outcome; `rejected` and `failed`
   * need a reason. Returns the updated request.
   */
  transition(id: string, to: RequestStatus, detail: { outcome?: RequestOutcome; reason?: string } = {}): UrlRequest {
    return this.#db
      .transaction(() => {
        const cur = this.#get(id);
        if (!cur) throw new Error(`requests: unknown request ${id}`);
        const at = this.#now().toISOString();
        const event = nextEvent(cur, to, detail, at);
        const history = [...cur.history, event];
        stmt(
          this.#db,
          `UPDATE url_requests SET status = ?, outcome = ?, reason = ?, history = ?, updated_at = ?,
             attempts = attempts + ? WHERE id = ?`,
        ).run(to, detail.outcome ?? null, detail.reason ?? null, JSON.stringify(history), at, to === 'in_progress' ? 1 : 0, id);
        return this.#get(id)!;
      })
      .immediate();
  }

  /** Counts by status (operators' status page). */
  counts(): Record<RequestStatus, number> {
    const out: Record<RequestStatus, number> = { received: 0, queued: 0, in_progress: 0, completed: 0, failed: 0 };
    for (const r of this.#db
      .prepare<[], { status: RequestStatus; n: number }>('SELECT status, count(*) AS n FROM url_requests GROUP BY status')
      .all()) {
      out[r.status] = r.n;
    }
    return out;
  }
}
