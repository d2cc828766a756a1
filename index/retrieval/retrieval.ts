/**
 * Retrieval: the one verb behind svc_search, svc_context and svc eval: BM25 and vector arms, strict constraints
 * checked in code, rank fusion, near-duplicate collapse. The store is reached only through `CandidateSource`, and
 * filters travel as typed values (passage-filter.ts), never as a where string.
 */
import type { Embedder } from '../serving/embedder.js';
import { compileQuery, hasPositiveConstraint, parseQuery, TITLE_BOOST, type CompiledQuery } from './query.js';
import { passageKey, type MatchColumn } from '../engines/lance/columns.js';
import { DenseSlots } from '../engines/memory/dense-slots.js';
import { minSimilarityFor } from '../serving/model-profiles.js';
import { nearKeyHash, NearKeySet } from './near-keys.js';
import { NearPrintList, parseNearPrint } from './near-print.js';
import { matchBands, termsOf, type MatchBand } from './relevance.js';
import { sortByScore } from './score-sort.js';
import { compileFilter, type PassageFilter, type SearchFilters } from './passage-filter.js';
import type { RankingMode, TextQuery } from './engine-seam.js';
import type { PassageHit, PassageKey, PassageRow, ResultRow } from '../engines/lance/columns.js';

export { FRESHNESS_WINDOWS, type Freshness, type SearchFilters } from './passage-filter.js';

/** What retrieval needs from an index. `PassageIndex` (store.ts) implements it. */
export interface CandidateSource {
  /** The embedder whose vectors the index holds (null: no usable vectors). */
  readonly embedder: Embedder | null;
  /**
   * Called once per query before the synchronous reads below (`hostIdsUnder`, `hasLang`, `titleScore`): a source whose
   * shards are other processes fetches what they will answer for this query's `site:` domains, language and title
   * terms (index/shards/remote-shard.ts). Absent: nothing to fetch.
   */
  prepare?(q: {
    readonly domains: readonly string[];
    readonly lang: string | null;
    readonly titleTerms: readonly string[];
    /** The terms whose BM25 statistics the query reads (its text query's and its match bands'). */
    readonly terms: readonly string[];
  }): Promise<void>;
  /**
   * True when each candidates call costs a round trip (shards in other processes): retrieval then embeds the query
   * before asking for candidates and hands every arm's request to `planArms` first, so that one call per shard answers
   * them all; the arms' calls that follow are answered from it.
   */
  readonly gathersArms?: boolean;
  planArms?(plan: ArmsPlan): void;
  /** Integer ids of every known host equal to `domain` or under it. */
  hostIdsUnder(domain: string): number[];
  /** Whether a language value occurs in the index. */
  hasLang(lang: string): boolean;
  /** BM25 inverse document frequency of each term (a term no passage holds: the largest). */
  termIdf(terms: readonly string[]): Promise<number[]>;
  /** Title-field BM25 of a candidate's page title (in its `lang`) for analysed query terms. */
  titleScore(queryTerms: readonly string[], row: Pick<PassageHit, 'page_ref' | 'title' | 'lang' | '_titleIds'>): number;
  /**
   * BM25 arm: the `k` passages best matching `text` among those `filter` lets through, with their BM25 score (repeated
   * words included), in any order (the arm ranks them). One engine answers every query (docs/architecture.md).
   */
  textCandidates(
    text: TextQuery,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[],
  ): Promise<(PassageHit & { _score: number })[]>;
  /** Exact cosine distance of the query vector to the given passages, keyed `page_ref:ordinal` (absent: no vector). */
  vectorDistances(vector: Float32Array, passages: readonly PassageKey[]): Promise<Map<string, number>>;
  /** Vector arm: nearest passages by cosine distance; those below `minSimilarity` may be left out (they are dropped). */
  vectorCandidates(
    vector: Float32Array,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[],
    minSimilarity?: number,
  ): Promise<(PassageHit & { _distance: number })[]>;
  /** Filter-only candidates (queries made of operators only): `k` passages `filter` lets through. */
  scanCandidates(filter: PassageFilter, k: number, extra: readonly MatchColumn[]): Promise<PassageHit[]>;
  /** Whole rows of the given passages, keyed `page_ref:ordinal`. */
  passageRows(keys: readonly PassageKey[]): Promise<Map<string, PassageRow>>;
  /** `passageRows` without the columns a search result does not read (columns.ts `ResultRow`). */
  resultRows(keys: readonly PassageKey[]): Promise<Map<string, ResultRow>>;
}

