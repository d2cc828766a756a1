/**
 * The passage index: LanceDB tables in `<dataDir>/lance` (or an object-storage prefix, location.ts).
 *
 * - `passages`: one row per passage, with the page fields filters and result rendering need denormalised into
 *   it, so a search reads ONE table version (a consistent snapshot) and never joins. A BM25 FTS index on
 *   `search_text` (the analysed terms of page title + passage, analyzer.ts); a `vector` column when an embedder
 *   exists.
 * - `pages`: one row per page (every PageInput field + derived country / province / source_type).
 * - `images`: image metadata (never bytes), FTS on alt text.
 *
 * Atomicity: a page's passages are replaced by ONE merge-insert commit (update matching (page_ref, ordinal),
 * insert new ones, delete that page's leftovers), so a reader sees the old page or the new one, never half. That
 * commit comes after the page rows', so no passage is ever visible without its page row; a write journal
 * (write-journal.ts) rolls a write killed between the tables' commits back at the next open.
 * Writes are serialised through one queue; maintenance.ts keeps the indexes up to date between them.
 *
 * The parts: columns.ts (the column table: schemas, row types, column lists), rows.ts (pages to rows and back),
 * maintenance.ts (indexes, optimize, upgrades), host-ids.ts (host id registry), open-tables.ts (connect and open).
 */
import * as lancedb from '@lancedb/lancedb';
import { MatchQuery, type FullTextQuery, type Table } from '@lancedb/lancedb';
import type { Schema, Table as ArrowTable } from 'apache-arrow';
import { LoopBudget } from '../event-loop.js';
import type { Logger } from 'pino';
import type { PageInput, PageSink } from '../page-model.js';
import {
  ALT_COLUMN,
  CONTINUATION_COLUMNS,
  HIT_COLUMNS,
  IMAGE_HIT_COLUMNS,
  KEY_COLUMNS,
  PASSAGE_OWN_ROW_COLUMNS,
  PASSAGE_ROW_COLUMNS,
  RESULT_ROW_COLUMNS,
  isWholeRow,
  STORED_PAGE_COLUMNS,
  TITLE_COLUMNS,
  VECTOR_COLUMNS,
  HOST_COLUMNS,
  imageSchema,
  pageSchema,
  type IMAGE_COLUMNS,
  type ImageRow,
  type MatchColumn,
  type PAGE_COLUMNS,
  type PageFieldRow,
  type PageRow,
  type PASSAGE_COLUMNS,
  type PassageHit,
  type PassageKey,
  type PassageRow,
  type PassageWriteRow,
  type ResultRow,
  type RowOf,
  passageKey,
} from './columns.js';
import type { Embedder } from './embedder.js';
import { followWriter, HostIds, lastRowId, type HostIdSource, type WriterFollower } from './host-ids.js';
import type { TextQuery } from './postings.js';
import { defaultRowCacheBytes, RowCache } from './row-cache.js';
import { defaultSnippetBytes } from './snippet-store.js';
import { TextEngine, type RowPassage, type RowPrefill, type TextEngineStats, type TextSnapshot } from './text-engine.js';
import { cosineDistance, FLAT_VECTOR_BYTES } from './flat-vectors.js';
import { localIndexLocation, writeIndexMeta, type IndexLocation } from './location.js';
import { ANALYSIS_VERSION, FTS_OPTIONS, IndexMaintenance, WriteQueue, type IndexMeta } from './maintenance.js';
import { openTables, type VectorsUnused } from './open-tables.js';
import { PassageChanges, type PassageCommit } from './passage-changes.js';
import {
  arrowRows,
  normaliseLang,
  pageRows,
  toImageHit,
  toStoredPage,
  toStoredPassage,
  type ImageHit,
  type StoredPage,
  type StoredPassage,
} from './rows.js';
import { TitleStats } from './title-stats.js';
import { beginWrite } from './write-journal.js';

export type { PassageHit, PassageKey, PassageRow, ResultRow } from './columns.js';
export type { HostIdSource } from './host-ids.js';
export type { ImageHit, StoredPage, StoredPassage } from './rows.js';

/** Ranking modes a response names. `-hashing` marks the deterministic stand-in embedder (no semantics). */
export const RANKING_MODES = ['hybrid-rrf', 'bm25', 'vector', 'hybrid-rrf-hashing', 'vector-hashing'] as const;
/** One of {@link RANKING_MODES}. */
export type RankingMode = (typeof RANKING_MODES)[number];

export interface IndexStats {
  readonly pages: number;
  readonly passages: number;
  readonly vectors: number;
  readonly images: number;
  /** Best ranking mode available now. */
  readonly rankingMode: RankingMode;
  readonly embedder: { readonly modelId: string; readonly kind: Embedder['kind'] } | null;
  readonly vectorIndex: boolean;
}

