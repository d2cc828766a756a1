/**
 * A sharded index: N `PassageIndex` datasets under one index location (shard-layout.ts), pages split by a stable hash
 * of their URL, answering every query exactly as one index of the same pages would (docs/architecture.md#shards).
 *
 * Exact answers: BM25 is scored in every shard with the statistics of the whole index (documents, total length and
 * the query terms' document frequencies summed over the shards before scoring, `CorpusStats`), and the title boost
 * likewise (`TitleCorpus`); each shard's text and vector top k are merged into the index's top k, ties by passage key;
 * fusion, strict checks, grouping, host diversity, the relevance floor and packing run once on the merged lists, in
 * retrieval.ts, as for one index. Retrieval reaches the shards only through `ShardSource` (writes, pages and upkeep
 * still call `PassageIndex`), so searcher processes can later answer its calls for a shard over HTTP.
 */
import { urlHash32, type PageInput, type PageSink } from '../../page-model.js';
import { passageKey, type MatchColumn } from '../engines/lance/columns.js';
import type { HostIdSource } from '../engines/lance/host-ids.js';
import { localIndexLocation, type IndexLocation } from '../engines/lance/location.js';
import {
  recordShardCount,
  shardLocation,
  shardShareOfTop,
  storedHosts,
  storedShardCount,
  storedVectorModel,
} from '../engines/lance/shard-layout.js';
import {
  PassageIndex,
  type HostPrint,
  type ImageHit,
  type IndexStats,
  type OpenOptions,
  type PassageHit,
  type PassageKey,
  type PassageRow,
  type ReembedProgress,
  type ReembedRunOptions,
  type ResultRow,
  type StoredPage,
  type StoredPassage,
} from '../engines/lance/store.js';
import type { TextEngineStats } from '../engines/lance/text-engine.js';
import type { PassageCommit } from '../engines/lance/passage-changes.js';
import { bm25Idf } from '../engines/memory/postings.js';
import { countNearCopies } from '../retrieval/near-print.js';
import type { CorpusStats, RankingMode, TextQuery, TitleCorpus, VectorsUnused } from '../retrieval/engine-seam.js';
import type { PassageFilter } from '../retrieval/passage-filter.js';
import type { ArmsPlan, CandidateSource } from '../retrieval/retrieval.js';
import type { Embedder } from '../serving/embedder.js';
import { currentCoverageScope, withShardCoverage, type ShardCoverage } from './shard-coverage.js';
import type { ShardArms, ShardArmsAnswer, ShardLookup } from './shard-wire.js';

/**
 * What a sharded index asks of one shard: retrieval's `CandidateSource`, plus the statistics it sums and the scoring
 * calls that take the sums. `PassageIndex` is one; a searcher process answering for a shard over HTTP will be another.
 */
export interface ShardSource extends CandidateSource {
  /** The shard's BM25 statistics of `terms` at the version it serves. */
  corpusStats(terms: readonly string[]): Promise<CorpusStats>;
  /** The shard's title statistics of `terms`. */
  titleCorpus(terms: readonly string[]): TitleCorpus;
  /** `CandidateSource.textCandidates`, scored with the whole index's `stats`. */
  textCandidates(
    text: TextQuery,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[],
    stats?: CorpusStats,
  ): Promise<(PassageHit & { _score: number })[]>;
  /** `CandidateSource.titleScore` with the whole index's title statistics. */
  titleScore(
    queryTerms: readonly string[],
    row: Pick<PassageHit, 'page_ref' | 'title' | 'lang' | '_titleIds'>,
    corpus?: TitleCorpus,
  ): number;
  /**
   * A shard in another process (remote-shard.ts): its failures mean the shard is absent from a query (left out, the
   * answer partial), not that the query failed.
   */
  readonly remote?: boolean;
  /** A remote shard: whether a searcher has told its status yet (until then its embedder is unknown, not absent). */
  readonly answered?: boolean;
  /** Why the shard's vectors do not serve the configured embedder (null: they do, or there is none). */
  readonly vectorsUnused: VectorsUnused | null;
  /** Fetches what `hostIdsUnder`, `hasLang` and `titleCorpus` then answer for one query (a remote shard). */
  prepare?(q: ShardLookup): Promise<void>;
  /** `prepare`, answering too the statistics of `q.terms` in the same call (a remote shard). */
  lookup?(q: ShardLookup): Promise<CorpusStats | undefined>;
  /** Every candidate arm of a query in one call, scored with the whole index's statistics (a remote shard). */
  arms?(req: ShardArms): Promise<ShardArmsAnswer>;
  /** The page's stored row, when this shard holds it. */
  getPage(pageRef: number): Promise<StoredPage | null>;
  pagePassages(
    pageRef: number,
    offset: number,
    limit: number,
  ): Promise<{ page: StoredPage; passages: StoredPassage[]; total: number } | null>;
  hostPrints(host: string): Promise<HostPrint[]>;
  scoredImages(text: string, limit: number): Promise<(ImageHit & { score: number })[]>;
  stats(): Promise<IndexStats>;
  version(): Promise<number>;
}

