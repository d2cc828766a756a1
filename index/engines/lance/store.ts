/**
 * The passage index: writes pages and passages into LanceDB tables and serves every read of them.
 * Passages are denormalised so a search reads one table version; a page's passages change in one merge-insert
 * after its page row, so readers never see half a page (see docs/architecture.md#passage-index-tables-and-atomicity).
 */
import * as lancedb from '@lancedb/lancedb';
import { MatchQuery, type Connection, type Table } from '@lancedb/lancedb';
import type { Schema, Table as ArrowTable } from 'apache-arrow';
import { LoopBudget } from '../../../event-loop.js';
import type { Logger } from 'pino';
import type { PageInput, PageSink } from '../../../page-model.js';
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
  PRINT_COLUMNS,
  type PrintRow,
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
import type { Embedder } from '../../serving/embedder.js';
import { countNearCopies, parseNearPrint, type PrintedPage } from '../../retrieval/near-print.js';

/** One of a host's pages as near-copies are counted (`hostPrints`). */
export type HostPrint = PrintedPage & { readonly pageRef: number };
import { followWriter, HostIds, lastRowId, type HostIdSource, type HostSnapshot, type WriterFollower } from './host-ids.js';
import type { TextQuery } from '../memory/postings.js';
import { defaultRowCacheBytes, RowCache } from '../memory/row-cache.js';
import { defaultSnippetBytes } from '../memory/snippet-store.js';
import type { EngineImage } from './engine-image.js';
import { EngineSegments, SEGMENT_GRACE_MS } from './engine-segments.js';
import { SegmentTable } from './engine-segment-table.js';
import {
  TextEngine,
  type EngineSegmentsOptions,
  type RowPassage,
  type RowPrefill,
  type TextEngineStats,
  type TextSnapshot,
} from './text-engine.js';
import { cosineDistance, FLAT_VECTOR_BYTES } from '../memory/flat-vectors.js';
import { localIndexLocation, readIndexMeta, writeIndexMeta, type IndexLocation } from './location.js';
import { ANALYSIS_VERSION, FTS_OPTIONS, IndexMaintenance, WriteQueue, type IndexMeta } from './maintenance.js';
import { openTables } from './open-tables.js';
import type { CorpusStats, RankingMode, TitleCorpus, VectorsUnused } from '../../retrieval/engine-seam.js';
import { prepareReembed, ReembedPass, type ReembedHost, type ReembedProgress, type ReembedRunOptions } from './reembed.js';
import type { PassageFilter } from '../../retrieval/passage-filter.js';
import { shardShareOfTop } from './shard-layout.js';
import { whereOf } from './where.js';
import { PassageChanges, type PassageCommit } from './passage-changes.js';
import {
  arrowRows,
  pageRows,
  toImageHit,
  toStoredPage,
  toStoredPassage,
  type ImageHit,
  type StoredPage,
  type StoredPassage,
} from './rows.js';
import { TitleStats } from '../memory/title-stats.js';
import { beginWrite } from './write-journal.js';

export type { PassageHit, PassageKey, PassageRow, ResultRow } from './columns.js';
export type { HostIdSource } from './host-ids.js';
export type { ImageHit, StoredPage, StoredPassage } from './rows.js';
export type { ReembedProgress, ReembedRunOptions } from './reembed.js';