export interface OpenOptions {
  /** Folder of the LanceDB database (usually `<dataDir>/lance`); the same as `location: localIndexLocation(dir)`. */
  readonly dir?: string;
  /** Where the index lives: a local folder or an object-storage prefix (index/location.ts). Wins over `dir`. */
  readonly location?: IndexLocation;
  readonly embedder: Embedder | null;
  readonly log?: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** Run optimize() after this many writes. @default 200 */
  readonly optimizeEvery?: number;
  /**
   * Fold new rows into the full-text indexes this long after the last write (debounced; never more than ~10% of
   * the time is spent refreshing). Rows not yet folded in are found by plain term queries, but LanceDB 0.31 drops
   * them from boolean queries that also match the title index, so fresh pages must not wait for `optimizeEvery`.
   * 0 disables. @default 1000
   */
  readonly refreshAfterMs?: number;
  /** Build an ANN vector index once this many vectors exist (flat search below). @default 50000 */
  readonly vectorIndexThreshold?: number;
  /**
   * Where new hosts get their integer id (issue 10: the shared state's HostIdsRepo, so every writer of every
   * process agrees and ids never collide). Given only by the index's writer: at open it also rewrites rows whose
   * host id disagrees with the source (an index written before ids came from the database). Without it ids are
   * allocated here, max + 1 (single-writer `svc ingest`, benchmarks). Either way the ids are cached in memory.
   */
  readonly hostIds?: HostIdSource;
  /**
   * For a process that reads an index another process writes (`svc serve --role api|crawler`): how often to learn
   * the hosts the writer added since (site: compiles to host ids), checked only when the pages table has a new
   * version. 0: only when `catchUp` finds the writer ahead (a search thread: it is told the version with each request).
   * Undefined: never (this process is the writer, or the index does not change under it).
   */
  readonly followHostsMs?: number;
  /**
   * Answer the BM25 arm of unfiltered queries from in-process postings (postings.ts, text-engine.ts) whenever they
   * are at the table's version; LanceDB's full-text index answers otherwise. Costs memory (≈ 0.5–0.7 GB at 1M
   * passages, docs/bench-index.md). @default true
   */
  readonly textEngine?: boolean;
  /**
   * Whether this process writes the index. False for a process that reads an index another one writes (`svc serve
   * --role api|crawler`, `svc status`): opening then commits nothing to existing tables (no key-index build,
   * full-text rebuild or re-analysis of an older index: the writer does those), so readers opening beside the
   * writer's first write cannot race its index builds; and where there are no tables yet it waits up to
   * `waitForWriterMs` for the writer to create them (open-tables.ts). @default true
   */
  readonly writes?: boolean;
  /** For a reader (`writes` false): how long to wait for the writer's tables before creating empty ones. @default 0 */
  readonly waitForWriterMs?: number;
  /** Bytes of whole result rows kept in memory by row id (row-cache.ts); 0 disables. @default `defaultRowCacheBytes()` */
  readonly rowCacheBytes?: number;
  /**
   * Vectors kept in process for the vector arm while the index's rows × dimensions × 4 bytes stay within this
   * (flat-vectors.ts; with the in-process postings only); 0 disables. @default 32 MiB
   */
  readonly flatVectorBytes?: number;
  /**
   * Bytes of the passages' snippet text kept in memory beside the postings (snippet-store.ts; with the in-process
   * postings only), so a search result's rows are read from memory at any index size up to it; 0 disables.
   * @default `defaultSnippetBytes()`
   */
  readonly snippetBytes?: number;
}

/**
 * How long a query waits for the in-process postings to reach the table's version before LanceDB answers instead
 * (text-engine.ts `ready`, measured from the start of the sync): a patch after a write takes milliseconds on a quiet
 * small index and ≈ 0.5 s at 1M passages (a scan of the live row ids); the first build at 1M takes ≈ 40 s. Meant to be
 * long enough that one engine answers a given version: LanceDB scores in f32, the postings in f64, so the same query
 * answered by each differs in the 6th–7th digit. Session 11 tried 250 ms (searches beside a running crawl waited less:
 * p95 2.6 s → 1.2 s over REST) and the e2e test comparing REST with MCP for one query then saw 8.776209 against
 * 8.776208 on a loaded CI machine; back to 2 s. Even 2 s is not a guarantee on a loaded machine (that test now waits for
 * the postings before comparing): answering every query of a version from one engine, without a wait, is open work
 * (docs/benchmarks.md).
 */
const TEXT_SYNC_WAIT_MS = 2000;
/**
 * How long a query waits for a sync that patches postings already built (a write's pages, the re-key after a
 * compaction): such a sync reads row ids, not text, and a query sent to LanceDB meanwhile competes with it for the
 * same cores. At 1M passages beside a crawl (session 24, `bench/load.ts --lance … --crawl-hosts 20`), the re-key after
 * the writer's compaction took 5.3–5.5 s with queries waiting for it, and 17–27 s with each query going to LanceDB
 * after 2 s, where those full-text queries took 31–40 s each. Searches beside that crawl: 0.4/s at p50 40 s before,
 * 36.6/s at p50 287 ms with this wait, 47.9–55.0/s at p50 267–304 ms with search threads also following the writer's
 * commits (`notePassageCommits`). A bound, not a target: on a small index the patch takes milliseconds.
 */
const TEXT_FOLLOW_WAIT_MS = 30_000;
/** Rows converted to Arrow at a time before the event loop may get a turn (a passage row with its vector ≈ 0.1 ms). */
const ARROW_ROWS_PER_CHUNK = 64;

/** Hit columns plus the match columns a query's code checks read. */
const hitColumns = (extra: readonly MatchColumn[]): string[] => [...new Set([...HIT_COLUMNS, ...extra])];

/**
 * A read of passage rows (`passageRows`, `resultRows`): the columns a row holds, the passage's own columns to take when
 * the postings know the row (its key, page number and page fields are in memory then), and whether rows are whole.
 */
interface RowRead {
  readonly columns: readonly string[];
  readonly own: readonly string[];
  readonly whole: boolean;
  /** The only own column is the snippet text: a row the postings' snippet store holds needs no read at all. */
  readonly snippetOnly: boolean;
}
const ownOf = (columns: readonly string[]): string[] =>
  PASSAGE_OWN_ROW_COLUMNS.filter((c) => c !== 'page_ref' && c !== 'ordinal' && c !== 'page_no' && columns.includes(c));
/**
 * A row of a passage the postings know: the columns read from the table or the snippet store (`own`), its key and page
 * number from the postings, and its page's fields from their page record.
 */
function rowOfPassage(columns: readonly string[], p: RowPassage, own: Record<string, unknown>): ResultRow {
  const row: Record<string, unknown> = {};
  for (const c of columns)
    row[c] = c in own ? own[c] : c === 'page_ref' || c === 'ordinal' || c === 'page_no' ? p[c] : p.fields[c as keyof PageFieldRow];
  return row as unknown as ResultRow;
}
const rowRead = (columns: readonly string[], whole: boolean): RowRead => {
  const own = ownOf(columns);
  return { columns, own, whole, snippetOnly: own.length > 0 && own.every((c) => c === 'snippet_text') };
};
const WHOLE_ROWS = rowRead(PASSAGE_ROW_COLUMNS, true);
const RESULT_ROWS = rowRead(RESULT_ROW_COLUMNS, false);

