/**
 * The crawler's frontier and host-fact writes: SQL and decisions shared by SQLite and PostgreSQL so both apply one
 * set of rules. Written with PostgreSQL placeholders; `sqlite()` rewrites them for better-sqlite3.
 */
import type { AdmitResult, FrontierEntry, FrontierKind, FrontierRecord, FrontierRepo, FrontierState } from './types.js';

/** A statement in `$n` placeholders as better-sqlite3 takes it (`?` in order of appearance, values repeated as needed). */
export function sqlite(sql: string, args: readonly unknown[]): { sql: string; args: unknown[] } {
  const out: unknown[] = [];
  const text = sql.replace(/\$(\d+)/g, (_m, n: string) => {
    out.push(args[Number(n) - 1]);
    return '?';
  });
  return { sql: text, args: out };
}

/** A whole frontier row. */
export interface RawFrontierRow {
  id: number;
  url: string;
  host: string;
  kind: FrontierKind;
  priority: number;
  reason: string;
  request_id: string | null;
  state: FrontierState;
  next_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  attempts: number;
  last_error: string | null;
  dead_reason: string | null;
  etag: string | null;
  last_modified: string | null;
  last_status: number | null;
  last_outcome: string | null;
  fetched_at: number | null;
  changed_at: number | null;
  recrawl_ms: number | null;
  completions: number;
  depth: number;
  scope: string | null;
}

/** Canonical stored form of a scope (null = open web): distinct lower-case hosts, sorted, as JSON. */
export function scopeText(scope: readonly string[] | null | undefined): string | null {
  if (scope === null || scope === undefined) return null;
  return JSON.stringify([...new Set(scope.map((h) => h.toLowerCase()))].sort());
}

function parseScope(text: string | null): readonly string[] | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter((h): h is string => typeof h === 'string') : null;
  } catch {
    return null;
  }
}

export const toRecord = (r: RawFrontierRow): FrontierRecord => ({
  id: r.id,
  url: r.url,
  host: r.host,
  kind: r.kind,
  state: r.state,
  priority: r.priority,
  reason: r.reason,
  requestId: r.request_id,
  attempts: r.attempts,
  nextAt: r.next_at,
  lastError: r.last_error,
  deadReason: r.dead_reason,
  etag: r.etag,
  lastModified: r.last_modified,
  lastStatus: r.last_status,
  lastOutcome: r.last_outcome,
  recrawlMs: r.recrawl_ms,
  completions: r.completions,
  scope: parseScope(r.scope),
});

export const SQL = {
  byUrl: 'SELECT * FROM frontier WHERE url = $1',
  // The per-host row count (the admission cap), kept in the database so it is exact for a whole fleet: a new row
  // first takes one from its host's count, conditionally on the cap ($2), in the transaction that inserts it. The
  // upsert locks the host's count row, so concurrent admissions of one host queue there whatever process makes them.
  hostReserve: `INSERT INTO frontier_host_rows (host, n) VALUES ($1, 1)
    ON CONFLICT (host) DO UPDATE SET n = frontier_host_rows.n + 1 WHERE frontier_host_rows.n < $2 RETURNING n`,
  // Gives the count back when the row was not inserted after all (another worker inserted the URL first).
  hostUnreserve: 'UPDATE frontier_host_rows SET n = n - 1 WHERE host = $1',
  ensureHost: 'INSERT INTO host_politeness (host, gap_ms) VALUES ($1, $2) ON CONFLICT (host) DO NOTHING',
  insert: `INSERT INTO frontier (url, host, kind, priority, reason, request_id, state, next_at, depth, scope, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $10) ON CONFLICT (url) DO NOTHING RETURNING id`,
  rescopeAll: 'UPDATE frontier SET scope = $1 WHERE scope = $2',
  rescopeOne: 'UPDATE frontier SET scope = $1 WHERE id = $2',
  refresh: `UPDATE frontier SET state = 'queued', next_at = $1, attempts = 0, dead_reason = NULL,
    priority = CASE WHEN priority > $2 THEN priority ELSE $2 END, reason = $3, request_id = coalesce($4, request_id), updated_at = $5
    WHERE id = $6`,
  raise: 'UPDATE frontier SET priority = $1, request_id = coalesce($2, request_id), updated_at = $3 WHERE id = $4',
  lease: `UPDATE frontier SET state = 'leased', lease_owner = $1, lease_until = $2, next_at = $2, updated_at = $3 WHERE id = $4`,
  // complete(): $1 next_at, $2 status, $3 now, $4 etag, $5 last_modified, $6 outcome, $7 recrawl_ms, $8 changed (1/0),
  // $9 priority afterwards (NULL: unchanged); the lease guard follows.
  complete: `UPDATE frontier SET state = 'done', lease_owner = NULL, lease_until = NULL, attempts = 0, last_error = NULL,
    next_at = $1, last_status = $2, fetched_at = $3, completions = completions + 1, updated_at = $3, etag = $4, last_modified = $5,
    last_outcome = $6, recrawl_ms = $7, changed_at = CASE WHEN $8 = 1 THEN $3 ELSE changed_at END, priority = coalesce($9, priority)
    WHERE id = $10 AND state = 'leased' AND lease_owner = $11`,
  fail: `UPDATE frontier SET state = $1, lease_owner = NULL, lease_until = NULL, attempts = attempts + 1, last_error = $2,
    dead_reason = $3, next_at = $4, updated_at = $5, last_status = $6, last_outcome = CASE WHEN $1 = 'dead' THEN 'dead' ELSE last_outcome END
    WHERE id = $7 AND state = 'leased' AND lease_owner = $8`,
  fetchedInsert: `INSERT INTO frontier (url, host, kind, priority, reason, state, next_at, etag, last_modified, last_status,
    last_outcome, fetched_at, changed_at, recrawl_ms, completions, scope, created_at, updated_at)
    VALUES ($1, $2, 'page', $3, $4, 'done', $5, $6, $7, $8, $9, $10, $10, $11, 1, $12, $10, $10) ON CONFLICT (url) DO NOTHING RETURNING id`,
  fetchedUpdate: `UPDATE frontier SET state = 'done', next_at = $1, etag = $2, last_modified = $3, last_status = $4, last_outcome = $5,
    fetched_at = $6, attempts = 0, completions = completions + 1, priority = $7, updated_at = $6 WHERE id = $8`,
  deadAll: `SELECT * FROM frontier WHERE state = 'dead' ORDER BY updated_at DESC, id DESC LIMIT $1`,
  deadHost: `SELECT * FROM frontier WHERE state = 'dead' AND host = $2 ORDER BY updated_at DESC, id DESC LIMIT $1`,
  pending: `SELECT * FROM frontier WHERE state IN ('queued', 'leased', 'retrying') ORDER BY next_at, id LIMIT $1`,
} as const;