/** Every candidates call a query's arms will make, told at once (`CandidateSource.planArms`). */
export interface ArmsPlan {
  /** The query's compiled filter: the arms' calls pass this same object. */
  readonly filter: PassageFilter;
  readonly k: number;
  /** The BM25 arm's `textCandidates(text, filter, k, textExtra)`, when it runs. */
  readonly text: TextQuery | null;
  readonly textExtra: readonly MatchColumn[];
  /** The filter-only scan's `scanCandidates(filter, k, vectorExtra)` (a query of operators only). */
  readonly scan: boolean;
  /** The vector arm's `vectorCandidates(vector, filter, k, vectorExtra, minSimilarity)`, when it runs. */
  readonly vector: Float32Array | null;
  readonly vectorExtra: readonly MatchColumn[];
  readonly minSimilarity: number;
  /**
   * The vector arm may be answered by `vectorDistances(vector, text candidates)` instead (every passage the checks
   * accept holds the required words): the distances of the text candidates are wanted, and the nearest-neighbour search
   * only when the text candidates are not all the matches.
   */
  readonly textDistances: boolean;
  /** The title terms the BM25 arm scores each candidate's title with (`titleScore`). */
  readonly titleTerms: readonly string[];
}

export interface RetrievalRequest {
  readonly query: string;
  /** `auto`: the best the index offers (hybrid when vectors exist). @default 'auto' */
  readonly mode?: 'auto' | 'bm25' | 'vector' | 'hybrid';
  readonly filters?: SearchFilters;
  /** Reference time for freshness. @default new Date() */
  readonly now?: Date;
}

/**
 * The rows a ranked passage carries: a candidate (`PassageHit`), a whole row (`PassageRow`) or a result row
 * (`ResultRow`, what `searchPages` reads). Typed as the least of them: the column types do not narrow a hit to its
 * columns (columns.ts `RowOf`).
 */
type RankedRow = ResultRow;

/**
 * A ranked passage. Retrieval returns candidates (`PassageHit`: what ranking, operators, grouping and host caps
 * read); a response reads the rows of the passages it uses: whole with `hydrate` (svc_context), as a search result reads
 * them with `hydratePages` (svc_search).
 */
export interface RankedPassage<R extends RankedRow = PassageHit> {
  readonly row: R;
  /** The score of the ranking mode: RRF sum (hybrid), BM25 (bm25), cosine similarity (vector). */
  readonly score: number;
  readonly bm25Rank: number | null;
  readonly vectorRank: number | null;
  /** BM25 (with the title boost) of the passage, when the BM25 arm found it. */
  readonly bm25Score: number | null;
  /** Cosine similarity to the query, when the vector arm found it. */
  readonly similarity: number | null;
}

export interface RetrievalResult {
  readonly compiled: CompiledQuery;
  readonly ranking: RankingMode;
  readonly passages: RankedPassage[];
  /** A vector arm was asked for (hybrid/vector) but the index has no usable embedder. */
  readonly embedderUnavailable: boolean;
}

/**
 * RRF constant, k = 60 (Cormack, Clarke & Büttcher 2009, set there once for every collection; not tuned here).
 * Each arm contributes 1/(k + rank), so a passage both arms rank well beats one ranked first by a single arm.
 */
export const RRF_K = 60;

/**
 * Candidates each arm returns (passages). Fixed, whatever page is asked for, so every page of results comes from
 * the same ranking (paging never repeats or skips a result). Queries whose code-side checks can reject many
 * candidates (operators, exclusions, phrases) read deeper lists.
 */
export const ARM_DEPTH = 300;
/**
 * Least cosine similarity for a vector-arm candidate: unrelated texts embed near 0, so below 0.2 a "nearest" passage
 * is only the least unrelated one. Set from that property of the embedding space, not tuned; each model's own floor is in its profile
 * (model-profiles.ts), this is MiniLM's and the hashing stand-in's.
 */
export const VECTOR_MIN_SIMILARITY = 0.2;
export const ARM_DEPTH_SELECTIVE = 1000;

const key = passageKey;

