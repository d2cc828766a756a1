/**
 * URL scope of one host for svc_site: every known URL is counted in exactly one state, first match wins, so
 * known = indexed + excluded + queued + retrying + dead_lettered holds by construction
 * (precedence rules: docs/architecture.md#site-scope-states).
 */
import type { StateDb } from './db.js';

/**
 * Reasons a known URL is not indexed (svc_site `excluded.by_reason` keys). rel=canonical is a grouping hint only
 * (spec §1.3), never a reason to leave a page out, so it is not one of them.
 */
export const EXCLUSION_REASONS = [
  'robots',
  'noindex',
  'unavailable_after',
  'redirect',
  'removal',
  'gone',
  'http_error',
  'unsupported_type',
  'too_large',
  'encrypted',
  'no_text_layer',
  'parse_error',
  'empty',
  'error',
  'unprocessed',
] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

/** Counts of one host's URLs by state (each URL once). */
export interface HostScope {
  readonly known: number;
  readonly indexed: number;
  readonly excluded: { readonly total: number; readonly byReason: Readonly<Partial<Record<ExclusionReason, number>>> };
  readonly queued: number;
  readonly retrying: number;
  readonly dead: number;
}

/**
 * The closed reason key of a registry reason or a frontier outcome. Registry reasons may carry a detail after a
 * colon (`unsupported_type:application/zip`, `http_403`); the key drops it.
 */
export function exclusionReason(status: string | null, reason: string | null): ExclusionReason {
  const r = (reason ?? '')
    .trim()
    .toLowerCase()
    .replace(/^excluded:/, '');
  const code = r.split(/[:\s]/, 1)[0] ?? '';
  if (code === 'robots' || r.startsWith('redirect to a robots-disallowed')) return 'robots';
  if (code === 'noindex') return 'noindex';
  if (code === 'unavailable_after') return 'unavailable_after';
  if (code === 'redirected' || code === 'redirect') return 'redirect';
  if (code === 'removal' || code === 'removed') return 'removal';
  if (code === 'not_html' || code === 'unsupported_type') return 'unsupported_type';
  if (code === 'too_large' || code === 'encrypted' || code === 'no_text_layer' || code === 'parse_error' || code === 'empty') return code;
  if (code === 'gone' || code === 'http_404' || code === 'http_410' || status === 'gone') return 'gone';
  if (/^http_\d{3}$/.test(code)) return 'http_error';
  if (status === 'removed') return 'removal';
  return 'error';
}

export interface ScopeRow {
  status: string | null;
  reason: string | null;
  state: string | null;
  last_outcome: string | null;
}

/** One row per known URL of host $1 (both backends run it; on SQLite $1 is bound as @h). */
export const SCOPE_SQL = `WITH urls AS (
    SELECT url FROM documents WHERE host = $1
    UNION SELECT url FROM frontier WHERE host = $1 AND kind = 'page'
  )
  SELECT d.status AS status, d.reason AS reason, f.state AS state, f.last_outcome AS last_outcome
  FROM urls u LEFT JOIN documents d ON d.url = u.url LEFT JOIN frontier f ON f.url = u.url`;

/** The URL scope of a host (see the module comment for the rules). */
export function hostScope(db: StateDb, host: string): HostScope {
  return scopeOf(db.prepare<[{ h: string }], ScopeRow>(SCOPE_SQL.replaceAll('$1', '@h')).all({ h: host.toLowerCase() }));
}

/** Counts the rows of SCOPE_SQL, each URL in exactly one state. */
export function scopeOf(rows: readonly ScopeRow[]): HostScope {
  const byReason: Partial<Record<ExclusionReason, number>> = {};
  const out = { indexed: 0, excluded: 0, queued: 0, retrying: 0, dead: 0 };
  const exclude = (r: ExclusionReason): void => {
    byReason[r] = (byReason[r] ?? 0) + 1;
    out.excluded++;
  };
  for (const r of rows) {
    if (r.status === 'indexed') out.indexed++;
    else if (r.status === 'excluded' || r.status === 'removed' || r.status === 'gone') exclude(exclusionReason(r.status, r.reason));
    else if (r.state === 'queued' || r.state === 'leased') out.queued++;
    else if (r.state === 'retrying') out.retrying++;
    else if (r.state === 'dead') out.dead++;
    else if (r.state === 'done') exclude(exclusionReason(null, r.last_outcome));
    else exclude('unprocessed');
  }
  return {
    known: rows.length,
    indexed: out.indexed,
    excluded: { total: out.excluded, byReason },
    queued: out.queued,
    retrying: out.retrying,
    dead: out.dead,
  };
}
