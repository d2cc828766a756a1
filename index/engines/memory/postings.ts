/**
 * An in-process inverted index over passages' `search_text`: the one BM25 engine (docs/architecture.md), walked in
 * the caller's thread to avoid LanceDB's fixed per-query cost. CSR segments and tombstones; statistics over the live
 * documents only (not Lucene's: its deleted documents count until merged); BM25 with Lucene's formula, k1 1.2, b 0.75.
 */
import { LoopBudget } from '../../../event-loop.js';
import { sortByScore } from '../../retrieval/score-sort.js';
import { kthLargest, TopK } from './top-k.js';
import { grow } from './typed-arrays.js';
import { RowTable } from './row-table.js';
import { TermTable } from './term-table.js';
import type { CorpusStats, TextQuery } from '../../retrieval/engine-seam.js';

/** Terms merged between two looks at the clock (a term's postings are copied as two typed-array blocks). */
const MERGE_TERMS_PER_CHECK = 1024;
const K1 = 1.2;
const B = 0.75;
/**
 * A term's tombstoned holders are brought up to date by looking each document removed since up in its postings (a
 * binary search) while that costs less than a walk over all of them: one lookup is taken as this many steps of a walk.
 */
const LOOKUP_STEPS = 16;

export type { TextQuery } from '../../retrieval/engine-seam.js';

/** BM25's inverse document frequency (Lucene's, never negative) of a term `df` of `docs` documents hold. */
export function bm25Idf(docs: number, df: number): number {
  return Math.log(1 + (docs - df + 0.5) / (df + 0.5));
}

export interface TextHit {
  /** The Lance row id of the passage. */
  readonly rowId: number;
  /** The document id `add` returned for it. */
  readonly doc: number;
  readonly score: number;
  /**
   * Which of the query's `probe` terms the document holds, as far as the search itself found out while scoring it:
   * bit i stands for `probe[i]` (i < 31) and is meaningful when set in `known` (a term of the search's own groups or
   * optional terms). The other probe terms (excluded words) are looked up by `probePresence`.
   */
  readonly held: number;
  readonly known: number;
}

export interface Segment {
  /** Term id → [offsets[t], offsets[t + 1]) in docs / tfs. Terms unseen in the segment have an empty range. */
  readonly offsets: Uint32Array;
  readonly docs: Uint32Array;
  readonly tfs: Uint16Array;
  /** Its documents are those from `lo` up to `hi` (excluded): segments hold disjoint ascending ranges. */
  readonly lo: number;
  readonly hi: number;
}

/** The postings' state (`Postings.exportState`, `Postings.fromState`). */
export interface PostingsState {
  /** The terms in id order: a list, or a table read in place (an engine image's, shared with other threads). */
  readonly terms: readonly string[] | TermTable;
  readonly segments: readonly Segment[];
  readonly rowIds: Float64Array;
  readonly lengths: Uint32Array;
  readonly dead: Uint8Array;
  readonly df: Uint32Array;
  readonly totalLength: number;
  readonly bitsets: readonly (readonly [number, Uint32Array])[];
  /** Row id → document over `rowIds` (`RowTable.slots`), when the state brings it (an image does); else built at load. */
  readonly rowSlots?: Uint32Array;
}

/** Documents added in one batch before they become a segment. */
class SegmentBuilder {
  /** `lo`: the first document added to it. */
  constructor(readonly lo: number) {}
  termIds = new Uint32Array(1024);
  docs = new Uint32Array(1024);
  tfs = new Uint16Array(1024);
  n = 0;

  push(term: number, doc: number, tf: number): void {
    if (this.n === this.termIds.length) {
      this.termIds = grow(this.termIds, this.n + 1);
      this.docs = grow(this.docs, this.n + 1);
      this.tfs = grow(this.tfs, this.n + 1);
    }
    this.termIds[this.n] = term;
    this.docs[this.n] = doc;
    this.tfs[this.n] = tf;
    this.n++;
  }

  /**
   * Counting sort by term id (doc ids stay ascending within a term: they were pushed in doc order); `hi`: one past the
   * last document added to it.
   */
  seal(termCount: number, hi: number): Segment {
    const offsets = new Uint32Array(termCount + 1);
    for (let i = 0; i < this.n; i++) offsets[this.termIds[i]! + 1]!++;
    for (let t = 0; t < termCount; t++) offsets[t + 1]! += offsets[t]!;
    const fill = offsets.slice(0, termCount);
    const docs = new Uint32Array(this.n);
    const tfs = new Uint16Array(this.n);
    for (let i = 0; i < this.n; i++) {
      const at = fill[this.termIds[i]!]!++;
      docs[at] = this.docs[i]!;
      tfs[at] = this.tfs[i]!;
    }
    return { offsets, docs, tfs, lo: this.lo, hi };
  }
}

/** Copies postings `s`..`e` of a segment to `at` (short runs element by element: no array view per run). */
function copyPostings(seg: Segment, s: number, e: number, docs: Uint32Array, tfs: Uint16Array, at: number): void {
  if (e - s > 32) {
    docs.set(seg.docs.subarray(s, e), at);
    tfs.set(seg.tfs.subarray(s, e), at);
  } else
    for (let i = s; i < e; i++, at++) {
      docs[at] = seg.docs[i]!;
      tfs[at] = seg.tfs[i]!;
    }
}

/** Sets the bits of the documents `docs[from, to)` in `bits`. */
function setBits(bits: Uint32Array, docs: Uint32Array, from: number, to: number): void {
  for (let p = from; p < to; p++) {
    const d = docs[p]!;
    bits[d >>> 5]! |= 1 << (d & 31);
  }
}

/** Reachable documents per place of the top k up to which optional terms are scored term at a time (`#accumulates`). */
const ACCUMULATE_UP_TO = 64;

/**
 * Which terms also keep a bitset of their documents: those in at least `share` of documents and `minDf` at least,
 * so a required group is checked by one bit per candidate. Released below half of `share`, so none outgrows its postings.
 * `walkRatio`: match a segment on bitsets when that costs less than this many times the lead group's postings.
 */
export interface DenseRule {
  readonly share: number;
  readonly minDf: number;
  readonly walkRatio: number;
}
const DENSE: DenseRule = { share: 1 / 32, minDf: 1024, walkRatio: 16 };