/** The ranking mode a request gets from this index. */
function rankingFor(source: CandidateSource, compiled: CompiledQuery, wantMode: NonNullable<RetrievalRequest['mode']>) {
  const embedder = source.embedder;
  const hashing = embedder?.kind === 'hashing-stand-in';
  let useBm25 = wantMode !== 'vector';
  const useVector = !!embedder && wantMode !== 'bm25' && compiled.semanticText.length > 0;
  if (wantMode === 'vector' && !useVector) useBm25 = true; // nothing to embed or no embedder: fall back
  const ranking: RankingMode =
    useBm25 && useVector ? (hashing ? 'hybrid-rrf-hashing' : 'hybrid-rrf') : useVector ? (hashing ? 'vector-hashing' : 'vector') : 'bm25';
  return { useBm25, useVector, ranking, embedderUnavailable: (wantMode === 'hybrid' || wantMode === 'vector') && !embedder };
}

/**
 * Ranked passages for a query: both arms, every strict constraint verified on every candidate, fused. Passage
 * level; `searchPages` and `contextPassages` build on it.
 */
export async function retrieve(source: CandidateSource, req: RetrievalRequest): Promise<RetrievalResult> {
  const compiled = compileQuery(parseQuery(req.query));
  const ast = compiled.ast;
  const { useBm25, useVector, ranking, embedderUnavailable } = rankingFor(source, compiled, req.mode ?? 'auto');
  const empty: RetrievalResult = { compiled, ranking, passages: [], embedderUnavailable };
  if (!hasPositiveConstraint(ast)) return empty;
  const queryVector = async (): Promise<Float32Array | null> => {
    if (!useVector || !source.embedder) return null;
    const [qv] = await source.embedder.embed([compiled.semanticText], { interactive: true });
    return qv ?? null;
  };
  // A source that gathers the arms in one call needs the vector before it: the embedding runs while `prepare` does.
  const early = source.gathersArms === true && source.planArms ? queryVector() : null;
  early?.catch(() => undefined); // awaited below, unless the query ends first
  if (source.prepare) {
    const domains = [...ast.ops.site.include, ...ast.ops.site.exclude].filter((d): d is string => typeof d === 'string');
    const text = compiled.text ? [...compiled.text.must.flat(), ...compiled.text.should.map((s) => s.term)] : [];
    const terms = [...new Set([...text, ...termsOf(compiled.coverageWords)])];
    await source.prepare({ domains, lang: req.filters?.language?.toLowerCase() ?? null, titleTerms: compiled.titleTerms, terms });
  }
  const filter = compileFilter(source, ast.ops.site, req.filters ?? {}, req.now ?? new Date());
  if (!filter) return empty;
  // Without a vector arm, only the full-text arm's own rejections call for a deeper list (required words do not: the
  // full-text query requires them). With one, its candidates are checked for the required words too.
  const k = (useVector ? compiled.selective : compiled.textSelective) ? ARM_DEPTH_SELECTIVE : ARM_DEPTH;
  const extra = compiled.hitColumns; // the BM25 arm's candidates are coordinated too
  // Text to find with, or only operators (e.g. "site:example.org -inurl:archive"): then a filtered scan.
  const textless = ast.words.length + ast.required.length + ast.phrases.length === 0;
  const minSimilarity = minSimilarityFor(source.embedder?.modelId);
  const vectorOf = early ? () => early : queryVector;
  if (early)
    source.planArms!({
      filter,
      k,
      text: useBm25 && compiled.text ? compiled.text : null,
      textExtra: extra,
      scan: useBm25 && !compiled.text && textless,
      vector: await early,
      vectorExtra: compiled.matchColumns,
      minSimilarity,
      textDistances: useBm25 && useVector && compiled.textCoversMatches,
      titleTerms: compiled.titleTerms,
    });

  // The BM25 arm's raw candidates (before the strict checks) and their ranking. `exhaustive`: the index returned
  // fewer than k, so these are every passage the text query matches under `filter`.
  const bm25Arm = async (): Promise<{ ranked: RankedPassage[]; exhaustive: boolean }> => {
    if (!useBm25) return { ranked: [], exhaustive: false };
    if (compiled.text) {
      const raw = await source.textCandidates(compiled.text, filter, k, extra);
      const rows = raw.filter((r) => compiled.matches(r));
      // One ranked entry per candidate, built in its final shape (hundreds per query); ranks are set after the sort.
      const ranked = rows.map((r): RankedPassage & { bm25Rank: number } => {
        const title = compiled.titleTerms.length > 0 ? TITLE_BOOST * source.titleScore(compiled.titleTerms, r) : 0;
        const s = (r._score + title) * compiled.coordination(r);
        return { row: r, score: s, bm25Rank: 0, vectorRank: null, bm25Score: s, similarity: null };
      });
      // Equal scores come back in no fixed order; page_ref, ordinal make ranking (and paging) stable.
      sortRanked(ranked, (p) => p.score);
      for (let i = 0; i < ranked.length; i++) ranked[i]!.bm25Rank = i + 1;
      return { ranked, exhaustive: raw.length < k };
    }
    if (!textless) return { ranked: [], exhaustive: false }; // words the analyzer drops entirely (stop words only): nothing to match on
    const rows = (await source.scanCandidates(filter, k, compiled.matchColumns)).sort(
      (a, b) => a.page_ref - b.page_ref || a.ordinal - b.ordinal,
    );
    const ranked = rows
      .filter((r) => compiled.matches(r))
      .map((r, i) => ({ row: r, score: 0, bm25Rank: i + 1, vectorRank: null, bm25Score: 0, similarity: null }));
    return { ranked, exhaustive: false };
  };
  const toVectorRanked = (rows: readonly (PassageHit & { _distance: number })[]): RankedPassage[] => {
    // Built in their final shape; ranks are set after the sort (as the BM25 arm's).
    const ranked = rows
      .filter((r) => 1 - r._distance >= minSimilarity)
      .map((r): RankedPassage<PassageHit & { _distance: number }> & { vectorRank: number } => {
        const similarity = 1 - r._distance;
        return { row: r, score: similarity, bm25Rank: null, vectorRank: 0, bm25Score: null, similarity };
      });
    sortRanked(ranked, (p) => -p.row._distance);
    for (let i = 0; i < ranked.length; i++) ranked[i]!.vectorRank = i + 1;
    return ranked;
  };
  const vectorArm = async (qv: Float32Array | null): Promise<RankedPassage[]> => {
    if (!qv) return [];
    const rows = (await source.vectorCandidates(qv, filter, k, compiled.matchColumns, minSimilarity)).filter((r) => compiled.matches(r));
    return toVectorRanked(rows);
  };

  if (useBm25 && useVector && compiled.textCoversMatches) {
    // Every passage the strict checks accept holds the required words, so when the text answer is exhaustive the
    // vector arm could only find a subset: exact cosine distances of those passages replace a costly deep approximate
    // search; otherwise the nearest-neighbour search runs as usual.
    const [{ ranked: bm25, exhaustive }, qv] = await Promise.all([bm25Arm(), vectorOf()]);
    let vec: RankedPassage[];
    if (!qv) vec = [];
    else if (exhaustive) {
      const dist =
        bm25.length > 0
          ? await source.vectorDistances(
              qv,
              bm25.map((p) => p.row),
            )
          : new Map<string, number>();
      vec = toVectorRanked(
        bm25.flatMap((p) => {
          const d = dist.get(key(p.row));
          return d === undefined ? [] : [{ ...p.row, _distance: d }];
        }),
      );
    } else vec = await vectorArm(qv);
    return { compiled, ranking, passages: fuseRrf(bm25, vec), embedderUnavailable };
  }
  // The two arms run concurrently (LanceDB executes on its own thread pool, the embedder in a worker).
  const [{ ranked: bm25 }, vec] = await Promise.all([bm25Arm(), vectorOf().then(vectorArm)]);
  if (!useVector) return { compiled, ranking, passages: bm25, embedderUnavailable };
  if (!useBm25) return { compiled, ranking, passages: vec, embedderUnavailable };
  return { compiled, ranking, passages: fuseRrf(bm25, vec), embedderUnavailable };
}

