/**
 * The filters of a query as typed values, not a LanceDB `where` string: the postings test them per document, and the
 * vector search gets a predicate built only from these numbers and closed sets (`whereOf`, in the LanceDB engine:
 * engines/lance/where.ts), never user text.
 */
import { PROVINCES, SOURCE_TYPES, type Province, type SourceType, type SourceTypeFilter } from './source-type.js';

/** Freshness windows (how recent the page's modified/published/fetched date must be). */
export const FRESHNESS_WINDOWS = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000, '365d': 365 * 86_400_000 } as const;
export type Freshness = keyof typeof FRESHNESS_WINDOWS;

/** The filters a caller sets (svc_search, svc_context), as the tools receive them. */
export interface SearchFilters {
  /** Primary language subtag, e.g. "en". */
  readonly language?: string | undefined;
  /** ISO 3166-1 alpha-2, e.g. "ca". */
  readonly country?: string | undefined;
  /** Province code, e.g. "on". */
  readonly province?: string | undefined;
  readonly sourceType?: SourceTypeFilter | undefined;
  readonly freshness?: Freshness | undefined;
}

/** Every field is a restriction; an absent one restricts nothing. */
export interface PassageFilter {
  /** Positive `site:`: the passage's host id is one of these (never empty: no known host makes the query impossible). */
  readonly hostIds?: readonly number[];
  /** Negative `site:`: the host id is none of these. */
  readonly notHostIds?: readonly number[];
  /** The page's language, lower case, a value the index holds. */
  readonly lang?: string;
  readonly country?: string;
  readonly province?: Province;
  /** A source type, or `government`: any of the `government:*` kinds. */
  readonly sourceType?: SourceType | 'government';
  /** The page's date (modified, else published, else fetched) in epoch ms is at least this. */
  readonly minDateMs?: number;
}

/** The page attributes a filter reads (the passage row's own columns of those names). */
export interface FilterFields {
  readonly host_id: number;
  readonly lang: string | null;
  readonly country: string | null;
  readonly province: string | null;
  readonly source_type: string;
  readonly date_ms: number;
}

/**
 * A query's filters as a `PassageFilter`: `site:` values become the host ids the index knows, the language a value it
 * holds; null when a filter can match nothing (an unknown host or language, a value outside its closed set).
 */
export function compileFilter(
  index: { hostIdsUnder(domain: string): number[]; hasLang(lang: string): boolean },
  site: { readonly include: readonly unknown[]; readonly exclude: readonly unknown[] },
  filters: SearchFilters,
  now: Date,
): PassageFilter | null {
  const out: { -readonly [K in keyof PassageFilter]: PassageFilter[K] } = {};
  if (site.include.length > 0) {
    const ids = new Set<number>();
    for (const d of site.include) if (typeof d === 'string') for (const id of index.hostIdsUnder(d)) ids.add(id);
    if (ids.size === 0) return null;
    out.hostIds = [...ids];
  }
  const notIds = new Set<number>();
  for (const d of site.exclude) if (typeof d === 'string') for (const id of index.hostIdsUnder(d)) notIds.add(id);
  if (notIds.size > 0) out.notHostIds = [...notIds];
  if (filters.language !== undefined) {
    const l = filters.language.toLowerCase();
    if (!/^[a-z]{2,3}$/.test(l) || !index.hasLang(l)) return null;
    out.lang = l;
  }
  if (filters.country !== undefined) {
    const c = filters.country.toLowerCase();
    if (!/^[a-z]{2}$/.test(c)) return null;
    out.country = c;
  }
  if (filters.province !== undefined) {
    const p = PROVINCES.find((x) => x === filters.province?.toLowerCase());
    if (!p) return null;
    out.province = p;
  }
  if (filters.sourceType !== undefined) {
    const s = filters.sourceType === 'government' ? 'government' : SOURCE_TYPES.find((x) => x === filters.sourceType);
    if (!s) return null;
    out.sourceType = s;
  }
  if (filters.freshness !== undefined) out.minDateMs = now.getTime() - FRESHNESS_WINDOWS[filters.freshness];
  return out;
}

/** Whether a filter restricts anything. */
export function isUnfiltered(f: PassageFilter): boolean {
  return (
    f.hostIds === undefined &&
    f.notHostIds === undefined &&
    f.lang === undefined &&
    f.country === undefined &&
    f.province === undefined &&
    f.sourceType === undefined &&
    f.minDateMs === undefined
  );
}

/** Whether a page's fields pass a filter (the reference the engines' evaluations are held to). */
export function passesFilter(f: PassageFilter, p: FilterFields): boolean {
  if (f.hostIds !== undefined && !f.hostIds.includes(p.host_id)) return false;
  if (f.notHostIds?.includes(p.host_id)) return false;
  if (f.lang !== undefined && p.lang !== f.lang) return false;
  if (f.country !== undefined && p.country !== f.country) return false;
  if (f.province !== undefined && p.province !== f.province) return false;
  if (f.sourceType !== undefined && !sourceTypeMatches(f.sourceType, p.source_type)) return false;
  if (f.minDateMs !== undefined && !(p.date_ms >= f.minDateMs)) return false;
  return true;
}

/** Whether a stored source type is the filter's kind (`government`: any government level). */
export function sourceTypeMatches(filter: SourceType | 'government', stored: string): boolean {
  return filter === 'government' ? stored.startsWith('government:') : stored === filter;
}