export class Postings {
  /**
   * Term → id: the loaded state's terms read in place (`TermTable`, ids below its length), then the terms first seen
   * since (`#termIds`).
   */
  #baseTerms: TermTable | null = null;
  #baseTermCount = 0;
  readonly #termIds = new Map<string, number>();
  #segments: Segment[] = [];
  #builder: SegmentBuilder | null = null;
  /** Per document: its row id, length in terms, and whether it is live. */
  #rowIds: Float64Array = new Float64Array(1024);
  /**
   * Row id → live document: the loaded state's rows read in place (`RowTable`: valid for a document while its row id
   * and liveness are unchanged), then `#byRow` for documents added or re-keyed since.
   */
  #rowTable: RowTable | null = null;
  readonly #byRow = new Map<number, number>();
  /** Whether row ids, tombstones and document frequencies are still the loaded state's (shared): copied before a write. */
  #borrowedArrays = false;
  /** Work done at load that grows with the index (terms and rows put in maps, elements copied): 0 for an image. */
  #loadWork = 0;
  #lengths: Uint32Array = new Uint32Array(1024);
  #dead: Uint8Array = new Uint8Array(1024);
  #docs = 0;
  #deadCount = 0;
  #totalLength = 0;
  /** Total length of the tombstoned documents: the statistics are the live documents' (`#liveDf`). */
  #deadLength = 0;
  /** The documents tombstoned since this object was made, in removal order (a tombstone is never lifted). */
  #removed = new Uint32Array(0);
  #removedCount = 0;
  /** Per term: how many tombstoned documents hold it, counted up to `#removed`'s first `#deadHoldingAt − 1` (0: never). */
  #deadHolding = new Uint32Array(0);
  #deadHoldingAt = new Uint32Array(0);
  /** Per term: document frequency over every segment, tombstones included (`#liveDf` leaves them out). */
  #df: Uint32Array = new Uint32Array(1024);
  /** BM25 length normaliser per document, valid for `#dnDocs` documents; `#generation` moves when it is recomputed. */
  #dn = new Float64Array(0);
  #dnDocs = -1;
  /** The average document length `#dn` was computed with (this index's own, or a sharded index's global one). */
  #dnAvgdl = Number.NaN;
  #generation = 0;
  /** Per term: tf / (tf + dn) upper bound and the generation it was computed for. */
  #maxFracs = new Float64Array(0);
  #maxFracGen = new Uint32Array(0);
  readonly #maxTermLength: number;
  /** See `#accumulates` (0: always MaxScore). */
  readonly #accumulateUpTo: number;
  /** Term-at-a-time scratch (`#accumulate`): a score and probe bits per document, and the documents touched. */
  #acc = new Float64Array(0);
  #accHeld = new Uint32Array(0);
  #touched = new Uint32Array(0);
  /** `#accumulate`'s copy of the reached documents' scores, which the k-th best's selection reorders. */
  #select = new Float64Array(0);
  /** `#matches`' scratch: the documents matched so far, and one group's. */
  #matchBits = new Uint32Array(0);
  #groupBits = new Uint32Array(0);
  /** Per dense term (`DenseRule`): bit d of the set is 1 when document d holds the term in a sealed segment. */
  readonly #bitsets = new Map<number, Uint32Array>();
  /** Dense terms whose bitset is a view of a loaded image (shared with other threads): copied before any change. */
  readonly #borrowed = new Set<number>();
  readonly #denseRule: DenseRule;

  /**
   * `accumulateUpTo`: see `#accumulates` (0: always MaxScore). `dense`: which terms keep a bitset and when a conjunction
   * is matched on them (`DENSE`; share 0 and minDf 1: every term; walkRatio 0: never, Infinity: whenever it can be).
   */
  constructor(opts: { maxTermLength?: number; accumulateUpTo?: number; dense?: DenseRule } = {}) {
    this.#maxTermLength = opts.maxTermLength ?? Infinity;
    this.#accumulateUpTo = opts.accumulateUpTo ?? ACCUMULATE_UP_TO;
    this.#denseRule = opts.dense ?? DENSE;
  }

  /** Documents ever added (tombstones included) and live. */
  get size(): { docs: number; live: number; terms: number; postings: number; segments: number } {
    return {
      docs: this.#docs,
      live: this.#docs - this.#deadCount,
      terms: this.#termCount,
      postings: this.#segments.reduce((s, g) => s + g.docs.length, 0) + (this.#builder?.n ?? 0),
      segments: this.#segments.length,
    };
  }