/**
 * The whole rows of `passages` (same order). A passage whose page was replaced or removed since it was found
 * (its row is gone or its content hash changed) is left out: a response never mixes two versions of a page.
 */
export async function hydrate(
  index: Pick<CandidateSource, 'passageRows'>,
  passages: readonly RankedPassage[],
): Promise<RankedPassage<PassageRow>[]> {
  return withRows(passages, await index.passageRows(passages.map((p) => p.row)));
}

/** `hydrate` with the rows as a search result reads them (`CandidateSource.resultRows`). */
async function hydrateResults(
  index: Pick<CandidateSource, 'resultRows'>,
  passages: readonly RankedPassage[],
): Promise<RankedPassage<ResultRow>[]> {
  return withRows(passages, await index.resultRows(passages.map((p) => p.row)));
}

function withRows<R extends ResultRow>(passages: readonly RankedPassage[], rows: ReadonlyMap<string, R>): RankedPassage<R>[] {
  const out: RankedPassage<R>[] = [];
  for (const p of passages) {
    const row = rows.get(key(p.row));
    if (row && row.content_hash === p.row.content_hash) out.push({ ...p, row });
  }
  return out;
}

/**
 * Reciprocal rank fusion of two ranked lists (ties by page_ref, ordinal). Passages only one list holds are already
 * in order, so only the shared ones are sorted and the three runs merged: the same order as a full sort, cheaper.
 */