export { RANKING_MODES, type RankingMode } from '../../retrieval/engine-seam.js';

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
  /** Where the index lives: a local folder or an object-storage prefix (index/engines/lance/location.ts). Wins over `dir`. */
  readonly location?: IndexLocation;
  readonly embedder: Embedder | null;
  readonly log?: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** Run optimize() after this many writes. @default 200 */
  readonly optimizeEvery?: number;
  /**
   * Fold new rows into the key, vector and image indexes this long after the last write (debounced; never more than
   * about a tenth of the time is spent refreshing), so the unindexed tail LanceDB searches flat stays short between
   * `optimizeEvery` runs. 0 disables. @default 1000
   */
  readonly refreshAfterMs?: number;
  /** Build an ANN vector index once this many vectors exist (flat search below). @default 50000 */
  readonly vectorIndexThreshold?: number;
  /**
   * How many shards the index this dataset belongs to has (index/shards/): over an ANN index a shard searches for its
   * share of the index's top k (`shardVectorSearch`), not for all of it. @default 1
   */
  readonly shardCount?: number;
  /**
   * Where new hosts get their integer id (the shared HostIdsRepo, so every writer agrees). Given only to the writer,
   * which then also fixes rows whose id disagrees; without it ids are max + 1 locally (single-writer ingest, benches).
   */
  readonly hostIds?: HostIdSource;
  /**
   * For a reader of an index another process writes: how often to learn the writer's new hosts (site: compiles to
   * host ids), checked only on a new pages version. 0: only when `catchUp` finds the writer ahead. Undefined: never.
   */
  readonly followHostsMs?: number;
  /**
   * Build the in-process postings (postings.ts, text-engine.ts: the one BM25 engine, which answers every query) when
   * the index opens; false: at its first search instead (a process that only writes never builds them). Costs memory
   * (docs/bench-index.md has the figure at 1M passages). @default true
   */
  readonly textEngine?: boolean;
  /**
   * Whether this process writes the index. Readers commit nothing to existing tables, so they cannot race the
   * writer's index builds, and wait up to `waitForWriterMs` for missing tables (open-tables.ts). @default true
   */
  readonly writes?: boolean;
  /**
   * For the writer: when `embedder`'s model is not the one of the stored vectors (or the index has none), prepare a
   * re-embedding (reembed.ts): the vector column is made the model's, pages written from now on carry its vectors, and
   * `reembed()` / `startReembed()` embed the passages already there; the vector arm serves once all have one.
   * Without it such an embedder is ignored (ranking `bm25`, the `vector_model_mismatch` warning). @default false
   */
  readonly reembed?: boolean;
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
  /**
   * Persisted engine segments (engine-segments.ts; beside a local index, in a table of an object-storage one): the postings load the newest usable base and
   * its deltas at open instead of scanning the table, and the writer publishes what changed as delta segments and a
   * new base when the merge policy asks (object options: when; text-engine.ts `EngineSegmentsOptions`).
   * @default false
   */
  readonly engineSegments?:
    | boolean
    | (Omit<EngineSegmentsOptions, 'store' | 'write'> & {
        /** How long files no manifest names are kept (a reader may be loading them). @default 60 s */
        readonly graceMs?: number;
      });
  /**
   * Keep the postings as views of an image in shared memory and tell `onEngineImage` listeners each new one (the
   * process that owns a search pool: its threads read that one copy). @default false
   */
  readonly shareEngine?: boolean;
  /** A search thread's start: an image of its pool's owner, or 'await' one (engine-image.ts). */
  readonly engineImage?: EngineImage | 'await';
  /**
   * A search thread's start: the hosts and languages its pool's owner read (`hostSnapshot`), taken instead of reading
   * every page's host row again. Only with `engineImage` (the title statistics come from the image then).
   */
  readonly hosts?: HostSnapshot;
}

/** Where an index's engine segments are: the folder beside a local index, a table of a bucket's own connection. */
function segmentFilesOf(location: IndexLocation, db: Connection, graceMs: number): string | SegmentTable {
  return location.kind === 'local' ? location.uri : new SegmentTable(db, location.label, graceMs);
}

/** Rows converted to Arrow at a time before the event loop may get a turn (a passage row with its vector is costly). */
const ARROW_ROWS_PER_CHUNK = 64;

/** Hit columns plus the match columns a query's code checks read. */
const hitColumns = (extra: readonly MatchColumn[]): string[] => [...new Set([...HIT_COLUMNS, ...extra])];

/** IVF partitions an index's vector search probes, and the refine factor (candidates re-ranked by full vectors per result). */
const NPROBES = 20;
const REFINE_FACTOR = 5;

/** How a dataset's IVF-PQ search for the index's top `k` is made (`shardVectorSearch`). */
export interface VectorSearchPlan {
  /** Nearest passages the dataset returns. */
  readonly limit: number;
  /** IVF partitions probed (of each of the index's delta segments). */
  readonly nprobes: number;
  readonly refineFactor: number;
}

/**
 * The vector search of one of `shards` shards, so that the shards together do about the work of one index rather than
 * N times it, with at least its recall against exact search (docs/bench-index.md, "A shard's vector arm"): the shard
 * returns its share of the index's top k (`shardShareOfTop`) and re-ranks `refineFactor` times that. LanceDB keeps an
 * IVF partition between a few thousand and a few tens of thousands of rows whatever count it was built with, so a
 * shard has fewer partitions than the whole index, not smaller ones: probing `nprobes` × √(1/shards) of them kept the
 * merged list's recall at 10 and at k above one index's, where `nprobes` / shards lost it at 10. A whole index
 * searches as before.
 */
export function shardVectorSearch(k: number, shards: number, nprobes = NPROBES, refineFactor = REFINE_FACTOR): VectorSearchPlan {
  if (shards <= 1 || k <= 0) return { limit: k, nprobes, refineFactor };
  return { limit: shardShareOfTop(k, shards), nprobes: Math.max(1, Math.ceil(nprobes / Math.sqrt(shards))), refineFactor };
}