const NO_STATS: CorpusStats = { docs: 0, totalLength: 0, df: new Map() };
const NO_ARMS: ShardArmsAnswer = {};

/** The distinct terms of a text query (those its BM25 statistics are gathered for). */
const textTerms = (text: TextQuery): string[] => [...new Set([...text.must.flat(), ...text.should.map((s) => s.term)])];

/**
 * The shard of a page: FNV-1a (32 bits) of its URL's UTF-8 bytes, modulo the shard count. Depends on the URL alone,
 * so two builds of one corpus put every page in the same shard whatever order it came in.
 */
export function shardOf(url: string, shards: number): number {
  return shards <= 1 ? 0 : urlHash32(url) % shards;
}

/** Each of `terms`' document frequencies summed over `parts` (a term the query repeats is counted once). */
function sumDf(parts: readonly { readonly df: ReadonlyMap<string, number> }[], terms: readonly string[]): Map<string, number> {
  return new Map(terms.map((t) => [t, parts.reduce((n, p) => n + (p.df.get(t) ?? 0), 0)]));
}

/** Sums the shards' statistics of `terms` (the whole index's, as one index would count them). */
export function sumCorpusStats(parts: readonly CorpusStats[], terms: readonly string[]): CorpusStats {
  return {
    docs: parts.reduce((n, p) => n + p.docs, 0),
    totalLength: parts.reduce((n, p) => n + p.totalLength, 0),
    df: sumDf(parts, terms),
  };
}

/** Sums the shards' title statistics of `terms`. */
export function sumTitleCorpus(parts: readonly TitleCorpus[], terms: readonly string[]): TitleCorpus {
  return {
    titles: parts.reduce((n, p) => n + p.titles, 0),
    terms: parts.reduce((n, p) => n + p.terms, 0),
    df: sumDf(parts, terms),
  };
}

/** Ranking order of merged candidates: `better` first, then the passage key (page_ref, ordinal): stable across builds. */
function mergeTop<R extends PassageKey>(lists: readonly (readonly R[])[], k: number, before: (a: R, b: R) => number): R[] {
  const all = lists.flat();
  all.sort((a, b) => before(a, b) || a.page_ref - b.page_ref || a.ordinal - b.ordinal);
  return all.length > k ? all.slice(0, k) : all;
}

/** A text candidate as the shards give them. */
type TextRow = PassageHit & { _score: number };
const byScore = (a: TextRow, b: TextRow): number => b._score - a._score;

/**
 * Host ids every shard agrees on, for a writer given no shared source (`svc ingest`, tests): a `site:` filter is
 * compiled once into ids and tested in every shard, so one host must have one id in all of them. Seeded with the ids
 * the shards store (the first shard's wins; a shard that disagrees adopts it at open, host-ids.ts `adopt`).
 */
class SharedHostIds implements HostIdSource {
  readonly #ids = new Map<string, number>();
  #next = 1;