export function fuseRrf(a: readonly RankedPassage[], b: readonly RankedPassage[], k = RRF_K): RankedPassage[] {
  // Entries are built in one shape, without spreads (both arms hand over hundreds of passages).
  const fromA: RankedPassage[] = [];
  // a's passages by page ref (dense slots, each the head of a chain through `next` of a's passages on that page): no
  // Map of passage keys, whose numbers past 2³¹ were each a heap number to allocate and hash.
  const heads = FUSION_SLOTS;
  heads.begin();
  if (fusionNext.length < a.length) fusionNext = new Int32Array(Math.max(a.length, 2 * fusionNext.length));
  const next = fusionNext;
  a.forEach((p, i) => {
    next[i] = heads.get(p.row.page_ref);
    heads.set(p.row.page_ref, i);
    fromA.push({
      row: p.row,
      score: 1 / (k + i + 1),
      bm25Rank: i + 1,
      vectorRank: p.vectorRank,
      bm25Score: p.bm25Score,
      similarity: p.similarity,
    });
  });
  const inBoth = new Uint8Array(a.length);
  const onlyB: RankedPassage[] = [];
  b.forEach((p, i) => {
    let j = heads.get(p.row.page_ref);
    while (j !== -1 && a[j]!.row.ordinal !== p.row.ordinal) j = next[j]!;
    if (j === -1) {
      onlyB.push({
        row: p.row,
        score: 1 / (k + i + 1),
        bm25Rank: p.bm25Rank,
        vectorRank: i + 1,
        bm25Score: p.bm25Score,
        similarity: p.similarity,
      });
      return;
    }
    const cur = fromA[j]!;
    inBoth[j] = 1;
    fromA[j] = {
      row: cur.row,
      score: cur.score + 1 / (k + i + 1),
      bm25Rank: cur.bm25Rank,
      vectorRank: i + 1,
      bm25Score: cur.bm25Score,
      similarity: p.similarity,
    };
  });
  const onlyA: RankedPassage[] = [];
  const both: RankedPassage[] = [];
  for (let j = 0; j < fromA.length; j++) (inBoth[j] === 1 ? both : onlyA).push(fromA[j]!);
  sortRanked(both, (p) => p.score);
  return mergeRanked(mergeRanked(onlyA, onlyB), both);
}

/** Whether `x` ranks before `y`: higher score, then lower page_ref, then lower ordinal. */
function ranksBefore(x: RankedPassage, y: RankedPassage): boolean {
  return x.score !== y.score
    ? x.score > y.score
    : x.row.page_ref !== y.row.page_ref
      ? x.row.page_ref < y.row.page_ref
      : x.row.ordinal < y.row.ordinal;
}

/** Two lists in ranking order (`ranksBefore`) as one. */
function mergeRanked(x: readonly RankedPassage[], y: readonly RankedPassage[]): RankedPassage[] {
  const out: RankedPassage[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) out.push(ranksBefore(y[j]!, x[i]!) ? y[j++]! : x[i++]!);
  while (i < x.length) out.push(x[i++]!);
  while (j < y.length) out.push(y[j++]!);
  return out;
}

/**
 * Sorts ranked passages by `score` (highest first), equal scores by page_ref, then ordinal: the order of every ranked
 * list (score-sort.ts; a passage whose key does not fit one number falls back to a comparator sort of the same order).
 */
function sortRanked<P extends { readonly row: Pick<PassageHit, 'page_ref' | 'ordinal'> }>(list: P[], score: (p: P) => number): P[] {
  for (const p of list)
    if (typeof fusionKey(p.row) !== 'number')
      return list.sort((a, b) => score(b) - score(a) || a.row.page_ref - b.row.page_ref || a.row.ordinal - b.row.ordinal);
  return sortByScore(list, score, (p) => fusionKey(p.row) as number);
}

