/** Row shapes and mappers shared by the SQLite and PostgreSQL backends (both use the same column names). */
import type { ClaimedItem, DocumentRow, DocumentStatus, FrontierKind, KeyRecord, StoredUrlRequest, UrlRequestStatus, UrlRequestType } from './types.js';

export interface KeyRow {
  id: string;
  name: string;
  digest: Buffer;
  per_minute: number;
  per_day: number;
  created_at: string;
  revoked_at: string | null;
}

export const toKeyRecord = (r: KeyRow): KeyRecord => ({
  id: r.id,
  name: r.name,
  perMinute: r.per_minute,
  perDay: r.per_day,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export interface DocRow {
  page_ref: number;
  url: string;
  host: string;
  title: string;
  content_hash: string | null;
  first_seen: string | null;
  last_changed: string | null;
  last_fetched: string | null;
  status: DocumentStatus;
  reason: string | null;
}

export const toDocument = (r: DocRow): DocumentRow => ({
  pageRef: r.page_ref,
  url: r.url,
  host: r.host,
  title: r.title,
  contentHash: r.content_hash,
  firstSeen: r.first_seen,
  lastChanged: r.last_changed,
  lastFetched: r.last_fetched,
  status: r.status,
  reason: r.reason,
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
  lease_owner: string;
  lease_until: number;
}

export const toClaimed = (r: FrontierRow): ClaimedItem => ({
  id: r.id,
  url: r.url,
  host: r.host,
  kind: r.kind,
  priority: r.priority,
  attempts: r.attempts,
  depth: r.depth,
  lease: r.lease_owner,
  leaseUntil: r.lease_until,
});

/** What recordIndexed decides from the current row: shared so both backends classify changes identically. */
export function classifyChange(cur: DocRow, contentHash: string, at: string): { change: 'new' | 'changed' | 'unchanged'; firstSeen: string | null; lastChanged: string | null } {
  const change = cur.status !== 'indexed' || cur.first_seen === null ? 'new' : cur.content_hash !== contentHash ? 'changed' : 'unchanged';
  return { change, firstSeen: change === 'new' ? at : cur.first_seen, lastChanged: change === 'unchanged' ? cur.last_changed : at };
}

export const FRONTIER_STATES = ['queued', 'leased', 'retrying', 'done', 'dead'] as const;
