/**
 * Title-field BM25 computed in process (the title boost), so it costs no index call.
 * The statistics are exact: their owner (the text engine's snapshot) adds a page's title terms when the page gets
 * live rows and removes them when it loses its last one or its title changes, so they always equal a count of the
 * titles of the pages it holds, whatever order the writes came in.
 */
import { analyze, titleAnalysis } from '../../retrieval/analyzer.js';
import { DenseSlots } from './dense-slots.js';
import type { TitleCorpus } from '../../retrieval/engine-seam.js';

/** A title's terms: the index's own analysis (analyzer.ts) in the page's language. */
export const titleTerms = (title: string, lang: string | null | undefined): string[] => analyze(title, titleAnalysis(title, lang));

/**
 * Term frequencies of candidate titles, cached per language: a query scores the titles of all its BM25 candidates
 * (hundreds), and the same pages come back for related queries. Bounded; cleared whole when full (cheap, and the hot
 * titles return at once).
 */
const SCORED_CACHE_LIMIT = 50_000;
interface TitleTf {
  readonly tf: ReadonlyMap<string, number>;
  readonly length: number;
}
const scoredTitles = new Map<string, Map<string, TitleTf>>();
let scoredCount = 0;
function candidateTf(title: string, lang: string | null | undefined): TitleTf {
  const l = titleAnalysis(title, lang);
  let byTitle = scoredTitles.get(l);
  if (!byTitle) scoredTitles.set(l, (byTitle = new Map()));
  let entry = byTitle.get(title);
  if (entry === undefined) {
    const terms = analyze(title, l);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    entry = { tf, length: terms.length };
    if (scoredCount >= SCORED_CACHE_LIMIT) {
      scoredTitles.clear();
      scoredCount = 0;
      scoredTitles.set(l, (byTitle = new Map()));
    }
    byTitle.set(title, entry);
    scoredCount++;
  }
  return entry;
}

/**
 * Title terms by id (this thread's, for every title the postings hold): a page's title kept as ids is scored with a
 * few typed-array reads per term instead of a string map lookup (a query scores hundreds of candidate titles of a dozen
 * terms or more). Grows with the titles' vocabulary; never renumbers.
 */
const termIds = new Map<string, number>();
/** `termIds` the other way: what a title's ids are saved as in an engine image (ids are this thread's own). */
const termsById: string[] = [];

/**
 * A title's analysed term ids packed in a string (one UTF-16 unit below 2^15, two up to 2^30): one object with its
 * data inline, where an `Int32Array` cost two cache misses per title over hundreds of candidates.
 */
export type TitleIds = string;

const ID_HIGH = 0x8000;
/** Ids at or above this cannot be packed (a billion distinct title terms would not fit in memory anyway). */
const ID_LIMIT = 2 ** 30;

/** A title's analysed terms as ids (new terms get the next ids), packed (`TitleIds`). */
export function titleTermIds(terms: readonly string[]): TitleIds {
  const units: number[] = [];
  for (const t of terms) {
    let id = termIds.get(t);
    if (id === undefined) {
      if (termIds.size >= ID_LIMIT) throw new RangeError('title-stats: too many distinct title terms');
      termIds.set(t, (id = termIds.size));
      termsById.push(t);
    }
    if (id < ID_HIGH) units.push(id);
    else units.push(ID_HIGH | (id >>> 15), id & (ID_HIGH - 1));
  }
  // In slices: a call's arguments are bounded, and a title may be long.
  let out = '';
  for (let i = 0; i < units.length; i += 4096) out += String.fromCharCode(...units.slice(i, i + 4096));
  return out;
}

/** The terms of a `TitleIds` of this thread, in order (`titleTermIds` gives them back as ids in any thread). */
export function titleTermsOfIds(ids: TitleIds): string[] {
  return unpackTitleIds(ids).map((id) => termsById[id]!);
}

/** The ids a `TitleIds` holds, in order. */
export function unpackTitleIds(ids: TitleIds): number[] {
  const out: number[] = [];
  for (let k = 0; k < ids.length; k++) {
    const c = ids.charCodeAt(k);
    out.push(c < ID_HIGH ? c : ((c & (ID_HIGH - 1)) << 15) | ids.charCodeAt(++k));
  }
  return out;
}

/**
 * Per term id, its slot in the query that marked the ids last (`markQuery`: one use of the slots per marking), so a
 * title term is one of that query's when it has a slot.
 */
const querySlots = new DenseSlots();

/** BM25 parameters (the same defaults as LanceDB's full-text index). */
const K1 = 1.2;
const B = 0.75;

/** A page title and its language. */
export interface TitleInput {
  readonly title: string;
  readonly lang: string | null;
}

/** Title statistics as plain data: an engine image carries them, so a reader that loads one analyses no title. */
export interface TitleStatsState {
  readonly titles: number;
  readonly terms: number;
  /** Terms and their document frequencies, in the same order. */
  readonly dfTerms: readonly string[];
  readonly dfCounts: readonly number[];
}

export class TitleStats {
  readonly #df = new Map<string, number>();
  #titles = 0;
  #terms = 0;
  /** Bumped by every change: a query's cached idf (`#lastQuery`) is computed again after one. */
  #changes = 0;

  /** Statistics of a set of titles (a full count). */
  static of(titles: Iterable<TitleInput>): TitleStats {
    const s = new TitleStats();
    for (const t of titles) s.add(t.title, t.lang);
    return s;
  }