/** The LanceDB-backed passage index. Implements the crawler's PageSink. */
export class PassageIndex implements PageSink {
  readonly #db: lancedb.Connection;
  readonly #passages: Table;
  readonly #pages: Table;
  readonly #images: Table;
  readonly #location: IndexLocation;
  readonly #log: OpenOptions['log'];
  readonly #queue = new WriteQueue();
  readonly #hostIds: HostIds;
  readonly #langs = new Set<string>();
  /** The greatest pages row id the open read saw: a reader following the writer reads the host rows after it. */
  #hostRowsThrough: bigint | null = null;
  readonly #meta: IndexMeta;
  readonly #maintenance: IndexMaintenance;
  /** The embedder whose vectors are in the table (null: no usable vectors). */
  readonly embedder: Embedder | null;
  /** A configured embedder this index cannot use (its vectors are another model's, or absent): responses say so. */
  readonly vectorsUnused: VectorsUnused | null;
  #titleStats = new TitleStats();
  #follower: WriterFollower | null = null;
  #catchingUp: Promise<void> | null = null;
  #engine: TextEngine | null = null;
  /** The pages each known version of the passages table changed (passage-changes.ts): the postings follow by them. */
  readonly #changes = new PassageChanges();
  readonly #commitListeners = new Set<(c: PassageCommit) => void>();
  #versionCache: { version: number; gen: number; at: number } | null = null;
  /** Rows of recent results, whole or as results read them (row-cache.ts). */
  readonly #rowCache: RowCache<ResultRow>;
  #statsCache: { key: string; counts: Pick<IndexStats, 'pages' | 'passages' | 'vectors' | 'images'> } | null = null;
  #passageSchemaCache: Schema | null = null;
  /** Rows a read served from memory (row cache, snippet store) and from the table, since open (`rowReads`). */
  readonly #rowReads = { memory: 0, table: 0 };
  #closed = false;

  private constructor(args: {
    db: lancedb.Connection;
    passages: Table;
    pages: Table;
    images: Table;
    location: IndexLocation;
    log: OpenOptions['log'];
    embedder: Embedder | null;
    vectorsUnused: VectorsUnused | null;
    optimizeEvery: number;
    vectorIndexThreshold: number;
    meta: IndexMeta;
    refreshAfterMs: number;
    writes: boolean;
    hostIdSource: HostIdSource | null;
    rowCacheBytes: number;
  }) {
    this.#rowCache = new RowCache(args.rowCacheBytes);
    // After each write of this process, bring the postings to the new version at once (queries wait for that briefly).
    this.#queue.onSettled = () => this.#engine?.schedule();
    this.#hostIds = new HostIds(args.hostIdSource);
    this.#meta = args.meta;
    this.#db = args.db;
    this.#passages = args.passages;
    this.#pages = args.pages;
    this.#images = args.images;
    this.#location = args.location;
    this.#log = args.log;
    this.embedder = args.embedder;
    this.vectorsUnused = args.vectorsUnused;
    this.#maintenance = new IndexMaintenance({
      tables: { passages: args.passages, pages: args.pages, images: args.images },
      queue: this.#queue,
      meta: args.meta,
      saveMeta: () => writeIndexMeta(this.#db, this.#location, this.#meta),
      embedder: args.embedder,
      log: args.log,
      writes: args.writes,
      optimizeEvery: args.optimizeEvery,
      refreshAfterMs: args.refreshAfterMs,
      vectorIndexThreshold: args.vectorIndexThreshold,
      isClosed: () => this.#closed,
      afterOptimize: async () => {
        if (this.#titleStats.stale) await this.#rebuildTitleStats();
      },
      passagesMaintenance: (maintenance, version) => this.#tell({ version, pageRefs: [], maintenance }),
    });
  }