/** The parameters of `SQL.insert` for a new queued row of `e`. */
export const insertArgs = (e: FrontierEntry, now: number): unknown[] => [
  e.url,
  e.host,
  e.kind ?? 'page',
  e.priority ?? 0,
  e.reason,
  e.requestId ?? null,
  e.at ?? now,
  e.depth ?? 0,
  scopeText(e.scope),
  now,
];

/** What `markFetched` records of a fetch (FrontierRepo['markFetched']'s third argument). */
type Fetched = Parameters<FrontierRepo['markFetched']>[2];

/** The fetch result both `fetchedInsert` and `fetchedUpdate` write, in their parameter order: due again, validators, outcome, time. */
const fetchedRun = (m: Fetched, now: number, interval: number): unknown[] => [
  now + interval,
  m.etag ?? null,
  m.lastModified ?? null,
  m.status ?? null,
  m.outcome,
  now,
];

/** The parameters of `SQL.fetchedInsert`: a redirect target unknown so far, recorded as fetched. */
export const fetchedInsertArgs = (url: string, host: string, m: Fetched, now: number, interval: number): unknown[] => [
  url,
  host,
  m.priority,
  m.reason,
  ...fetchedRun(m, now, interval),
  interval,
  scopeText(m.scope),
];

/** The parameters of `SQL.fetchedUpdate` for the known row `id`. */
export const fetchedUpdateArgs = (m: Fetched, now: number, interval: number, id: number): unknown[] => [
  ...fetchedRun(m, now, interval),
  m.priority,
  id,
];

/** The cap `hostReserve` is given when none applies (seeds, submissions, redirect targets: counted, never refused). */
export const NO_HOST_CAP = Number.MAX_SAFE_INTEGER;

/** What admit() must do to a known row (CrawlFrontier.enqueue's rules). */
export interface AdmitPlan {
  /** Rows under this old scope take `scope` (rescope of a seed given again). */
  readonly rescope: { readonly from: string | null; readonly to: string | null } | null;
  /** Make the row queued and due at nextAt. */
  readonly refresh: { readonly nextAt: number } | null;
  /** Only raise the priority. */
  readonly raise: boolean;
  readonly result: AdmitResult;
}

/** True when admitting `e` again changes nothing in its known row (a link found again, the common case). */
export const plansNothing = (p: AdmitPlan): boolean => p.rescope === null && p.refresh === null && !p.raise;

export function planKnown(cur: RawFrontierRow, e: FrontierEntry, now: number): AdmitPlan {
  const priority = e.priority ?? 0;
  const at = e.at ?? now;
  let refresh = e.refresh === true;
  let rescope: AdmitPlan['rescope'] = null;
  if (e.rescope) {
    const next = scopeText(e.scope);
    if (next !== cur.scope) {
      rescope = { from: cur.scope, to: next };
      if (cur.state === 'done') refresh = true;
    }
  }
  if (cur.state === 'dead' && e.reviveDead) refresh = true;
  // The fast lane expedites what is waiting (queued) or done; back-off and dead letters stand.
  if (e.expedite && (cur.state === 'done' || cur.state === 'queued')) refresh = true;
  if (refresh && cur.state !== 'leased') {
    // A queued row keeps an earlier due date; anything else becomes due at `at`.
    return {
      rescope,
      refresh: { nextAt: Math.min(at, cur.state === 'queued' ? cur.next_at : at) },
      raise: false,
      result: { id: cur.id, added: false, state: 'queued' },
    };
  }
  return { rescope, refresh: null, raise: priority > cur.priority, result: { id: cur.id, added: false, state: cur.state } };
}