/**
 * The vector arm's LanceDB query as `vectorCandidates` sends it (benches time and count this very query): cosine
 * distance, the hit columns and `extra`, row ids; over an ANN index (`plan`) its limit, probes and refinement, else
 * `limit` nearest by a flat search.
 */
export function vectorArmQuery(
  table: Table,
  vector: Float32Array | readonly number[],
  o: {
    readonly extra?: readonly MatchColumn[];
    readonly limit: number;
    readonly plan: VectorSearchPlan | null;
    readonly where?: string | null;
  },
): lancedb.VectorQuery {
  let q = table
    .vectorSearch(Array.from(vector))
    .distanceType('cosine')
    .select([...hitColumns(o.extra ?? []), '_distance'])
    .withRowId()
    .limit(o.plan?.limit ?? o.limit);
  if (o.where) q = q.where(o.where);
  if (o.plan) q = q.nprobes(o.plan.nprobes).refineFactor(o.plan.refineFactor);
  return q;
}

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
  /** Rows of the pages table the open read (0: its hosts and languages were given, `OpenOptions.hosts`). */
  #pageRowsAtOpen = 0;
  /** The greatest pages row id the open read saw: a reader following the writer reads the host rows after it. */
  #hostRowsThrough: bigint | null = null;
  readonly #meta: IndexMeta;
  readonly #maintenance: IndexMaintenance;
  #embedder: Embedder | null;
  #vectorsUnused: VectorsUnused | null;
  /** The re-embedding this writer prepared (null: none), and the embedder new pages are written with meanwhile. */
  #reembed: { pass: ReembedPass; embedder: Embedder } | null = null;
  /** Pages written or removed since the re-embedding was prepared: the pass leaves them as they are. */
  readonly #touched = new Set<number>();
  #reembedRun: Promise<unknown> | null = null;
  readonly #closing = new AbortController();
  readonly #vectorsListeners = new Set<(e: Embedder) => void>();
  /** Builds the in-process postings (with flat vectors for an embedder), and whether they are built at open. */
  #makeEngine: ((embedder: Embedder | null) => TextEngine) | null = null;
  #engineEager = true;
  /** A reader's look for the writer's switch to the configured model's vectors (`#watchVectors`). */
  #vectorsWatch: NodeJS.Timeout | null = null;
  /** Scores titles while the postings hold no statistics yet (none built): every title scores 0. */
  readonly #noTitles = new TitleStats();
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
  /** The shard count of the index this dataset is one shard of (`OpenOptions.shardCount`). */
  readonly #shardCount: number;

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
    shardCount: number;
  }) {
    this.#rowCache = new RowCache(args.rowCacheBytes);
    this.#shardCount = args.shardCount;
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
    this.#embedder = args.embedder;
    this.#vectorsUnused = args.vectorsUnused;
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
    const pending =
      writes && opts.reembed && opts.embedder && !embedder
        ? await prepareReembed(passages, meta, opts.embedder, () => writeIndexMeta(db, location, meta), opts.log)
        : null;
    const idx = new PassageIndex({
      db,
      passages,
      pages,
      images,
      location,
      log: opts.log,
      embedder,
      vectorsUnused: pending && vectorsUnused ? { ...vectorsUnused, reembedding: true } : vectorsUnused,
      meta,
      optimizeEvery: opts.optimizeEvery ?? 200,
      vectorIndexThreshold: opts.vectorIndexThreshold ?? 50_000,
      refreshAfterMs: opts.refreshAfterMs ?? 1000,
      writes,
      hostIdSource: opts.hostIds ?? null,
      rowCacheBytes: opts.rowCacheBytes ?? defaultRowCacheBytes(),
      shardCount: Math.max(1, Math.floor(opts.shardCount ?? 1)),
    });
    const reanalyse = writes && (meta.analysis ?? 1) < ANALYSIS_VERSION;
    if (reanalyse) {
      await idx.#maintenance.reanalyse();
      meta.analysis = ANALYSIS_VERSION;
      await writeIndexMeta(db, location, meta);
    }
    await idx.#loadState(opts.hosts); // rebuilds the image index after a re-analysis (`load`)
    // The re-analysis rewrote every passage row: the vector and page_ref indexes cover none of the new rows until an
    // optimize folds them in, which would otherwise wait for the next writes (a quiet index would search its vectors
    // flat and scan page_ref, several times slower hybrid queries at 100k passages; docs/bench-index.md). Once, at open.
    if (reanalyse) await idx.#maintenance.optimize();
    await idx.#hostIds.adopt([passages, pages], opts.log);
    if (opts.followHostsMs !== undefined) {
      idx.#follower = followWriter(
        pages,
        opts.followHostsMs,
        idx.#hostRowsThrough,
        async (rows) => {
          idx.#learnHosts(rows);
          // The writer may have built an index since (the vector index, the image one with its first image).
          await idx.#maintenance
            .recheck()
            .catch((err: unknown) => opts.log?.debug({ err }, 'index: re-reading the index list failed; next time'));
        },
        opts.log,
      );
    }
    const seg = opts.engineSegments;
    const segGraceMs = (typeof seg === 'object' ? seg.graceMs : undefined) ?? SEGMENT_GRACE_MS;
    const segments = seg
      ? {
          // Beside a local index; in the index's own object store (a table of its connection) for a bucket.
          store: new EngineSegments(segmentFilesOf(location, db, segGraceMs), { graceMs: segGraceMs, log: opts.log }),
          write: writes,
          ...(typeof seg === 'object' ? seg : {}),
        }
      : undefined;
    idx.#makeEngine = (e) =>
      new TextEngine({
        analysis: ANALYSIS_VERSION,
        ...(segments ? { segments } : {}),
        ...(opts.shareEngine ? { share: true } : {}),
        ...(opts.engineImage ? { image: opts.engineImage } : {}),
        db,
        table: passages,
        tableName: 'passages',
        log: opts.log,
        maxTermLength: FTS_OPTIONS.maxTokenLength,
        prefill: idx.#rowPrefill(),
        snippetBytes: opts.snippetBytes ?? defaultSnippetBytes(),
        changes: (from, to) => idx.#changes.between(from, to),
        ...(e ? { vectors: { dim: e.dim, maxBytes: opts.flatVectorBytes ?? FLAT_VECTOR_BYTES } } : {}),
      });
    idx.#engine = idx.#makeEngine(embedder);
    idx.#engineEager = opts.textEngine ?? true;
    if (idx.#engineEager) idx.#engine.start();
    if (pending && opts.embedder) {
      const pass = new ReembedPass(idx.#reembedHost(), opts.embedder, pending);
      idx.#reembed = { pass, embedder: opts.embedder };
      await pass.count();
    }
    // A reader following another process's writer (an `api` replica) with a model the vectors are not of yet.
    if (!writes && opts.embedder && vectorsUnused && opts.followHostsMs) idx.#watchVectors(opts.embedder, opts.followHostsMs);
    return idx;
  }

  /** The embedder whose vectors the vector arm reads (null: no usable vectors, or not all of them yet). */
  get embedder(): Embedder | null {
    return this.#embedder;
  }

  /** A configured embedder this index cannot use (yet): its vectors are another model's, or absent. Responses say so. */
  get vectorsUnused(): VectorsUnused | null {
    return this.#vectorsUnused;
  }

  #reembedHost(): ReembedHost {
    return {
      passages: this.#passages,
      queue: this.#queue,
      meta: this.#meta,
      saveMeta: () => writeIndexMeta(this.#db, this.#location, this.#meta),
      touched: this.#touched,
      committed: (before: number, version: number, refs: readonly number[]) => this.#committed(before, version, refs),
      afterBatch: (pages) => this.#maintenance.afterWrite(pages),
      finished: () => this.#vectorsReady(),
      log: this.#log,
    };
  }

  /**
   * For a reader of another process's writer: reads the index metadata every `everyMs` until it names `embedder`'s
   * model (the writer's re-embedding finished), then serves the vector arm as the writer does, without a restart.
   */
  #watchVectors(embedder: Embedder, everyMs: number): void {
    const look = async (): Promise<void> => {
      const meta = await readIndexMeta<IndexMeta>(this.#db, this.#location, new Set(await this.#db.tableNames()));
      if (this.#closed || !meta) return;
      // The writer's progress as of now (`reembedProgress`), and its switch once the metadata names the model.
      delete this.#meta.reembed;
      Object.assign(this.#meta, meta);
      const unused = this.#vectorsUnused;
      if (unused && meta.reembed?.modelId === embedder.modelId && !unused.reembedding)
        this.#vectorsUnused = { ...unused, reembedding: true };
      if (meta.vectorModelId !== embedder.modelId || meta.vectorDim !== embedder.dim) return;
      if (this.#vectorsWatch) clearInterval(this.#vectorsWatch);
      this.#vectorsWatch = null;
      await this.#passages.checkoutLatest();
      await this.#vectorsReady(embedder);
    };
    let looking = false;
    this.#vectorsWatch = setInterval(() => {
      if (looking) return;
      looking = true;
      look()
        .catch((err: unknown) =>
          this.#log?.debug({ err: err instanceof Error ? err.message : String(err) }, 'index: reading the metadata failed'),
        )
        .finally(() => (looking = false));
    }, everyMs);
    this.#vectorsWatch.unref();
  }

  /**
   * A re-embedding finished (every row has the new model's vector, the metadata names it): the vector arm serves from
   * now on. Postings built with flat vectors replace the ones without, once built (queries keep the old meanwhile).
   */
  async #vectorsReady(given?: Embedder): Promise<void> {
    const embedder = given ?? this.#reembed?.embedder;
    if (!embedder || this.#closed) return;
    await this.#maintenance.vectorsReplaced(embedder);
    const old = this.#engine;
    const fresh = this.#makeEngine?.(embedder) ?? null;
    if (fresh && this.#engineEager) {
      fresh.start();
      while (!(await fresh.ready(await this.#passages.version())));
    }
    this.#engine = fresh;
    await old?.close({ publish: false }); // the new engine publishes the index's segments from now on
    this.#embedder = embedder;
    this.#vectorsUnused = null;
    this.#touched.clear();
    this.#versionCache = null;
    for (const fn of this.#vectorsListeners) fn(embedder);
  }

  /**
   * Where the re-embedding stands; null when there is none. A process that does not run it (a reader, `svc status`)
   * reports what the index metadata held when it opened, with the passages still to do counted now.
   */
  async reembedProgress(): Promise<ReembedProgress | null> {
    this.#assertOpen();
    const r = this.#reembed;
    if (r) return r.pass.finished ? null : r.pass.progress();
    const m = this.#meta.reembed;
    if (!m) return null;
    const left = await this.#passages.countRows(`page_ref > ${m.afterRef}`);
    return { modelId: m.modelId, done: m.done, total: m.done + left, ratePerS: null, etaS: null, state: 'pending' };
  }

  /** The model id of the vectors the index metadata names (null: none, or a re-embedding in progress). */
  get storedVectorModel(): string | null {
    return this.#meta.vectorModelId;
  }

  /**
   * Runs the prepared re-embedding (joining one in flight) until every passage has the configured model's vector, or
   * `signal` (or closing the index) stops it after the batch in hand: `done`, `stopped`, or `none` when there is none.
   */
  reembed(opts: ReembedRunOptions = {}): Promise<'done' | 'stopped' | 'none'> {
    this.#assertOpen();
    const r = this.#reembed;
    if (!r || r.pass.finished) return Promise.resolve('none');
    const signal = opts.signal ? AbortSignal.any([opts.signal, this.#closing.signal]) : this.#closing.signal;
    const run = r.pass.run({ ...opts, signal });
    this.#reembedRun = run;
    return run;
  }

  /** Starts the re-embedding in the background (a failure is logged; the next writer's open resumes it). */
  startReembed(opts: Omit<ReembedRunOptions, 'signal'> = {}): void {
    if (!this.#reembed || this.#closed) return;
    this.reembed(opts).catch((err: unknown) =>
      this.#log?.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'index: re-embedding failed; it resumes at the next start',
      ),
    );
  }

  /** Calls `fn` when a re-embedding has finished and the vector arm serves (the search pool restarts its threads). */
  onVectorsReady(fn: (e: Embedder) => void): () => void {
    this.#vectorsListeners.add(fn);
    return () => this.#vectorsListeners.delete(fn);
  }

  /**
   * The postings' scans hand whole result rows to the row cache (text-engine.ts `RowPrefill`), so small indexes are
   * served from memory. A scan whose rows cannot fit reads no row columns; a write's added rows take only free room.
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

  async #loadState(hosts?: HostSnapshot): Promise<void> {
    if (hosts) {
      this.#hostIds.learnIds(hosts.hosts);
      for (const l of hosts.langs) this.#langs.add(l);
      this.#hostRowsThrough = hosts.through;
      await this.#maintenance.load();
      return;
    }
    // Column by column (`arrowRows`): a row proxy's field reads cost more than the rest of an open's reads.
    const rows = arrowRows<RowOf<typeof PAGE_COLUMNS, 'hosts'> & { _rowid: bigint }>(
      await this.#pages.query().select(HOST_COLUMNS).withRowId().toArrow(),
    );
    this.#pageRowsAtOpen = rows.length;
    this.#learnHosts(rows);
    this.#hostRowsThrough = lastRowId(rows, null);
    await this.#maintenance.load();
  }

  /** Rows of the pages table the open read for hosts and languages (0: given them, `OpenOptions.hosts`). */
  get pageRowsAtOpen(): number {
    return this.#pageRowsAtOpen;
  }

  /** The hosts and languages this index knows now, for a search thread's start (`OpenOptions.hosts`). */
  hostSnapshot(): HostSnapshot {
    return { hosts: this.#hostIds.entries(), langs: [...this.#langs], through: this.#hostRowsThrough };
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

  /** BM25 inverse document frequency of each term, from the postings at the version queries read. */
  async termIdf(terms: readonly string[]): Promise<number[]> {
    const snap = await this.#textSnapshot();
    return terms.map((t) => snap.postings.idf(t));
  }

  /** The BM25 statistics of `terms` at the version queries read (a sharded index sums its shards', index/shards/). */
  async corpusStats(terms: readonly string[]): Promise<CorpusStats> {
    return (await this.#textSnapshot()).postings.corpusStats(terms);
  }

  /**
   * The title statistics of `terms` at the postings' version (a sharded index sums its shards' and scores titles with
   * the sum): those of the titles of the pages the postings hold, exactly as a full build counts them.
   */
  titleCorpus(terms: readonly string[]): TitleCorpus {
    return this.#titleStats().corpus(terms);
  }

  #titleStats(): TitleStats {
    return this.#engine?.titleStats ?? this.#noTitles;
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
    // While a re-embedding is prepared, new pages carry the configured model's vectors already.
    const embedder = this.#embedder ?? this.#reembed?.embedder ?? null;
    if (embedder && rows.length > 0) {
      const vecs = await embedder.embed(texts);
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
      if (this.#reembed && !this.#reembed.pass.finished) for (const p of list) this.#touched.add(p.pageRef);
      this.#committed(
        before,
        version,
        list.map((p) => p.pageRef),
      );
      for (const r of pageRowList) if (typeof r.lang === 'string') this.#langs.add(r.lang);
      await this.#maintenance.afterWrite(list.length);
    });
  }

  /**
   * Whether the stored passages of `pageFilter`'s pages include one `rows` lacks. Only then is merge-insert's
   * by-source delete needed, which scans the whole table; read inside the write queue so the answer holds at commit.
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
   * Rows → an Arrow table with exactly `schema` (all-null nullable columns keep their type), built in chunks of
   * `ARROW_ROWS_PER_CHUNK` rows with event-loop turns between, since a crawler batch converted at once held the loop.
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
    // seconds, and the first queries after a quiet spell waited for all of it. A maintenance's begin mark
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
      if (this.#reembed && !this.#reembed.pass.finished) this.#touched.add(pageRef);
      this.#committed(before, version, [pageRef]);
      await this.#maintenance.afterWrite(1);
    });
  }

  /**
   * BM25 of a title (in `lang`) for analysed query terms, from the title statistics: the BM25 arm's title boost.
   * `corpus`: score with these statistics instead (a shard, with its sharded index's: `titleCorpus`).
   */
  titleScore(
    queryTerms: readonly string[],
    row: Pick<PassageHit, 'page_ref' | 'title' | 'lang' | '_titleIds'>,
    corpus?: TitleCorpus,
  ): number {
    // The postings hold each page's analysed title (whatever version they are at, it is that title's analysis); a
    // candidate they gave carries it.
    const ids = row._titleIds ?? this.#engine?.titleTermIds(row.page_ref, row.title, row.lang);
    return this.#titleStats().score(queryTerms, row.title, row.lang, ids, corpus);
  }

  /** Compacts, updates indexes, and builds the vector index once large enough. Serialised with writes. */
  optimize(): Promise<void> {
    return this.#maintenance.optimize();
  }

  /**
   * Waits for the maintenance an optimize left running beside the writes (the vector index's retraining, see
   * maintenance.ts `vectorRetrainDue`); resolves at once when none runs. Its failure is logged, not thrown.
   */
  async maintenanceSettled(): Promise<void> {
    await this.#maintenance.retraining;
  }

  /**
   * How many of `host`'s pages are near-copies of another of its pages (svc_site): each page, in page_ref order, that
   * would fold into one before it in a result list (near-print.ts `countNearCopies`).
   */
  async nearCopyCount(host: string): Promise<number> {
    return countNearCopies(await this.hostPrints(host));
  }

  /** `host`'s pages in page_ref order with what near-copies are told by (a sharded index counts over every shard's). */
  async hostPrints(host: string): Promise<HostPrint[]> {
    const ids = this.#hostIds.under(host);
    if (ids.length === 0) return [];
    const rows = (await this.#pages
      .query()
      .where(`host_id IN (${ids.join(', ')})`)
      .select(PRINT_COLUMNS)
      .toArray()) as PrintRow[];
    const own = rows.filter((r) => r.host === host).sort((a, b) => a.page_ref - b.page_ref);
    return own.map((r) => ({
      pageRef: r.page_ref,
      group: r.canonical_url ?? r.url,
      contentHash: r.content_hash,
      print: parseNearPrint(r.near_print),
    }));
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
    return (await this.scoredImages(text, limit)).map(({ score: _score, ...hit }) => hit);
  }

  /** `searchImages` with each image's alt-text BM25 (a sharded index merges its shards' by it). */
  async scoredImages(text: string, limit: number): Promise<(ImageHit & { score: number })[]> {
    const n = Math.max(1, Math.min(100, Math.floor(limit)));
    if (!this.#maintenance.imageFtsReady || text.trim() === '') return [];
    const rows = (await this.#images
      .query()
      .fullTextSearch(new MatchQuery(text.slice(0, 300), ALT_COLUMN))
      .select([...IMAGE_HIT_COLUMNS, '_score'])
      .limit(n)
      .toArray()) as (RowOf<typeof IMAGE_COLUMNS, 'hit'> & { _score: number })[];
    return rows.map((r) => ({ ...toImageHit(r), score: r._score }));
  }

  /**
   * BM25 arm: the k passages best matching `text` among those `filter` lets through, from the in-process postings (the
   * one BM25 engine), with their BM25 score (repeated words included), in no particular order (retrieval ranks them
   * by its own final score). Waits for the postings to reach the version this process serves. `stats`: score with
   * these statistics instead of this index's own (a shard, with its whole sharded index's: `corpusStats`).
   */
  async textCandidates(
    text: TextQuery,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[] = [],
    stats?: CorpusStats,
  ): Promise<(PassageHit & { _score: number })[]> {
    for (let attempt = 0; ; attempt++) {
      const snap = await this.#textSnapshot();
      const test = snap.docTest(filter);
      if (attempt === 0) this.#engine!.answered();
      if (test === false) return [];
      const hits = snap.postings.search(text, k, false, test, stats);
      if (hits.length === 0) return [];
      // The hit fields are in memory; only checks that read more (phrases, url:, filetype:) take the rows.
      if (extra.every((c) => c === 'search_text')) return snap.rows(hits, text, extra.length > 0);
      const rows = await this.#takeHitRows(
        hits.map((h) => h.rowId),
        extra,
        attempt,
      );
      if (rows) return hits.flatMap((h) => (rows.has(h.rowId) ? [{ ...rows.get(h.rowId)!, _score: h.score }] : []));
    }
  }

  /**
   * The hit rows (with `extra` columns) of these row ids, taken from the serving table; null when the take failed
   * because the table moved on between the postings' version and the take (rows compacted away): the caller asks the
   * postings again at the new version. A later attempt's failure is thrown.
   */
  async #takeHitRows(ids: readonly number[], extra: readonly MatchColumn[], attempt: number): Promise<Map<number, PassageHit> | null> {
    if (ids.length === 0) return new Map();
    try {
      const rows = arrowRows<PassageHit & { _rowid: bigint }>(
        await this.#passages
          .takeRowIds([...ids])
          .select(hitColumns(extra))
          .withRowId()
          .toArrow(),
      );
      return new Map(rows.map((r) => [Number(r._rowid), r]));
    } catch (err) {
      if (attempt >= 2) throw err;
      this.#versionCache = null;
      return null;
    }
  }

  /**
   * The in-process postings at the version this process serves, once a sync has brought them there (text-engine.ts
   * `ready`): every BM25 arm, filter-only scan and in-memory vector search reads them.
   */
  async #textSnapshot(): Promise<TextSnapshot> {
    this.#assertOpen();
    for (;;) {
      const engine = this.#engine;
      if (!engine) throw new Error('PassageIndex: no text engine');
      let snap: TextSnapshot | null;
      try {
        snap = await engine.ready(await this.#servingVersion());
      } catch (err) {
        // Postings replaced while this query waited for them (a re-embedding switched the vector arm on): the new ones.
        if (this.#engine !== engine && !this.#closed) continue;
        throw err;
      }
      if (snap) return snap;
      // The postings moved past the cached version (a reader's table refreshed itself): read it again.
      this.#versionCache = null;
    }
  }

  /**
   * The passages table's version as this process reads it, without a LanceDB call per query: re-read after any
   * local write and, when others write the index, at least every 250 ms (or the consistency interval if shorter).
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
   * For a search thread reading this process's writer: when its view is older than `version`, re-reads the location
   * now (and learns new hosts) rather than waiting for the consistency interval, so any thread sees what the writer
   * had committed when the request arrived. Overlapping calls share one re-read.
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
    await this.#textSnapshot();
  }

  /**
   * Exact cosine distance of the query vector to the given passages (row-id prefilter, no vector index), keyed
   * `page_ref:ordinal`; missing when gone or vectorless. For candidate sets the BM25 arm enumerated completely, where
   * an approximate search would only rediscover a subset.
   */
  async vectorDistances(vector: Float32Array, passages: readonly PassageKey[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const ids = [...new Set(passages.flatMap((p) => (typeof p._rowid === 'bigint' ? [p._rowid] : [])))];
    if (!this.embedder || ids.length === 0) return out;
    // The vectors are in memory (a small index, flat-vectors.ts): no take.
    const inMemory = (await this.#textSnapshot())?.vectorDistances(vector, ids.map(Number));
    if (inMemory) return inMemory;
    // Taken by row id and compared here: a vector search restricted by `_rowid IN (…)` scanned the table (hundreds of ms
    // for 1,000 ids at 1M passages) where the take is a few ms and 1,000 × 384 products are well under one.
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
   * left out (the caller drops them; the search from memory builds no row for them). A shard of several over an ANN
   * index returns fewer than `k`: its share of the index's top `k` (`shardVectorSearch`); the exact searches (flat, in
   * memory) return `k`.
   */
  async vectorCandidates(
    vector: Float32Array,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[] = [],
    minSimilarity?: number,
  ): Promise<(PassageHit & { _distance: number })[]> {
    if (!this.embedder) return [];
    if (extra.length === 0) {
      // A small index's vectors are in memory (flat-vectors.ts): the same exact search LanceDB's flat scan makes,
      // filtered by the postings' document attributes.
      const snap = await this.#textSnapshot();
      const test = snap.docTest(filter);
      if (test === false) return [];
      const near = snap.nearestRows(vector, k, minSimilarity, test);
      if (near) return near;
    }
    const ann = this.#maintenance.vectorIndex ? shardVectorSearch(k, this.#shardCount) : null;
    const q = vectorArmQuery(this.#passages, vector, { extra, limit: k, plan: ann, where: whereOf(filter) });
    return arrowRows<PassageHit & { _distance: number }>(await q.toArrow());
  }

  /**
   * Filter-only candidates (queries made of operators only) from the postings: the `k` live passages that pass the
   * filter with the least keys (page ref, ordinal).
   */
  async scanCandidates(filter: PassageFilter, k: number, extra: readonly MatchColumn[] = []): Promise<PassageHit[]> {
    for (let attempt = 0; ; attempt++) {
      const snap = await this.#textSnapshot();
      const test = snap.docTest(filter);
      if (attempt === 0) this.#engine!.answered();
      if (test === false) return [];
      const hits = snap.scan(test, k);
      if (extra.length === 0) return hits.map((h) => snap.plainRow(h.doc));
      const rows = await this.#takeHitRows(
        hits.map((h) => h.rowId),
        extra,
        attempt,
      );
      if (rows) return hits.flatMap((h) => rows.get(h.rowId) ?? []);
    }
  }

  /**
   * Whole rows of the given passages, keyed `page_ref:ordinal`; a passage deleted since it was found is absent.
   * Taken by row id when known, else by key; every row is checked against the key asked for, so a moved or reused
   * id never returns the wrong passage.
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

  /** Calls `fn` with each engine image the postings make while shared (`shareEngine`); returns an unsubscriber. */
  onEngineImage(fn: (image: EngineImage) => void): () => void {
    return this.#engine?.onImage(fn) ?? (() => undefined);
  }

  /** The engine image the postings are views of (null: none; a search pool's threads start from it). */
  engineImage(): EngineImage | null {
    return this.#engine?.image ?? null;
  }

  /** A search thread: its pool's owner made a newer image; the postings move to it at their next sync. */
  offerEngineImage(image: EngineImage): void {
    this.#engine?.offerImage(image);
  }

  /** Images the postings now and waits for the segment to be published (the writer; tests, before a planned stop). */
  async engineImageNow(): Promise<void> {
    await this.#engine?.imageNow();
  }

  /** Publishes what changed since the last segment as a delta (or a base when due) and waits for it (the writer; tests). */
  async engineDeltaNow(): Promise<void> {
    await this.#engine?.deltaNow();
  }

  /**
   * The newest persisted engine segment of this index (its manifest's table version and files, when it was written)
   * beside the table's version: how far a reader that opens now would catch up from the table (`svc status`). Read
   * from where the segments are, whatever this process's postings; null when none was published.
   */
  async engineSegmentsStatus(): Promise<{ version: number; tableVersion: number; files: number; writtenMs: number } | null> {
    this.#assertOpen();
    const newest = await new EngineSegments(segmentFilesOf(this.#location, this.#db, SEGMENT_GRACE_MS)).newest();
    if (!newest) return null;
    const m = newest.manifest;
    return { version: m.version, tableVersion: await this.#passages.version(), files: m.files.length, writtenMs: newest.writtenMs };
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
    // A re-embedding stops after its batch in hand (its progress saved): the next writer resumes it.
    this.#closing.abort();
    if (this.#vectorsWatch) clearInterval(this.#vectorsWatch);
    this.#vectorsWatch = null;
    await this.#reembedRun?.catch(() => undefined);
    await this.#maintenance.stop();
    // Writes already queued commit first, so the engine's last publication holds them too.
    await this.#queue.run(async () => undefined);
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
