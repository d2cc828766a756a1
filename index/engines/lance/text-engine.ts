/**
 * Keeps the in-process postings (postings.ts) in step with the passages table: the one BM25 engine.
 * Postings follow table versions by row-id differences, so a query waits for its version and never misses a page the
 * writer just wrote; scans run off the serving handle in slices (see docs/architecture.md#keeping-the-postings-in-step).
 */
import type { Connection, Table } from '@lancedb/lancedb';
import { Type as ArrowType } from './arrow.js';
import { LoopBudget } from '../../../event-loop.js';
import { FlatVectors } from '../memory/flat-vectors.js';
import { PAGE_FIELD_ROW_COLUMNS, type PageFieldRow, type PassageHit } from './columns.js';
import { decodeImage, encodeImageInSlices, type EngineImage, type SnapshotState } from './engine-image.js';
import type { EngineSegments, LoadedSegments } from './engine-segments.js';
import { captureRows, decodeDelta, emptyRows, encodeDelta, type DeltaOp, type EngineDelta } from './engine-delta.js';
import { DocAttributes, type DocTest, type PageCodes } from '../memory/doc-attributes.js';
import type { PassageFilter } from '../../retrieval/passage-filter.js';
import { nearKeyHash } from '../../retrieval/near-keys.js';
import { SnippetStore } from '../memory/snippet-store.js';
import type { PassageChangeSpan } from './passage-changes.js';
import { encodePages, PageTable, type PageEntry } from './page-table.js';
import { Postings, type TextHit, type TextQuery } from '../memory/postings.js';
import { TitleStats, titleTermIds, titleTerms, titleTermsOfIds, type TitleIds } from '../memory/title-stats.js';
import { TopK } from '../memory/top-k.js';
import { grow } from '../memory/typed-arrays.js';

/**
 * The page fields of a passage row (denormalised into every passage of a page) are kept once per page in memory: a
 * candidate needs no read of the table (a take by row id costs per column), and a result row only its own columns
 * (docs/bench-index.md).
 */
type PageHitFields = Pick<PassageHit, 'title' | 'host' | 'lang' | 'group_key' | 'content_hash' | 'near_print'>;
const SCAN_COLUMNS = ['search_text', 'page_ref', 'ordinal', 'page_no', ...PAGE_FIELD_ROW_COLUMNS];

/**
 * Whole result rows a scan hands over while reading the table anyway, so a small index's results come from memory.
 * `begin` is asked before a full scan or a write's take: null reads no row columns, else a keeper that answers
 * false once the bound is reached.
 */
export interface RowPrefill {
  readonly columns: readonly string[];
  begin(rows: number, wholeTable: boolean): RowSink | null;
  /** Rows that moved to new row ids with their content unchanged (a compaction the postings re-keyed): old, new pairs. */
  moved?(pairs: readonly (readonly [number, number])[]): void;
}
export type RowSink = (id: bigint, row: Record<string, unknown>) => boolean;

/**
 * A page's fields (as its passage rows hold them), its title's terms as ids (the title boost's analysis, once per
 * page), and the newest document added for it: with `#prevOfPage`, a chain through every document added for the page
 * since the postings were built (tombstones included), which finds a page's live rows without a pass over all documents.
 */
interface PageRecord {
  /** Replaced in place when the page's rows are added again: one record per page, which its documents find by page ref. */
  fields: PageFieldRow;
  /**
   * The fields a candidate row copies (`PageHitFields`), once more in the record itself: a candidate reads one object
   * (laid out with its properties inside it) instead of the record, `fields` and `fields`' property store, each a cache
   * miss of its own for hundreds of candidates per query.
   */
  title: PageHitFields['title'];
  host: PageHitFields['host'];
  lang: PageHitFields['lang'];
  group_key: PageHitFields['group_key'];
  content_hash: PageHitFields['content_hash'];
  near_print: PageHitFields['near_print'];
  /** Its title's terms as ids (title-stats.ts `titleTermIds`): what a title score reads. */
  titleIds: TitleIds;
  /** `nearKeyHash` of its group key and of its content hash: what the near-duplicate check reads (retrieval.ts `groupPages`). */
  groupHash: number;
  contentHash: number;
  /** Its filter attributes as codes (doc-attributes.ts), written to each of its documents. */
  codes: PageCodes;
  lastDoc: number;
}

/** A page's record from its fields and what is derived from them for ranking. */
function pageRecord(
  page: PageFieldRow,
  titleIds: TitleIds,
  groupHash: number,
  contentHash: number,
  codes: PageCodes,
  lastDoc: number,
): PageRecord {
  const { title, host, lang, group_key, content_hash, near_print } = page;
  return { fields: page, title, host, lang, group_key, content_hash, near_print, titleIds, groupHash, contentHash, codes, lastDoc };
}

/** The postings and, per document, the hit fields of its passage. */
export class TextSnapshot {
  readonly postings: Postings;
  /**
   * The passages' vectors by document, for an index small enough (flat-vectors.ts): the vector arm answers from them.
   * Null when not kept, or dropped once the index outgrew the bound (LanceDB answers then).
   */
  vectors: FlatVectors | null;
  /**
   * The passages' quotable text by document (snippet-store.ts), up to its bound: a result row of a document it holds
   * is read from memory. Null when not kept.
   */
  readonly snippets: SnippetStore | null;
  /**
   * The title boost's statistics over the titles of the pages with live rows here, kept exact as pages gain and lose
   * them (`#addRows`, `prunePages`): a snapshot replayed from segments or caught up from the table holds exactly
   * those of one built by a full scan at the same version.
   */
  readonly titles: TitleStats;
  /** Per document, the page attributes filters test (host id, date, language, country, province, source type). */
  readonly #attributes: DocAttributes;
  #pageOf: Int32Array = new Int32Array(1024);
  #ordinalOf: Int32Array = new Int32Array(1024);
  /** Per document: its passage's `page_no` (`NO_PAGE_NO`: null), so a result row takes no column for it. */
  #pageNoOf: Int32Array = new Int32Array(1024);
  /** Per document: the document added before it for the same page (-1: none), the chain `PageRecord.lastDoc` starts. */
  #prevOfPage: Int32Array = new Int32Array(1024);
  /**
   * The page records of this snapshot's own: pages added or rewritten since the image it started from (all of them
   * without one). One record per page, which a document finds by its page ref (`#pageOf`) while its page has live rows.
   */
  readonly #pages = new Map<number, PageRecord>();
  /** The image's page records, read in place (page-table.ts); `#pages` and `#gone` take precedence over it. */
  readonly #imagePages: PageTable | null = null;
  /** Pages of the image with no live rows any more (`prunePages`), unless `#pages` holds them again. */
  readonly #gone = new Set<number>();
  /** Records of image pages decoded for reads, bounded (`DECODED_PAGES`): cleared whole when full. */
  readonly #decoded = new Map<number, PageRecord>();

  /**
   * `state`: a saved snapshot (`exportState`, engine-image.ts) to start from instead of empty postings; its vectors
   * are kept only when `vectors` asks for that dimension. `titles`: the state's title statistics already decoded (they
   * are the caller's and are not used by it any more), instead of decoding them again.
   */
  constructor(
    maxTermLength: number,
    vectors?: { dim: number; maxRows: number },
    snippetBytes = 0,
    state?: SnapshotState,
    titles?: TitleStats,
  ) {
    this.#attributes = new DocAttributes(state?.attributes);
    this.titles = titles ?? (state ? TitleStats.fromState(state.titles) : new TitleStats());
    if (!state) {
      this.postings = new Postings({ maxTermLength });
      this.vectors = vectors ? FlatVectors.create(vectors.dim, vectors.maxRows) : null;
      this.snippets = snippetBytes > 0 ? new SnippetStore(snippetBytes) : null;
      return;
    }
    this.postings = Postings.fromState(state.postings, { maxTermLength });
    this.snippets = state.snippets ? SnippetStore.fromState(state.snippets) : null;
    const v = state.vectors;
    // The rows in a shared kernel memory: the process's first reader of an image copies them there once, every other
    // reads that copy in place.
    const block = vectors && v && v.dim === vectors.dim ? (v.block ?? FlatVectors.share(v.dim, v.rows)) : null;
    this.vectors = block ? FlatVectors.fromShared(block, vectors!.maxRows) : null;
    if (block && !v!.block) this.#vectorsCopied = v!.rows.length;
    // Written only for documents added after the state (`grow` copies them then), so they may be views of shared memory.
    this.#pageOf = state.pageOf;
    this.#ordinalOf = state.ordinalOf;
    this.#pageNoOf = state.pageNoOf;
    this.#prevOfPage = state.prevOfPage;
    this.#imagePages = new PageTable(state.pages);
  }