  /** The statistics as they are now (`fromState` gives them back). */
  exportState(): TitleStatsState {
    return { titles: this.#titles, terms: this.#terms, dfTerms: [...this.#df.keys()], dfCounts: [...this.#df.values()] };
  }

  /** Statistics saved by `exportState`. */
  static fromState(state: TitleStatsState): TitleStats {
    const s = new TitleStats();
    s.#titles = state.titles;
    s.#terms = state.terms;
    for (let i = 0; i < state.dfTerms.length; i++) s.#df.set(state.dfTerms[i]!, state.dfCounts[i]!);
    return s;
  }

  /** Counts one more title. */
  add(title: string, lang: string | null | undefined): void {
    this.addTerms(titleTerms(title, lang));
  }

  /** Counts one more title, given as its analysed terms (`titleTerms`). */
  addTerms(terms: readonly string[]): void {
    this.#titles++;
    this.#terms += terms.length;
    this.#changes++;
    for (const t of new Set(terms)) this.#df.set(t, (this.#df.get(t) ?? 0) + 1);
  }

  /**
   * Uncounts a title counted before (its analysed terms, as they were added). A term no title holds any more is
   * dropped, so the statistics are those of a count of the titles left.
   */
  removeTerms(terms: readonly string[]): void {
    this.#titles--;
    this.#terms -= terms.length;
    this.#changes++;
    for (const t of new Set(terms)) {
      const n = (this.#df.get(t) ?? 0) - 1;
      if (n > 0) this.#df.set(t, n);
      else this.#df.delete(t);
    }
  }

  /** The statistics `score` reads for `terms` (a sharded index sums them over its shards and scores with the sum). */
  corpus(terms: readonly string[]): TitleCorpus {
    return { titles: this.#titles, terms: this.#terms, df: new Map(terms.map((t) => [t, this.#df.get(t) ?? 0])) };
  }

  /** Titles counted and their terms in all: what a delta segment checks its replay by (engine-delta.ts). */
  get totals(): { titles: number; terms: number } {
    return { titles: this.#titles, terms: this.#terms };
  }

  /** Number of titles counted. */
  get size(): number {
    return this.#titles;
  }

  /**
   * Per query (the same terms array for all its candidates): its distinct terms' positions and idf, and a scratch
   * array of their frequencies in the title being scored (zeroed again after each title).
   */
  #lastQuery: {
    terms: readonly string[];
    changes: number;
    corpus: TitleCorpus | undefined;
    slot: Map<string, number>;
    idf: Float64Array;
    tf: Uint32Array;
    seen: Uint32Array;
    /** The use of `querySlots` that holds its terms' slots, and the vocabulary size when they were marked. */
    stamp: number;
    vocabulary: number;
  } | null = null;

  /**
   * BM25 of `title` (in `lang`) for analysed query terms (duplicates once); `ids`: the title's term ids when held.
   * Walks the title's few terms rather than every query×title pair; both paths sum in the same order, same bits.
   */
  score(queryTerms: readonly string[], title: string, lang: string | null | undefined, ids?: TitleIds, corpus?: TitleCorpus): number {
    const titles = corpus ? corpus.titles : this.#titles;
    const dfs = corpus ? corpus.df : this.#df;
    if (queryTerms.length === 0 || titles === 0) return 0;
    const cached = ids === undefined ? candidateTf(title, lang) : null;
    if (ids === undefined ? cached!.length === 0 : ids.length === 0) return 0;
    let q = this.#lastQuery;
    if (q?.terms !== queryTerms || q.changes !== this.#changes || q.corpus !== corpus) {
      const distinct = [...new Set(queryTerms)];
      const idf = Float64Array.from(distinct, (t) => {
        const df = Math.min(dfs.get(t) || 1, titles);
        return Math.log(1 + (titles - df + 0.5) / (df + 0.5));
      });
      const slot = new Map(distinct.map((t, i) => [t, i]));
      const tf = new Uint32Array(distinct.length);
      q = this.#lastQuery = {
        terms: queryTerms,
        changes: this.#changes,
        corpus,
        slot,
        idf,
        tf,
        seen: new Uint32Array(distinct.length),
        stamp: 0,
        vocabulary: -1,
      };
    }
    const avg = (corpus ? corpus.terms : this.#terms) / titles;
    const { slot, idf, tf } = q;
    let score = 0;
    if (ids !== undefined) {
      // Marked again when another query marked since, or titles brought new terms (one of them may be a query term).
      if (q.stamp !== querySlots.generation || q.vocabulary !== termIds.size) markQuery(q);
      const seen = q.seen;
      let n = 0;
      let length = 0;
      for (let k = 0; k < ids.length; k++) {
        const c = ids.charCodeAt(k);
        const i = querySlots.get(c < ID_HIGH ? c : ((c & (ID_HIGH - 1)) << 15) | ids.charCodeAt(++k));
        length++;
        if (i >= 0 && tf[i]!++ === 0) seen[n++] = i;
      }
      const norm = K1 * (1 - B + (B * length) / Math.max(avg, 1e-9));
      for (let j = 0; j < n; j++) {
        const i = seen[j]!;
        const f = tf[i]!;
        tf[i] = 0;
        score += (idf[i]! * f * (K1 + 1)) / (f + norm);
      }
    } else {
      const norm = K1 * (1 - B + (B * cached!.length) / Math.max(avg, 1e-9));
      for (const [t, f] of cached!.tf) {
        const i = slot.get(t);
        if (i !== undefined) score += (idf[i]! * f * (K1 + 1)) / (f + norm);
      }
    }
    return score;
  }
}

/** Marks a query's distinct terms (those any title has) with their slots, in a new use of `querySlots`. */
function markQuery(q: { slot: Map<string, number>; stamp: number; vocabulary: number }): void {
  querySlots.begin();
  for (const [t, i] of q.slot) {
    const id = termIds.get(t);
    if (id !== undefined) querySlots.set(id, i);
  }
  q.stamp = querySlots.generation;
  q.vocabulary = termIds.size;
}
