/**
 * Retrieval: BM25 arm + vector arm, fused by reciprocal rank fusion (RRF), filtered, then grouped into pages with
 * near-duplicate collapse and host diversity.
 *
 * Filters run inside LanceDB only as predicates built from numbers and closed sets (host ids the index already
 * knows, language values present in the index, the source-type / province enums, epoch milliseconds). Everything
 * else a user typed is checked in code by the compiled query's predicate.
 */
import { compileQuery, hasPositiveConstraint, parseQuery, TITLE_BOOST, type CompiledQuery, type TermMode } from './query.js';
import { PROVINCES, SOURCE_TYPES, type SourceTypeFilter } from './source-type.js';
import type { PassageHit, PassageIndex, PassageRow, RankingMode } from './store.js';

/** Freshness windows (how recent the page's modified/published/fetched date must be). */
export const FRESHNESS_WINDOWS = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000, '365d': 365 * 86_400_000 } as const;
export type Freshness = keyof typeof FRESHNESS_WINDOWS;

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

export interface RetrievalRequest {
  readonly query: string;
  /** @default 'all' */
  readonly termMode?: TermMode;
  /** `auto`: the best the index offers (hybrid when vectors exist). @default 'auto' */
  readonly mode?: 'auto' | 'bm25' | 'vector' | 'hybrid';
  readonly filters?: SearchFilters;
  /** Candidates each arm returns before fusion. @default 200 (more when code-side filters are present) */
  readonly candidates?: number;
  /** Reference time for freshness. @default new Date() */
  readonly now?: Date;
}

/**
 * A ranked passage. Retrieval returns candidates (`PassageHit`: what ranking, operators, grouping and host caps
 * read); a response reads the whole rows of the passages it uses with `hydrate`.
 */
export interface RankedPassage<R extends PassageHit = PassageHit> {
  readonly row: R;
  /** The score of the ranking mode: RRF sum (hybrid), BM25 (bm25), cosine similarity (vector). */
  readonly score: number;
  readonly bm25Rank: number | null;
  readonly vectorRank: number | null;
}

export interface RetrievalResult {
  readonly compiled: CompiledQuery;
  readonly ranking: RankingMode;
  readonly passages: RankedPassage[];
  /** A vector arm was asked for (hybrid/vector) but the index has no usable embedder. */
  readonly embedderUnavailable: boolean;
}

/** RRF constant (Cormack et al. 2009). */
export const RRF_K = 60;

/** Builds the LanceDB predicate from typed values only; `impossible` when a filter can match nothing. */
export function buildWhere(
  index: Pick<PassageIndex, 'hostIdsUnder' | 'hasLang'>,
  compiled: CompiledQuery,
  filters: SearchFilters,
  now: Date,
): { where: string | null; impossible: boolean } {
  const parts: string[] = [];
  const ast = compiled.ast;
  if (ast.sites.length > 0) {
    const ids = new Set<number>();
    for (const d of ast.sites) if (d !== null) for (const id of index.hostIdsUnder(d)) ids.add(id);
    if (ids.size === 0) return { where: null, impossible: true };
    parts.push(`host_id IN (${[...ids].map((n) => String(Math.trunc(n))).join(', ')})`);
  }
  const notIds = new Set<number>();
  for (const d of ast.notSites) if (d !== null) for (const id of index.hostIdsUnder(d)) notIds.add(id);
  if (notIds.size > 0) parts.push(`host_id NOT IN (${[...notIds].map((n) => String(Math.trunc(n))).join(', ')})`);
  if (filters.language !== undefined) {
    const l = filters.language.toLowerCase();
    // Only a value that occurs in the index (and has the stored shape) becomes a literal.
    if (!/^[a-z]{2,3}$/.test(l) || !index.hasLang(l)) return { where: null, impossible: true };
    parts.push(`lang = '${l}'`);
  }
  if (filters.country !== undefined) {
    const c = filters.country.toLowerCase();
    if (!/^[a-z]{2}$/.test(c)) return { where: null, impossible: true };
    parts.push(`country = '${c}'`);
  }
  if (filters.province !== undefined) {
    const p = (PROVINCES as readonly string[]).find((x) => x === filters.province?.toLowerCase());
    if (!p) return { where: null, impossible: true };
    parts.push(`province = '${p}'`);
  }
  if (filters.sourceType !== undefined) {
    if (filters.sourceType === 'government') parts.push(`source_type LIKE 'government:%'`);
    else {
      const s = SOURCE_TYPES.find((x) => x === filters.sourceType);
      if (!s) return { where: null, impossible: true };
      parts.push(`source_type = '${s}'`);
    }
  }
  if (filters.freshness !== undefined) {
    const since = now.getTime() - FRESHNESS_WINDOWS[filters.freshness];
    parts.push(`date_ms >= ${Math.trunc(since)}`);
  }
  return { where: parts.length ? parts.map((p) => `(${p})`).join(' AND ') : null, impossible: false };
}