  /**
   * Opens (creating when needed) the index in `dir`. When the stored vectors come from another model than
   * `embedder` (or the table has no vector column), vectors are not used: ranking is BM25 until re-ingested.
   */
  static async open(opts: OpenOptions): Promise<PassageIndex> {
    const location = opts.location ?? (opts.dir !== undefined ? localIndexLocation(opts.dir) : undefined);
    if (!location) throw new TypeError('PassageIndex.open needs a dir or a location');
    const writes = opts.writes ?? true;
    const { db, passages, pages, images, meta, embedder, vectorsUnused } = await openTables(
      location,
      opts.embedder,
      opts.log,
      writes ? undefined : { waitForWriterMs: opts.waitForWriterMs ?? 0 },
    );
    const idx = new PassageIndex({
      db,
      passages,
      pages,
      images,
      location,
      log: opts.log,
      embedder,
      vectorsUnused,
      meta,
      optimizeEvery: opts.optimizeEvery ?? 200,
      vectorIndexThreshold: opts.vectorIndexThreshold ?? 50_000,
      refreshAfterMs: opts.refreshAfterMs ?? 1000,
      writes,
      hostIdSource: opts.hostIds ?? null,
      rowCacheBytes: opts.rowCacheBytes ?? defaultRowCacheBytes(),
    });
    const reanalyse = writes && (meta.analysis ?? 1) < ANALYSIS_VERSION;
    if (reanalyse) {
      await idx.#maintenance.reanalyse();
      meta.analysis = ANALYSIS_VERSION;
      await writeIndexMeta(db, location, meta);
    }
    await idx.#loadState(); // rebuilds the full-text index after a re-analysis (`load`)
    // The re-analysis rewrote every passage row: the vector and page_ref indexes cover none of the new rows until an
    // optimize folds them in, which would otherwise wait for the next writes (a quiet index would search its vectors
    // flat and scan page_ref, ≈ 4× slower hybrid queries at 100k passages; docs/bench-index.md). Once, at open.
    if (reanalyse) await idx.#maintenance.optimize();
    await idx.#hostIds.adopt([passages, pages], opts.log);
    if (opts.followHostsMs !== undefined) {
      idx.#follower = followWriter(
        pages,
        opts.followHostsMs,
        idx.#hostRowsThrough,
        async (rows, pageCount) => {
          idx.#learnHosts(rows);
          // A reader's title statistics (BM25 of titles) come from its open and are not added to page by page as the
          // writer's are: rebuilt when the pages have moved by a fifth from the count they were built on (amortised:
          // a read of every title per 20 % of growth). Without this a search thread of a service started on an empty
          // index would score no title until a restart (no titles counted: every title scores 0).
          const counted = idx.#titleStats.size;
          if (pageCount !== counted && Math.abs(pageCount - counted) >= counted / 5) await idx.#rebuildTitleStats();
          // The writer may have built an index since (its first write builds the full-text one).
          await idx.#maintenance
            .recheck()
            .catch((err: unknown) => opts.log?.debug({ err }, 'index: re-reading the index list failed; next time'));
        },
        opts.log,
      );
    }
    if (opts.textEngine ?? true) {
      idx.#engine = new TextEngine({
        db,
        table: passages,
        tableName: 'passages',
        log: opts.log,
        maxTermLength: FTS_OPTIONS.maxTokenLength,
        prefill: idx.#rowPrefill(),
        snippetBytes: opts.snippetBytes ?? defaultSnippetBytes(),
        changes: (from, to) => idx.#changes.between(from, to),
        ...(embedder ? { vectors: { dim: embedder.dim, maxBytes: opts.flatVectorBytes ?? FLAT_VECTOR_BYTES } } : {}),
      });
      idx.#engine.schedule();
    }
    return idx;
  }

  /**
   * The postings' scans hand whole result rows to the row cache (text-engine.ts `RowPrefill`): a small index is then
   * served from memory, a large one from the rows its results read (least recently used out). A row's estimate is at
   * least ≈ 1 KiB (26 columns and its text), so a scan whose rows cannot fit reads no row columns: a whole table
   * that fits the bound may push out older rows (of row ids it no longer has, or its own again); a write's added rows
   * take only free room.
   */
  #rowPrefill(): RowPrefill {
    const cache = this.#rowCache;
    return {
      columns: PASSAGE_ROW_COLUMNS,
      begin: (rows, wholeTable) => {
        const { maxBytes, room } = cache.bound;
        if (rows * 1024 > (wholeTable ? maxBytes : room)) return null;
        const put = cache.fillPass(wholeTable);
        return (id, row) => put(id, row as unknown as ResultRow);
      },
      moved: (pairs) => cache.rekey(pairs.map(([from, to]) => [BigInt(from), BigInt(to)] as const)),
    };
  }

  async #loadState(): Promise<void> {
    const columns = [...new Set([...HOST_COLUMNS, ...TITLE_COLUMNS])];
    const rows = (await this.#pages.query().select(columns).withRowId().toArray()) as (RowOf<typeof PAGE_COLUMNS, 'hosts' | 'titles'> & {
      _rowid: bigint;
    })[];
    this.#titleStats = await TitleStats.build(rows.map((r) => ({ title: r.title, lang: r.lang })));
    this.#learnHosts(rows);
    this.#hostRowsThrough = lastRowId(rows, null);
    await this.#maintenance.load();
  }

  #learnHosts(rows: readonly RowOf<typeof PAGE_COLUMNS, 'hosts'>[]): void {
    this.#hostIds.learn(rows);
    for (const r of rows) if (r.lang) this.#langs.add(r.lang);
  }

  /** Folder or object-storage URI of the database. */
  get dir(): string {
    return this.#location.uri;
  }

  /** Where the index lives (log `location.label`, never the object: it holds credentials). */
  get location(): IndexLocation {
    return this.#location;
  }

  /** Integer ids of every known host equal to `domain` or under it (site: compiles to these numbers). */
  hostIdsUnder(domain: string): number[] {
    return this.#hostIds.under(domain);
  }

  /** Whether a language value occurs in the index (the closed set language filters compile against). */
  hasLang(lang: string): boolean {
    return this.#langs.has(lang);
  }

  /** Insert or replace one page atomically. */
  upsertPage(page: PageInput): Promise<void> {
    return this.upsertPages([page]);
  }

  /**
   * Insert or replace many pages; each page is replaced in the same commit as the others of the batch (one
   * merge-insert), so no reader sees a page half-written. Embeds passages first (outside the write queue).
   */
  async upsertPages(pages: readonly PageInput[]): Promise<void> {
    if (pages.length === 0) return;
    const byRef = new Map<number, PageInput>();
    for (const p of pages) byRef.set(p.pageRef, p); // last one wins within a batch
    const list = [...byRef.values()];
    // New hosts get their id from the shared source before the rows are built (the cache answers known ones).
    await this.#hostIds.allocate(list.map((p) => p.host.toLowerCase()));
    const rows: PassageWriteRow[] = [];
    const texts: string[] = [];
    const pageRowList: PageRow[] = [];
    const imageRows: ImageRow[] = [];
    for (const p of list) {
      const out = pageRows(p, (host) => this.#hostIds.idFor(host));
      rows.push(...out.passages);
      texts.push(...out.embedTexts);
      pageRowList.push(out.page);
      imageRows.push(...out.images);
    }
    if (this.embedder && rows.length > 0) {
      const vecs = await this.embedder.embed(texts);
      rows.forEach((r, i) => (r.vector = Array.from(vecs[i]!)));
    } else if (this.#hasVectorColumn()) {
      for (const r of rows) r.vector = null;
    }
    const refs = list.map((p) => p.pageRef).join(', ');
    // Converted before the write queue: a long conversion does not hold up the writes queued behind this one.
    const pageTable = await this.#arrowRows(pageRowList, pageSchema);
    const imageTable = imageRows.length > 0 ? await this.#arrowRows(imageRows, imageSchema) : null;
    const passageTable =
      rows.length > 0
        ? await this.#arrowRows(rows, this.#passageSchemaCache ?? (this.#passageSchemaCache = await this.#passages.schema()))
        : null;
    await this.#queue.run(async () => {
      this.#assertOpen();
      // Page rows and images first, passages last: search reads only the passages table, so its commit is the
      // moment the page changes, and by then the page row is there (no reader sees passages of an absent page).
      // The journal makes the three commits one: a crash between them is rolled back at the next open.
      const endWrite = await beginWrite(this.#location.journalDir, { passages: this.#passages, pages: this.#pages, images: this.#images });
      const pageFilter = `page_ref IN (${refs})`;
      await this.#pages.mergeInsert('page_ref').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(pageTable);
      await this.#images.delete(pageFilter);
      if (imageTable) await this.#images.add(imageTable);
      const before = await this.#passages.version();
      let version: number;
      if (!passageTable) ({ version } = await this.#passages.delete(pageFilter));
      else {
        let merge = this.#passages.mergeInsert(KEY_COLUMNS).whenMatchedUpdateAll().whenNotMatchedInsertAll();
        // The by-source delete (a page that lost passages) scans the whole table; only a write that drops one pays it.
        if (await this.#dropsPassages(pageFilter, rows)) merge = merge.whenNotMatchedBySourceDelete({ where: pageFilter });
        ({ version } = await merge.execute(passageTable));
      }
      endWrite();
      this.#committed(
        before,
        version,
        list.map((p) => p.pageRef),
      );
      for (const r of pageRowList) if (typeof r.lang === 'string') this.#langs.add(r.lang);
      for (const p of list) this.#titleStats.add(p.title, normaliseLang(p.lang));
      await this.#maintenance.afterWrite(list.length);
    });
  }

  /**
   * Whether the stored passages of the pages in `pageFilter` include one that `rows` do not have (a page rewritten
   * with fewer passages, or other ordinals). Only then does a write need merge-insert's by-source delete, which
   * scans the whole table (≈ 0.5 s a write at 1M passages against ≈ 55 ms for a plain merge-insert, docs/benchmarks.md
   * session 25); a new page, or one rewritten with the same passages or more, is a plain merge-insert, in one commit
   * either way. Read inside the write queue, so no other write changes the answer before the commit.
   */
  async #dropsPassages(pageFilter: string, rows: readonly PassageWriteRow[]): Promise<boolean> {
    const fresh = new Set(rows.map(passageKey));
    const stored = (await this.#passages.query().where(pageFilter).select(KEY_COLUMNS).toArray()) as PassageKey[];
    return stored.some((r) => !fresh.has(passageKey(r)));
  }

  #hasVectorColumn(): boolean {
    return this.#meta.vectorDim !== null;
  }

  /**
   * Rows → an Arrow table with exactly `schema` (so nullable columns that are all null keep their type). Built
   * `ARROW_ROWS_PER_CHUNK` rows at a time, one record batch each, and the event loop gets turns in between: a
   * crawler's batch of 64 pages is hundreds of passages with their vectors, and converting them in one go held the
   * loop for ≈ 100 ms (bench/load.ts --crawl-hosts).
   */
  async #arrowRows(rows: readonly object[], schema: Schema): Promise<ArrowTable> {
    const make = (part: readonly object[]) => lancedb.makeArrowTable(part as Record<string, unknown>[], { schema });
    if (rows.length <= ARROW_ROWS_PER_CHUNK) return make(rows);
    const budget = new LoopBudget();
    const parts: ArrowTable[] = [];
    for (let i = 0; i < rows.length; i += ARROW_ROWS_PER_CHUNK) {
      parts.push(make(rows.slice(i, i + ARROW_ROWS_PER_CHUNK)));
      await budget.tick();
    }
    return parts[0]!.concat(...parts.slice(1));
  }

  /**
   * A commit of this writer to the passages table that moved it from `before` to `version`, touching `pageRefs`: a
   * version made by this commit alone (one more than `before`) is recorded and told to the listeners (the search
   * threads). Any other step (another commit came between, or nothing was committed) is not recorded.
   */
  #committed(before: number, version: number, pageRefs: readonly number[]): void {
    if (version !== before + 1) return;
    this.#tell({ version, pageRefs });
  }

  #tell(c: PassageCommit): void {
    this.#changes.record(c);
    for (const fn of this.#commitListeners)
      try {
        fn(c);
      } catch (err) {
        // The commit stands; a reader not told of it scans for its changes.
        this.#log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'index: a commit listener failed');
      }
  }

  /** Calls `fn` with each commit of this writer to the passages table (the search pool forwards them); returns an unsubscriber. */
  onPassageCommit(fn: (c: PassageCommit) => void): () => void {
    this.#commitListeners.add(fn);
    return () => this.#commitListeners.delete(fn);
  }

  /** The writer's commits, for a reader of the same index in this process (a search thread): its postings follow by them. */
  notePassageCommits(commits: readonly PassageCommit[]): void {
    for (const c of commits) this.#changes.record(c);
    // The postings follow the writer now, not at the next query: at 1M passages the re-key after a compaction takes
    // seconds, and the first queries after a quiet spell waited for all of it (session 24). A maintenance's begin mark
    // is not followed: its end is.
    const latest = commits.reduce((v, c) => (c.maintenance === 'begin' ? v : Math.max(v, c.version)), -1);
    if (latest < 0 || !this.#engine || this.#closed) return;
    this.catchUp(latest).then(
      () => this.#engine?.schedule(),
      (err: unknown) => this.#log?.debug({ err: err instanceof Error ? err.message : String(err) }, 'index: following a commit failed'),
    );
  }

  /** Removes a page from every surface (passages first: search stops returning it with that commit). */
  removePage(pageRef: number): Promise<void> {
    if (!Number.isInteger(pageRef)) return Promise.reject(new RangeError('page_ref must be an integer'));
    return this.#queue.run(async () => {
      this.#assertOpen();
      const f = `page_ref = ${pageRef}`;
      const endWrite = await beginWrite(this.#location.journalDir, { passages: this.#passages, pages: this.#pages, images: this.#images });
      const before = await this.#passages.version();
      const { version } = await this.#passages.delete(f);
      await this.#pages.delete(f);
      await this.#images.delete(f);
      endWrite();
      this.#committed(before, version, [pageRef]);
      await this.#maintenance.afterWrite(1);
    });
  }

  /** Recounts the title statistics from the stored titles (see title-stats.ts); readers keep the old ones meanwhile. */
  async #rebuildTitleStats(): Promise<void> {
    try {
      const rows = (await this.#pages.query().select(TITLE_COLUMNS).toArray()) as RowOf<typeof PAGE_COLUMNS, 'titles'>[];
      this.#titleStats = await TitleStats.build(rows);
    } catch (err) {
      this.#log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'title statistics rebuild failed');
    }
  }

  /** BM25 of a title (in `lang`) for analysed query terms, from the title statistics: the BM25 arm's title boost. */
  titleScore(queryTerms: readonly string[], row: Pick<PassageHit, 'page_ref' | 'title' | 'lang' | '_titleIds'>): number {
    // The postings hold each page's analysed title (whatever version they are at, it is that title's analysis); a
    // candidate they gave carries it.
    const ids = row._titleIds ?? this.#engine?.titleTermIds(row.page_ref, row.title, row.lang);
    return this.#titleStats.score(queryTerms, row.title, row.lang, ids);
  }

  /** Compacts, updates indexes, and builds the vector index once large enough. Serialised with writes. */
  optimize(): Promise<void> {
    return this.#maintenance.optimize();
  }

  /** The stored page, or null. */
  async getPage(pageRef: number): Promise<StoredPage | null> {
    if (!Number.isInteger(pageRef)) return null;
    const rows = await this.#pages.query().where(`page_ref = ${pageRef}`).select(STORED_PAGE_COLUMNS).limit(1).toArray();
    const r = rows[0] as RowOf<typeof PAGE_COLUMNS, 'stored'> | undefined;
    return r ? toStoredPage(r) : null;
  }

  /** Ordered passages of a page from `offset` (0-based ordinal position), at most `limit`. */
  async pagePassages(
    pageRef: number,
    offset: number,
    limit: number,
  ): Promise<{ page: StoredPage; passages: StoredPassage[]; total: number } | null> {
    if (!Number.isInteger(pageRef) || !Number.isInteger(offset) || !Number.isInteger(limit)) return null;
    // Read passages first then the page: the passages are what must be consistent with each other.
    const rows = (await this.#passages.query().where(`page_ref = ${pageRef}`).select(CONTINUATION_COLUMNS).toArray()) as RowOf<
      typeof PASSAGE_COLUMNS,
      'continuation'
    >[];
    if (rows.length === 0) return null;
    const page = await this.getPage(pageRef);
    if (!page) return null;
    rows.sort((a, b) => a.ordinal - b.ordinal);
    const slice = rows.slice(Math.max(0, offset), Math.max(0, offset) + Math.max(0, limit));
    return { page, total: rows.length, passages: slice.map(toStoredPassage) };
  }

  /** Image metadata whose alt text matches `text` (BM25), best first. */
  async searchImages(text: string, limit: number): Promise<ImageHit[]> {
    const n = Math.max(1, Math.min(100, Math.floor(limit)));
    if (!this.#maintenance.imageFtsReady || text.trim() === '') return [];
    const rows = (await this.#images
      .query()
      .fullTextSearch(new MatchQuery(text.slice(0, 300), ALT_COLUMN))
      .select([...IMAGE_HIT_COLUMNS, '_score'])
      .limit(n)
      .toArray()) as RowOf<typeof IMAGE_COLUMNS, 'hit'>[];
    return rows.map(toImageHit);
  }

  /** Whether the passages' full-text index exists (it is built with the first write). */
  fullTextReady(): boolean {
    return this.#maintenance.ftsReady;
  }

  /** BM25 arm: passages matching `fts`, best first, with their BM25 score. */
  async ftsCandidates(
    fts: FullTextQuery,
    where: string | null,
    k: number,
    extra: readonly MatchColumn[] = [],
  ): Promise<(PassageHit & { _score: number })[]> {
    if (!this.#maintenance.ftsReady) return [];
    let q = this.#passages
      .query()
      .fullTextSearch(fts)
      .select([...hitColumns(extra), '_score'])
      .withRowId()
      .limit(k);
    if (where) q = q.where(where);
    return arrowRows<PassageHit & { _score: number }>(await q.toArrow());
  }

  /**
   * BM25 arm from the in-process postings: the k passages best matching `text`, with their BM25 score (repeated
   * words included), in no particular order (retrieval ranks them by its own final score; sorting them here too was
   * ≈ 2 % of a SciFact search). Null when the postings cannot answer for this table version or with this filter (the
   * caller then asks `ftsCandidates`).
   */
  async textCandidates(
    text: TextQuery,
    where: string | null,
    k: number,
    extra: readonly MatchColumn[] = [],
  ): Promise<(PassageHit & { _score: number })[] | null> {
    if (where !== null || !this.#engine) return null;
    const snap = await this.#textSnapshot();
    if (!snap) return null;
    const hits = snap.postings.search(text, k, false);
    if (hits.length === 0) return [];
    // The hit fields are in memory; only checks that read more (phrases, url:, filetype:) take the rows.
    if (extra.every((c) => c === 'search_text')) return snap.rows(hits, text, extra.length > 0);
    let rows: (PassageHit & { _rowid: bigint })[];
    try {
      rows = arrowRows(
        await this.#passages
          .takeRowIds(hits.map((h) => h.rowId))
          .select(hitColumns(extra))
          .withRowId()
          .toArrow(),
      );
    } catch {
      return null; // the version moved on between the check and the take (rows compacted away): ask LanceDB
    }
    const byId = new Map(rows.map((r) => [Number(r._rowid), r]));
    return hits.flatMap((h) => {
      const r = byId.get(h.rowId);
      return r ? [{ ...r, _score: h.score }] : [];
    });
  }

  /** The in-process postings at the version this process serves, or null (LanceDB answers). */
  async #textSnapshot(): Promise<TextSnapshot | null> {
    if (!this.#engine) return null;
    const version = await this.#servingVersion();
    const snap = await this.#engine.ready(version, TEXT_SYNC_WAIT_MS, TEXT_FOLLOW_WAIT_MS);
    if (snap || (this.#engine.version ?? -1) <= version) return snap;
    // The postings moved past the cached version (a reader's table refreshed itself): read it again.
    this.#versionCache = null;
    return this.#engine.ready(await this.#servingVersion(), TEXT_SYNC_WAIT_MS, TEXT_FOLLOW_WAIT_MS);
  }

  /**
   * The passages table's version as this process reads it, without a call into LanceDB per query (≈ 1.5 ms of a small
   * index's query under load): re-read after any write of this process, and — when other processes write the index
   * (a read consistency interval is set) — at least every 250 ms or the interval if shorter, which adds at most that
   * to the documented delay.
   */
  async #servingVersion(): Promise<number> {
    const gen = this.#queue.generation;
    const c = this.#versionCache;
    // An interval of 0 promises the next read sees another process's commit: then the version is read every time.
    const interval = this.#location.readConsistencyS;
    const ttl = interval === undefined ? Infinity : Math.min(250, interval * 1000);
    if (c && c.gen === gen && this.#queue.idle && performance.now() - c.at < ttl) return c.version;
    const version = await this.#passages.version();
    if (this.#queue.idle) this.#versionCache = { version, gen, at: performance.now() };
    return version;
  }

  /**
   * The passages table's version this process serves (cached as `#servingVersion` says). A search thread of this
   * process is told it with each request (`catchUp`), so it answers from that version or a later one.
   */
  servingVersion(): Promise<number> {
    this.#assertOpen();
    return this.#servingVersion();
  }

  /**
   * For a reader of an index this process's writer writes (a search thread, tools/search-pool.ts): when this reader's
   * view of the passages table is older than `version`, re-reads the location now (LanceDB's `checkoutLatest`, ≈ 0.3
   * ms on a local folder) instead of waiting for the read consistency interval, and learns the writer's new hosts
   * (`site:`) before the query runs. So a caller sees, from any thread, what the writer had committed when its request
   * arrived. Calls that overlap share one re-read.
   */
  async catchUp(version: number): Promise<void> {
    this.#assertOpen();
    // Twice at most: a shared re-read already in flight may have begun before the writer committed `version` (another
    // request's); one begun after this call sees it.
    for (let attempt = 0; attempt < 2; attempt++) {
      // A re-read in flight may have moved the version already but not yet learned the hosts: wait for all of it.
      if (this.#catchingUp) await this.#catchingUp;
      if ((await this.#servingVersion()) >= version) return;
      this.#catchingUp ??= (async () => {
        try {
          await Promise.all([this.#passages.checkoutLatest(), this.#pages.checkoutLatest(), this.#images.checkoutLatest()]);
          this.#versionCache = null;
          await this.#follower?.lookNow();
        } finally {
          this.#catchingUp = null;
        }
      })();
      await this.#catchingUp;
    }
  }

  /** Waits until the in-process postings are at the table's current version (tests, benchmarks, warm-up). */
  async textEngineReady(): Promise<void> {
    if (!this.#engine) return;
    for (;;) {
      await this.#engine.idle();
      if (this.#engine.at(await this.#passages.version())) return;
    }
  }

  /** BM25 of `fts` on the given passages (a row-id prefilter: only their postings are scored), keyed `page_ref:ordinal`. */
  async ftsScores(fts: FullTextQuery, passages: readonly PassageKey[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const ids = [...new Set(passages.flatMap((p) => (typeof p._rowid === 'bigint' ? [p._rowid] : [])))];
    if (!this.#maintenance.ftsReady || ids.length === 0) return out;
    const q = this.#passages
      .query()
      .fullTextSearch(fts)
      .where(`_rowid IN (${ids.join(', ')})`)
      .select([...KEY_COLUMNS, '_score'])
      .limit(ids.length);
    for (const r of arrowRows<PassageKey & { _score: number }>(await q.toArrow())) out.set(passageKey(r), r._score);
    return out;
  }

  /**
   * Exact cosine distance of the query vector to each of the given passages (row-id prefilter, no vector index), keyed
   * `page_ref:ordinal`; a passage without a vector, or gone, is absent. For candidate sets the BM25 arm has already
   * enumerated completely (retrieval.ts), where an approximate nearest-neighbour search over the whole index would
   * only rediscover a subset of them, approximately and deeper.
   */
  async vectorDistances(vector: Float32Array, passages: readonly PassageKey[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const ids = [...new Set(passages.flatMap((p) => (typeof p._rowid === 'bigint' ? [p._rowid] : [])))];
    if (!this.embedder || ids.length === 0) return out;
    // The vectors are in memory (a small index, flat-vectors.ts): no take.
    const inMemory = (await this.#textSnapshot())?.vectorDistances(vector, ids.map(Number));
    if (inMemory) return inMemory;
    // Taken by row id and compared here: a vector search restricted by `_rowid IN (…)` scanned the table (≈ 700 ms for
    // 1,000 ids at 1M passages) where the take is a few ms and 1,000 × 384 products are well under one.
    const table = await this.#passages.takeRowIds(ids).select(VECTOR_COLUMNS).toArrow();
    const refs = table.getChild('page_ref');
    const ords = table.getChild('ordinal');
    const vecs = table.getChild('vector');
    if (!refs || !ords || !vecs) return out;
    for (let r = 0; r < table.numRows; r++) {
      const x = (vecs.get(r) as { toArray(): Float32Array } | null)?.toArray();
      const d = x && x.length === vector.length ? cosineDistance(vector, x) : undefined;
      if (d !== undefined) out.set(`${refs.get(r)}:${ords.get(r)}`, d);
    }
    return out;
  }

  /**
   * Vector arm: nearest passages by cosine distance (prefiltered by `where`). `minSimilarity`: passages below it may be
   * left out (the caller drops them; the search from memory builds no row for them).
   */
  async vectorCandidates(
    vector: Float32Array,
    where: string | null,
    k: number,
    extra: readonly MatchColumn[] = [],
    minSimilarity?: number,
  ): Promise<(PassageHit & { _distance: number })[]> {
    if (!this.embedder) return [];
    if (where === null && extra.length === 0 && this.#engine) {
      // A small index's vectors are in memory (flat-vectors.ts): the same exact search LanceDB's flat scan makes.
      const near = (await this.#textSnapshot())?.nearestRows(vector, k, minSimilarity);
      if (near) return near;
    }
    let q = this.#passages
      .vectorSearch(Array.from(vector))
      .distanceType('cosine')
      .select([...hitColumns(extra), '_distance'])
      .withRowId()
      .limit(k);
    if (where) q = q.where(where);
    if (this.#maintenance.vectorIndex) q = q.nprobes(20).refineFactor(5);
    return arrowRows<PassageHit & { _distance: number }>(await q.toArrow());
  }

  /** Filter-only scan (queries made of operators only), in storage order. */
  async scanCandidates(where: string | null, k: number, extra: readonly MatchColumn[] = []): Promise<PassageHit[]> {
    let q = this.#passages.query().select(hitColumns(extra)).withRowId().limit(k);
    if (where) q = q.where(where);
    return arrowRows<PassageHit>(await q.toArrow());
  }

  /**
   * Whole rows of the given passages, keyed `page_ref:ordinal`; a passage deleted since it was found is absent.
   * Hits carrying a row id are taken directly (a deleted row is never returned; a compacted table no longer has
   * the id, and its rows move); whatever that does not return is read by page_ref and ordinal (integers, through
   * the key index). Every row is checked against the key it was asked for: its own, or for a row the postings know,
   * theirs (a row id names one row for the life of the table).
   */
  passageRows(keys: readonly PassageKey[]): Promise<Map<string, PassageRow>> {
    return this.#readRows(keys, WHOLE_ROWS) as Promise<Map<string, PassageRow>>;
  }

  /** `passageRows` as a search result reads them: without the passage's whole text, headings and token count. */
  resultRows(keys: readonly PassageKey[]): Promise<Map<string, ResultRow>> {
    return this.#readRows(keys, RESULT_ROWS);
  }

  async #readRows(keys: readonly PassageKey[], read: RowRead): Promise<Map<string, ResultRow>> {
    const out = new Map<string, ResultRow>();
    const want = new Set(keys.map(passageKey));
    const keep = (rows: ResultRow[]) => {
      for (const r of rows) {
        const key = passageKey(r);
        if (want.has(key)) out.set(key, r);
      }
    };
    // Cached by row id (whole rows, and result rows for result reads), and completed from the postings' page fields
    // when those hold them.
    const cache = this.#rowCache;
    const ids: bigint[] = [];
    let cached = 0;
    for (const k of keys) {
      if (typeof k._rowid !== 'bigint') continue;
      const hit = cache.get(k._rowid);
      if (hit && (!read.whole || isWholeRow(hit))) {
        keep([hit]);
        cached++;
      } else ids.push(k._rowid);
    }
    // A row live in the postings: its key, page number and page fields are in memory; only the passage's texts are read,
    // and not even those when the read wants only the snippet text and the postings' store holds it.
    const known = new Map<bigint, RowPassage>();
    const fromMemory: ResultRow[] = [];
    const own: bigint[] = [];
    const whole: bigint[] = [];
    const engine = this.#engine;
    for (const id of ids) {
      const p = engine?.passageOfRow(Number(id));
      if (!p) {
        whole.push(id);
        continue;
      }
      const snippet = read.snippetOnly ? engine!.snippetOfRow(Number(id)) : undefined;
      if (snippet !== undefined) fromMemory.push(rowOfPassage(read.columns, p, { snippet_text: snippet }));
      else {
        known.set(id, p);
        own.push(id);
      }
    }
    const take = async (list: bigint[], cols: readonly string[]) =>
      list.length === 0
        ? []
        : arrowRows<Record<string, unknown> & { _rowid: bigint }>(
            await this.#passages
              .takeRowIds(list)
              .select([...cols])
              .withRowId()
              .toArrow(),
          );
    const [ownRead, wholeRead] = await Promise.all([take(own, read.own), take(whole, read.columns)]);
    // The row id was read for the cache only: rows go out as they always did, without it.
    const plain = [
      ...ownRead.map((r) => ({ _rowid: r._rowid, row: rowOfPassage(read.columns, known.get(r._rowid)!, r) })),
      ...wholeRead.map(({ _rowid, ...row }) => ({ _rowid, row: row as unknown as ResultRow })),
    ].map(({ _rowid, row }) => {
      // A result row never takes the place of a whole one (a context call may want it next).
      if (read.whole || !cache.has(_rowid)) cache.set(_rowid, row);
      return row;
    });
    this.#rowReads.memory += cached + fromMemory.length;
    this.#rowReads.table += ownRead.length + wholeRead.length;
    keep(fromMemory);
    keep(plain);
    const rest = keys.filter((k) => !out.has(passageKey(k)));
    if (rest.length === 0) return out;
    const refs = [...new Set(rest.map((k) => Math.trunc(k.page_ref)))];
    const ords = [...new Set(rest.map((k) => Math.trunc(k.ordinal)))];
    const where = `page_ref IN (${refs.join(', ')}) AND ordinal IN (${ords.join(', ')})`;
    const byKey = arrowRows<ResultRow>(
      await this.#passages
        .query()
        .where(where)
        .select([...read.columns])
        .toArrow(),
    );
    this.#rowReads.table += byKey.length;
    keep(byKey);
    return out;
  }

  /** The best ranking mode available now. */
  rankingMode(): RankingMode {
    if (!this.embedder) return 'bm25';
    return this.embedder.kind === 'model' ? 'hybrid-rrf' : 'hybrid-rrf-hashing';
  }

  async stats(): Promise<IndexStats> {
    // Counted once per set of table versions: /metrics and /readyz ask on every scrape, and counting vectors reads a
    // column (a filtered count over the whole table at 1M passages).
    const key = (await Promise.all([this.#pages.version(), this.#passages.version(), this.#images.version()])).join(':');
    if (this.#statsCache?.key !== key) this.#statsCache = { key, counts: await this.#counts() };
    return {
      ...this.#statsCache.counts,
      rankingMode: this.rankingMode(),
      embedder: this.embedder ? { modelId: this.embedder.modelId, kind: this.embedder.kind } : null,
      vectorIndex: this.#maintenance.vectorIndex,
    };
  }

  /** Rows and estimated bytes in the result-row cache (prefilled from the postings' scans while it has room), and its bound. */
  rowCacheStats(): { rows: number; bytes: number; maxBytes: number } {
    return { ...this.#rowCache.size, maxBytes: this.#rowCache.bound.maxBytes };
  }

  /**
   * Rows the passage reads (`passageRows`, `resultRows`) have served since open: from memory (the row cache, or the
   * postings with their snippet store) and from the table (diagnostics and tests: which reads a result page costs).
   */
  rowReads(): { memory: number; table: number } {
    return { ...this.#rowReads };
  }

  /** How many of these rows the result-row cache holds (diagnostics: which rows a result page reads from memory). */
  cachedRows(rowIds: readonly bigint[]): number {
    return rowIds.filter((id) => this.#rowCache.has(id)).length;
  }

  /** The in-process postings' state (null when this index has none): their table version and size. */
  textPostingsStats(): TextEngineStats | null {
    return this.#engine?.stats() ?? null;
  }

  async #counts(): Promise<Pick<IndexStats, 'pages' | 'passages' | 'vectors' | 'images'>> {
    const [pages, passages, images] = await Promise.all([this.#pages.countRows(), this.#passages.countRows(), this.#images.countRows()]);
    const vectors = this.#hasVectorColumn() ? await this.#passages.countRows('vector IS NOT NULL') : 0;
    return { pages, passages, vectors, images };
  }

  /**
   * The version of the passages table this process reads (LanceDB: one per commit — write, delete, optimize). For
   * /metrics and /readyz: a reader's version trailing the writer's shows how far behind it serves.
   */
  async version(): Promise<number> {
    this.#assertOpen();
    return this.#passages.version();
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('PassageIndex is closed');
  }

  /** Waits for pending writes, then closes the tables (the embedder is the caller's to close). */
  async close(): Promise<void> {
    this.#maintenance.stop();
    await this.#engine?.close();
    const follower = this.#follower;
    this.#follower = null;
    await this.#catchingUp;
    await follower?.stop(); // its look in flight reads the tables closed below
    await this.#queue.run(async () => {
      if (this.#closed) return;
      this.#closed = true;
      this.#passages.close();
      this.#pages.close();
      this.#images.close();
      this.#db.close();
    });
  }
}