  /** A page's record while it has live rows: this snapshot's own, else the image's (decoded on first use). */
  #page(ref: number): PageRecord | undefined {
    const own = this.#pages.get(ref);
    if (own !== undefined || this.#imagePages === null) return own;
    const seen = this.#decoded.get(ref);
    if (seen !== undefined) return seen;
    if (this.#gone.has(ref)) return undefined;
    const i = this.#imagePages.indexOf(ref);
    if (i < 0) return undefined;
    const { fields: f, titleTerms } = this.#imagePages.record(i);
    const rec = pageRecord(
      f,
      titleTermIds(titleTerms),
      nearKeyHash(f.group_key),
      nearKeyHash(f.content_hash),
      this.#attributes.codes(f),
      this.#imagePages.sections.lastDoc[i]!,
    );
    if (this.#decoded.size >= DECODED_PAGES) this.#decoded.clear();
    this.#decoded.set(ref, rec);
    return rec;
  }

  /** A page's newest document (-1: none live), without decoding an image page's record. */
  #lastDocOf(ref: number): number {
    const own = this.#pages.get(ref);
    if (own !== undefined) return own.lastDoc;
    if (this.#imagePages === null || this.#gone.has(ref)) return -1;
    const i = this.#imagePages.indexOf(ref);
    return i < 0 ? -1 : this.#imagePages.sections.lastDoc[i]!;
  }

  /** Every page with live rows and its newest document: the image's (unless rewritten or gone), then this snapshot's own. */
  *#pageChains(): Generator<[ref: number, lastDoc: number, imageIndex: number]> {
    const img = this.#imagePages;
    if (img)
      for (let i = 0; i < img.size; i++) {
        const ref = img.sections.refs[i]!;
        if (!this.#pages.has(ref) && !this.#gone.has(ref)) yield [ref, img.sections.lastDoc[i]!, i];
      }
    for (const [ref, rec] of this.#pages) yield [ref, rec.lastDoc, -1];
  }

  /**
   * The snapshot's state (engine-image.ts copies it into an image): views of its arrays, valid until it next changes.
   * The vectors are copied out.
   */
  exportState(): SnapshotState {
    const n = this.postings.size.docs;
    // An image page's record goes into the next image as the bytes it is (nothing decoded).
    const pages: PageEntry[] = [];
    for (const [ref, lastDoc, i] of this.#pageChains()) {
      if (i >= 0) pages.push({ ref, lastDoc, json: this.#imagePages!.bytes(i) });
      else {
        const rec = this.#pages.get(ref)!;
        pages.push({ ref, lastDoc, fields: rec.fields, titleTerms: titleTermsOfIds(rec.titleIds) });
      }
    }
    const v = this.vectors;
    return {
      postings: this.postings.exportState(),
      pageOf: this.#pageOf.subarray(0, n),
      ordinalOf: this.#ordinalOf.subarray(0, n),
      pageNoOf: this.#pageNoOf.subarray(0, n),
      prevOfPage: this.#prevOfPage.subarray(0, n),
      pages: encodePages(pages),
      attributes: this.#attributes.exportState(n),
      snippets: this.snippets?.exportState() ?? null,
      vectors: v ? { dim: v.dim, rows: v.exportRows() } : null,
      titles: this.titles.exportState(),
    };
  }

  /**
   * Terms and rows the postings' load put into this thread's own maps or copied (`Postings.loadWork`), and vector
   * values copied: 0 when read in place from an image and its shared vectors (page records and attributes included).
   */
  get loadWork(): number {
    return this.postings.loadWork + this.#vectorsCopied;
  }
  #vectorsCopied = 0;

  /** Page records held as objects, and the pages the image holds in place (`TextEngineStats.pageRecords`). */
  get pageRecords(): { records: number; inImage: number } {
    return { records: this.#pages.size + this.#decoded.size, inImage: this.#imagePages?.size ?? 0 };
  }

  /** Whether a read for these postings should bring the snippet text (the store keeps more). */
  get takesSnippets(): boolean {
    return this.snippets !== null && !this.snippets.size.full;
  }

  /**
   * Rows of a scan or take (Arrow batch with the scan columns and `_rowid`): the batch's columns are looked up once,
   * and the returned function adds rows `from`..`to` (the caller slices, yielding between slices).
   */
  rowAdder(
    batch: { numRows: number; getChild(name: string): { get(i: number): unknown } | null },
    ids: readonly number[],
  ): (from: number, to: number) => void {
    const col = (name: string) => {
      const c = batch.getChild(name);
      if (!c) throw new Error(`text postings: the read returned no ${name}`);
      return c;
    };
    const text = col('search_text');
    const ref = col('page_ref');
    const ord = col('ordinal');
    const pageNo = col('page_no');
    const fieldCols = PAGE_FIELD_ROW_COLUMNS.map((name) => [name, col(name)] as const);
    const vec = this.vectors ? batch.getChild('vector') : null;
    if (this.vectors && !vec) this.vectors = null; // the read brought no vectors: LanceDB answers the vector arm
    // A read without the snippet text leaves its documents out of the store (their result rows come from the table).
    const snipCol = this.takesSnippets ? batch.getChild('snippet_text') : null;
    const snip = snipCol ? snippetPutter(snipCol) : null;
    return (from, to) => this.#addRows(text, ref, ord, pageNo, fieldCols, vec, snip, ids, from, to);
  }

  #addRows(
    text: { get(i: number): unknown },
    ref: { get(i: number): unknown },
    ord: { get(i: number): unknown },
    pageNo: { get(i: number): unknown },
    fieldCols: readonly (readonly [string, { get(i: number): unknown }])[],
    vec: { get(i: number): unknown } | null,
    snip: SnippetPutter | null,
    ids: readonly number[],
    from: number,
    to: number,
  ): void {
    const snippets = snip ? this.snippets : null;
    let lastRef = -1;
    let rec: PageRecord | undefined;
    for (let i = from; i < to; i++) {
      const pageRef = ref.get(i) as number;
      const doc = this.postings.add(ids[i]!, (text.get(i) as string | null) ?? '');
      if (vec && this.vectors) {
        const v = vec.get(i) as { toArray(): Float32Array } | null;
        if (!this.vectors.set(doc, v ? v.toArray() : null)) this.vectors = null; // past the bound
      }
      // Past its bound the store keeps no more (put answers false from then on, cheaply).
      if (snippets) snip!(snippets, doc, i);
      this.#pageOf = grow(this.#pageOf, doc + 1);
      this.#ordinalOf = grow(this.#ordinalOf, doc + 1);
      this.#pageNoOf = grow(this.#pageNoOf, doc + 1);
      this.#prevOfPage = grow(this.#prevOfPage, doc + 1);
      this.#pageOf[doc] = pageRef;
      this.#ordinalOf[doc] = ord.get(i) as number;
      this.#pageNoOf[doc] = (pageNo.get(i) as number | null) ?? NO_PAGE_NO;
      // The page's record is set from the newest rows added: a scan reads one version (every passage of a page holds
      // the same fields), and a patch adds a replaced page's new rows after tombstoning its old ones. So the record
      // of a page with live rows holds the fields of exactly those rows (`passageOfRow`).
      if (pageRef !== lastRef || !rec) {
        lastRef = pageRef;
        const fields: Record<string, unknown> = {};
        for (const [name, c] of fieldCols) fields[name] = c.get(i) ?? null;
        const page = fields as unknown as PageFieldRow;
        const cur = this.#page(pageRef);
        let titleIds: TitleIds;
        if (cur && cur.title === page.title && cur.lang === page.lang) titleIds = cur.titleIds;
        else {
          // A page new here, or its title changed: the title statistics follow (exact, not recounted later).
          const terms = titleTerms(page.title, page.lang);
          if (cur) this.titles.removeTerms(titleTermsOfIds(cur.titleIds));
          this.titles.addTerms(terms);
          titleIds = titleTermIds(terms);
        }
        const groupHash = cur && cur.group_key === page.group_key ? cur.groupHash : nearKeyHash(page.group_key);
        const contentHash = cur && cur.content_hash === page.content_hash ? cur.contentHash : nearKeyHash(page.content_hash);
        const next = pageRecord(page, titleIds, groupHash, contentHash, this.#attributes.codes(page), cur?.lastDoc ?? -1);
        if (cur) {
          // Updated in place: the chain goes on through the page's earlier documents (a replaced page's tombstones
          // among them), and every document of the page points at this record.
          Object.assign(cur, next);
          rec = cur;
          this.#pages.set(pageRef, rec); // an image page's record is this snapshot's own from now on
          this.#decoded.delete(pageRef);
        } else {
          rec = next;
          this.#pages.set(pageRef, rec);
        }
      }
      this.#attributes.set(doc, rec.codes);
      this.#prevOfPage[doc] = rec.lastDoc;
      rec.lastDoc = doc;
    }
  }

  /**
   * The live documents of every page but `except`, by page and ordinal (`keyOf`): what a re-key after a compaction
   * finds each row's document by. Null when a key cannot be formed (an ordinal or page ref out of range) or two live
   * documents share one.
   */
  async liveDocsByKey(except: ReadonlySet<number>, budget: LoopBudget): Promise<Map<number, number> | null> {
    const out = new Map<number, number>();
    let n = 0;
    for (const [ref, lastDoc] of this.#pageChains()) {
      if (except.has(ref)) continue;
      for (let d = lastDoc; d >= 0; d = this.#prevOfPage[d]!) {
        if (!this.postings.isLive(d)) continue;
        const key = keyOf(ref, this.#ordinalOf[d]!);
        if (key === null || out.has(key)) return null;
        out.set(key, d);
      }
      if (++n % 1024 === 0) await budget.tick();
    }
    return out;
  }

  /** The row ids of the live documents of these pages. */
  liveRowsOfPages(pageRefs: Iterable<number>): number[] {
    const out: number[] = [];
    for (const ref of pageRefs)
      for (let d = this.#lastDocOf(ref); d >= 0; d = this.#prevOfPage[d]!) if (this.postings.isLive(d)) out.push(this.postings.rowIdOf(d));
    return out;
  }

  /** The pages of these rows (live ones; before they are removed). */
  pagesOfRows(rowIds: Iterable<number>): Set<number> {
    const out = new Set<number>();
    for (const id of rowIds) {
      const d = this.postings.docOf(id);
      if (d !== undefined) out.add(this.#pageOf[d]!);
    }
    return out;
  }

  /** A live row's passage key and its page's fields (null: the row is not live in these postings). */
  passageOfRow(rowId: number): RowPassage | null {
    const doc = this.postings.docOf(rowId);
    if (doc === undefined) return null;
    const page_ref = this.#pageOf[doc]!;
    const fields = this.#page(page_ref)?.fields;
    if (!fields) return null;
    const n = this.#pageNoOf[doc]!;
    return { page_ref, ordinal: this.#ordinalOf[doc]!, page_no: n === NO_PAGE_NO ? null : n, fields };
  }

  /** A live row's snippet text from the store: null when it has none, undefined when the store does not hold it. */
  snippetOfRow(rowId: number): string | null | undefined {
    const snippets = this.snippets;
    if (!snippets) return undefined;
    const doc = this.postings.docOf(rowId);
    return doc === undefined ? undefined : snippets.get(doc);
  }

  /** Forgets those of these pages none of whose passages is live (after a patch removed rows of them). */
  prunePages(pageRefs: Iterable<number>): void {
    for (const ref of pageRefs) {
      let d = this.#lastDocOf(ref);
      while (d >= 0 && !this.postings.isLive(d)) d = this.#prevOfPage[d]!;
      if (d >= 0) continue;
      const rec = this.#page(ref);
      if (rec) this.titles.removeTerms(titleTermsOfIds(rec.titleIds));
      this.#pages.delete(ref);
      this.#decoded.delete(ref);
      if (this.#imagePages && this.#imagePages.indexOf(ref) >= 0) this.#gone.add(ref);
    }
  }

  /** A page's analysed title terms as ids (title-stats.ts `titleTermIds`), when the postings hold this title in this language. */
  titleTermIds(pageRef: number, title: string, lang: string | null | undefined): TitleIds | undefined {
    const rec = this.#page(pageRef);
    return rec && rec.title === title && rec.lang === (lang ?? null) ? rec.titleIds : undefined;
  }

  /**
   * The vector arm's candidates from the vectors in memory: the `k` live passages nearest to `query` (cosine
   * distance), as rows of the hit columns with `_distance`, like LanceDB's flat search returns them; with
   * `minSimilarity`, only those at or above it (`FlatVectors.nearest`). Null when no vectors are kept.
   */
  nearestRows(
    query: Float32Array,
    k: number,
    minSimilarity?: number,
    accept: ((doc: number) => boolean) | null = null,
  ): (PassageHit & { _distance: number })[] | null {
    const vectors = this.vectors;
    if (!vectors) return null;
    const postings = this.postings;
    const live = accept === null ? (d: number) => postings.isLive(d) : (d: number) => postings.isLive(d) && accept(d);
    const { docs, distances, n } = vectors.nearestDocs(query, k, live, minSimilarity);
    let ahead = 0;
    for (let i = 0; i < n; i++) ahead += this.#readAhead(docs[i]!);
    readAhead.sum = ahead;
    const out: (PassageHit & { _distance: number })[] = [];
    for (let i = 0; i < n; i++) {
      const doc = docs[i]!;
      out.push(this.#candidate(doc, postings.rowIdOf(doc), undefined, distances[i]!, undefined) as PassageHit & { _distance: number });
    }
    return out;
  }

  /** A query's filters as a test of a document (doc-attributes.ts): null when every document passes, false when none can. */
  docTest(filter: PassageFilter): DocTest {
    return this.#attributes.test(filter);
  }

  /**
   * A filter-only query's candidates (operators without words): the `k` live documents that pass `accept` with the
   * least passage keys (page ref, then ordinal), so the answer does not depend on the order rows were added in.
   */
  scan(accept: ((doc: number) => boolean) | null, k: number): { doc: number; rowId: number }[] {
    const postings = this.postings;
    const top = new TopK(k);
    const n = postings.size.docs;
    for (let d = 0; d < n; d++)
      if (postings.isLive(d) && (accept === null || accept(d))) top.offer(d, -(this.#pageOf[d]! * 2 ** 20 + this.#ordinalOf[d]!));
    const out: { doc: number; rowId: number }[] = [];
    for (let i = 0; i < top.size; i++) out.push({ doc: top.docAt(i), rowId: postings.rowIdOf(top.docAt(i)) });
    return out;
  }

  /** The candidate row of a document with no score (`scan`'s hits, whose rows need no more than the hit columns). */
  plainRow(doc: number): PassageHit {
    return this.#candidate(doc, this.postings.rowIdOf(doc), undefined, undefined, undefined);
  }

  /**
   * The BM25 arm's candidate rows of these hits (`#row` each), their records read ahead first (`#readAhead`).
   */
  rows(hits: readonly TextHit[], q: TextQuery, withTerms: boolean): (PassageHit & { _score: number })[] {
    let ahead = 0;
    for (const h of hits) ahead += this.#readAhead(h.doc);
    readAhead.sum = ahead;
    return hits.map((h) => this.#row(h, q, withTerms));
  }

  /**
   * Reads a document's page record ahead of building its candidate, so the scattered cache misses of hundreds of
   * records overlap in the processor instead of stalling one by one. Returns what it read so the loads are kept.
   */
  #readAhead(doc: number): number {
    const rec = this.#page(this.#pageOf[doc]!);
    return rec === undefined ? 0 : rec.lastDoc + rec.titleIds.length;
  }

  /** The page record of a live document (a missing record is a bug: every added row sets its page's). */
  #recordOf(doc: number): PageRecord {
    const rec = this.#page(this.#pageOf[doc]!);
    if (!rec) throw new Error(`text postings: no page fields for document ${doc}`);
    return rec;
  }

  /**
   * Exact cosine distance of `query` to the live passages with these row ids, from the vectors in memory, keyed
   * `page_ref:ordinal` (a row id not live, or a passage without a vector, is absent). Null when no vectors are kept.
   */
  vectorDistances(query: Float32Array, rowIds: Iterable<number>): Map<string, number> | null {
    if (!this.vectors) return null;
    const docs: number[] = [];
    for (const id of rowIds) {
      const doc = this.postings.docOf(id);
      if (doc !== undefined) docs.push(doc);
    }
    const out = new Map<string, number>();
    for (const [doc, distance] of this.vectors.distances(query, docs)) out.set(`${this.#pageOf[doc]}:${this.#ordinalOf[doc]}`, distance);
    return out;
  }

  /**
   * A hit as the BM25 arm's candidate row; with `withTerms`, which of the query's probe terms it holds as
   * `_present` (query.ts `TermPresence` reads it instead of finding them in the row's analysed text).
   */
  #row(hit: TextHit, q: TextQuery, withTerms: boolean): PassageHit & { _score: number } {
    const present = withTerms ? this.postings.probePresence(hit, q.probe) : undefined;
    return this.#candidate(hit.doc, hit.rowId, hit.score, undefined, present) as PassageHit & { _score: number };
  }

  /**
   * A candidate row of either arm: hit columns, row id, the page's ranking data (near-key hashes, title ids) and the
   * arm's `_score` or `_distance` (plus `_present` when asked). One literal of one shape, so the code after the arms
   * stays monomorphic over hundreds of rows per query.
   */
  #candidate(
    doc: number,
    rowId: number,
    _score: number | undefined,
    _distance: number | undefined,
    _present: number | Uint8Array | undefined,
  ): PassageHit {
    const rec = this.#recordOf(doc);
    const row = {
      page_ref: this.#pageOf[doc]!,
      ordinal: this.#ordinalOf[doc]!,
      title: rec.title,
      host: rec.host,
      lang: rec.lang,
      group_key: rec.group_key,
      content_hash: rec.content_hash,
      near_print: rec.near_print,
      _present,
      _rowid: BigInt(rowId),
      _groupHash: rec.groupHash,
      _contentHash: rec.contentHash,
      _titleIds: rec.titleIds,
      _score,
      _distance,
    };
    row satisfies Pick<PassageHit, 'page_ref' | 'ordinal' | '_rowid' | '_groupHash' | '_contentHash' | '_titleIds' | keyof PageHitFields>;
    // Every hit column is there (HIT_COLUMNS: page_ref, ordinal and the page fields); RowOf's typing cannot narrow
    // PassageHit to them, as arrowRows' callers cannot either.
    return row as unknown as PassageHit;
  }
}

/** What the postings know of a live row: its passage's key and page number, and its page's fields. */
export interface RowPassage {
  readonly page_ref: number;
  readonly ordinal: number;
  readonly page_no: number | null;
  readonly fields: PageFieldRow;
}

/** Puts row `i` of a batch's snippet column into the store as document `doc`. */
type SnippetPutter = (store: SnippetStore, doc: number, i: number) => void;

/** An Arrow Utf8 column's chunk as the reader holds it: offsets into `values` per row (sliced to the chunk), validity. */
interface Utf8Chunk {
  readonly length: number;
  readonly nullCount: number;
  readonly valueOffsets: unknown;
  readonly values: unknown;
  getValid(i: number): boolean;
}

/**
 * How a batch's `snippet_text` goes into the store: a plain Utf8 column's bytes are copied as they are (no string
 * made and encoded again: at 1M passages those two steps were most of what the store added to the build), any other the values it reads as.
 */
function snippetPutter(col: { get(i: number): unknown }): SnippetPutter {
  const v = col as { type?: { typeId?: unknown }; data?: unknown };
  const chunks = Array.isArray(v.data) ? (v.data as Utf8Chunk[]) : null;
  if (
    v.type?.typeId !== ArrowType.Utf8 ||
    !chunks ||
    !chunks.every((d) => d.valueOffsets instanceof Int32Array && d.values instanceof Uint8Array)
  )
    return (store, doc, i) => store.put(doc, (col.get(i) as string | null | undefined) ?? null);
  // Rows are added in order: the chunk of row i is found from the previous one's.
  let c = 0;
  let base = 0;
  return (store, doc, i) => {
    if (i < base) c = base = 0;
    while (c < chunks.length && i >= base + chunks[c]!.length) base += chunks[c++]!.length;
    const d = chunks[c];
    if (!d) throw new RangeError(`snippet column: no row ${i}`);
    const j = i - base;
    if (d.nullCount > 0 && !d.getValid(j)) {
      store.putUtf8(doc, null);
      return;
    }
    const offsets = d.valueOffsets as Int32Array;
    store.putUtf8(doc, (d.values as Uint8Array).subarray(offsets[j]!, offsets[j + 1]!));
  };
}

/** What `TextSnapshot`'s read-ahead read, kept where the compiler cannot drop the reads as unused. */
const readAhead = { sum: 0 };

/** `#pageNoOf`'s null (a passage's page number is 1-based). */
const NO_PAGE_NO = -1;
/**
 * Image page records kept decoded for reads (cleared whole when full): a thread's memory follows the pages its queries
 * read rather than the index's, and a query mix over most pages keeps them all up to this bound (decoding a record
 * again is what a query would wait for: a bound below the pages a query mix reads made searches slower).
 */
const DECODED_PAGES = 65_536;

type Log = { info(o: object, msg: string): void; warn(o: object, msg: string): void } | undefined;

/** An image as the stats report it. */
function infoOf(image: EngineImage): { id: string; version: number; bytes: number; shared: boolean } {
  const h = image.header;
  return { id: h.id, version: h.version, bytes: image.buffer.byteLength, shared: image.buffer instanceof SharedArrayBuffer };
}

/** Where a text engine's images persist (engine-segments.ts) and, for the writer, when a new one is due. */
export interface EngineSegmentsOptions {
  readonly store: EngineSegments;
  /** Whether this engine publishes segments (the index writer only). */
  readonly write: boolean;
  /** @default DEFAULT_IMAGE_DOCS */
  readonly minChangedDocs?: number;
  /** @default DEFAULT_IMAGE_MS */
  readonly afterMs?: number;
  /**
   * The writer publishes what changed since its last publication as a delta segment once this many documents were
   * added or removed, or on any change after `deltaAfterMs`. @default DEFAULT_DELTA_DOCS
   */
  readonly deltaDocs?: number;
  /** @default DEFAULT_DELTA_MS */
  readonly deltaAfterMs?: number;
  /**
   * Once no sync (no write) came for this long, the writer publishes what it holds unpublished, but not sooner than
   * `deltaAfterMs` after its previous publication; and on a clean close. @default DEFAULT_QUIET_MS
   */
  readonly quietMs?: number;
  /**
   * The merge: a new base image instead of the next delta once the chain would hold more than `maxDeltas` deltas or
   * their bytes would pass `maxDeltaShare` of the base's. @default DEFAULT_MAX_DELTAS
   */
  readonly maxDeltas?: number;
  /** @default DEFAULT_MAX_DELTA_SHARE */
  readonly maxDeltaShare?: number;
}

/** A new image once this many documents were added or removed since the last, or any change after this long. */
const DEFAULT_IMAGE_DOCS = 50_000;
const DEFAULT_IMAGE_MS = 5 * 60_000;
/** A delta segment once this many documents changed since the last publication, or any change after this long. */
const DEFAULT_DELTA_DOCS = 2_000;
const DEFAULT_DELTA_MS = 30_000;
/**
 * Writes gone quiet this long: what the writer holds is published, so a reader that opens meanwhile (a restarted
 * replica) loads it rather than catching up from the table. Short against the time rule above, long against the gap
 * between the writes of one burst, so a burst still ends in one delta.
 */
const DEFAULT_QUIET_MS = 2_000;
/** The longest wait before a failed publication is tried again while no write comes. */
const MAX_RETRY_MS = 10 * 60_000;
/** `setTimeout`'s longest delay: a longer one is not armed at all (a bound of Infinity turns the rule off). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * A new base (the merge) once the chain holds this many deltas or their bytes pass this share of the base's: a
 * reader then applies a bounded number of small deltas, and the writer rewrites the whole state only after the
 * deltas grew to a fixed share of it, so the cost of publishing stays proportional to what was written.
 */
const DEFAULT_MAX_DELTAS = 8;
const DEFAULT_MAX_DELTA_SHARE = 0.25;
/** How long a search thread waits for its pool's image before it scans the table itself. */
const AWAIT_IMAGE_MS = 10 * 60_000;

/** Tombstones beyond this share of the documents trigger a rebuild (they still weigh in the statistics). */
const REBUILD_DEAD_SHARE = 0.25;
/** Failed syncs in a row after which a waiting query fails instead of waiting on (`ready`). */
const SYNC_ATTEMPTS = 3;

export interface TextEngineStats {
  readonly version: number | null;
  readonly docs: number;
  readonly live: number;
  readonly terms: number;
  readonly postings: number;
  /** Terms that keep a bitset of their documents besides their postings (postings.ts `DenseRule`), and its bytes. */
  readonly bitsets: { readonly terms: number; readonly bytes: number };
  /** Passages whose vectors are kept in memory for the vector arm (flat-vectors.ts); 0 when LanceDB answers it. */
  readonly vectors: number;
  /** Passages whose snippet text is kept in memory (snippet-store.ts), the store's bytes and its bound. */
  readonly snippets: { readonly docs: number; readonly bytes: number; readonly maxBytes: number };
  readonly lastSyncMs: number | null;
  /**
   * Syncs by how they found the changes: full builds, patches that scanned every row id, patches by the pages the
   * writer's commits named (a patch by pages that fell back to a scan counts in both), and re-keys after the writer's
   * compactions (every row id read with its page and ordinal, no passage analysed again).
   */
  readonly syncs: {
    readonly builds: number;
    readonly scans: number;
    readonly pages: number;
    readonly rekeys: number;
    readonly loads: number;
    /** Delta segments applied after a loaded base (engine-delta.ts). */
    readonly deltas: number;
    /** Syncs run, whatever they found (one that found the table at the postings' version reads its version only). */
    readonly runs: number;
  };
  /**
   * The engine image the postings were last made from or saved to (engine-image.ts; null: none): its id, table version,
   * bytes, and whether it is in memory other threads read (a SharedArrayBuffer). `made`: images this engine encoded,
   * `written`: of those, segments it published (engine-segments.ts); `deltas`: delta segments it published.
   */
  readonly image: { readonly id: string; readonly version: number; readonly bytes: number; readonly shared: boolean } | null;
  readonly images: { readonly made: number; readonly written: number; readonly deltas: number };
  /**
   * Work the postings' load did that grows with the index (`TextSnapshot.loadWork`): 0 when they were read in place
   * from an image.
   */
  readonly loadWork: number;
  /**
   * Page records held as objects (`records`: the snapshot's own and the image's decoded for reads) and the pages its
   * image holds in place (`inImage`): after a load, records grow with what queries read, not with the index.
   */
  readonly pageRecords: { readonly records: number; readonly inImage: number };
  /** BM25 arms and filter-only scans the postings answered since open (no other engine answers them). */
  readonly answers: number;
  /** Times a query waited for a sync to bring the postings to the version it reads (after a write, at open). */
  readonly waits: number;
  /**
   * A writer's publication (null: this engine publishes no segments): the table version of the newest segment it
   * published or extends (null: none yet), and since when (epoch ms) its postings have held changes no published
   * segment has (null: none, everything published).
   */
  readonly publication: { readonly version: number | null; readonly unpublishedSince: number | null } | null;
}

/** The writer's segments for the postings it follows (`TextEngine.#chain`). */
interface SegmentChain {
  readonly snap: TextSnapshot;
  readonly base: string;
  readonly baseBytes: number;
  id: string;
  version: number;
  deltas: number;
  deltaBytes: number;
  ops: DeltaOp[];
  changed: number;
  at: number;
}

/** The chain of a published `base` and its `deltas`, nothing patched since its newest file. */
function chainOf(snap: TextSnapshot, base: EngineImage, deltas: readonly EngineDelta[], at: number): SegmentChain {
  const newest = deltas.at(-1)?.header ?? base.header;
  return {
    snap,
    base: base.header.id,
    baseBytes: base.buffer.byteLength,
    id: newest.id,
    version: newest.version,
    deltas: deltas.length,
    deltaBytes: deltas.reduce((n, d) => n + d.buffer.byteLength, 0),
    ops: [],
    changed: 0,
    at,
  };
}

export class TextEngine {
  readonly #db: Connection;
  readonly #table: Table;
  readonly #tableName: string;
  readonly #log: Log;
  readonly #maxTermLength: number;
  #postings: TextSnapshot | null = null;
  #version: number | null = null;
  #syncing: Promise<void> | null = null;
  #again = false;
  #closed = false;
  #lastSyncMs: number | null = null;
  readonly #syncs = { builds: 0, scans: 0, pages: 0, rekeys: 0, loads: 0, deltas: 0, runs: 0 };
  /** Whether to follow the table (`start`). */
  #started = false;
  /** The error of the last sync, null when it succeeded. */
  #failure: Error | null = null;
  #answers = 0;
  #waits = 0;

  readonly #prefill: RowPrefill | null;

  /** Vectors to keep in memory (flat-vectors.ts) while the table's rows × dim × 4 stay within `maxBytes`. */
  readonly #vectors: { dim: number; maxBytes: number } | null;

  /** The bound of each snapshot's snippet store (snippet-store.ts); 0: none. */
  readonly #snippetBytes: number;

  /** What the versions after `from` up to `to` changed, or null when not known (passage-changes.ts). */
  readonly #changes: ((from: number, to: number) => PassageChangeSpan | null) | null;

  /** Where images are loaded from at open and, for the writer, published to (engine-segments.ts). */
  readonly #segments: EngineSegmentsOptions | null;
  /** Keep the postings as views of a shared image and tell `onImage` listeners each new one (a search pool's owner). */
  readonly #share: boolean;
  /** The analysis version images are made with and must match (maintenance.ts `ANALYSIS_VERSION`). */
  readonly #analysis: number;
  /** An image handed in (`offerImage`) to start from or move to at the next sync. */
  #offered: EngineImage | null = null;
  /** Whether the first build waits for an offered image instead of scanning (a search thread of a sharing pool). */
  #awaitImage: boolean;
  #offerWaiter: (() => void) | null = null;
  #triedSegments = false;
  /** The image the postings are views of (null: none, they are this engine's own arrays). */
  #image: EngineImage | null = null;
  /** The image last made or loaded, for the stats (its bytes are not kept when nothing reads them). */
  #imageInfo: { id: string; version: number; bytes: number; shared: boolean } | null = null;
  /** The postings when last imaged (or loaded) and their size then: what says a new image is due. */
  #imaged: { snap: TextSnapshot; docs: number; live: number; at: number } | null = null;
  #forceImage = false;
  readonly #images = { made: 0, written: 0, deltas: 0 };
  /**
   * The writer's chain of segments for the postings it follows (null: none, a base is due): the snapshot they
   * describe, the base's id and bytes, the newest file's id and version, the deltas' count and bytes, and the patches
   * made since the newest file (what the next delta holds) with the documents they changed.
   */
  #chain: SegmentChain | null = null;
  #forceDelta = false;
  readonly #imageListeners = new Set<(image: EngineImage) => void>();
  /** The publication in flight and those waiting for it, in order (a base supersedes every one waiting before it). */
  #publishing: Promise<void> | null = null;
  #toPublish: ({ base: EngineImage } | { delta: EngineDelta })[] = [];
  /** The writer's publication of what it holds once writes go quiet (`#armQuiet`). */
  #quietTimer: NodeJS.Timeout | null = null;
  /** Syncs and publications of the writer that failed in a row: the wait before it tries again while no write comes doubles with each. */
  #failuresInRow = 0;
  /** Since when (epoch ms) the postings have held changes no published segment has; null: none. */
  #unpublishedSince: number | null = null;
  /** Closing: the last publication, of what is left (`close`). */
  #closing = false;

  constructor(args: {
    db: Connection;
    table: Table;
    tableName: string;
    log: Log;
    maxTermLength: number;
    prefill?: RowPrefill;
    vectors?: { dim: number; maxBytes: number };
    /** Bytes of the passages' snippet text kept in memory (snippet-store.ts). @default 0 (none) */
    snippetBytes?: number;
    changes?: (from: number, to: number) => PassageChangeSpan | null;
    segments?: EngineSegmentsOptions;
    share?: boolean;
    /** An image to start from; 'await': wait for one to be offered before the first build (`AWAIT_IMAGE_MS` at most). */
    image?: EngineImage | 'await';
    /** @default 0 */
    analysis?: number;
  }) {
    this.#segments = args.segments ?? null;
    this.#share = args.share ?? false;
    this.#analysis = args.analysis ?? 0;
    this.#awaitImage = args.image === 'await';
    if (args.image && args.image !== 'await') this.#offered = args.image;
    this.#prefill = args.prefill ?? null;
    this.#snippetBytes = args.snippetBytes ?? 0;
    this.#changes = args.changes ?? null;
    this.#vectors = args.vectors ?? null;
    this.#db = args.db;
    this.#table = args.table;
    this.#tableName = args.tableName;
    this.#log = args.log;
    this.#maxTermLength = args.maxTermLength;
  }

  /** The postings when they are at `version` (the version the serving table reads); otherwise null and a sync starts. */
  at(version: number): TextSnapshot | null {
    if (this.#postings && this.#version === version) return this.#postings;
    this.start();
    return null;
  }

  /** Starts following the table (builds the postings now); until then `schedule` does nothing (a process that only writes). */
  start(): void {
    this.#started = true;
    this.schedule();
  }

  /**
   * The postings at `version`, waiting for the syncs that bring them there, so a query after a write never misses it.
   * Null when the postings are already past `version` (the caller asks again). A failing sync is retried; after
   * `SYNC_ATTEMPTS` failures in a row the query fails (the next one tries again).
   */
  async ready(version: number): Promise<TextSnapshot | null> {
    // Already there: no sync, which would read the table's version again on every query (every shard call of a
    // searcher) to find nothing new; a newer version is learned by the caller (`version`) and synced to below.
    if (this.#started && !this.#closed && this.#postings && this.#version === version) return this.#postings;
    this.start();
    let failures = 0;
    for (;;) {
      if (this.#closed) throw new Error('text postings: closed');
      if (this.#postings && this.#version === version) return this.#postings;
      if (this.#postings && this.#version !== null && this.#version > version) return null;
      if (!this.#syncing) {
        if (this.#failure && ++failures >= SYNC_ATTEMPTS) throw this.#failure;
        this.schedule();
      }
      this.#waits++;
      await this.#syncing;
    }
  }

  /** Counts a BM25 arm (or filter-only scan) the postings answered: what tells which engine answers (one does). */
  answered(): void {
    this.#answers++;
  }

  /** Whether a sync now patches the postings in place (they exist and are not due for a rebuild), as `#run` decides. */
  #patches(): boolean {
    return this.#postings !== null && this.#postings.postings.deadShare <= REBUILD_DEAD_SHARE;
  }

  /** Starts a sync to the table's latest version (coalesced with one already running), once `start` was called. */
  schedule(): void {
    if (this.#closed || !this.#started) return;
    if (this.#syncing) {
      this.#again = true;
      return;
    }
    this.#syncing = this.#run().finally(() => {
      this.#syncing = null;
      if (this.#again && !this.#closed) {
        this.#again = false;
        this.schedule();
        return;
      }
      // The writer's debounce: each sync (each write) moves the quiet publication later.
      this.#notePending();
      this.#armQuiet();
    });
  }

  /**
   * The key and page fields of a row live in the postings now (null otherwise): a result row then takes only the
   * passage's own columns, and not even its key (a row id names one row for the life of the table).
   */
  passageOfRow(rowId: number): RowPassage | null {
    return this.#postings?.passageOfRow(rowId) ?? null;
  }

  /**
   * A live row's snippet text from the postings' store (any version: a row id names one row for the life of the table):
   * null when the passage has none, undefined when the store does not hold it.
   */
  snippetOfRow(rowId: number): string | null | undefined {
    return this.#postings?.snippetOfRow(rowId);
  }

  /**
   * The title boost's statistics at the postings' version (exact: `TextSnapshot.titles`); null while none are built.
   */
  get titleStats(): TitleStats | null {
    return this.#postings?.titles ?? null;
  }

  /** A page's analysed title terms as ids from the postings (any version), when they hold that title in that language. */
  titleTermIds(pageRef: number, title: string, lang: string | null | undefined): TitleIds | undefined {
    return this.#postings?.titleTermIds(pageRef, title, lang);
  }

  /** Resolves when no sync is running (tests and benchmarks: wait until the postings can answer). */
  async idle(): Promise<void> {
    while (this.#syncing) await this.#syncing;
  }

  /** The table version the postings are at (null while none is built or a patch runs). */
  get version(): number | null {
    return this.#version;
  }

  stats(): TextEngineStats {
    const s = this.#postings?.postings.size;
    return {
      version: this.#version,
      docs: s?.docs ?? 0,
      live: s?.live ?? 0,
      terms: s?.terms ?? 0,
      postings: s?.postings ?? 0,
      bitsets: this.#postings?.postings.bitsets ?? { terms: 0, bytes: 0 },
      vectors: this.#postings?.vectors?.rows ?? 0,
      snippets: {
        docs: this.#postings?.snippets?.size.docs ?? 0,
        bytes: this.#postings?.snippets?.size.allocated ?? 0,
        maxBytes: this.#snippetBytes,
      },
      lastSyncMs: this.#lastSyncMs,
      syncs: { ...this.#syncs },
      image: this.#imageInfo ? { ...this.#imageInfo } : null,
      images: { ...this.#images },
      loadWork: this.#postings?.loadWork ?? 0,
      pageRecords: this.#postings?.pageRecords ?? { records: 0, inImage: 0 },
      answers: this.#answers,
      waits: this.#waits,
      publication: this.#segments?.write
        ? { version: this.#segments.store.chain?.version ?? null, unpublishedSince: this.#unpublishedSince }
        : null,
    };
  }

  /**
   * Stops syncing and waits for a running scan to let go of its table handle (before the connection closes). The
   * writer first publishes what it holds unpublished (a restart then loads it rather than catching up): a delta, or
   * the merge when the policy asks for one;
   * `publish: false`: not (engines replaced by a newer one that publishes instead).
   */
  async close(opts: { publish?: boolean } = {}): Promise<void> {
    this.#disarmQuiet();
    if ((opts.publish ?? true) && this.#segments?.write && this.#started && !this.#closed && this.#postings) {
      this.#closing = true;
      this.#forceDelta = true;
      this.schedule();
      await this.idle();
      while (this.#publishing) await this.#publishing;
      if (this.#pending()) this.#log?.warn({}, 'text postings: closed with changes unpublished; readers catch them up from the table');
    }
    this.#closed = true;
    this.#postings = null;
    this.#offerWaiter?.();
    await this.#syncing?.catch(() => undefined);
    while (this.#publishing) await this.#publishing;
  }

  async #run(): Promise<void> {
    const started = performance.now();
    this.#syncs.runs++;
    let pinned: Table | null = null;
    try {
      const target = await this.#table.version();
      const loaded = await this.#startingImage(target);
      if (this.#closed) return;
      if (loaded) {
        const start = loaded.image;
        const snap = this.#fromImage(start);
        // The deltas' patches replayed as the writer made them: no table row read or analysed.
        for (const d of loaded.deltas) {
          await applyDelta(snap, d);
          if (this.#closed) return;
        }
        const at = loaded.deltas.at(-1)?.header ?? start.header;
        this.#postings = snap;
        this.#version = at.version;
        this.#image = start;
        this.#imageInfo = infoOf(start);
        this.#syncs.loads++;
        this.#syncs.deltas += loaded.deltas.length;
        const s = snap.postings.size;
        const now = performance.now();
        this.#imaged = { snap, docs: s.docs, live: s.live, at: now };
        if (this.#segments?.write && loaded.manifest) this.#chain = chainOf(snap, start, loaded.deltas, now);
        this.#log?.info(
          { version: this.#version, image: start.header.id, deltas: loaded.deltas.length, target },
          'text postings loaded from an engine image',
        );
        // Loaded from a segment (already shared memory): the threads waiting for the owner's image start from it.
        if (this.#share) this.#announce(start);
      }
      if (this.#postings && this.#version === target) {
        this.#failure = null;
        await this.#makeImage();
        return;
      }
      pinned = await this.#db.openTable(this.#tableName);
      await pinned.checkout(target);
      const rebuild = !this.#patches();
      const from = this.#version;
      // Patched in place: nothing asks for the old version any more (the serving table is at `target` or later).
      if (!rebuild) this.#version = null;
      const span = !rebuild && from !== null ? (this.#changes?.(from, target) ?? null) : null;
      const postings = rebuild
        ? await this.#build(pinned)
        : span?.moved
          ? await this.#rekey(pinned, this.#postings!, span.pageRefs)
          : span
            ? await this.#patchPages(pinned, this.#postings!, span.pageRefs)
            : await this.#patch(pinned, this.#postings!);
      if (this.#closed || postings === null) return;
      // Row ids moved: an image from before cannot be caught up by row-id difference, so a new one is due for the
      // threads a sharing engine offers it to. The writer's delta holds the re-key (`#rekey`).
      if (span?.moved) this.#imaged = null;
      this.#postings = postings;
      this.#version = target;
      this.#failure = null;
      this.#lastSyncMs = performance.now() - started;
      if (rebuild) this.#log?.info({ version: target, ...postings.postings.size, ms: Math.round(this.#lastSyncMs) }, 'text postings built');
      await this.#makeImage();
    } catch (err) {
      // The table moved on under the scan (a compacted version's files removed) or the store failed: the queries
      // waiting for this version schedule the sync again (`ready`).
      this.#failure = err instanceof Error ? err : new Error(String(err));
      // A patch cut short left changes no recorded patch holds: the next publication is a base.
      this.#chain = null;
      if (this.#segments?.write) this.#failuresInRow++;
      this.#log?.warn({ err: this.#failure.message }, 'text postings sync failed');
    } finally {
      pinned?.close();
    }
  }

  /**
   * Hands this engine an image to move to (a search thread: its pool's owner made a newer one). Taken at the next
   * sync when it is at least as new as the postings (then patched to the table's version like any postings).
   */
  offerImage(image: EngineImage): void {
    this.#offered = image;
    this.#offerWaiter?.();
    if (this.#started) this.schedule();
  }

  /** Calls `fn` with each image this engine makes while sharing (`share`); returns an unsubscriber. */
  onImage(fn: (image: EngineImage) => void): () => void {
    this.#imageListeners.add(fn);
    return () => this.#imageListeners.delete(fn);
  }

  /** The image the postings are views of (null: none). */
  get image(): EngineImage | null {
    return this.#image;
  }

  /**
   * Images the postings now (shared and published as configured) and waits for the segment to be written: what the
   * writer does on its own when enough has changed (tests, and before a planned restart).
   */
  async imageNow(): Promise<void> {
    this.start();
    this.#forceImage = true;
    this.schedule();
    await this.idle();
    while (this.#publishing) await this.#publishing;
  }

  /**
   * The writer publishes what changed since its last publication as a delta segment now (a base when none is
   * published yet, or the merge policy asks for one) and waits for it to be written (tests).
   */
  async deltaNow(): Promise<void> {
    this.start();
    this.#forceDelta = true;
    this.schedule();
    await this.idle();
    while (this.#publishing) await this.#publishing;
  }

  /**
   * The image a sync starts from: an offered one at least as new as the postings; with no postings yet, the one a
   * sharing pool is about to offer (waited for), else the newest usable persisted segment (once, at open).
   */
  async #startingImage(target: number): Promise<(Pick<LoadedSegments, 'image' | 'deltas'> & { manifest?: unknown }) | null> {
    // Closed while this sync read the table's version: `close` found no waiter to release, so waiting now would hold
    // the thread (and its pool's close) until its owner terminates it.
    if (this.#closed) return null;
    if (!this.#postings && this.#awaitImage && !this.#offered) {
      this.#awaitImage = false; // once: a later rebuild scans rather than waits again
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#offerWaiter = resolve;
        timer = setTimeout(resolve, AWAIT_IMAGE_MS);
      });
      clearTimeout(timer);
      this.#offerWaiter = null;
      if (!this.#offered) this.#log?.warn({}, 'text postings: no engine image was offered in time; scanning');
    }
    const offered = this.#offered;
    this.#offered = null;
    // Taken when newer than the postings, or than the image they are views of: a thread then reads the owner's one copy
    // (and catches up from it) instead of keeping an older image alive beside it.
    const current = this.#image?.header.version ?? -1;
    if (
      offered &&
      (this.#postings === null || this.#version === null || offered.header.version > this.#version || offered.header.version > current)
    ) {
      if (offered.header.analysis === this.#analysis && offered.header.maxTermLength === this.#maxTermLength)
        return { image: offered, deltas: [] };
    }
    if (this.#postings || !this.#segments || this.#triedSegments) return null;
    this.#triedSegments = true;
    const found = await this.#segments.store.loadNewest(
      { analysis: this.#analysis, maxTermLength: this.#maxTermLength },
      target,
      this.#segments.write,
    );
    if (!found) this.#log?.info({ dir: this.#segments.store.dir }, 'text postings: no usable engine segments; scanning the table');
    // The writer clears what an earlier writer's death left (temporary files, segments no manifest names).
    if (this.#segments.write)
      await this.#segments.store
        .collect()
        .catch((err: unknown) => this.#log?.warn({ err: String(err) }, 'engine segments: clean-up failed'));
    return found;
  }

  /**
   * A snapshot over an image's memory (engine-image.ts `decodeImage`); `titles`: the title statistics of the snapshot
   * the image was just made of, taken over rather than decoded again.
   */
  #fromImage(image: EngineImage, titles?: TitleStats): TextSnapshot {
    const v = this.#vectors;
    const vectors = v ? { dim: v.dim, maxRows: Math.floor(v.maxBytes / (v.dim * 4)) } : undefined;
    const snap = new TextSnapshot(this.#maxTermLength, vectors, this.#snippetBytes, decodeImage(image), titles);
    // The first reader in the process made the vectors' shared memory: the threads the image goes to read it.
    if (!image.vectors && snap.vectors?.block) image.vectors = snap.vectors.block;
    return snap;
  }

  /**
   * After a sync: images the postings when due, for a writer of segments or a sharing engine; a sharing engine then
   * serves from the image and tells its listeners, a writer publishes it in the background (one publication at a
   * time). A sharing engine images them when never imaged, or `minChangedDocs` documents were added or removed
   * since, or on any change once `afterMs` passed. A writer publishes a base when it has none it can extend (never
   * published, postings rebuilt or re-keyed) or the merge policy asks for one (`#mergeDue`), and otherwise what
   * changed as a delta segment once `deltaDocs` documents changed or `deltaAfterMs` passed.
   */
  async #makeImage(): Promise<void> {
    const write = this.#segments?.write === true;
    if ((!write && !this.#share) || !this.#postings || this.#version === null) return;
    const snap = this.#postings;
    const s = snap.postings.size;
    const last = this.#imaged;
    const changed = last === null || last.snap !== snap ? Infinity : s.docs - last.docs + Math.abs(s.live - last.live);
    const now = performance.now();
    const o = this.#segments;
    const chain = write && this.#chain?.snap === snap ? this.#chain : null;
    // Closing: no image for the threads (they close too); what is published follows the writer's rules.
    let due =
      this.#forceImage ||
      (write && chain === null) ||
      (this.#share &&
        !this.#closing &&
        (changed >= (o?.minChangedDocs ?? DEFAULT_IMAGE_DOCS) ||
          (changed > 0 && now - (last?.at ?? 0) >= (o?.afterMs ?? DEFAULT_IMAGE_MS))));
    this.#forceImage = false;
    const forceDelta = this.#forceDelta;
    this.#forceDelta = false;
    if (!due && chain && chain.ops.length > 0 && this.#version !== chain.version) {
      const deltaDue =
        forceDelta || chain.changed >= (o?.deltaDocs ?? DEFAULT_DELTA_DOCS) || now - chain.at >= (o?.deltaAfterMs ?? DEFAULT_DELTA_MS);
      if (deltaDue) {
        const delta = encodeDelta(chain.ops, {
          version: this.#version,
          analysis: this.#analysis,
          maxTermLength: this.#maxTermLength,
          from: chain.version,
          base: chain.base,
          prev: chain.id,
          titles: snap.titles.totals,
        });
        if (this.#mergeDue(chain, delta.buffer.byteLength)) due = true;
        else {
          Object.assign(chain, {
            id: delta.header.id,
            version: delta.header.version,
            deltas: chain.deltas + 1,
            deltaBytes: chain.deltaBytes + delta.buffer.byteLength,
            ops: [],
            changed: 0,
            at: now,
          });
          this.#publish({ delta });
        }
      }
    }
    if (!due) return;
    // In slices: searches go on meanwhile (the postings do not change: this runs inside the sync, which holds them).
    const image = await encodeImageInSlices(
      snap.exportState(),
      { version: this.#version, analysis: this.#analysis, maxTermLength: this.#maxTermLength },
      new LoopBudget(),
    );
    if (this.#closed) return;
    this.#images.made++;
    this.#imageInfo = infoOf(image);
    // Sharing: the postings become views of the image (one copy for every thread). Otherwise the image is only
    // written out, and let go once published.
    this.#image = this.#share ? image : null;
    if (this.#share) this.#postings = this.#fromImage(image, snap.titles);
    this.#imaged = { snap: this.#postings, docs: s.docs, live: s.live, at: now };
    if (this.#share) this.#announce(image);
    if (write) {
      this.#chain = chainOf(this.#postings, image, [], now);
      this.#publish({ base: image });
    }
  }

  /** Whether the chain with one more delta of `bytes` would pass the merge policy's bounds (a new base is due). */
  #mergeDue(chain: SegmentChain, bytes: number): boolean {
    const o = this.#segments;
    return (
      chain.deltas + 1 > (o?.maxDeltas ?? DEFAULT_MAX_DELTAS) ||
      chain.deltaBytes + bytes > (o?.maxDeltaShare ?? DEFAULT_MAX_DELTA_SHARE) * chain.baseBytes
    );
  }

  #announce(image: EngineImage): void {
    for (const fn of this.#imageListeners)
      try {
        fn(image);
      } catch (err) {
        this.#log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'text postings: an image listener failed');
      }
  }

  #publish(job: { base: EngineImage } | { delta: EngineDelta }): void {
    // A base is the whole state: the publications still waiting are part of it.
    if ('base' in job) this.#toPublish = [];
    this.#toPublish.push(job);
    if (this.#publishing) return;
    const store = this.#segments!.store;
    const next = (): Promise<void> | null => {
      const j = this.#toPublish.shift();
      if (!j || this.#closed) return null;
      const write = 'base' in j ? store.publish(j.base) : store.publishDelta(j.delta);
      return write.then(
        () => {
          if ('base' in j) this.#images.written++;
          else this.#images.deltas++;
          this.#failuresInRow = 0;
        },
        (err: unknown) => {
          // Nothing later can follow a file that was not published: the next publication is a base.
          this.#chain = null;
          this.#failuresInRow++;
          this.#toPublish = this.#toPublish.filter((w) => 'base' in w);
          this.#log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'text postings: publishing an engine segment failed');
        },
      );
    };
    const run = async (): Promise<void> => {
      for (let p = next(); p; p = next()) await p;
    };
    this.#publishing = run().finally(() => {
      this.#publishing = null;
      this.#notePending();
      this.#armQuiet();
    });
  }

  /** Whether the writer's postings hold changes no published segment has (or a publication is still under way). */
  #pending(): boolean {
    const snap = this.#postings;
    if (!this.#segments?.write || !snap) return false;
    const chain = this.#chain;
    return (
      chain === null ||
      chain.snap !== snap ||
      (chain.ops.length > 0 && this.#version !== chain.version) ||
      this.#publishing !== null ||
      this.#toPublish.length > 0
    );
  }

  #notePending(): void {
    if (this.#pending()) this.#unpublishedSince ??= Date.now();
    else this.#unpublishedSince = null;
  }

  /**
   * The writer publishes what it holds once writes went quiet for `quietMs`, but not sooner than `deltaAfterMs` after
   * its previous publication, so a trickle of writes makes no more deltas (and merges) than the time rule does. After
   * a failed sync or publication (a base is due), it tries again after `deltaAfterMs`, doubling with each failure.
   * Re-armed after every sync and publication; a sync that comes first (a write) moves it.
   */
  #armQuiet(): void {
    this.#disarmQuiet();
    const o = this.#segments;
    if (!o?.write || this.#closed || this.#closing || this.#publishing || !this.#pending()) return;
    const quiet = o.quietMs ?? DEFAULT_QUIET_MS;
    const every = o.deltaAfterMs ?? DEFAULT_DELTA_MS;
    const chain = this.#chain;
    const delay =
      chain && chain.snap === this.#postings
        ? Math.max(quiet, chain.at + every - performance.now())
        : Math.min(Math.max(quiet, every) * 2 ** Math.min(Math.max(0, this.#failuresInRow - 1), 16), Math.max(quiet, every, MAX_RETRY_MS));
    if (!(delay <= MAX_TIMER_MS)) return; // Infinity: the rule is off
    this.#quietTimer = setTimeout(() => {
      this.#quietTimer = null;
      this.#forceDelta = true;
      this.schedule();
    }, delay);
    this.#quietTimer.unref();
  }

  #disarmQuiet(): void {
    if (this.#quietTimer) clearTimeout(this.#quietTimer);
    this.#quietTimer = null;
  }

  /** The columns a scan reads: the postings' own, the prefill's while it takes rows, the stores' while they keep them. */
  #scanColumns(fill: RowSink | null, snap: TextSnapshot): string[] {
    return [
      ...new Set([
        ...SCAN_COLUMNS,
        ...(fill && this.#prefill ? this.#prefill.columns : []),
        ...(snap.vectors ? ['vector'] : []),
        ...(snap.takesSnippets ? ['snippet_text'] : []),
      ]),
    ];
  }

  async #build(table: Table): Promise<TextSnapshot | null> {
    this.#syncs.builds++;
    const rows = await table.countRows();
    const v = this.#vectors;
    const maxRows = v ? Math.floor(v.maxBytes / (v.dim * 4)) : 0;
    const snap = new TextSnapshot(this.#maxTermLength, v && rows <= maxRows ? { dim: v.dim, maxRows } : undefined, this.#snippetBytes);
    let fill = this.#prefill ? this.#prefill.begin(rows, true) : null;
    for await (const batch of table.query().select(this.#scanColumns(fill, snap)).withRowId()) {
      if (this.#closed) return null;
      const ids = rowIdsOf(batch);
      if (!ids) throw new Error('text postings: the scan returned no _rowid');
      fill = await addInSlices(snap, batch, ids, { sink: fill, columns: this.#prefill?.columns ?? [] });
      // Bounded segments: no giant seal at the end.
      if (snap.postings.size.docs % 65_536 < batch.numRows) await snap.postings.flushInSlices();
    }
    await snap.postings.flushInSlices();
    return snap;
  }

  /**
   * The patch when the versions since the postings' are known writer commits (passage-changes.ts): only the pages they
   * touched are read and compared. If the live documents then do not number the table's rows (an untold change), the
   * whole-table patch reconciles.
   */
  async #patchPages(table: Table, snap: TextSnapshot, pageRefs: readonly number[]): Promise<TextSnapshot | null> {
    this.#syncs.pages++;
    const postings = snap.postings;
    const now = new Set<number>();
    const added: number[] = [];
    // Row ids only, then the new rows taken by id: a filtered read of every scan column cost more than both (it reads
    // them for the rows the page_ref index has not covered yet, the crawl's newest fragments).
    for (let i = 0; i < pageRefs.length; i += PAGES_PER_READ) {
      const refs = pageRefs.slice(i, i + PAGES_PER_READ).map((r) => String(Math.trunc(r)));
      const read = table
        .query()
        .where(`page_ref IN (${refs.join(', ')})`)
        .select(['page_ref'])
        .withRowId();
      if (!(await this.#readIds(read, postings, now, added))) return null;
    }
    const gone = snap.liveRowsOfPages(pageRefs).filter((id) => !now.has(id));
    const patched = await this.#apply(table, snap, gone, added);
    if (patched !== snap || patched.postings.size.live === (await table.countRows())) return patched;
    this.#log?.warn({ live: patched.postings.size.live }, 'text postings: the pages a commit named were not all it changed; scanning');
    return this.#patch(table, patched);
  }

  /**
   * The patch across the writer's maintenance (compaction moves rows to new ids): rows of pages no commit named are
   * re-keyed to their existing documents (nothing analysed again), named pages are patched. If any row or document
   * is left unmatched (an untold change), the whole-table patch reconciles instead.
   */
  async #rekey(table: Table, snap: TextSnapshot, pageRefs: readonly number[]): Promise<TextSnapshot | null> {
    this.#syncs.rekeys++;
    const named = new Set(pageRefs);
    const budget = new LoopBudget();
    const byKey = await snap.liveDocsByKey(named, budget);
    // The named pages' documents as they are (their rows are all read again), by row id.
    const gone = snap.liveRowsOfPages(named);
    const goneIds = new Set(gone);
    const moves: number[] = []; // document, new row id
    const added: number[] = [];
    let unmatched = byKey === null;
    if (byKey)
      for await (const batch of table.query().select(['page_ref', 'ordinal']).withRowId()) {
        if (this.#closed) return null;
        const ids = rowIdsOf(batch);
        const refs = batch.getChild('page_ref')?.toArray() as ArrayLike<number | bigint> | undefined;
        const ords = batch.getChild('ordinal')?.toArray() as ArrayLike<number | bigint> | undefined;
        if (!ids || !refs || !ords) throw new Error('text postings: the read returned no _rowid, page_ref or ordinal');
        for (let i = 0; i < ids.length && !unmatched; i++) {
          if ((i & 4095) === 4095) await budget.tick();
          const ref = Number(refs[i]);
          if (named.has(ref)) {
            added.push(ids[i]!);
            continue;
          }
          const key = keyOf(ref, Number(ords[i]));
          const doc = key === null ? undefined : byKey.get(key);
          // No document of that key, or a row id still held by a named page's document (never reused by Lance).
          if (doc === undefined || goneIds.has(ids[i]!)) unmatched = true;
          else {
            byKey.delete(key!);
            moves.push(doc, ids[i]!);
          }
        }
        if (unmatched) break;
      }
    if (unmatched || byKey!.size > 0) {
      this.#log?.warn(
        { live: snap.postings.size.live },
        'text postings: the rows after a compaction are not the passages before it; scanning',
      );
      return this.#patch(table, snap);
    }
    // Kept for the writer's next delta: the documents whose row id changes (a reader re-keys them alike).
    const chain = this.#chain?.snap === snap ? this.#chain : null;
    const changed: number[] = [];
    if (chain)
      for (let i = 0; i < moves.length; i += 2)
        if (snap.postings.rowIdOf(moves[i]!) !== moves[i + 1]) changed.push(moves[i]!, moves[i + 1]!);
    const pairs = snap.postings.rekey(moves);
    if (chain && changed.length > 0) {
      chain.ops.push({ moves: changed, gone: [], rows: emptyRows(false, false) });
      chain.changed += changed.length / 2;
    }
    this.#prefill?.moved?.(pairs);
    return this.#apply(table, snap, gone, added);
  }

  async #patch(table: Table, snap: TextSnapshot): Promise<TextSnapshot | null> {
    this.#syncs.scans++;
    const postings = snap.postings;
    const live = new Set<number>();
    const added: number[] = [];
    if (!(await this.#readIds(table.query().select(['ordinal']).withRowId(), postings, live, added))) return null;
    const gone: number[] = [];
    const budget = new LoopBudget();
    const liveIds = postings.liveRowIds();
    for (let i = 0; i < liveIds.length; i++) {
      if (!live.has(liveIds[i]!)) gone.push(liveIds[i]!);
      if ((i & 4095) === 4095) await budget.tick();
    }
    return this.#apply(table, snap, gone, added);
  }

  /** The row ids a read returns into `seen`, those the postings do not hold into `added`; false once the engine closed. */
  async #readIds(
    read: AsyncIterable<{ getChild(name: string): { toArray(): unknown } | null }>,
    postings: TextSnapshot['postings'],
    seen: Set<number>,
    added: number[],
  ): Promise<boolean> {
    for await (const batch of read) {
      if (this.#closed) return false;
      const ids = rowIdsOf(batch);
      if (!ids) throw new Error('text postings: the read returned no _rowid');
      for (const id of ids) {
        seen.add(id);
        if (!postings.has(id)) added.push(id);
      }
    }
    return !this.#closed;
  }

  /** Tombstones `gone`, adds the rows `added` (taken by row id at the pinned version) and makes them searchable. */
  async #apply(table: Table, snap: TextSnapshot, gone: readonly number[], added: readonly number[]): Promise<TextSnapshot | null> {
    const postings = snap.postings;
    // Tombstones still take memory and are walked past: when this patch would leave too many (a compaction rewrote most
    // rows under new ids), build afresh instead.
    const { docs, live: liveDocs } = postings.size;
    if ((docs - liveDocs + gone.length) / Math.max(1, docs + added.length) > REBUILD_DEAD_SHARE) return this.#build(table);
    const touched = snap.pagesOfRows(gone);
    postings.remove(gone);
    // The writer keeps the patch for its next delta segment (what a reader replays instead of reading these rows).
    const chain = this.#chain?.snap === snap ? this.#chain : null;
    const op: DeltaOp | null = chain ? { gone: [...gone], rows: emptyRows(snap.vectors !== null, snap.takesSnippets) } : null;
    let fill = added.length > 0 && this.#prefill ? this.#prefill.begin(added.length, false) : null;
    for (let i = 0; i < added.length; i += 4096) {
      const slice = added.slice(i, i + 4096);
      const batch = await table.takeRowIds(slice).select(this.#scanColumns(fill, snap)).withRowId().toArrow();
      const ids = rowIdsOf(batch);
      if (!ids) throw new Error('text postings: the take returned no _rowid');
      if (op) captureRows(batch, ids, op.rows);
      fill = await addInSlices(snap, batch, ids, { sink: fill, columns: this.#prefill?.columns ?? [] });
    }
    await postings.flushInSlices();
    snap.prunePages(touched);
    if (op && chain && (op.gone.length > 0 || op.rows.rowIds.length > 0)) {
      chain.ops.push(op);
      chain.changed += op.gone.length + op.rows.rowIds.length;
    }
    return snap;
  }
}

/**
 * A passage's key (page ref and ordinal) as one number, or null out of range (a page ref past 2^32 or an ordinal past
 * 2^20 passages: the re-key falls back to a scan).
 */
function keyOf(pageRef: number, ordinal: number): number | null {
  if (
    !Number.isInteger(pageRef) ||
    !Number.isInteger(ordinal) ||
    pageRef < -(2 ** 31) ||
    pageRef >= 2 ** 32 ||
    ordinal < 0 ||
    ordinal >= 2 ** 20
  )
    return null;
  return pageRef * 2 ** 20 + ordinal;
}

/**
 * Replays a delta segment's patches on a snapshot as the writer's `#apply` made them on its own (tombstones, rows
 * added through the same row adder, flush, pages pruned): no table row read or analysed.
 */
export async function applyDelta(snap: TextSnapshot, delta: EngineDelta): Promise<void> {
  for (const op of decodeDelta(delta)) {
    if (op.moves.length > 0) snap.postings.rekey(op.moves);
    const touched = snap.pagesOfRows(op.gone);
    snap.postings.remove(op.gone);
    await addInSlices(snap, op.batch, op.ids, { sink: null, columns: [] });
    await snap.postings.flushInSlices();
    snap.prunePages(touched);
  }
  // The title statistics follow the pages the patches added and pruned, as the writer's did: the writer's totals after
  // the delta are a check that they did (a reader that finds otherwise does not use the chain; it scans).
  const want = delta.header.titles;
  const got = snap.titles.totals;
  if (got.titles !== want.titles || got.terms !== want.terms)
    throw new Error(
      `engine delta ${delta.header.id}: title statistics ${got.titles}/${got.terms} after replay, the writer's ${want.titles}/${want.terms}`,
    );
}

/** Pages per read of a patch by pages (one `page_ref IN (…)` filter each). */
const PAGES_PER_READ = 500;

/** The `_rowid` column as numbers (Lance row ids: fragment id << 32 | offset, far below 2^53). */
function rowIdsOf(batch: { getChild(name: string): { toArray(): unknown } | null }): number[] | null {
  const col = batch.getChild('_rowid');
  if (!col) return null;
  const arr = col.toArray() as BigUint64Array | bigint[];
  const out = new Array<number>(arr.length);
  for (let i = 0; i < arr.length; i++) out[i] = Number(arr[i]!);
  return out;
}

/**
 * Rows analysed between two looks at the clock: a whole scan batch held the loop too long, and per-row cost varies
 * with load, so the loop yields when the slice's time is spent.
 */
const ROWS_PER_CHECK = 16;

/** Adds a batch in slices; returns the prefill's sink while it still takes rows (null once its bound is reached). */
async function addInSlices(
  snap: TextSnapshot,
  batch: Parameters<TextSnapshot['rowAdder']>[0],
  ids: readonly number[],
  fill: { sink: RowSink | null; columns: readonly string[] },
): Promise<RowSink | null> {
  const add = snap.rowAdder(batch, ids);
  let put = fill.sink ? rowPutter(fill.sink, fill.columns, batch, ids) : null;
  const budget = new LoopBudget();
  for (let from = 0; from < batch.numRows; from += ROWS_PER_CHECK) {
    const to = Math.min(batch.numRows, from + ROWS_PER_CHECK);
    add(from, to);
    if (put && !put(from, to)) put = null;
    await budget.tick();
  }
  return put ? fill.sink : null;
}

/**
 * Hands rows of a batch to the prefill, as the table's own take would read them (`arrowRows`): the columns are looked
 * up once; the returned function puts rows `from`..`to` and says whether the prefill still takes rows.
 */
function rowPutter(
  sink: RowSink,
  columns: readonly string[],
  batch: Parameters<TextSnapshot['rowAdder']>[0],
  ids: readonly number[],
): (from: number, to: number) => boolean {
  const cols = columns.flatMap((name) => {
    const c = batch.getChild(name);
    return c ? [[name, c] as const] : [];
  });
  return (from, to) => {
    for (let i = from; i < to; i++) {
      const row: Record<string, unknown> = {};
      for (const [name, c] of cols) row[name] = c.get(i);
      if (!sink(BigInt(ids[i]!), row)) return false;
    }
    return true;
  };
}