const key = (r: Pick<PassageHit, 'page_ref' | 'ordinal'>) => `${r.page_ref}:${r.ordinal}`;

/** Runs the arms, filters in code, fuses. Passage-level; see `groupPages` for page results. */
export async function retrieve(index: PassageIndex, req: RetrievalRequest): Promise<RetrievalResult> {
  const compiled = compileQuery(parseQuery(req.query), { termMode: req.termMode ?? 'all' });
  const ast = compiled.ast;
  const wantMode = req.mode ?? 'auto';
  const embedder = index.embedder;
  const hashing = embedder?.kind === 'hashing-stand-in';
  const embedderUnavailable = (wantMode === 'hybrid' || wantMode === 'vector') && !embedder;
  let useBm25 = wantMode !== 'vector';
  const useVector = !!embedder && wantMode !== 'bm25' && compiled.semanticText.length > 0;
  if (wantMode === 'vector' && !useVector) useBm25 = true; // nothing to embed or no embedder: fall back
  if (!compiled.fts && !useVector) useBm25 = true;
  const ranking: RankingMode =
    useBm25 && useVector ? (hashing ? 'hybrid-rrf-hashing' : 'hybrid-rrf') : useVector ? (hashing ? 'vector-hashing' : 'vector') : 'bm25';
  const empty: RetrievalResult = { compiled, ranking, passages: [], embedderUnavailable };
  if (!hasPositiveConstraint(ast)) return empty;
  const { where, impossible } = buildWhere(index, compiled, req.filters ?? {}, req.now ?? new Date());
  if (impossible) return empty;
  const codeFilters =
    ast.phrases.length + ast.excludedPhrases.length + ast.excludedWords.length + ast.inUrl.length + ast.notInUrl.length +
    ast.filetypes.length + ast.notFiletypes.length + ast.inTitle.length + ast.notInTitle.length;
  const k = Math.max(10, Math.min(5000, req.candidates ?? (codeFilters > 0 ? 1000 : 200)));

  // The two arms run concurrently (LanceDB executes on its own thread pool). `null` from the BM25 arm: a required
  // word occurs nowhere in the index, so the query matches nothing, whichever arm found candidates.
  const extra = compiled.hitColumns;
  const bm25Arm = async (): Promise<RankedPassage[] | null> => {
    const out: RankedPassage[] = [];
    if (!useBm25) return out;
    if (compiled.fts) {
      const rows = await index.ftsCandidates(compiled.fts, where, k, extra);
      if (await wordIsMissing(index, compiled, rows)) return null;
      // Title boost: the title field's BM25, from the index's title statistics (no index call).
      if (compiled.titleTerms.length > 0) for (const r of rows) r._score += TITLE_BOOST * index.titleScore(compiled.titleTerms, r.title);
      // Equal scores come back from LanceDB in no fixed order; page_ref, ordinal make ranking (and paging) stable.
      rows.sort(byScoreThenPosition);
      for (const r of rows) if (compiled.matches(r, { strictWords: false })) out.push({ row: r, score: r._score, bm25Rank: out.length + 1, vectorRank: null });
    } else {
      // Operators only (e.g. "site:example.org -inurl:archive"): a filtered scan, every match scores equally.
      const rows = (await index.scanCandidates(where, k, extra)).sort((a, b) => a.page_ref - b.page_ref || a.ordinal - b.ordinal);
      for (const r of rows) if (compiled.matches(r, { strictWords: true })) out.push({ row: r, score: 0, bm25Rank: out.length + 1, vectorRank: null });
    }
    return out;
  };
  const vectorArm = async () => {
    if (!useVector || !embedder) return [];
    const [qv] = await embedder.embed([compiled.semanticText]);
    if (!qv) return [];
    return (await index.vectorCandidates(qv, where, k, extra))
      .sort((a, b) => a._distance - b._distance || a.page_ref - b.page_ref || a.ordinal - b.ordinal)
      .filter((r) => compiled.matches(r, { strictWords: false }));
  };
  const [bm25, vecRows] = await Promise.all([bm25Arm(), vectorArm()]);
  if (bm25 === null || (!useBm25 && compiled.fts && (await wordIsMissing(index, compiled, vecRows)))) return empty;
  let rows = vecRows;
  const required = ast.phrases.length + ast.inTitle.length + ((req.termMode ?? 'all') === 'all' ? ast.words.length : 0);
  if (compiled.fts && required > 0 && rows.length > 0) {
    // Vector hits must satisfy the same required terms as BM25 hits, judged by the same analyzer (stemming). Hits
    // the BM25 arm also returned are verified already; the others are checked by re-running the full-text query
    // restricted to their page_refs (integers only).
    const seen = new Set(bm25.map((p) => key(p.row)));
    const unverified = rows.filter((r) => !seen.has(key(r)));
    if (unverified.length > 0) {
      const refs = [...new Set(unverified.map((r) => Math.trunc(r.page_ref)))];
      const restrict = `page_ref IN (${refs.join(', ')})`;
      const ok = await index.ftsScores(compiled.fts, where ? `(${where}) AND (${restrict})` : restrict, unverified.length * 8 + 50);
      for (const r of ok) seen.add(key(r));
    }
    rows = rows.filter((r) => seen.has(key(r)));
  }
  const vec: RankedPassage[] = rows.map((r, i) => ({ row: r, score: 1 - r._distance, bm25Rank: null, vectorRank: i + 1 }));
  if (!useVector) return { compiled, ranking, passages: bm25, embedderUnavailable };
  if (!useBm25) return { compiled, ranking, passages: vec, embedderUnavailable };
  return { compiled, ranking, passages: fuseRrf(bm25, vec), embedderUnavailable };
}

