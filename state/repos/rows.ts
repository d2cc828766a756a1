/** Row shapes and mappers shared by the SQLite and PostgreSQL backends (both use the same column names). */
import { toDocument, type DocRow, type DocumentRow } from '../documents.js';
import type { ClaimedItem, FrontierKind, SharedRobots, StoredUrlRequest, UrlRequestStatus, UrlRequestType } from './types.js';

// The keys and documents rows are today's SQLite stores' own: one definition each.
export { toKeyRecord, type KeyRow } from '../keys.js';
export { classifyChange, toDocument, type DocRow } from '../documents.js';

/**
 * svc_fresh's query (as state/documents.ts Documents.fresh), in PostgreSQL placeholders. Crawled pages only: an
 * ingested corpus record (`corpus:<name>/<id>`, cli/ingest.ts) is not new on the Web (docs/api-tools.md).
 */
export const FRESH_SQL = `SELECT * FROM documents WHERE status = 'indexed' AND last_changed >= $1 AND url NOT LIKE 'corpus:%'
  ORDER BY last_changed DESC, page_ref DESC LIMIT $2`;

export const freshRow = (r: DocRow): DocumentRow & { change: 'new' | 'changed' } => ({
  ...toDocument(r),
  change: r.first_seen === r.last_changed ? 'new' : 'changed',
});

export interface RequestRow {
  id: string;
  key_digest: string;
  type: UrlRequestType;
  url: string;
  host: string;
  note: string | null;
  status: UrlRequestStatus;
  received_at: string;
  updated_at: string;
}

export const toRequest = (r: RequestRow): StoredUrlRequest => ({
  id: r.id,
  keyDigest: r.key_digest,
  type: r.type,
  url: r.url,
  host: r.host,
  note: r.note,
  status: r.status,
  receivedAt: r.received_at,
  updatedAt: r.updated_at,
});

export interface FrontierRow {
  id: number;
  url: string;
  host: string;
  kind: FrontierKind;
  priority: number;
  attempts: number;
  depth: number;
  reason: string;
  request_id: string | null;
  etag: string | null;
  last_modified: string | null;
  fetched_at: number | null;
  scope: string | null;
  lease_owner: string;
  lease_until: number;
  recrawl_ms?: number | null;
}

/** The stored scope (JSON list of hosts, or NULL for the open web), tolerant of bad text (null: the open web). */
function parseScope(text: string | null): readonly string[] | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter((h): h is string => typeof h === 'string') : null;
  } catch {
    return null;
  }
}

export const toClaimed = (r: FrontierRow): ClaimedItem => ({
  id: r.id,
  url: r.url,
  host: r.host,
  kind: r.kind,
  priority: r.priority,
  attempts: r.attempts,
  depth: r.depth,
  reason: r.reason,
  requestId: r.request_id,
  etag: r.etag,
  lastModified: r.last_modified,
  fetchedBefore: r.fetched_at !== null,
  scope: parseScope(r.scope),
  lease: r.lease_owner,
  leaseUntil: r.lease_until,
  recrawlMs: r.recrawl_ms ?? null,
});

export const FRONTIER_STATES = ['queued', 'leased', 'retrying', 'done', 'dead'] as const;

/** A robots_files row (SQLite stores `truncated` as 0/1, PostgreSQL as a boolean). */
export interface RobotsRow {
  origin: string;
  status: string;
  fetched_at: number;
  expires_at: number;
  http_status: number | null;
  url: string;
  error: string | null;
  truncated: number | boolean;
  body: Uint8Array | null;
}

export const robotsOfRow = (r: RobotsRow): SharedRobots => ({
  origin: r.origin,
  status: r.status,
  fetchedAt: Number(r.fetched_at),
  expiresAt: Number(r.expires_at),
  httpStatus: r.http_status,
  url: r.url,
  error: r.error,
  truncated: r.truncated === true || r.truncated === 1,
  body: r.body ? new Uint8Array(r.body.buffer, r.body.byteOffset, r.body.byteLength) : null,
});