/** A passage's identity as a number when page_ref and ordinal fit one exactly (they always do in practice), else `key`. */
function fusionKey(r: Pick<PassageHit, 'page_ref' | 'ordinal'>): number | string {
  const { page_ref, ordinal } = r;
  return Number.isInteger(page_ref) && page_ref >= 0 && page_ref < 2 ** 32 && Number.isInteger(ordinal) && ordinal >= 0 && ordinal < 2 ** 20
    ? page_ref * 2 ** 20 + ordinal
    : key(r);
}

/** fuseRrf's first list by page ref, and its chains (synchronous use, like PAGE_SLOTS). */
const FUSION_SLOTS = new DenseSlots();
let fusionNext = new Int32Array(0);
/** groupPages' slots (synchronous use: one at a time per thread); DROPPED marks a page left out as a near-duplicate. */
const PAGE_SLOTS = new DenseSlots();
const DROPPED = 2 ** 31 - 1;
/** groupPages' near-duplicate keys (synchronous use, like PAGE_SLOTS). */
const NEAR_KEYS = new NearKeySet();
/** groupPages' kept pages' near-duplicate prints (synchronous use, like PAGE_SLOTS). */
const NEAR_PRINTS = new NearPrintList();
/** A candidate's near-duplicate keys, with their hashes when the postings gave them (text-engine.ts `rows`, `nearestRows`). */
type NearKeyed = Pick<PassageHit, 'group_key' | 'content_hash' | 'near_print' | '_groupHash' | '_contentHash'>;

/** A page result: its best passage decides its rank; the other matching passages follow. */
export interface PageHit<R extends RankedRow = PassageHit> {
  readonly best: RankedPassage<R>;
  readonly passages: RankedPassage<R>[];
  /** Page refs of the near-copies folded into this page (ranked below it), best first. */
  readonly folded: number[];
}

/**
 * Groups ranked passages into pages (best passage first). With `collapseNearDuplicates`, a page that shares the
 * canonical group or content hash of a page kept before it, or whose print (near-print.ts) is within the threshold of
 * one's, is folded into that page (`folded`; returns how many were).
 */
export function groupPages<R extends RankedRow>(
  passages: readonly RankedPassage<R>[],
  opts: { collapseNearDuplicates: boolean },
): { pages: PageHit<R>[]; duplicates: number } {
  // Per query: each page ref's slot in dense slots (or DROPPED for a near-duplicate), and the kept pages' group keys
  // and content hashes in a hash set (near-keys.ts); the two kinds cannot collide (a URL has "://", a hash is hex).
  // The postings give each candidate's hashes; a row read from LanceDB is hashed here.
  const slots = PAGE_SLOTS;
  slots.begin();
  const seen = NEAR_KEYS;
  const prints = NEAR_PRINTS;
  if (opts.collapseNearDuplicates) {
    seen.begin(2 * passages.length);
    prints.begin();
  }
  const pages: PageHit<R>[] = [];
  let duplicates = 0;
  for (const p of passages) {
    const ref = p.row.page_ref;
    const at = slots.get(ref);
    if (at !== -1) {
      if (at !== DROPPED) pages[at]!.passages.push(p);
      continue;
    }
    if (opts.collapseNearDuplicates) {
      // A duplicate holds a group key or a content hash of a page kept before it, or a print near one of theirs
      // (only the keys of pages kept count); it is folded into that page.
      const row: NearKeyed = p.row;
      const { group_key, content_hash } = row;
      const gh = row._groupHash ?? nearKeyHash(group_key);
      const ch = row._contentHash ?? nearKeyHash(content_hash);
      const print = parseNearPrint(row.near_print);
      let into = seen.get(group_key, gh);
      if (into === -1) into = seen.get(content_hash, ch);
      if (into === -1 && print) into = prints.find(print);
      if (into !== -1) {
        slots.set(ref, DROPPED);
        pages[into]!.folded.push(ref);
        duplicates++;
        continue;
      }
      seen.add(group_key, gh, pages.length);
      seen.add(content_hash, ch, pages.length);
      if (print) prints.add(print, pages.length);
    }
    slots.set(ref, pages.length);
    pages.push({ best: p, passages: [p], folded: [] });
  }
  return { pages, duplicates };
}