/**
 * Whether a required word occurs nowhere in the index (see `CompiledQuery.unseenWords`). A word visible in any
 * candidate's title is in the index; for the others the first candidate's text is read, and only the words still
 * not visible are probed. Usually the titles settle it without an index call.
 */
async function wordIsMissing(index: Pick<PassageIndex, 'ftsScores' | 'passageText'>, compiled: CompiledQuery, hits: readonly PassageHit[]): Promise<boolean> {
  const first = hits[0];
  if (!first) return false;
  const titles = hits.map((h) => h.title).join(' \u0000 ');
  if (compiled.unseenWords(titles).length === 0) return false;
  const text = first.text ?? (await index.passageText(first))?.text ?? '';
  const unseen = compiled.unseenWords(`${titles} \u0000 ${text}`);
  if (unseen.length === 0) return false;
  const found = await Promise.all(unseen.map((w) => index.ftsScores(compiled.wordProbe(w), null, 1)));
  return found.some((r) => r.length === 0);
}

/**
 * The whole rows of `passages` (same order). A passage whose page was replaced or removed since it was found
 * (its row is gone or its content hash changed) is left out: a response never mixes two versions of a page.
 */
export async function hydrate(index: Pick<PassageIndex, 'passageRows'>, passages: readonly RankedPassage[]): Promise<RankedPassage<PassageRow>[]> {
  const rows = await index.passageRows(passages.map((p) => p.row));
  const out: RankedPassage<PassageRow>[] = [];
  for (const p of passages) {
    const row = rows.get(key(p.row));
    if (row && row.content_hash === p.row.content_hash) out.push({ ...p, row });
  }
  return out;
}

/** Best BM25 score first; ties by page_ref then ordinal, so equal scores always rank the same way. */
function byScoreThenPosition(a: PassageHit & { _score: number }, b: PassageHit & { _score: number }): number {
  return b._score - a._score || a.page_ref - b.page_ref || a.ordinal - b.ordinal;
}

/** Reciprocal rank fusion of two ranked lists (ties broken by page_ref, ordinal for determinism). */
export function fuseRrf(a: readonly RankedPassage[], b: readonly RankedPassage[], k = RRF_K): RankedPassage[] {
  const acc = new Map<string, { row: PassageHit; score: number; bm25Rank: number | null; vectorRank: number | null }>();
  a.forEach((p, i) => acc.set(key(p.row), { row: p.row, score: 1 / (k + i + 1), bm25Rank: i + 1, vectorRank: null }));
  b.forEach((p, i) => {
    const cur = acc.get(key(p.row));
    if (cur) {
      cur.score += 1 / (k + i + 1);
      cur.vectorRank = i + 1;
    } else acc.set(key(p.row), { row: p.row, score: 1 / (k + i + 1), bm25Rank: null, vectorRank: i + 1 });
  });
  return [...acc.values()].sort((x, y) => y.score - x.score || x.row.page_ref - y.row.page_ref || x.row.ordinal - y.row.ordinal);
}