  /** A term's BM25 inverse document frequency, as scoring weighs it (a term no document holds: the largest). */
  idf(term: string): number {
    const id = this.#termId(term);
    return bm25Idf(this.#docs - this.#deadCount, id === undefined ? 0 : this.#liveDf(id));
  }

  /**
   * A term's document frequency among live documents. BM25's statistics are the live documents' only, so they do not
   * depend on when a tombstone was dropped (a rebuild, a compaction, a sync that found two versions at once): one index
   * scores alike whatever its history, and a sharded index's sums equal one index's. A term's tombstoned holders are
   * counted once, then kept up to date with the documents removed since (each looked up, or the postings walked again
   * when that is cheaper): a removal costs the next query a few lookups, not a walk of every query term's postings.
   */
  #liveDf(id: number): number {
    const df = this.#df[id] ?? 0;
    if (this.#deadCount === 0 || df === 0) return df;
    if (this.#deadHoldingAt.length <= id) {
      this.#deadHoldingAt = grow(this.#deadHoldingAt, id + 1);
      this.#deadHolding = grow(this.#deadHolding, id + 1);
    }
    const at = this.#deadHoldingAt[id]!;
    const upTo = this.#removedCount;
    if (at === upTo + 1) return df - this.#deadHolding[id]!;
    let n = 0;
    if (at > 0 && (upTo - (at - 1)) * LOOKUP_STEPS < df) {
      n = this.#deadHolding[id]!;
      for (let i = at - 1; i < upTo; i++) if (this.#tfOf(this.#removed[i]!, id) > 0) n++;
    } else {
      const dead = this.#dead;
      for (const seg of this.#segments) {
        if (id + 1 >= seg.offsets.length) continue;
        const end = seg.offsets[id + 1]!;
        for (let p = seg.offsets[id]!; p < end; p++) n += dead[seg.docs[p]!]!;
      }
    }
    this.#deadHolding[id] = n;
    this.#deadHoldingAt[id] = upTo + 1;
    return df - n;
  }

  /**
   * The statistics BM25 reads for `terms` (live documents and their total length, and each term's document frequency
   * among them): what a sharded index sums over its shards and hands back to `search` as `stats`.
   */
  corpusStats(terms: readonly string[]): CorpusStats {
    const df = new Map<string, number>();
    for (const t of terms) {
      const id = this.#termId(t);
      df.set(t, id === undefined ? 0 : this.#liveDf(id));
    }
    return { docs: this.#docs - this.#deadCount, totalLength: this.#totalLength - this.#deadLength, df };
  }

  /** The terms that keep a bitset of their documents (`DenseRule`), and the bytes those take. */
  get bitsets(): { terms: number; bytes: number } {
    let bytes = 0;
    for (const set of this.#bitsets.values()) bytes += set.byteLength;
    return { terms: this.#bitsets.size, bytes };
  }

  /** Whether a live document has this row id. */
  has(rowId: number): boolean {
    return this.#docOfRow(rowId) >= 0;
  }

  /** The live document with this row id (undefined: none, or tombstoned). */
  docOf(rowId: number): number | undefined {
    const d = this.#docOfRow(rowId);
    return d >= 0 ? d : undefined;
  }

  /** The live document with this row id, or -1. */
  #docOfRow(rowId: number): number {
    const d = this.#byRow.get(rowId);
    if (d !== undefined) return this.#dead[d] === 0 ? d : -1;
    const b = this.#rowTable?.find(rowId) ?? -1;
    return b >= 0 && this.#rowIds[b] === rowId && this.#dead[b] === 0 ? b : -1;
  }

  /** How many terms have ids. */
  get #termCount(): number {
    return this.#baseTermCount + this.#termIds.size;
  }

  /** A term's id, or undefined when no document added holds it. */
  #termId(term: string): number | undefined {
    return this.#baseTerms?.get(term) ?? this.#termIds.get(term);
  }

  /** Copies the loaded state's row ids, tombstones and document frequencies before the first write to them. */
  #ownArrays(): void {
    if (!this.#borrowedArrays) return;
    this.#rowIds = this.#rowIds.slice();
    this.#dead = this.#dead.slice();
    this.#df = this.#df.slice();
    this.#borrowedArrays = false;
  }

  /** Load work that grows with the index (`#loadWork`): 0 when the state was read in place. */
  get loadWork(): number {
    return this.#loadWork;
  }

  /** The Lance row id of a document. */
  rowIdOf(doc: number): number {
    return this.#rowIds[doc]!;
  }

  /** Whether document `doc` (an id `add` returned) is live. */
  isLive(doc: number): boolean {
    return doc < this.#docs && this.#dead[doc] === 0;
  }

  /** Row ids of the live documents, in the order they were added. */
  liveRowIds(): Float64Array {
    const out = new Float64Array(this.#docs - this.#deadCount);
    let j = 0;
    for (let d = 0; d < this.#docs; d++) if (this.#dead[d] === 0) out[j++] = this.#rowIds[d]!;
    return out;
  }

  /**
   * Adds a document: its Lance row id (not live already) and its analysed text (space-separated terms, analyzer.ts
   * `indexText`). Call `flush` after a batch to make the added documents searchable.
   */
  add(rowId: number, searchText: string): number {
    if (this.has(rowId)) throw new Error(`Postings.add: row id ${rowId} is already live`);
    this.#ownArrays();
    const doc = this.#docs++;
    this.#byRow.set(rowId, doc);
    this.#rowIds = grow(this.#rowIds, this.#docs);
    this.#lengths = grow(this.#lengths, this.#docs);
    this.#dead = grow(this.#dead, this.#docs);
    this.#rowIds[doc] = rowId;
    const builder = (this.#builder ??= new SegmentBuilder(doc));
    const counts = new Map<number, number>();
    let length = 0;
    const n = searchText.length;
    let i = 0;
    while (i < n) {
      while (i < n && searchText.charCodeAt(i) === 32) i++;
      let j = i;
      while (j < n && searchText.charCodeAt(j) !== 32) j++;
      if (j > i && j - i <= this.#maxTermLength) {
        const term = searchText.slice(i, j);
        let id = this.#termId(term);
        if (id === undefined) {
          id = this.#termCount;
          this.#termIds.set(term, id);
          this.#df = grow(this.#df, id + 1);
        }
        counts.set(id, (counts.get(id) ?? 0) + 1);
        length++;
      }
      i = j;
    }
    this.#lengths[doc] = length;
    this.#totalLength += length;
    for (const [id, tf] of counts) {
      builder.push(id, doc, Math.min(tf, 65_535));
      this.#df[id]!++;
    }
    return doc;
  }

  /**
   * Which of `terms` a searchable document holds (one binary search per term and segment): what code-side checks
   * of a query read (query.ts TermPresence) without the passage's text.
   */
  holds(doc: number, terms: readonly string[]): string[] {
    return terms.filter((term) => this.#holdsOne(doc, term));
  }

  /** BM25 of document `doc` for `should`, its terms summed in the order given (the term-at-a-time order). */
  #scoreInOrder(doc: number, should: readonly { id: number; w: number }[]): number {
    const norm = this.#dn[doc]!;
    let score = 0;
    for (const { id, w } of should) {
      const tf = this.#tfOf(doc, id);
      if (tf > 0) score += (w * tf) / (tf + norm);
    }
    return score;
  }

  /** How often document `doc` holds term `id` (0: not at all), by a binary search in each segment's list of the term. */
  #tfOf(doc: number, id: number): number {
    for (const seg of this.#segments) {
      if (id + 1 >= seg.offsets.length || doc < seg.lo || doc >= seg.hi) continue;
      let a = seg.offsets[id]!;
      let b = seg.offsets[id + 1]!;
      while (a < b) {
        const m = (a + b) >>> 1;
        if (seg.docs[m]! < doc) a = m + 1;
        else b = m;
      }
      if (a < seg.offsets[id + 1]! && seg.docs[a] === doc) return seg.tfs[a]!;
    }
    return 0;
  }

  /** Whether document `doc` holds `term`. */
  #holdsOne(doc: number, term: string): boolean {
    const id = this.#termId(term);
    return id !== undefined && this.#tfOf(doc, id) > 0;
  }

  /** Makes the documents added since the last flush searchable (one new segment; small segments are merged). */
  flush(): void {
    if (!this.#builder || this.#builder.n === 0) return;
    this.#seal();
    this.#mergeSmall();
  }

  /** Seals the builder into a new segment and brings the dense terms' bitsets up to it. */
  #seal(): void {
    const seg = this.#builder!.seal(this.#termCount, this.#docs);
    this.#segments.push(seg);
    this.#builder = null;
    const docs = this.#docs;
    const words = (this.#rowIds.length + 31) >>> 5; // room for every document id allocated so far
    const from = Math.max(this.#denseRule.minDf, this.#denseRule.share * docs);
    for (const [id, set] of this.#bitsets)
      if (this.#df[id]! < from / 2) {
        this.#bitsets.delete(id);
        this.#borrowed.delete(id);
      } else if (set.length < words) {
        this.#bitsets.set(id, grow(set, words)); // no read past its end
        this.#borrowed.delete(id);
      }
    const terms = seg.offsets.length - 1;
    for (let id = 0; id < terms; id++) {
      const s = seg.offsets[id]!;
      const e = seg.offsets[id + 1]!;
      if (s === e) continue;
      let set = this.#bitsets.get(id);
      if (set && this.#borrowed.delete(id)) this.#bitsets.set(id, (set = set.slice()));
      if (set) setBits(set, seg.docs, s, e);
      else if (this.#df[id]! >= from) {
        // Newly dense: its postings in every segment (this one included).
        set = new Uint32Array(words);
        for (const g of this.#segments) if (id + 1 < g.offsets.length) setBits(set, g.docs, g.offsets[id]!, g.offsets[id + 1]!);
        this.#bitsets.set(id, set);
      }
    }
  }

  /**
   * `flush()` for a serving process: merges a range of terms at a time, yielding to the event loop, since big merges
   * copy tens of millions of postings. Queries read the unchanged old segments until the merged one replaces them;
   * the caller must not add or flush until it resolves.
   */
  async flushInSlices(budget: LoopBudget = new LoopBudget()): Promise<void> {
    if (!this.#builder || this.#builder.n === 0) return;
    this.#seal();
    await budget.tick();
    const segs = this.#segments;
    while (this.#mergeDue()) {
      const merged = await Postings.#mergeInSlices(segs.at(-2)!, segs.at(-1)!, this.#termCount, budget);
      segs.splice(segs.length - 2, 2, merged);
    }
  }

  /** Tombstones the documents with these row ids (absent ones are ignored); returns how many were live. */
  remove(rowIds: Iterable<number>): number {
    let n = 0;
    for (const r of rowIds) {
      const d = this.#docOfRow(r);
      if (d >= 0) {
        this.#ownArrays();
        this.#byRow.delete(r);
        this.#dead[d] = 1;
        this.#deadCount++;
        this.#deadLength += this.#lengths[d]!;
        this.#removed = grow(this.#removed, this.#removedCount + 1);
        this.#removed[this.#removedCount++] = d;
        n++;
      }
    }
    return n;
  }

  /**
   * Gives live documents new row ids (`moves`: document, new row id, …; the rows moved with their text unchanged, as
   * a compaction moves them). Every old id is let go before any new one is taken, so ids may pass between the moved
   * documents. Returns the pairs (old row id, new row id) that changed.
   */
  rekey(moves: readonly number[]): [number, number][] {
    for (let i = 0; i < moves.length; i += 2)
      if (!this.isLive(moves[i]!)) throw new Error(`Postings.rekey: document ${moves[i]} is not live`);
    const pairs: [number, number][] = [];
    // The documents whose row id changes let theirs go: a new id may be one of those.
    const changing = new Set<number>();
    for (let i = 0; i < moves.length; i += 2) {
      const doc = moves[i]!;
      const old = this.#rowIds[doc]!;
      if (old === moves[i + 1]) continue;
      changing.add(doc);
      pairs.push([old, moves[i + 1]!]);
    }
    for (let i = 0; i < moves.length; i += 2) {
      const held = this.#docOfRow(moves[i + 1]!);
      if (held >= 0 && held !== moves[i] && !changing.has(held))
        throw new Error(`Postings.rekey: row id ${moves[i + 1]} is held by a document not moved`);
    }
    this.#ownArrays();
    for (const [old] of pairs) this.#byRow.delete(old);
    for (let i = 0; i < moves.length; i += 2) {
      this.#byRow.set(moves[i + 1]!, moves[i]!);
      this.#rowIds[moves[i]!] = moves[i + 1]!;
    }
    return pairs;
  }

  /**
   * The whole state as typed arrays and the terms in id order (engine-image.ts writes it): views of the live arrays,
   * valid until the next change. Documents added since the last flush have no segment yet, so flush first.
   */
  exportState(): PostingsState {
    if (this.#builder && this.#builder.n > 0) throw new Error('Postings.exportState: flush first');
    const n = this.#docs;
    return {
      terms: this.#baseTerms ? [...this.#baseTerms.toArray(), ...this.#termIds.keys()] : [...this.#termIds.keys()],
      segments: this.#segments.map((g) => ({ ...g })),
      rowIds: this.#rowIds.subarray(0, n),
      lengths: this.#lengths.subarray(0, n),
      dead: this.#dead.subarray(0, n),
      df: this.#df.subarray(0, this.#termCount),
      totalLength: this.#totalLength,
      bitsets: [...this.#bitsets],
    };
  }

  /**
   * Postings over a saved state (`exportState`). The segments, lengths and bitsets are used as they are (they may be
   * views of memory other threads read too: none is written in place, a bitset is copied before it changes). With a
   * term table and row slots (an engine image's) the state is read in place: row ids, tombstones and document
   * frequencies are copied only before their first change, and no map is filled; otherwise the maps are built here.
   */
  static fromState(state: PostingsState, opts: ConstructorParameters<typeof Postings>[0] = {}): Postings {
    const p = new Postings(opts);
    const n = state.rowIds.length;
    const terms = state.terms;
    if (terms instanceof TermTable) {
      p.#baseTerms = terms;
      p.#baseTermCount = terms.length;
    } else {
      terms.forEach((t, i) => p.#termIds.set(t, i));
      p.#loadWork += terms.length;
    }
    p.#segments = state.segments.map((g) => ({ ...g }));
    p.#lengths = state.lengths;
    p.#docs = n;
    p.#totalLength = state.totalLength;
    if (state.rowSlots) {
      p.#rowIds = state.rowIds;
      p.#dead = state.dead;
      p.#df = state.df;
      p.#borrowedArrays = true;
      p.#rowTable = new RowTable(state.rowIds, state.rowSlots);
    } else {
      p.#rowIds = state.rowIds.slice();
      p.#dead = state.dead.slice();
      p.#df = state.df.slice();
      p.#loadWork += 2 * n + state.df.length;
    }
    // Tombstones counted; the live rows go in the map only when no row table finds them.
    for (let d = 0; d < n; d++)
      if (p.#dead[d] !== 0) {
        p.#deadCount++;
        p.#deadLength += p.#lengths[d]!;
      } else if (!p.#rowTable) p.#byRow.set(p.#rowIds[d]!, d);
    for (const [id, set] of state.bitsets) {
      p.#bitsets.set(id, set);
      p.#borrowed.add(id);
    }
    return p;
  }

  /** Share of added documents that are tombstones (a rebuild drops them). */
  get deadShare(): number {
    return this.#docs === 0 ? 0 : this.#deadCount / this.#docs;
  }

  /**
   * Keeps the segment count logarithmic: while the newest segment is at least half the size of the one before, the
   * two are merged (their doc ranges are disjoint and ordered, so a merge is a concatenation per term).
   */
  #mergeSmall(): void {
    const segs = this.#segments;
    while (this.#mergeDue()) {
      const b = segs.pop()!;
      const a = segs.pop()!;
      segs.push(Postings.#merge(a, b, this.#termCount));
    }
  }

  /** Whether the newest segment is at least half the size of the one before (the two are then merged). */
  #mergeDue(): boolean {
    const segs = this.#segments;
    return segs.length > 1 && segs.at(-1)!.docs.length * 2 >= segs.at(-2)!.docs.length;
  }

  static async #mergeInSlices(a: Segment, b: Segment, termCount: number, budget: LoopBudget): Promise<Segment> {
    const offsets = new Uint32Array(termCount + 1);
    const docs = new Uint32Array(a.docs.length + b.docs.length);
    const tfs = new Uint16Array(docs.length);
    let at = 0;
    for (let from = 0; from < termCount; from += MERGE_TERMS_PER_CHECK) {
      at = Postings.#mergeRange(a, b, from, Math.min(termCount, from + MERGE_TERMS_PER_CHECK), offsets, docs, tfs);
      await budget.tick();
    }
    offsets[termCount] = at;
    return { offsets, docs, tfs, lo: a.lo, hi: b.hi };
  }

  /**
   * Writes terms `from`..`to` of the merge of `a` then `b`; returns the next free position. `a`'s postings move in
   * runs between the few terms `b` holds, so merging a small patch costs about one addition per term and a copy per
   * run, not a copy per term.
   */
  static #mergeRange(a: Segment, b: Segment, from: number, to: number, offsets: Uint32Array, docs: Uint32Array, tfs: Uint16Array): number {
    const aOff = a.offsets;
    const bOff = b.offsets;
    const aTerms = aOff.length - 1;
    const bTerms = bOff.length - 1;
    const aEnd = aOff[aTerms]!;
    const bEnd = bOff[bTerms]!;
    let aRun = from < aTerms ? aOff[from]! : aEnd; // the start of a's postings not yet copied
    let bs = from < bTerms ? bOff[from]! : bEnd;
    for (let t = from; t < to; t++) {
      const as = t < aTerms ? aOff[t]! : aEnd;
      offsets[t] = as + bs;
      const be = t < bTerms ? bOff[t + 1]! : bEnd;
      if (be !== bs) {
        const ae = t < aTerms ? aOff[t + 1]! : aEnd;
        copyPostings(a, aRun, ae, docs, tfs, aRun + bs);
        copyPostings(b, bs, be, docs, tfs, ae + bs);
        aRun = ae;
      }
      bs = be;
    }
    const aTo = to < aTerms ? aOff[to]! : aEnd;
    copyPostings(a, aRun, aTo, docs, tfs, aRun + bs);
    return aTo + bs;
  }

  static #merge(a: Segment, b: Segment, termCount: number): Segment {
    const offsets = new Uint32Array(termCount + 1);
    const docs = new Uint32Array(a.docs.length + b.docs.length);
    const tfs = new Uint16Array(docs.length);
    offsets[termCount] = Postings.#mergeRange(a, b, 0, termCount, offsets, docs, tfs);
    return { offsets, docs, tfs, lo: a.lo, hi: b.hi };
  }

  /** The BM25 length normaliser of every document (k1 · (1 − b + b · len / avgdl)), recomputed when avgdl moved. */
  #prepare(avgdl: number): void {
    if (this.#dnDocs === this.#docs && this.#dnAvgdl === avgdl) return;
    const docs = this.#docs;
    if (this.#dn.length < docs) this.#dn = new Float64Array(this.#lengths.length);
    for (let d = 0; d < docs; d++) this.#dn[d] = K1 * (1 - B + (B * this.#lengths[d]!) / avgdl);
    this.#dnDocs = docs;
    this.#dnAvgdl = avgdl;
    this.#generation++;
  }

  #idf(termId: number): number {
    return bm25Idf(this.#docs - this.#deadCount, this.#liveDf(termId));
  }

  /** Largest tf / (tf + dn) over a term's postings (its BM25 upper bound is that × weight × idf × (k1 + 1)). */
  #maxFrac(termId: number): number {
    if (this.#maxFracGen.length <= termId) {
      this.#maxFracGen = grow(this.#maxFracGen, termId + 1);
      this.#maxFracs = grow(this.#maxFracs, termId + 1);
    }
    if (this.#maxFracGen[termId] === this.#generation) return this.#maxFracs[termId]!;
    let max = 0;
    const dn = this.#dn;
    for (const seg of this.#segments) {
      if (termId + 1 >= seg.offsets.length) continue;
      const end = seg.offsets[termId + 1]!;
      for (let p = seg.offsets[termId]!; p < end; p++) {
        const tf = seg.tfs[p]!;
        const f = tf / (tf + dn[seg.docs[p]!]!);
        if (f > max) max = f;
      }
    }
    this.#maxFracGen[termId] = this.#generation;
    this.#maxFracs[termId] = max;
    return max;
  }

  /**
   * The `k` best live documents for `q` by BM25, best first, ties by row id (`ordered` false: no order, for callers
   * that re-rank). Exact, with MaxScore pruning for optional-only queries. `accept`: the documents the filters let
   * through; statistics stay the whole index's. `stats`: the statistics to score with instead of this index's own (a
   * shard scores with its whole index's, `corpusStats` summed over the shards), holding every term of `q`.
   */
  search(
    q: Pick<TextQuery, 'must' | 'should'> & { readonly probe?: readonly string[] },
    k: number,
    ordered = true,
    accept: ((doc: number) => boolean) | null = null,
    stats?: CorpusStats,
  ): TextHit[] {
    if (this.#docs === 0 || k <= 0) return [];
    if (q.must.length > 255) throw new Error('Postings.search: at most 255 must groups');
    const live = this.#docs - this.#deadCount;
    this.#prepare(stats ? stats.totalLength / stats.docs || 1 : (this.#totalLength - this.#deadLength) / live || 1);
    const idfOf = (id: number, term: string): number => (stats ? bm25Idf(stats.docs, stats.df.get(term) ?? 0) : this.#idf(id));
    // Each term's bit among the probe terms (0 beyond 31 or when not probed): a hit tells which of them it holds.
    const probe = q.probe ?? [];
    const bitOf = (term: string): number => {
      const i = probe.indexOf(term);
      return i >= 0 && i < 31 ? 1 << i : 0;
    };
    let known = 0;
    const groups: { id: number; bit: number; term: string }[][] = [];
    for (const group of q.must) {
      const ids: { id: number; bit: number; term: string }[] = [];
      for (const t of new Set(group)) {
        const bit = bitOf(t);
        known |= bit;
        const id = this.#termId(t);
        if (id !== undefined) ids.push({ id, bit, term: t });
      }
      if (ids.length === 0) return []; // a required word the index never saw: nothing matches
      groups.push(ids);
    }
    const should = q.should.flatMap(({ term, weight }) => {
      const bit = bitOf(term);
      const id = this.#termId(term);
      // Settled: a term the index never saw (no document holds it), or one the search scores. A term of weight 0 is
      // not scored, so whether a hit holds it is left to `probePresence`'s lookup.
      if (id === undefined || weight > 0) known |= bit;
      return id === undefined || !(weight > 0) ? [] : [{ id, bit, w: weight * idfOf(id, term) * (K1 + 1) }];
    });
    // MaxScore sums a document's terms in an order that depends on the pruning so far; its hits are scored again in
    // query order, the order the other two paths sum in, so a document's score never depends on which path found it
    // (nor on what else the index holds: a shard scores its documents to the bit as the whole index would).
    const maxScored = groups.length === 0 && !this.#accumulates(should, k);
    const top =
      groups.length > 0
        ? this.#conjunction(
            groups.map((ids) => ids.map((t) => ({ id: t.id, bit: t.bit, w: idfOf(t.id, t.term) * (K1 + 1) }))),
            should,
            k,
            accept,
          )
        : maxScored
          ? this.#maxScore(should, k, accept)
          : this.#accumulate(should, k, accept);
    const hits: TextHit[] = [];
    for (let i = 0; i < top.size; i++) {
      const doc = top.docAt(i);
      const score = maxScored ? this.#scoreInOrder(doc, should) : top.scoreAt(i);
      hits.push({ rowId: this.#rowIds[doc]!, doc, score, held: top.tagAt(i) & known, known });
    }
    if (!ordered) return hits;
    // Best first, equal scores by row id (sortByScore: the comparator sort's order, without a call per comparison).
    return sortByScore(
      hits,
      (h) => h.score,
      (h) => h.rowId,
    );
  }

  /**
   * Which probe terms a hit's document holds, in probe order (query.ts `TermPresence`): a bitmask for up to 31
   * terms (no allocation per candidate), else one byte per term.
   */
  probePresence(hit: TextHit, probe: readonly string[]): number | Uint8Array {
    if (probe.length <= 31) {
      let bits = 0;
      for (let i = 0; i < probe.length; i++) {
        const bit = 1 << i;
        if ((hit.known & bit) !== 0 ? (hit.held & bit) !== 0 : this.#holdsOne(hit.doc, probe[i]!)) bits |= bit;
      }
      return bits;
    }
    const out = new Uint8Array(probe.length);
    for (let i = 0; i < probe.length; i++) {
      const bit = i < 31 ? 1 << i : 0;
      if (bit !== 0 && (hit.known & bit) !== 0) {
        if ((hit.held & bit) !== 0) out[i] = 1;
      } else if (this.#holdsOne(hit.doc, probe[i]!)) out[i] = 1;
    }
    return out;
  }

  /**
   * Required words, each a group of alternative analyses: document-at-a-time intersection led by the smallest group,
   * galloping in the others, or ANDed bitsets when even the lead is long (`#matches`). Walking the shortest group is
   * far cheaper than scoring every posting of every term; scores sum in query order as a full scoring would.
   */
  #conjunction(
    groups: readonly (readonly { id: number; bit: number; w: number }[])[],
    should: readonly { id: number; bit: number; w: number }[],
    k: number,
    accept: ((doc: number) => boolean) | null,
  ): TopK {
    const top = new TopK(k);
    const dn = this.#dn;
    const dead = this.#dead;
    const anyDead = this.#deadCount > 0;
    const all = [...groups.flat(), ...should];
    // The terms of group g are all[first[g]] .. all[first[g + 1] - 1].
    const first = new Uint32Array(groups.length + 1);
    for (let g = 0; g < groups.length; g++) first[g + 1] = first[g]! + groups[g]!.length;
    const pos = new Uint32Array(all.length);
    const end = new Uint32Array(all.length);
    const NONE = 0xffffffff;
    // A group's terms that keep a bitset are checked bit by bit, the others (rarer: the seek is short) in their lists.
    const sets = groups.map((g) => g.flatMap((t) => this.#bitsets.get(t.id) ?? []));
    const sought = groups.map((g, gi) => g.flatMap((t, j) => (this.#bitsets.has(t.id) ? [] : [first[gi]! + j])));
    const order = new Uint32Array(groups.length); // the groups other than the lead, fewest postings first
    const sizes = new Float64Array(groups.length);
    for (const seg of this.#segments) {
      const sd = seg.docs;
      const st = seg.tfs;
      for (let i = 0; i < all.length; i++) {
        const id = all[i]!.id;
        if (id + 1 < seg.offsets.length) {
          pos[i] = seg.offsets[id]!;
          end[i] = seg.offsets[id + 1]!;
        } else pos[i] = end[i] = 0;
      }
      // The group with the fewest postings in this segment leads; a group none of whose terms occur here: no match.
      let lead = -1;
      let leadSize = Infinity;
      for (let g = 0; g < groups.length; g++) {
        let size = 0;
        for (let i = first[g]!; i < first[g + 1]!; i++) size += end[i]! - pos[i]!;
        sizes[g] = size;
        if (size < leadSize) {
          lead = g;
          leadSize = size;
        }
      }
      if (leadSize === 0) continue;
      // The others, fewest postings first: the group likeliest to reject a document is asked first.
      let others = 0;
      for (let g = 0; g < groups.length; g++) if (g !== lead) order[others++] = g;
      order.subarray(0, others).sort((x, y) => sizes[x]! - sizes[y]! || x - y);
      const from = first[lead]!;
      const to = first[lead + 1]!;
      /** Moves list i to its first posting ≥ d; returns whether that posting is d. */
      const seek = (i: number, d: number): boolean => {
        const p = (pos[i] = gallop(sd, pos[i]!, end[i]!, d));
        return p < end[i]! && sd[p] === d;
      };
      /** Scores a document that holds every group: each term it holds (and each optional one), in query order. */
      const score = (d: number): void => {
        const norm = dn[d]!;
        let sum = 0;
        let held = 0;
        for (let i = 0; i < all.length; i++) {
          if (!seek(i, d)) continue;
          const tf = st[pos[i]!]!;
          sum += (all[i]!.w * tf) / (tf + norm);
          held |= all[i]!.bit;
        }
        top.offer(d, sum, held);
      };
      // When even the lead is long, AND the groups' bitsets 32 documents per step instead of stepping per lead
      // posting; compare both costs (a lead posting costs tens of word operations).
      const words = ((seg.hi + 31) >>> 5) - (seg.lo >>> 5);
      let bitCost = words;
      for (let g = 0; g < groups.length; g++) {
        bitCost += words * (sets[g]!.length + 1);
        for (const i of sought[g]!) bitCost += end[i]! - pos[i]!;
      }
      if (bitCost < leadSize * this.#denseRule.walkRatio) {
        const m = this.#matches(seg, groups.length, sets, sought, sd, pos, end);
        for (let w = seg.lo >>> 5, stop = (seg.hi + 31) >>> 5; w < stop; w++) {
          let x = m[w]!;
          while (x !== 0) {
            const low = x & -x;
            x ^= low;
            const d = (w << 5) + 31 - Math.clz32(low);
            if (!(anyDead && dead[d] === 1) && (accept === null || accept(d))) score(d);
          }
        }
        continue;
      }
      for (;;) {
        // The lead group's next document: the least among its terms' current postings.
        let d = NONE;
        for (let i = from; i < to; i++) if (pos[i]! < end[i]! && sd[pos[i]!]! < d) d = sd[pos[i]!]!;
        if (d === NONE) break;
        if (!(anyDead && dead[d] === 1) && (accept === null || accept(d))) {
          let holdsAll = true;
          const word = d >>> 5;
          const bit = 1 << (d & 31);
          for (let o = 0; o < others && holdsAll; o++) {
            const g = order[o]!;
            let any = false;
            const bits = sets[g]!;
            for (let j = 0; j < bits.length && !any; j++) any = (bits[j]![word]! & bit) !== 0;
            const lists = sought[g]!;
            for (let j = 0; j < lists.length && !any; j++) any = seek(lists[j]!, d);
            holdsAll = any;
          }
          if (holdsAll) score(d);
        }
        for (let i = from; i < to; i++) if (pos[i]! < end[i]! && sd[pos[i]!] === d) pos[i]!++;
      }
    }
    return top;
  }

  /**
   * The documents of `seg` that hold a term of every group, as a bitset over document ids (valid in the segment's
   * words; a scratch array reused by the next call): each group's bitsets ORed with its other terms' postings in the
   * segment (`sought`: those terms' positions in `pos`/`end`), ANDed across groups.
   */
  #matches(
    seg: Segment,
    groups: number,
    sets: readonly (readonly Uint32Array[])[],
    sought: readonly (readonly number[])[],
    sd: Uint32Array,
    pos: Uint32Array,
    end: Uint32Array,
  ): Uint32Array {
    const wlo = seg.lo >>> 5;
    const whi = (seg.hi + 31) >>> 5;
    if (this.#matchBits.length < whi) {
      const cap = (this.#rowIds.length + 31) >>> 5;
      this.#matchBits = new Uint32Array(cap);
      this.#groupBits = new Uint32Array(cap);
    }
    const m = this.#matchBits;
    const gb = this.#groupBits;
    m.fill(0xffffffff, wlo, whi);
    for (let g = 0; g < groups; g++) {
      const bits = sets[g]!;
      const lists = sought[g]!;
      if (bits.length === 1 && lists.length === 0) {
        const b = bits[0]!;
        for (let w = wlo; w < whi; w++) m[w]! &= b[w]!;
        continue;
      }
      gb.fill(0, wlo, whi);
      for (const b of bits) for (let w = wlo; w < whi; w++) gb[w]! |= b[w]!;
      for (const i of lists) setBits(gb, sd, pos[i]!, end[i]!);
      for (let w = wlo; w < whi; w++) m[w]! &= gb[w]!;
    }
    // Only the segment's own documents (its first and last words may hold other segments').
    m[wlo]! &= ~((1 << (seg.lo & 31)) - 1);
    if ((seg.hi & 31) !== 0) m[whi - 1]! &= (1 << (seg.hi & 31)) - 1;
    return m;
  }

  /**
   * Whether optional terms are scored term at a time (`#accumulate`) rather than by MaxScore: when the documents they
   * can reach are at most `#accumulateUpTo` × k. With few documents per top-k place MaxScore skips little and pays a
   * walk over every term per document.
   */
  #accumulates(should: readonly { id: number }[], k: number): boolean {
    const limit = this.#accumulateUpTo * k;
    if (this.#docs <= limit) return true;
    let postings = 0;
    for (const t of should) if ((postings += this.#df[t.id]!) > limit) return false;
    return true;
  }

  /** Term at a time: every posting of every optional term added into one score per document, then the k best. */
  #accumulate(should: readonly { id: number; bit: number; w: number }[], k: number, accept: ((doc: number) => boolean) | null): TopK {
    const n = this.#docs;
    if (this.#acc.length < n) {
      const cap = Math.max(1024, this.#rowIds.length);
      this.#acc = new Float64Array(cap);
      this.#accHeld = new Uint32Array(cap);
      this.#touched = new Uint32Array(cap);
    }
    const acc = this.#acc;
    const held = this.#accHeld;
    const touched = this.#touched;
    const dn = this.#dn;
    let t = 0;
    for (const { id, bit, w } of should)
      for (const seg of this.#segments) {
        if (id + 1 >= seg.offsets.length) continue;
        const sd = seg.docs;
        const st = seg.tfs;
        const end = seg.offsets[id + 1]!;
        for (let p = seg.offsets[id]!; p < end; p++) {
          const d = sd[p]!;
          const tf = st[p]!;
          // Every contribution is > 0 (w > 0, tf ≥ 1): a document at 0 is one no term reached yet.
          if (acc[d] === 0) touched[t++] = d;
          acc[d] = acc[d]! + (w * tf) / (tf + dn[d]!);
          held[d] = held[d]! | bit;
        }
      }
    const top = new TopK(k);
    const dead = this.#dead;
    const anyDead = this.#deadCount > 0;
    // Documents a filter turns away are let go first (their scratch cleared), so neither the k-th best nor the heap sees them.
    if (accept !== null) {
      let kept = 0;
      for (let i = 0; i < t; i++) {
        const d = touched[i]!;
        if (accept(d)) touched[kept++] = d;
        else {
          acc[d] = 0;
          held[d] = 0;
        }
      }
      t = kept;
    }
    // Only documents at or above the k-th best live score can be kept: the heap is offered those (k and the ties at the
    // k-th place, whose lower document ids it keeps), not every document reached (thousands for a long question, each
    // offer early on a sift through the heap). The k-th best by one quickselect over the scores (O(reached)).
    let floor = -Infinity;
    if (t > k && k > 0) {
      if (this.#select.length < t) this.#select = new Float64Array(Math.max(t, 2 * this.#select.length));
      const sel = this.#select;
      let m = 0;
      for (let i = 0; i < t; i++) {
        const d = touched[i]!;
        if (!(anyDead && dead[d] === 1)) sel[m++] = acc[d]!;
      }
      if (m > k) floor = kthLargest(sel, m, k);
    }
    for (let i = 0; i < t; i++) {
      const d = touched[i]!;
      if (!(anyDead && dead[d] === 1) && acc[d]! >= floor) top.offer(d, acc[d]!, held[d]!);
      acc[d] = 0;
      held[d] = 0;
    }
    return top;
  }

  /**
   * Document-at-a-time MaxScore (Turtle & Flood 1995, as in Lucene) over optional terms: terms that cannot lift a
   * document into the top k are only probed. Exact: the same top k as scoring every posting.
   */
  #maxScore(should: readonly { id: number; bit: number; w: number }[], k: number, accept: ((doc: number) => boolean) | null): TopK {
    const terms = should.map((t) => ({ ...t, ub: t.w * this.#maxFrac(t.id) })).sort((a, b) => a.ub - b.ub);
    const m = terms.length;
    if (m === 0) return new TopK(0);
    const cum = new Float64Array(m); // cum[i] = ub of terms 0..i
    terms.forEach((t, i) => (cum[i] = t.ub + (i > 0 ? cum[i - 1]! : 0)));
    const top = new TopK(k);
    const dn = this.#dn;
    const dead = this.#dead;
    const anyDead = this.#deadCount > 0;
    const pos = new Uint32Array(m);
    const end = new Uint32Array(m);
    const cur = new Uint32Array(m); // the doc at pos[i], NONE when the list is done
    const NONE = 0xffffffff;
    const ws = Float64Array.from(terms, (t) => t.w);
    const bits = Uint32Array.from(terms, (t) => t.bit);
    let theta = -Infinity;
    let e = 0; // terms [0, e) are non-essential
    for (const seg of this.#segments) {
      const sd = seg.docs;
      const st = seg.tfs;
      for (let i = 0; i < m; i++) {
        const id = terms[i]!.id;
        if (id + 1 < seg.offsets.length) {
          pos[i] = seg.offsets[id]!;
          end[i] = seg.offsets[id + 1]!;
        } else pos[i] = end[i] = 0;
        cur[i] = pos[i]! < end[i]! ? sd[pos[i]!]! : NONE;
      }
      for (;;) {
        // The next document of the essential terms.
        let d = NONE;
        for (let i = e; i < m; i++) if (cur[i]! < d) d = cur[i]!;
        if (d === NONE) break;
        let score = 0;
        let held = 0;
        const norm = dn[d]!;
        for (let i = e; i < m; i++) {
          if (cur[i] !== d) continue;
          const p = pos[i]!;
          const tf = st[p]!;
          score += (ws[i]! * tf) / (tf + norm);
          held |= bits[i]!;
          pos[i] = p + 1;
          cur[i] = p + 1 < end[i]! ? sd[p + 1]! : NONE;
        }
        if ((anyDead && dead[d] === 1) || (accept !== null && !accept(d))) continue;
        // Non-essential terms, largest bound first, while they can still lift the document past theta.
        let i = e - 1;
        for (; i >= 0; i--) {
          if (score + cum[i]! < theta) break;
          if (cur[i]! > d) continue; // NONE included
          const stop = end[i]!;
          let p = gallop(sd, pos[i]!, stop, d);
          if (p < stop && sd[p] === d) {
            const tf = st[p]!;
            score += (ws[i]! * tf) / (tf + norm);
            held |= bits[i]!;
            p++;
          }
          pos[i] = p;
          cur[i] = p < stop ? sd[p]! : NONE;
        }
        if (i >= 0) continue; // pruned
        if (top.offer(d, score, held) && top.full) {
          theta = top.min;
          while (e < m && cum[e]! < theta) e++;
        }
      }
    }
    return top;
  }
}

/**
 * The first position in `docs[from, stop)` (ascending) holding a doc id ≥ `d`, or `stop`: exponential steps from
 * `from`, then a binary search — cheap when the target is near, logarithmic when it is far.
 */
function gallop(docs: Uint32Array, from: number, stop: number, d: number): number {
  if (from >= stop || docs[from]! >= d) return from;
  let lo = from; // docs[lo] < d throughout
  let step = 1;
  while (lo + step < stop && docs[lo + step]! < d) {
    lo += step;
    step *= 2;
  }
  let a = lo + 1;
  let b = Math.min(lo + step, stop);
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (docs[mid]! < d) a = mid + 1;
    else b = mid;
  }
  return a;
}