  seed(rows: readonly { host: string; host_id: number }[]): void {
    for (const r of rows) {
      if (!this.#ids.has(r.host)) this.#ids.set(r.host, r.host_id);
      this.#next = Math.max(this.#next, r.host_id + 1);
    }
  }

  async idFor(host: string): Promise<number> {
    let id = this.#ids.get(host);
    if (id === undefined) this.#ids.set(host, (id = this.#next++));
    return id;
  }
}

/** The index a process serves: one dataset, or several as one. */
export type ServedIndex = PassageIndex | ShardedIndex;

/** Options of `openIndex`: those of `PassageIndex.open`, and the shard count a new index gets. */
export interface OpenIndexOptions extends OpenOptions {
  /** Shards of a new index (an existing one keeps its stored count). @default 1 */
  readonly shards?: number;
  /**
   * Open only these shards (an indexer owning part of the index, `svc reindex --shards`): writes of a page of
   * another shard are refused, and reads answer from these shards alone. @default every shard
   */
  readonly onlyShards?: readonly number[];
}

/** The shard count the index at `location` has (its stored count), or will have when created with `configured`. */
export async function indexShardCount(location: IndexLocation, configured: number | undefined): Promise<number> {
  return (await storedShardCount(location)) ?? configured ?? 1;
}

/**
 * The model the index's vectors came from (`<folder>/<dtype>`; a sharded index's first shard speaks for all, as every
 * shard is embedded by the one writer), or null when it has none yet. Read before the embedder is chosen.
 */
export async function indexVectorModel(location: IndexLocation): Promise<string | null> {
  const shards = await storedShardCount(location);
  if (shards === null) return null;
  return storedVectorModel(shards > 1 ? shardLocation(location, 0, shards) : location);
}

/**
 * Opens the index at the location: one `PassageIndex` when it has one shard (the layout of every index written before
 * shards), else a `ShardedIndex`. The stored count wins over `shards`; a different one is logged.
 */
export async function openIndex(opts: OpenIndexOptions): Promise<ServedIndex> {
  const location = opts.location ?? (opts.dir !== undefined ? localIndexLocation(opts.dir) : undefined);
  if (!location) throw new TypeError('openIndex needs a dir or a location');
  const wanted = opts.shards ?? 1;
  const stored = await storedShardCount(location);
  if (stored !== null && stored !== wanted && opts.shards !== undefined)
    opts.log?.warn(
      { stored, configured: wanted },
      'index: SVC_INDEX_SHARDS differs from the shard count the index was created with; the stored count is used',
    );
  const shards = stored ?? wanted;
  const bad = opts.onlyShards?.find((i) => !Number.isInteger(i) || i < 0 || i >= shards);
  if (bad !== undefined) throw new RangeError(`shard ${bad} does not exist: the index has ${shards} shard(s), 0 to ${shards - 1}`);
  if (shards <= 1) return PassageIndex.open({ ...opts, location });
  if (stored === null && (opts.writes ?? true)) await recordShardCount(location, shards);
  return ShardedIndex.open({ ...opts, location }, shards, opts.onlyShards);
}

/** N shards as one index: the retrieval `CandidateSource`, the crawler's `PageSink`, and what the tools read. */
export class ShardedIndex implements CandidateSource, PageSink {
  readonly #shards: readonly PassageIndex[];
  /** The same shards as retrieval reaches them: only through `ShardSource`, what a searcher process will answer. */
  readonly #sources: readonly ShardSource[];
  readonly #location: IndexLocation;
  /** The index's shard count, and the numbers of the shards this instance holds (`#shards[i]` is shard `#held[i]`). */
  readonly #count: number;
  readonly #held: readonly number[];
  /** The shard each candidate row came from: its row id, and further reads of it, belong to that shard. */
  readonly #from = new WeakMap<object, number>();
  /** Title statistics per query (its title terms array) and the writes they were summed after. */
  readonly #titleCorpora = new WeakMap<readonly string[], { corpus: TitleCorpus; writes: number }>();
  /** The summed title statistics a query's `arms` calls sent the shards to score its text candidates' titles with. */
  readonly #titleSent = new WeakMap<readonly string[], TitleCorpus>();
  #writes = 0;
  /** The arms each query planned (`planArms`), by its filter (one object per query), and their answers. */
  readonly #plans = new WeakMap<
    PassageFilter,
    { plan: ArmsPlan; answers: Promise<ShardArmsAnswer[]>; depth: number; stats: Promise<CorpusStats | undefined> }
  >();
  /** A text candidate's vector distance as its shard gave it with the candidate (null: it has no vector). */
  readonly #distances = new WeakMap<object, { vector: Float32Array; distance: number | null }>();
  /** Per-shard deadline of a query run in `covered` (ms). */
  readonly #deadlineMs: number;
  readonly #onClose: () => Promise<void>;

  private constructor(
    shards: readonly PassageIndex[],
    location: IndexLocation,
    count: number,
    held: readonly number[],
    sources: readonly ShardSource[] = shards,
    o: { deadlineMs?: number; onClose?: () => Promise<void> } = {},
  ) {
    this.#shards = shards;
    this.#sources = sources;
    this.#location = location;
    this.#count = count;
    this.#held = held;
    this.#deadlineMs = o.deadlineMs ?? Infinity;
    this.#onClose = o.onClose ?? (async () => undefined);
  }

  /**
   * An index read through `sources` alone (an `api` replica asking searcher processes, remote-shard.ts): it answers
   * queries, pages, sites and images; it writes nothing and keeps no upkeep of its own. `deadlineMs`: each shard's
   * budget in a query run in `covered`.
   */
  static over(
    sources: readonly ShardSource[],
    location: IndexLocation,
    o: { deadlineMs: number; onClose?: () => Promise<void> },
  ): ShardedIndex {
    return new ShardedIndex(
      [],
      location,
      sources.length,
      sources.map((_, i) => i),
      sources,
      o,
    );
  }

  /** Some shards of an index, opened here (a searcher's: readiness and metrics read them as one). */
  static ofShards(shards: readonly PassageIndex[], location: IndexLocation): ShardedIndex {
    return new ShardedIndex(
      shards,
      location,
      shards.length,
      shards.map((_, i) => i),
    );
  }