/**
 * `hydrate` for page results: the whole rows of each page's first `perPage` passages. A page whose best passage is
 * gone or changed since retrieval is left out.
 */
export async function hydratePages(index: Pick<PassageIndex, 'passageRows'>, pages: readonly PageHit[], perPage = 8): Promise<PageHit<PassageRow>[]> {
  const full = await hydrate(index, pages.flatMap((p) => p.passages.slice(0, perPage)));
  const byKey = new Map(full.map((p) => [key(p.row), p]));
  const out: PageHit<PassageRow>[] = [];
  for (const page of pages) {
    const best = byKey.get(key(page.best.row));
    if (!best) continue;
    const passages = page.passages.slice(0, perPage).flatMap((p) => byKey.get(key(p.row)) ?? []);
    out.push({ best, passages });
  }
  return out;
}

/** A page result: its best passage decides its rank; the other matching passages follow. */
export interface PageHit<R extends PassageHit = PassageHit> {
  readonly best: RankedPassage<R>;
  readonly passages: RankedPassage<R>[];
}

/**
 * Groups ranked passages into pages (best passage first). With `collapseNearDuplicates`, a page whose canonical
 * group or content hash was already seen is dropped (returns how many were).
 */
export function groupPages<R extends PassageHit>(passages: readonly RankedPassage<R>[], opts: { collapseNearDuplicates: boolean }): { pages: PageHit<R>[]; duplicates: number } {
  const byRef = new Map<number, PageHit<R>>();
  const groups = new Set<string>();
  const hashes = new Set<string>();
  const dropped = new Set<number>();
  const pages: PageHit<R>[] = [];
  for (const p of passages) {
    const ref = p.row.page_ref;
    if (dropped.has(ref)) continue;
    const cur = byRef.get(ref);
    if (cur) {
      cur.passages.push(p);
      continue;
    }
    if (opts.collapseNearDuplicates && (groups.has(p.row.group_key) || hashes.has(p.row.content_hash))) {
      dropped.add(ref);
      continue;
    }
    groups.add(p.row.group_key);
    hashes.add(p.row.content_hash);
    const hit: PageHit<R> = { best: p, passages: [p] };
    byRef.set(ref, hit);
    pages.push(hit);
  }
  return { pages, duplicates: dropped.size };
}

/**
 * Host diversity: a result page holds at most `perHost` results of one host (a positive site: query is exempt).
 * Results over the cap move to later pages rather than vanish. Earlier pages (before `offset`) are consumed the
 * same way, so paging is stable. Returns the requested window and, for it, how many results of each host were
 * pushed out of it (collapsed). A page may come back shorter than `limit` when only capped hosts remain.
 */
export function diversify<T extends { host: string }>(
  ranked: readonly T[],
  opts: { limit: number; offset: number; perHost?: number; exempt: boolean },
): { window: T[]; collapsedPerHost: Record<string, number> } {
  const perHost = opts.perHost ?? 2;
  if (opts.exempt) return { window: ranked.slice(opts.offset, opts.offset + opts.limit), collapsedPerHost: {} };
  let queue = [...ranked];
  const takeBlock = (size: number): { block: T[]; skipped: Record<string, number> } => {
    const counts = new Map<string, number>();
    const block: T[] = [];
    const skipped: Record<string, number> = {};
    const rest: T[] = [];
    for (const item of queue) {
      if (block.length >= size) {
        rest.push(item);
        continue;
      }
      const n = counts.get(item.host) ?? 0;
      if (n >= perHost) {
        skipped[item.host] = (skipped[item.host] ?? 0) + 1;
        rest.push(item);
        continue;
      }
      counts.set(item.host, n + 1);
      block.push(item);
    }
    queue = rest;
    return { block, skipped };
  };
  let consumed = 0;
  while (consumed < opts.offset && queue.length > 0) {
    const { block } = takeBlock(Math.min(opts.limit, opts.offset - consumed));
    if (block.length === 0) break;
    consumed += block.length;
  }
  if (consumed < opts.offset) return { window: [], collapsedPerHost: {} };
  const { block, skipped } = takeBlock(opts.limit);
  return { window: block, collapsedPerHost: skipped };
}