/**
 * `hydrate` for page results: the whole row of each page's best passage, plus further matching passages only when
 * the best has nothing quotable, so a result page reads about one row per result. Pages whose best passage changed
 * since retrieval are left out.
 */
export async function hydratePages(
  index: Pick<CandidateSource, 'resultRows'>,
  pages: readonly PageHit[],
  perPage = 8,
): Promise<PageHit<ResultRow>[]> {
  const bests = await hydrateResults(
    index,
    pages.map((p) => p.best),
  );
  const byKey = new Map(bests.map((p) => [key(p.row), p]));
  const fallback = pages.filter((p) => {
    const best = byKey.get(key(p.best.row));
    return best !== undefined && needsFallback(best.row);
  });
  if (fallback.length > 0)
    for (const p of await hydrateResults(
      index,
      fallback.flatMap((p) => p.passages.slice(0, perPage).filter((x) => x !== p.best)),
    ))
      byKey.set(key(p.row), p);
  const out: PageHit<ResultRow>[] = [];
  for (const page of pages) {
    const best = byKey.get(key(page.best.row));
    if (!best) continue;
    const passages = needsFallback(best.row) ? page.passages.slice(0, perPage).flatMap((p) => byKey.get(key(p.row)) ?? []) : [best];
    out.push({ best, passages, folded: page.folded });
  }
  return out;
}

/**
 * Whether a page result's excerpt would look past its best passage: the page allows excerpts, and the passage's
 * quotable text is blank (`buildExcerpt` answers null for that passage and the next is tried; under nosnippet or
 * max-snippet:0 no passage gives one).
 */
function needsFallback(row: ResultRow): boolean {
  return !row.nosnippet && row.max_snippet !== 0 && row.snippet_text.trim() === '';
}

/** Results of one host a result page holds at most (a positive site: query is exempt). */
export const PER_HOST = 2;

/**
 * Host diversity: at most `perHost` results of one host per result page (a positive site: query is exempt); extras
 * move to later pages, and earlier pages are consumed the same way so paging is stable. Returns the window and the
 * per-host count pushed out of it; a page may be short when only capped hosts remain.
 */
export function diversify<T>(
  ranked: readonly T[],
  opts: { limit: number; offset: number; perHost?: number; exempt: boolean; hostOf: (item: T) => string },
): { window: T[]; collapsedPerHost: Record<string, number> } {
  const perHost = opts.perHost ?? PER_HOST;
  if (opts.exempt) return { window: ranked.slice(opts.offset, opts.offset + opts.limit), collapsedPerHost: {} };
  // Each block takes, in rank order, the results not taken by an earlier block, skipping a host's results over the cap
  // (they stay for later blocks); the scan stops when the block is full, so a first page reads only as far as it needs.
  const taken = new Uint8Array(ranked.length);
  const takeBlock = (size: number): { block: T[]; skipped: Record<string, number> } => {
    const counts = new Map<string, number>();
    const block: T[] = [];
    const skipped: Record<string, number> = {};
    for (let i = 0; i < ranked.length && block.length < size; i++) {
      if (taken[i] === 1) continue;
      const item = ranked[i]!;
      const host = opts.hostOf(item);
      const n = counts.get(host) ?? 0;
      if (n >= perHost) {
        skipped[host] = (skipped[host] ?? 0) + 1;
        continue;
      }
      counts.set(host, n + 1);
      taken[i] = 1;
      block.push(item);
    }
    return { block, skipped };
  };
  let consumed = 0;
  while (consumed < opts.offset) {
    const { block } = takeBlock(Math.min(opts.limit, opts.offset - consumed));
    if (block.length === 0) break;
    consumed += block.length;
  }
  if (consumed < opts.offset) return { window: [], collapsedPerHost: {} };
  const { block, skipped } = takeBlock(opts.limit);
  return { window: block, collapsedPerHost: skipped };
}

/** What `searchPages` answers. */
export interface SearchPagesResult {
  readonly compiled: CompiledQuery;
  readonly ranking: RankingMode;
  readonly embedderUnavailable: boolean;
  /**
   * The requested window of page results, result rows read: each page's best passage, and the passages after it only
   * when the best one has nothing to quote (`hydratePages`).
   */
  readonly pages: PageHit<ResultRow>[];
  readonly collapsedPerHost: Record<string, number>;
  readonly duplicates: number;
  /** Each result's match band by page ref (relevance.ts), read from its best passage as ranking found it. */
  readonly bands: ReadonlyMap<number, MatchBand>;
}