  /**
   * Runs a query (or a page, site or image read) over the shards, each given this index's per-shard deadline; says
   * which answered. A shard in another process that fails or runs late is left out of the rest of the query.
   */
  covered<T>(fn: () => Promise<T>): Promise<{ value: T; coverage: ShardCoverage }> {
    return withShardCoverage(this.#sources.length, this.#deadlineMs, fn);
  }

  /**
   * `ask` of shard `i`. A remote shard asked within a query's coverage scope answers by its deadline or is left out
   * (`fallback`, recorded); outside a scope, or a local shard, a failure is the caller's.
   */
  async #ask<T>(i: number, ask: (s: ShardSource) => Promise<T>, fallback: T): Promise<T> {
    const s = this.#sources[i]!;
    const scope = s.remote ? currentCoverageScope() : undefined;
    if (!scope) return ask(s);
    if (scope.missing.has(i)) return fallback;
    const left = scope.deadlineMs - (scope.spent.get(i) ?? 0);
    if (left <= 0) {
      scope.missing.add(i);
      return fallback;
    }
    const started = performance.now();
    const answer = ask(s);
    answer.catch(() => undefined); // may settle after the deadline, unread
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        answer,
        new Promise<never>((_, reject) => {
          if (Number.isFinite(left)) timer = setTimeout(() => reject(new Error('shard deadline')), left);
        }),
      ]);
    } catch {
      scope.missing.add(i);
      return fallback;
    } finally {
      clearTimeout(timer);
      scope.spent.set(i, (scope.spent.get(i) ?? 0) + performance.now() - started);
    }
  }

  /** The shards a query still asks (all, outside a coverage scope). */
  #asked(): number[] {
    const missing = currentCoverageScope()?.missing;
    return this.#sources.flatMap((_, i) => (missing?.has(i) ? [] : [i]));
  }

  /** Whether the shards are answered by other processes (an `api` replica over searchers). */
  get remote(): boolean {
    return this.#shards.length === 0;
  }

  /** The sources' per-shard live searcher counts are the caller's (main.ts); here: the shard count. */
  get sourceCount(): number {
    return this.#sources.length;
  }

  /**
   * Opens the `count` shards under `opts.location` (the count is the caller's: `openIndex` reads or records it), or
   * only those of `only`.
   */
  static async open(
    opts: OpenOptions & { readonly location: IndexLocation },
    count: number,
    only?: readonly number[],
  ): Promise<ShardedIndex> {
    const writes = opts.writes ?? true;
    const held = only ? [...new Set(only)].sort((a, b) => a - b) : Array.from({ length: count }, (_, i) => i);
    if (held.length === 0) throw new RangeError('a sharded index needs at least one shard to open');
    const locations = held.map((i) => shardLocation(opts.location, i, count));
    let hostIds = opts.hostIds;
    if (writes && !hostIds) {
      const shared = new SharedHostIds();
      for (const loc of locations) shared.seed(await storedHosts(loc));
      hostIds = shared;
    }
    // The memory bounds are the index's: each shard gets its share.
    const part = (bytes: number): number => Math.floor(bytes / held.length);
    const bounds = {
      ...(opts.rowCacheBytes !== undefined ? { rowCacheBytes: part(opts.rowCacheBytes) } : {}),
      ...(opts.snippetBytes !== undefined ? { snippetBytes: part(opts.snippetBytes) } : {}),
      ...(opts.flatVectorBytes !== undefined ? { flatVectorBytes: part(opts.flatVectorBytes) } : {}),
    };
    const shards: PassageIndex[] = [];
    try {
      for (const location of locations)
        shards.push(await PassageIndex.open({ ...opts, ...bounds, location, shardCount: count, ...(hostIds ? { hostIds } : {}) }));
    } catch (err) {
      await Promise.all(shards.map((s) => s.close().catch(() => undefined)));
      throw err;
    }
    return new ShardedIndex(shards, opts.location, count, held);
  }

  /** The shard count of the index (this instance may hold fewer: `heldShards`). */
  get shardCount(): number {
    return this.#count;
  }

  /** The numbers of the shards this instance holds, ascending (every shard unless opened with `onlyShards`). */
  get heldShards(): readonly number[] {
    return this.#held;
  }

  /** Where the index lives (its root; each shard under it). */
  get location(): IndexLocation {
    return this.#location;
  }

  get dir(): string {
    return this.#location.uri;
  }

  /** The shard a page is written to. */
  shardFor(url: string): number {
    return shardOf(url, this.#count);
  }

  /** Where `url`'s shard sits in `#shards`; a page of a shard not held here is refused (it is another writer's). */
  #slotFor(url: string): number {
    const shard = this.shardFor(url);
    const slot = this.#held.indexOf(shard);
    if (slot < 0) throw new RangeError(`page ${url} belongs to shard ${shard}, which this index does not hold (${this.#held.join(',')})`);
    return slot;
  }

  // --- retrieval (CandidateSource) ---

  get embedder(): Embedder | null {
    // Every shard is opened with the same embedder and checks it against its own vectors: the arm serves only when all can.
    // A remote shard no searcher has described yet is not counted (a shard down at start must not turn the arm off).
    const told = this.#sources.filter((s) => s.answered !== false);
    const first = told[0]?.embedder ?? null;
    return told.every((s) => s.embedder === first) ? first : null;
  }

  get vectorsUnused(): VectorsUnused | null {
    for (const s of this.#sources) if (s.vectorsUnused) return s.vectorsUnused;
    return null;
  }

  /**
   * Asks remote shards for what the query's filters and title boost read synchronously (retrieval awaits it first),
   * and the statistics of its terms, kept in the query's coverage scope for the sums that follow.
   */
  async prepare(q: ShardLookup): Promise<void> {
    const scope = currentCoverageScope();
    const terms = new Set(q.terms ?? []);
    await Promise.all(
      this.#sources.map(async (s, i) => {
        if (s.lookup) {
          const stats = await this.#ask(i, (x) => x.lookup!(q), undefined);
          if (stats && scope) scope.stats.set(i, { terms, stats });
        } else if (s.prepare) await this.#ask(i, (x) => x.prepare!(q), undefined);
      }),
    );
  }

  /** Remote shards answer a query's arms in one call each (`planArms`). */
  get gathersArms(): boolean {
    return this.#sources.length > 0 && this.#sources.every((s) => s.arms !== undefined);
  }

  /**
   * Sends each shard the query's arms at once (after summing the statistics the text arm scores with); the arms' calls
   * that follow (by the plan's filter) read these answers.
   */
  planArms(plan: ArmsPlan): void {
    if (!this.gathersArms) return;
    // The text arm asks each shard for its share of k (`shardShareOfTop`), unless the vector arm's run hangs on the
    // shard's text candidates reaching k (`textDistances`).
    const depth = plan.text && !plan.textDistances ? shardShareOfTop(plan.k, this.#sources.length) : plan.k;
    const stats = plan.text ? this.#corpusStats(textTerms(plan.text)) : Promise.resolve(undefined);
    stats.catch(() => undefined); // read by the answers below and by a text arm asking a shard again
    const answers = (async () => {
      const summed = await stats;
      // The shards score their text candidates' titles (from the term ids they hold) with the index's title statistics.
      const titles = plan.text && plan.titleTerms.length > 0 ? this.#titleCorpus(plan.titleTerms) : null;
      if (titles) this.#titleSent.set(plan.titleTerms, titles);
      const req: ShardArms = {
        ...plan,
        ...(summed ? { stats: summed } : {}),
        ...(depth < plan.k ? { textK: depth } : {}),
        ...(titles ? { titleCorpus: titles } : {}),
      };
      return Promise.all(
        this.#sources.map(async (_, i) => {
          if (this.#holdsNoCandidate(i, plan)) return { text: [] };
          const a = await this.#ask(i, (s) => s.arms!(req), NO_ARMS);
          this.#tag(a.text ?? [], i);
          this.#tag(a.scan ?? [], i);
          this.#tag(a.vector ?? [], i);
          if (plan.vector && a.text && a.distances)
            a.text.forEach((r, j) => this.#distances.set(r, { vector: plan.vector!, distance: a.distances![j] ?? null }));
          return a;
        }),
      );
    })();
    answers.catch(() => undefined); // read by the arms' calls
    this.#plans.set(plan.filter, { plan, answers, depth, stats });
  }

  /**
   * Whether shard `i` can give no candidate to a query whose one arm is the text arm: its `lookup` for this query
   * (its own statistics, of the version it serves) counts no live passage holding any term of one of the query's
   * required groups, and a text candidate holds a term of each. Its `arms` call is then not made (its answer is
   * known: no text candidate), one round trip fewer for a query of rare required words.
   */
  #holdsNoCandidate(i: number, plan: ArmsPlan): boolean {
    if (!plan.text || plan.scan || plan.vector) return false;
    const held = currentCoverageScope()?.stats.get(i);
    if (!held) return false;
    return plan.text.must.some((group) => group.length > 0 && group.every((t) => held.terms.has(t) && held.stats.df.get(t) === 0));
  }

  /** The planned answers of the query whose filter is `filter`, when `check` says the call is the one planned. */
  #planned(filter: PassageFilter, check: (p: ArmsPlan) => boolean): Promise<ShardArmsAnswer[]> | null {
    const held = this.#plans.get(filter);
    return held && check(held.plan) ? held.answers : null;
  }

  /**
   * The index's top `k` text candidates from each shard's first answer (`lists[i]`, asked for its best `depth`), exact:
   * a shard that gave `depth` may hold more, all scoring at most its lowest given; when that lowest reaches the
   * merged k-th score (or fewer than k were merged), some of them could still be among the index's k, and that shard
   * is asked `again` for its k. Otherwise every candidate scoring at least the k-th is in the lists already, and the
   * merge takes what one index would (ties by passage key).
   */
  async #textTop(
    lists: readonly (readonly TextRow[])[],
    depth: number,
    k: number,
    again: (i: number) => Promise<TextRow[]>,
  ): Promise<TextRow[]> {
    const merged = mergeTop(lists, k, byScore);
    if (depth >= k) return merged;
    const kth = merged.length >= k ? merged[k - 1]!._score : -Infinity;
    const redo = lists.flatMap((l, i) => (l.length >= depth && l.reduce((m, r) => Math.min(m, r._score), Infinity) >= kth ? [i] : []));
    if (redo.length === 0) return merged;
    const full = [...lists];
    await Promise.all(redo.map(async (i) => (full[i] = await again(i))));
    return mergeTop(full, k, byScore);
  }

  hostIdsUnder(domain: string): number[] {
    return [...new Set(this.#asked().flatMap((i) => this.#sources[i]!.hostIdsUnder(domain)))];
  }

  hasLang(lang: string): boolean {
    return this.#asked().some((i) => this.#sources[i]!.hasLang(lang));
  }

  /**
   * Each asked shard's statistics of `terms`, summed (a shard left out of the query counts nothing): those its
   * `lookup` gave for this query when they cover `terms`, else asked now.
   */
  async #corpusStats(terms: readonly string[]): Promise<CorpusStats> {
    const scope = currentCoverageScope();
    const parts = await Promise.all(
      this.#sources.map((_, i) => {
        const held = scope?.stats.get(i);
        if (held && terms.every((t) => held.terms.has(t))) return scope!.missing.has(i) ? NO_STATS : held.stats;
        return this.#ask(i, (s) => s.corpusStats(terms), NO_STATS);
      }),
    );
    return sumCorpusStats(parts, terms);
  }

  /** BM25 idf of each term over the whole index (the shards' statistics summed). */
  async termIdf(terms: readonly string[]): Promise<number[]> {
    const stats = await this.#corpusStats(terms);
    return terms.map((t) => bm25Idf(stats.docs, stats.df.get(t) ?? 0));
  }

  titleScore(queryTerms: readonly string[], row: Pick<PassageHit, 'page_ref' | 'title' | 'lang' | '_titleIds'>): number {
    const corpus = this.#titleCorpus(queryTerms);
    // A text candidate a shard scored with these very statistics (`planArms`) carries its title score.
    const given = (row as { _titleScore?: unknown })._titleScore;
    if (typeof given === 'number' && this.#titleSent.get(queryTerms) === corpus) return given;
    return this.#sources[this.#from.get(row) ?? 0]!.titleScore(queryTerms, row, corpus);
  }

  /** The title statistics of `queryTerms` summed over the asked shards (once per query and writes). */
  #titleCorpus(queryTerms: readonly string[]): TitleCorpus {
    let held = this.#titleCorpora.get(queryTerms);
    if (held?.writes !== this.#writes) {
      held = {
        corpus: sumTitleCorpus(
          this.#asked().map((i) => this.#sources[i]!.titleCorpus(queryTerms)),
          queryTerms,
        ),
        writes: this.#writes,
      };
      this.#titleCorpora.set(queryTerms, held);
    }
    return held.corpus;
  }

  async textCandidates(
    text: TextQuery,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[] = [],
  ): Promise<(PassageHit & { _score: number })[]> {
    const held = this.#plans.get(filter);
    const planned = this.#planned(filter, (p) => p.text === text && p.k === k && p.textExtra === extra);
    if (planned && held) {
      const lists = (await planned).map((a) => a.text ?? []);
      const stats = await held.stats;
      return this.#textTop(lists, held.depth, k, async (i) =>
        this.#tag(await this.#ask(i, (s) => s.textCandidates(text, filter, k, extra, stats), []), i),
      );
    }
    const stats = await this.#corpusStats(textTerms(text));
    const ask = async (i: number, n: number) =>
      this.#tag(await this.#ask(i, (s) => s.textCandidates(text, filter, n, extra, stats), []), i);
    const depth = shardShareOfTop(k, this.#sources.length);
    const lists = await Promise.all(this.#sources.map((_, i) => ask(i, depth)));
    return this.#textTop(lists, depth, k, (i) => ask(i, k));
  }

  async vectorDistances(vector: Float32Array, passages: readonly PassageKey[]): Promise<Map<string, number>> {
    // The distances of text candidates their shards gave with them (`planArms`), when they cover every passage.
    const known = passages.map((p) => this.#distances.get(p));
    if (known.every((d) => d?.vector === vector)) {
      const out = new Map<string, number>();
      passages.forEach((p, i) => {
        const d = known[i]!.distance;
        if (d !== null) out.set(passageKey(p), d);
      });
      return out;
    }
    return this.#rows(passages, (s, part) => s.vectorDistances(vector, part));
  }

  async vectorCandidates(
    vector: Float32Array,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[] = [],
    minSimilarity?: number,
  ): Promise<(PassageHit & { _distance: number })[]> {
    const planned = this.#planned(
      filter,
      (p) => p.vector === vector && p.k === k && p.vectorExtra === extra && p.minSimilarity === minSimilarity,
    );
    const answers = planned ? await planned : null;
    // A shard that ran the nearest-neighbour search with its text arm gave it; the others are asked now.
    const lists = await Promise.all(
      this.#sources.map(
        async (_, i) =>
          answers?.[i]?.vector ?? this.#tag(await this.#ask(i, (s) => s.vectorCandidates(vector, filter, k, extra, minSimilarity), []), i),
      ),
    );
    return mergeTop(lists, k, (a, b) => a._distance - b._distance);
  }

  async scanCandidates(filter: PassageFilter, k: number, extra: readonly MatchColumn[] = []): Promise<PassageHit[]> {
    const planned = this.#planned(filter, (p) => p.scan && p.k === k && p.vectorExtra === extra);
    if (planned)
      return mergeTop(
        (await planned).map((a) => a.scan ?? []),
        k,
        () => 0,
      );
    const lists = await Promise.all(
      this.#sources.map(async (_, i) => this.#tag(await this.#ask(i, (s) => s.scanCandidates(filter, k, extra), []), i)),
    );
    return mergeTop(lists, k, () => 0);
  }

  passageRows(keys: readonly PassageKey[]): Promise<Map<string, PassageRow>> {
    return this.#rows(keys, (s, part) => s.passageRows(part));
  }

  resultRows(keys: readonly PassageKey[]): Promise<Map<string, ResultRow>> {
    return this.#rows(keys, (s, part) => s.resultRows(part));
  }

  /** `read` asked of each shard for its keys (`#byShard`), the answers in one map. */
  async #rows<R>(
    keys: readonly PassageKey[],
    read: (s: ShardSource, part: PassageKey[]) => Promise<Map<string, R>>,
  ): Promise<Map<string, R>> {
    const out = new Map<string, R>();
    const parts = await Promise.all(this.#byShard(keys).map(([i, part]) => this.#ask(i, (s) => read(s, part), new Map<string, R>())));
    for (const part of parts) for (const [k, r] of part) out.set(k, r);
    return out;
  }

  /** Marks each row with the shard it came from. */
  #tag<R extends object>(rows: R[], shard: number): R[] {
    for (const r of rows) this.#from.set(r, shard);
    return rows;
  }

  /**
   * Keys grouped by the shard that holds them. A key this index did not hand out (a copy of a candidate) is asked of
   * every shard by its page and ordinal, without its row id (row ids are a shard's own).
   */
  #byShard(keys: readonly PassageKey[]): [number, PassageKey[]][] {
    const parts = this.#sources.map((): PassageKey[] => []);
    const unknown: PassageKey[] = [];
    for (const k of keys) {
      const i = this.#from.get(k);
      if (i !== undefined) {
        parts[i]!.push(k);
        continue;
      }
      const { _rowid: _shardsOwn, ...byKey } = k;
      unknown.push(byKey);
    }
    if (unknown.length > 0) for (const p of parts) p.push(...unknown);
    return parts.flatMap((p, i): [number, PassageKey[]][] => (p.length > 0 ? [[i, p]] : []));
  }

  // --- writes (PageSink) ---

  upsertPage(page: PageInput): Promise<void> {
    return this.upsertPages([page]);
  }

  /**
   * Each page to its shard, one batch per shard, the shards' batches concurrently. A page_ref is allocated for one
   * (final, normalised) URL (state's documents), so a page's replacement goes to the shard that holds it.
   */
  async upsertPages(pages: readonly PageInput[]): Promise<void> {
    if (this.remote) throw new Error('an index read through searchers is not written');
    const parts = this.#shards.map((): PageInput[] => []);
    for (const p of pages) parts[this.#slotFor(p.url)]!.push(p);
    try {
      await Promise.all(parts.map((part, i) => (part.length > 0 ? this.#shards[i]!.upsertPages(part) : undefined)));
    } finally {
      this.#writes++;
    }
  }

  /**
   * Removes a page from its shard: the one of `url` when given, else whichever holds it (the page_ref alone does not
   * say which: each shard held here is asked).
   */
  async removePage(pageRef: number, url?: string): Promise<void> {
    try {
      if (url !== undefined) await this.#shards[this.#slotFor(url)]!.removePage(pageRef);
      else await Promise.all(this.#shards.map((s) => s.removePage(pageRef)));
    } finally {
      this.#writes++;
    }
  }

  // --- pages, sites, images ---

  async getPage(pageRef: number): Promise<StoredPage | null> {
    for (const page of await Promise.all(this.#sources.map((_, i) => this.#ask(i, (s) => s.getPage(pageRef), null)))) if (page) return page;
    return null;
  }

  async pagePassages(
    pageRef: number,
    offset: number,
    limit: number,
  ): Promise<{ page: StoredPage; passages: StoredPassage[]; total: number } | null> {
    for (const res of await Promise.all(this.#sources.map((_, i) => this.#ask(i, (s) => s.pagePassages(pageRef, offset, limit), null))))
      if (res) return res;
    return null;
  }

  /** A host's pages are spread over the shards: their near-copies are counted over all of them, as one index would. */
  async nearCopyCount(host: string): Promise<number> {
    const prints = (await Promise.all(this.#sources.map((_, i) => this.#ask(i, (s) => s.hostPrints(host), [])))).flat();
    return countNearCopies(prints.sort((a, b) => a.pageRef - b.pageRef));
  }

  /**
   * Each shard's best `limit` images by alt-text BM25, merged by score. LanceDB's image index scores with its own
   * shard's statistics, so this order is close to one index's, not exact (images are not part of the exact contract).
   */
  async searchImages(text: string, limit: number): Promise<ImageHit[]> {
    const lists = await Promise.all(this.#sources.map((_, i) => this.#ask(i, (s) => s.scoredImages(text, limit), [])));
    return lists
      .flat()
      .sort((a, b) => b.score - a.score || a.pageRef - b.pageRef || (a.src < b.src ? -1 : a.src > b.src ? 1 : 0))
      .slice(0, Math.max(1, Math.min(100, Math.floor(limit))))
      .map(({ score: _score, ...hit }) => hit);
  }

  // --- upkeep, state, lifecycle ---

  rankingMode(): RankingMode {
    if (this.#shards[0]) return this.#shards[0].rankingMode();
    // Over searchers: what retrieval would pick with the embedder the shards serve with.
    const e = this.embedder;
    return e ? (e.kind === 'hashing-stand-in' ? 'hybrid-rrf-hashing' : 'hybrid-rrf') : 'bm25';
  }

  async stats(): Promise<IndexStats> {
    const asked = await Promise.all(this.#sources.map((_, i) => this.#ask(i, (s) => s.stats(), null)));
    const all = asked.filter((s): s is IndexStats => s !== null);
    if (all.length === 0) throw new Error('no shard answered');
    const sum = (f: (s: IndexStats) => number) => all.reduce((n, s) => n + f(s), 0);
    return {
      ...all[0]!,
      pages: sum((s) => s.pages),
      passages: sum((s) => s.passages),
      vectors: sum((s) => s.vectors),
      images: sum((s) => s.images),
      rankingMode: this.rankingMode(),
      vectorIndex: all.every((s) => s.vectorIndex),
    };
  }

  /** The sum of the shards' passages table versions: moves with every commit of any shard (metrics, readiness). */
  async version(): Promise<number> {
    return (await Promise.all(this.#sources.map((_, i) => this.#ask(i, (s) => s.version(), 0)))).reduce((a, b) => a + b, 0);
  }

  servingVersion(): Promise<number> {
    return this.version();
  }

  async textEngineReady(): Promise<void> {
    await Promise.all(this.#shards.map((s) => s.textEngineReady()));
  }

  /** The shards' postings together: sizes summed, version summed once every shard has one (null: none has postings). */
  textPostingsStats(): TextEngineStats | null {
    const all = this.#shards.map((s) => s.textPostingsStats());
    if (all.length === 0 || all.some((s) => s === null)) return null;
    const stats = all as TextEngineStats[];
    const version = stats.some((s) => s.version === null) ? null : stats.reduce((n, s) => n + s.version!, 0);
    const sum = (f: (s: TextEngineStats) => number) => stats.reduce((n, s) => n + f(s), 0);
    return {
      ...stats[0]!,
      version,
      docs: sum((s) => s.docs),
      live: sum((s) => s.live),
      terms: sum((s) => s.terms),
      postings: sum((s) => s.postings),
      vectors: sum((s) => s.vectors),
    };
  }

  rowCacheStats(): { rows: number; bytes: number; maxBytes: number } {
    const all = this.#shards.map((s) => s.rowCacheStats());
    return {
      rows: all.reduce((n, s) => n + s.rows, 0),
      bytes: all.reduce((n, s) => n + s.bytes, 0),
      maxBytes: all.reduce((n, s) => n + s.maxBytes, 0),
    };
  }

  async optimize(): Promise<void> {
    await Promise.all(this.#shards.map((s) => s.optimize()));
  }

  /** The shards' re-embedding progress together (null: none has one). */
  async reembedProgress(): Promise<ReembedProgress | null> {
    const all = (await Promise.all(this.#shards.map((s) => s.reembedProgress()))).filter((p): p is ReembedProgress => p !== null);
    if (all.length === 0) return null;
    return { ...all[0]!, done: all.reduce((n, p) => n + p.done, 0), total: all.reduce((n, p) => n + p.total, 0) };
  }

  get storedVectorModel(): string | null {
    if (!this.#shards[0]) return null;
    const first = this.#shards[0].storedVectorModel;
    return this.#shards.every((s) => s.storedVectorModel === first) ? first : null;
  }

  async reembed(opts: ReembedRunOptions = {}): Promise<'done' | 'stopped' | 'none'> {
    const res = await Promise.all(this.#shards.map((s) => s.reembed(opts)));
    return res.includes('stopped') ? 'stopped' : res.includes('done') ? 'done' : 'none';
  }

  startReembed(opts: Omit<ReembedRunOptions, 'signal'> = {}): void {
    for (const s of this.#shards) s.startReembed(opts);
  }

  /** Calls `fn` once every shard's vector arm serves (each shard finishes its own re-embedding). */
  onVectorsReady(fn: (e: Embedder) => void): () => void {
    const offs = this.#shards.map((s) =>
      s.onVectorsReady((e) => {
        if (this.embedder === e) fn(e);
      }),
    );
    return () => offs.forEach((off) => off());
  }

  /** Shard commits are not forwarded: a sharded index has no search threads yet (main.ts). */
  onPassageCommit(_fn: (c: PassageCommit) => void): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    await Promise.all(this.#shards.map((s) => s.close()));
    await this.#onClose();
  }

  /** The shards themselves (tests, diagnostics). */
  get shards(): readonly PassageIndex[] {
    return this.#shards;
  }
}