/** svc_search's retrieval: page results, near-duplicates collapsed, host-diverse, the requested window hydrated. */
export async function searchPages(
  source: CandidateSource,
  req: RetrievalRequest & { readonly limit: number; readonly offset: number },
): Promise<SearchPagesResult> {
  const res = await retrieve(source, req);
  const { pages, duplicates } = groupPages(res.passages, { collapseNearDuplicates: true });
  const { window, collapsedPerHost } = diversify(pages, {
    limit: req.limit,
    offset: req.offset,
    exempt: res.compiled.hasPositiveSite,
    hostOf: (p) => p.best.row.host,
  });
  const full = await hydratePages(source, window);
  const floor = minSimilarityFor(source.embedder?.modelId);
  // Which words a result holds is read from its candidate row; where they stand, from the result row's quotable text.
  const quoted = new Map(full.map((p) => [p.best.row.page_ref, p.best.row]));
  const bands = await matchBands(
    res.compiled,
    window.map((p) => ({ ...p.best, text: quotable(quoted.get(p.best.row.page_ref)) })),
    (terms) => source.termIdf(terms),
    floor,
  );
  return {
    bands: new Map(window.map((p, i) => [p.best.row.page_ref, bands[i]!])),
    compiled: res.compiled,
    ranking: res.ranking,
    embedderUnavailable: res.embedderUnavailable,
    pages: full,
    collapsedPerHost,
    duplicates,
  };
}

function quotable(row: ResultRow | undefined): { title: string; body: string } | null {
  return row && row.snippet_text.trim() !== '' ? { title: row.title, body: row.snippet_text } : null;
}

/**
 * The relevance floor of svc_context, relative to the best candidate's BM25 or cosine score. The two floors differ
 * because the scales do: BM25 sums shared terms, while embedding cosines are compressed (unrelated passages still
 * score a sizeable fraction). Set from these properties, not tuned on an evaluation set.
 */
export const RELEVANCE_FLOOR_BM25 = 0.4;
export const RELEVANCE_FLOOR_SIMILARITY = 0.8;

/** What `contextPassages` answers. */
export interface ContextPassagesResult {
  readonly compiled: CompiledQuery;
  readonly ranking: RankingMode;
  readonly embedderUnavailable: boolean;
  /** Candidate passages of the pages above the floor, best first, whole rows read, near-duplicates collapsed. */
  readonly passages: RankedPassage<PassageRow>[];
  /** Pages left out by the relevance floor. */
  readonly belowFloor: number;
}

/** svc_context's retrieval: passages of relevant pages (relevance floor applied), best first, hydrated. */
export async function contextPassages(
  source: CandidateSource,
  req: RetrievalRequest & { readonly maxPassages: number },
): Promise<ContextPassagesResult> {
  const res = await retrieve(source, req);
  const { pages } = groupPages(res.passages, { collapseNearDuplicates: true });
  const bestOf = (f: (p: RankedPassage) => number | null) =>
    Math.max(0, ...pages.flatMap((pg) => pg.passages.map(f)).filter((x): x is number => x !== null));
  const bestBm25 = bestOf((p) => p.bm25Score);
  const bestSim = bestOf((p) => p.similarity);
  const relevant = (pg: PageHit): boolean => {
    // Operators-only queries (no text) have nothing to be relevant to beyond the operators: every match stays.
    if (bestBm25 <= 0 && bestSim <= 0) return true;
    return pg.passages.some(
      (p) =>
        (p.bm25Score !== null && bestBm25 > 0 && p.bm25Score >= RELEVANCE_FLOOR_BM25 * bestBm25) ||
        (p.similarity !== null && bestSim > 0 && p.similarity >= RELEVANCE_FLOOR_SIMILARITY * bestSim),
    );
  };
  const kept = new Set(pages.filter(relevant).map((p) => p.best.row.page_ref));
  const usable = res.passages.filter((p) => kept.has(p.row.page_ref)).slice(0, req.maxPassages);
  return {
    compiled: res.compiled,
    ranking: res.ranking,
    embedderUnavailable: res.embedderUnavailable,
    passages: await hydrate(source, usable),
    belowFloor: pages.length - kept.size,
  };
}
