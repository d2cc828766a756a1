/**
 * Index maintenance: the key, vector and image alt-text indexes, refreshed every `optimizeEvery` writes and debounced
 * after the last write (unindexed rows stay searchable flat meanwhile), plus one-time upgrades of older indexes.
 */
import { Index, makeArrowTable, type Table } from '@lancedb/lancedb';
import type { Logger } from 'pino';
import { indexText, MAX_TERM_LENGTH, passageAnalyses, STOP_WORDS } from '../../retrieval/analyzer.js';
import { ALT_COLUMN, KEY_COLUMNS, PAGE_COLUMNS, columnsFor } from './columns.js';
import type { Embedder } from '../../serving/embedder.js';
import { SEARCH_COLUMN } from '../../retrieval/query.js';
import { plainRows } from './rows.js';

/**
 * The options the passages' full-text index was built with (no longer built). Kept because they are part of every
 * index's recorded `FTS_ANALYZER`, so changing them rebuilds existing FTS indexes for nothing, and `maxTokenLength`
 * bounds the postings' terms. No positions: phrase order is checked in code (query.ts `matches`).
 */
export const FTS_OPTIONS = {
  withPosition: false,
  baseTokenizer: 'whitespace',
  lowercase: false,
  asciiFolding: false,
  stem: false,
  removeStopWords: false,
  maxTokenLength: MAX_TERM_LENGTH + 1,
} as const;

/** Options of the image alt-text index (raw text, analysed by LanceDB's English analyzer). */
const IMAGE_FTS_OPTIONS = {
  withPosition: false,
  baseTokenizer: 'simple',
  lowercase: true,
  asciiFolding: true,
  stem: true,
  removeStopWords: true,
  // Pinned: LanceDB 0.38+ applies a larger built-in English list than 0.31 did.
  customStopWords: [...STOP_WORDS.en] as string[],
  language: 'English',
} as const;

/**
 * Version of the text analysis stored in `search_text`. An index written with an older analysis (LanceDB's own
 * English analyzer over raw text: version 1; one analysis with no language tags in the terms: version 2) is
 * re-analysed from its stored text when opened, so its postings never mix terms of two analyses.
 */
export const ANALYSIS_VERSION = 3;

/**
 * Identifies the full-text index options as built by this code: an index built with others (an older analysis, or
 * LanceDB 0.31's defaults, which 0.38+ reads with a larger stop-word list) is rebuilt when opened.
 */
export const FTS_ANALYZER = JSON.stringify({ passages: FTS_OPTIONS, images: IMAGE_FTS_OPTIONS });

/** What `svc-index-meta.json` records about the tables. */
export interface IndexMeta {
  /** Vector space of the `vector` column, or null when the table has none. */
  vectorModelId: string | null;
  vectorDim: number | null;
  /** Analysis of `search_text` (absent: version 1). */
  analysis?: number;
  /**
   * The analyzer the full-text indexes were built with (`FTS_ANALYZER`); absent in indexes written before it was
   * recorded (LanceDB 0.31). Queries are tokenized with the parameters stored in the index, so an index built with
   * other options is rebuilt when opened (see `load`).
   */
  ftsAnalyzer?: string;
  /**
   * How long the writer's last optimize took (ms), when it took long enough to matter (≥ 1 s): a writer that reopens
   * the index keeps maintenance to its share of the time from its first write (`optimizeDue`), instead of learning
   * the cost by running one a second after the first write (tens of seconds at 1M passages).
   */
  optimizeMs?: number;
  /**
   * How many vectors the IVF-PQ index was trained on (its partitions and codebooks), written when it is built or
   * retrained: the writer retrains it once the vectors have doubled since (`vectorRetrainDue`), also after a reopen.
   * Absent for an index built before it was recorded: its partitions are of an unknown size, so it is retrained once.
   */
  vectorIndexTrainedOn?: number;
  /** How long the last retraining of the vector index took (ms): a reopened writer keeps its time share. */
  vectorRetrainMs?: number;
  /**
   * A re-embedding in progress (reembed.ts): the model whose vectors the passages are being given, and how far the
   * pass got, so a writer killed mid-way resumes there. While it is set `vectorModelId` is null: the column holds
   * vectors of two models (or none), and no vector arm reads it.
   */
  reembed?: ReembedMeta;
}

/** How far a re-embedding got (`IndexMeta.reembed`). */
export interface ReembedMeta {
  /** The model id the passages are being given vectors of (the configured embedder's). */
  readonly modelId: string;
  readonly dim: number;
  /** Every page with a page_ref up to this one has its passages re-embedded (-1: none yet); pages are taken in order. */
  afterRef: number;
  /** Passages re-embedded so far (across restarts). */
  done: number;
}

/** Drops every index of the `vector` column (before the column is replaced, or its vectors are). */
export async function dropVectorIndexes(passages: Table): Promise<void> {
  for (const i of await passages.listIndices()) if (i.columns.includes('vector')) await passages.dropIndex(i.name);
}

/** Serialises writes: each task starts after the previous one settled. */
export class WriteQueue {
  #tail: Promise<unknown> = Promise.resolve();
  #running = 0;
  #generation = 0;
  /** Called after each task (the tables may have a new version: e.g. bring the in-process postings to it). */
  onSettled: (() => void) | null = null;
  run<T>(task: () => Promise<T>): Promise<T> {
    const wrapped = async () => {
      this.#running++;
      this.#generation++;
      try {
        return await task();
      } finally {
        this.#running--;
        this.#generation++;
        this.onSettled?.();
      }
    };
    const next = this.#tail.then(wrapped, wrapped);
    this.#tail = next.catch(() => undefined);
    return next;
  }

  /** Moves whenever a write starts or ends: what was read about the tables at an unchanged generation still holds. */
  get generation(): number {
    return this.#generation;
  }

  /** Whether no write is running now. */
  get idle(): boolean {
    return this.#running === 0;
  }
}

/** The three tables of an index. */
export interface IndexTables {
  readonly passages: Table;
  readonly pages: Table;
  readonly images: Table;
}

export interface MaintenanceOptions {
  readonly tables: IndexTables;
  /** The writer's queue: maintenance runs between writes, never beside one. */
  readonly queue: WriteQueue;
  readonly meta: IndexMeta;
  /** Persists `meta` after a change. */
  readonly saveMeta: () => Promise<void>;
  /** The embedder whose vectors are in the table (null: no usable vectors). */
  readonly embedder: Embedder | null;
  readonly log: Pick<Logger, 'info' | 'warn' | 'debug'> | undefined;
  /**
   * Whether this process writes the index. A reader (`svc serve --role api|crawler`, `svc status`) only learns which
   * indexes exist: building one too would race the writer's own build (two CreateIndex commits on one version; the
   * loser's open failed with a commit conflict).
   */
  readonly writes: boolean;
  readonly optimizeEvery: number;
  readonly refreshAfterMs: number;
  readonly vectorIndexThreshold: number;
  readonly isClosed: () => boolean;
  /**
   * Told the passages table's version when maintenance that writes no passage (index builds, compaction: rows may move
   * to new row ids) begins, and when it ends: readers then re-key rather than re-read (passage-changes.ts).
   */
  readonly passagesMaintenance?: (mark: 'begin' | 'end', version: number) => void;
}

/**
 * How far past `optimizeEvery` the pages written since the last optimize may pile up while the duty bound holds an
 * optimize back (20 × 200 = 4,000 pages at the default: unindexed rows LanceDB searches flat, in one small fragment per
 * write, until the next optimize).
 */
export const OPTIMIZE_DEFER_LIMIT = 20;

/**
 * Whether the writes since the last optimize call for one. An optimize holds the write queue, so after `every`
 * pages it runs only once the time since the last is nine times its length (maintenance holds writes a tenth of the time at most),
 * or when `OPTIMIZE_DEFER_LIMIT × every` pages wait; on a small index that is the plain every-N rule.
 */
export function optimizeDue(s: { writes: number; every: number; lastMs: number; sinceLastMs: number }): boolean {
  if (s.writes < s.every) return false;
  if (s.writes >= s.every * OPTIMIZE_DEFER_LIMIT) return true;
  return optimizeWaitMs(s.lastMs, s.sinceLastMs) === 0;
}

/**
 * How long until maintenance may run again and still hold the writes up at most about a tenth of the time: nine times
 * the last optimize's length after it ended. The one rule of both the forced optimize (`optimizeDue`) and the debounced
 * refresh.
 */
export function optimizeWaitMs(lastMs: number, sinceLastMs: number): number {
  return Math.max(0, 9 * lastMs - sinceLastMs);
}

/**
 * How many index segments (the trained index and the deltas LanceDB's optimize adds beside it) the vector index may
 * have before it is retrained short of doubling: a query searches each segment's nearest partitions, so each delta
 * adds to every query's cost (docs/bench-index.md, "Retraining the vector index").
 */
export const VECTOR_SEGMENT_LIMIT = 8;

/** What `vectorRetrainDue` decides from. */
export interface VectorIndexState {
  /** Vectors in the table (indexed or not). */
  readonly vectors: number;
  /** Vectors the index was trained on; undefined for an index built before it was recorded. */
  readonly trainedOn: number | undefined;
  /** The index's segments (LanceDB's `numIndices`). */
  readonly segments: number;
  /** How long the last retraining took (ms; 0: none known), and how long ago it ended. */
  readonly lastRetrainMs: number;
  readonly sinceLastRetrainMs: number;
}

/**
 * Whether the vector index should be rebuilt over the current vectors. LanceDB's optimize folds new rows into the
 * partitions trained at the start (joining small ones, splitting large ones toward its own size) and adds a delta
 * segment each time. Retraining when the vectors doubled keeps the total training work linear in the vectors (each
 * retrain costs about the vectors at hand, and those at least double in between). Deltas piling up before that also
 * call for one, but no sooner than the maintenance time share allows (`optimizeWaitMs`: nine times the last
 * retraining's length after it), since a retraining costs about the whole index's vectors each time.
 */
export function vectorRetrainDue(s: VectorIndexState): boolean {
  if (s.trainedOn === undefined || s.vectors >= 2 * s.trainedOn) return true;
  return s.segments > VECTOR_SEGMENT_LIMIT && optimizeWaitMs(s.lastRetrainMs, s.sinceLastRetrainMs) === 0;
}

/**
 * Rows per IVF partition an index is built with. LanceDB's optimize joins every partition under 2,048 rows and splits
 * those over 32,768 when it folds new rows in, so smaller partitions (√n of them, below 4M vectors) do not outlive the
 * next optimize; twice the join floor leaves most of them standing while a query's `nprobes` still reads a small
 * share of the vectors (docs/bench-index.md, "Retraining the vector index").
 */
export const VECTOR_PARTITION_ROWS = 4096;

/** The IVF-PQ settings of an index over `vectors` vectors of `dim` dimensions (16 dimensions a PQ subvector). */
export function ivfPqConfig(vectors: number, dim: number): { partitions: number; config: Index } {
  const partitions = Math.max(1, Math.round(vectors / VECTOR_PARTITION_ROWS));
  return {
    partitions,
    config: Index.ivfPq({ distanceType: 'cosine', numPartitions: partitions, numSubVectors: Math.max(1, Math.floor(dim / 16)) }),
  };
}

/** Keeps the indexes of one writer's tables up to date. */
export class IndexMaintenance {
  readonly #o: MaintenanceOptions;
  #writes = 0;
  /** Writes not yet folded into the indexes (reset by every optimize). */
  #unrefreshed = 0;
  #refreshTimer: NodeJS.Timeout | null = null;
  #lastOptimizeMs = 0;
  /** When the last optimize ended (performance.now()); -Infinity: none yet. */
  #lastOptimizeEnd = -Infinity;
  #imageFtsReady = false;
  #keyIndexes = false;
  #vectorIndex = false;
  /** The vector index's retraining running beside the writes, or null. */
  #retraining: Promise<void> | null = null;
  /** An optimize came while a retraining ran and left the passages table alone: run one after it. */
  #optimizeAfterRetrain = false;
  /** A retraining failed: not tried again by this writer (each try would redo the training over every vector). */
  #retrainFailed = false;
  /** How long the last retraining took and when it ended (performance.now(); -Infinity: none yet). */
  #lastRetrainMs = 0;
  #lastRetrainEnd = -Infinity;
  /** The embedder whose vectors are in the table: the options' one, until a re-embedding replaces it. */
  #embedder: Embedder | null;

  constructor(opts: MaintenanceOptions) {
    this.#o = opts;
    this.#embedder = opts.embedder;
    // A remembered cost counts as an optimize that ended as the index opened: the first one waits its share too.
    if (opts.writes && opts.meta.optimizeMs !== undefined && opts.meta.optimizeMs > 0) {
      this.#lastOptimizeMs = opts.meta.optimizeMs;
      this.#lastOptimizeEnd = performance.now();
    }
    if (opts.writes && opts.meta.vectorRetrainMs !== undefined && opts.meta.vectorRetrainMs > 0) {
      this.#lastRetrainMs = opts.meta.vectorRetrainMs;
      this.#lastRetrainEnd = performance.now();
    }
  }

  get imageFtsReady(): boolean {
    return this.#imageFtsReady;
  }

  /** The vector index's retraining in progress (settles when it committed or failed), or null. */
  get retraining(): Promise<void> | null {
    return this.#retraining;
  }

  /** Whether the ANN vector index exists (below the threshold vector search is flat). */
  get vectorIndex(): boolean {
    return this.#vectorIndex;
  }

  /**
   * The table's vectors are now `embedder`'s (a re-embedding finished). An ANN index trained on the vectors before is
   * dropped (its partitions are another space's); the next optimize builds one over the new vectors once they are many.
   */
  async vectorsReplaced(embedder: Embedder): Promise<void> {
    this.#embedder = embedder;
    if (!this.#o.writes) return this.recheck(); // a reader: whichever index the writer has now
    await this.#retraining;
    await dropVectorIndexes(this.#o.tables.passages);
    this.#vectorIndex = false;
    this.#o.meta.vectorIndexTrainedOn = undefined;
  }

  /**
   * A reader's view of which indexes exist now (another process builds them: an `api` replica opened before the
   * indexer's first write would otherwise never use the vector or image index). Reads only; builds nothing.
   */
  async recheck(): Promise<void> {
    if (this.#o.isClosed()) return;
    const { passages, images } = this.#o.tables;
    const idx = await passages.listIndices();
    this.#vectorIndex = idx.some((i) => i.columns.includes('vector'));
    this.#imageFtsReady = (await images.listIndices()).some((i) => i.columns.includes(ALT_COLUMN));
  }

  /**
   * Learns which indexes exist. The writer also brings older indexes up to date (key indexes, dropping the unused
   * passages FTS index, rebuilding the image index on changed options); readers leave that to the writer.
   */
  async load(): Promise<void> {
    const { passages, images } = this.#o.tables;
    const idx = await passages.listIndices();
    if (this.#o.writes) {
      await this.#ensureKeyIndexes(); // an index written before the key indexes existed
      for (const i of idx) if (i.columns.includes(SEARCH_COLUMN)) await passages.dropIndex(i.name);
    }
    this.#vectorIndex = idx.some((i) => i.columns.includes('vector'));
    this.#imageFtsReady = (await images.listIndices()).some((i) => i.columns.includes(ALT_COLUMN));
    if (this.#o.meta.ftsAnalyzer !== FTS_ANALYZER && this.#o.writes) await this.#rebuildFts();
  }

  /**
   * Rewrites `search_text` of every passage with the current analysis (from its stored title, text and language).
   * Runs once, when an index written by an older version is opened; pages are rewritten in slices of page_refs,
   * each slice one merge-insert commit (a page is never half-rewritten).
   */
  async reanalyse(): Promise<void> {
    const { passages, pages } = this.#o.tables;
    const total = await passages.countRows();
    this.#o.log?.info({ passages: total }, 'index: re-analysing search_text (new text analysis)');
    if (total > 0) {
      const refs = ((await pages.query().select(columnsFor(PAGE_COLUMNS, 'ref')).toArray()) as { page_ref: number }[])
        .map((r) => r.page_ref)
        .sort((a, b) => a - b);
      const schema = await passages.schema();
      for (let i = 0; i < refs.length; i += 2000) {
        const slice = refs.slice(i, i + 2000);
        const rows = plainRows<Record<string, unknown>>(
          await passages
            .query()
            .where(`page_ref IN (${slice.join(', ')})`)
            .toArray(),
        );
        if (rows.length === 0) continue;
        // A passage whose text does not tell its language takes its page's: a page's passages are analysed together.
        const byPage = new Map<unknown, Record<string, unknown>[]>();
        for (const r of rows) {
          const list = byPage.get(r.page_ref);
          if (list) list.push(r);
          else byPage.set(r.page_ref, [r]);
        }
        for (const list of byPage.values()) {
          const first = list[0]!;
          const title = String(first.title ?? '');
          const texts = list.map((r) => String(r.text ?? ''));
          const analyses = passageAnalyses(first.lang as string | null, title, texts);
          list.forEach((r, i) => {
            r.search_text = indexText(title, texts[i]!, analyses[i]!);
            if (r.vector && !Array.isArray(r.vector)) r.vector = Array.from(r.vector as Iterable<number>);
          });
        }
        await passages.mergeInsert(KEY_COLUMNS).whenMatchedUpdateAll().execute(makeArrowTable(rows, { schema }));
      }
      this.#o.meta.ftsAnalyzer = undefined;
    }
  }

  /** After a committed write of `n` pages (inside the write queue): first indexes, then optimize or a refresh. */
  afterWrite(n: number): Promise<void> {
    return this.#keepingPassages(async () => {
      const { images } = this.#o.tables;
      await this.#ensureKeyIndexes();
      if (!this.#imageFtsReady && (await images.countRows()) > 0) {
        await images.createIndex(ALT_COLUMN, { config: Index.fts(IMAGE_FTS_OPTIONS), replace: true });
        this.#imageFtsReady = true;
      }
      this.#writes += n;
      this.#unrefreshed += n;
      if (
        optimizeDue({
          writes: this.#writes,
          every: this.#o.optimizeEvery,
          lastMs: this.#lastOptimizeMs,
          sinceLastMs: performance.now() - this.#lastOptimizeEnd,
        })
      ) {
        this.#writes = 0;
        await this.#optimizeNow();
      } else this.#scheduleRefresh();
    });
  }

  /** Compacts, updates indexes, and builds the vector index once large enough. Serialised with writes. */
  optimize(): Promise<void> {
    return this.#o.queue.run(() =>
      this.#keepingPassages(async () => {
        if (this.#o.isClosed()) return;
        await this.#ensureKeyIndexes();
        this.#writes = 0;
        await this.#optimizeNow();
      }),
    );
  }

  /**
   * Runs maintenance that writes no passage (inside the write queue) between a begin and an end mark told to
   * `passagesMaintenance`. The end is told even when the work failed part way (what it did commit kept every passage
   * all the same), at the version it left.
   */
  async #keepingPassages(work: () => Promise<void>): Promise<void> {
    const { passages } = this.#o.tables;
    const tell = this.#o.passagesMaintenance;
    if (!tell) return work();
    const before = await passages.version();
    tell('begin', before);
    try {
      await work();
    } finally {
      tell('end', await passages.version().catch(() => before));
    }
  }

  /** Stops the pending refresh and waits for a retraining in progress (the index is closing). */
  async stop(): Promise<void> {
    if (this.#refreshTimer) clearTimeout(this.#refreshTimer);
    this.#refreshTimer = null;
    await this.#retraining;
  }

  /** Debounced optimize after writes, so new rows reach the indexes within about `refreshAfterMs`. */
  #scheduleRefresh(): void {
    if (this.#o.refreshAfterMs <= 0 || this.#o.isClosed()) return;
    if (this.#refreshTimer) clearTimeout(this.#refreshTimer);
    const delay = Math.max(this.#o.refreshAfterMs, optimizeWaitMs(this.#lastOptimizeMs, performance.now() - this.#lastOptimizeEnd));
    this.#refreshTimer = setTimeout(() => {
      this.#refreshTimer = null;
      if (this.#o.isClosed() || this.#unrefreshed === 0) return;
      this.optimize().catch((err: unknown) =>
        this.#o.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'index refresh failed'),
      );
    }, delay);
    this.#refreshTimer.unref();
  }

  /**
   * B-tree indexes on `page_ref`: the vector-hit check, whole-row reads, page reads and
   * deletes all restrict by page_ref; without an index each such predicate scans the column (tens of ms
   * at 1M passages). Created once (also for an index written before they existed); `optimize()` keeps them up to date.
   */
  async #ensureKeyIndexes(): Promise<void> {
    if (this.#keyIndexes) return;
    let done = true;
    for (const table of [this.#o.tables.passages, this.#o.tables.pages]) {
      const have = (await table.listIndices()).some((i) => i.columns.includes('page_ref'));
      if (have) continue;
      if ((await table.countRows()) > 0) await table.createIndex('page_ref', { config: Index.btree() });
      else done = false;
    }
    this.#keyIndexes = done;
  }

  async #optimizeNow(): Promise<void> {
    // Compacts small fragments, folds new rows into the key/vector/image indexes and drops old versions. Maintenance is
    // best effort: a failure is logged and the index keeps serving (new rows stay searchable unindexed).
    const { passages, pages, images } = this.#o.tables;
    const started = Date.now();
    this.#unrefreshed = 0;
    const olderThan = new Date(started - 60_000);
    // While the vector index is retrained the passages table is left alone: a compaction commit rewrites the fragments
    // the new index is built over (one of the two commits would fail), and folding rows into the old index is wasted.
    const retraining = this.#retraining !== null;
    if (retraining) this.#optimizeAfterRetrain = true;
    for (const [name, table] of [
      ['passages', passages],
      ['pages', pages],
      ['images', images],
    ] as const) {
      if (retraining && table === passages) continue;
      try {
        await table.optimize({ cleanupOlderThan: olderThan });
      } catch (err) {
        this.#o.log?.warn({ table: name, err: err instanceof Error ? err.message : String(err) }, 'index optimize failed');
      }
    }
    const embedder = this.#embedder;
    if (embedder && !this.#vectorIndex) {
      const n = await passages.countRows('vector IS NOT NULL');
      if (n >= this.#o.vectorIndexThreshold) {
        const { partitions, config } = ivfPqConfig(n, embedder.dim);
        await passages.createIndex('vector', { config });
        this.#vectorIndex = true;
        this.#o.meta.vectorIndexTrainedOn = n;
        await this.#saveMeta();
        this.#o.log?.info({ vectors: n, partitions }, 'vector index built');
      }
    } else if (embedder && this.#o.writes && !retraining && !this.#retrainFailed) await this.#retrainIfDrifted(embedder);
    const ms = Date.now() - started;
    this.#lastOptimizeMs = ms;
    this.#lastOptimizeEnd = performance.now();
    await this.#rememberOptimizeMs(ms);
  }

  /**
   * Starts retraining the vector index when `vectorRetrainDue` says so, without holding the write queue: LanceDB
   * commits the new index over the table version it read, writes committed meanwhile stay (their rows unindexed,
   * searched flat until the next optimize folds them in), and searches use the old index until the commit. No
   * passage-change mark is told: the index's commit moves no row, and a reader that meets its version unannounced
   * finds the rows unchanged by its row-id comparison.
   */
  async #retrainIfDrifted(embedder: Embedder): Promise<void> {
    const { passages } = this.#o.tables;
    let vectors: number;
    let segments: number;
    try {
      const name = (await passages.listIndices()).find((i) => i.columns.includes('vector'))?.name;
      const stats = name === undefined ? undefined : await passages.indexStats(name);
      if (!stats) return;
      vectors = stats.numIndexedRows + stats.numUnindexedRows;
      segments = stats.numIndices ?? 1;
    } catch (err) {
      this.#o.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'vector index statistics not read');
      return;
    }
    const trainedOn = this.#o.meta.vectorIndexTrainedOn;
    const state = {
      vectors,
      trainedOn,
      segments,
      lastRetrainMs: this.#lastRetrainMs,
      sinceLastRetrainMs: performance.now() - this.#lastRetrainEnd,
    };
    if (!vectorRetrainDue(state)) return;
    this.#retraining = this.#retrain(embedder, { vectors, trainedOn, segments }).finally(() => {
      this.#retraining = null;
      if (this.#optimizeAfterRetrain && !this.#o.isClosed()) {
        this.#optimizeAfterRetrain = false;
        this.#unrefreshed++;
        this.#scheduleRefresh();
      }
    });
  }

  async #retrain(embedder: Embedder, was: { vectors: number; trainedOn: number | undefined; segments: number }): Promise<void> {
    const started = Date.now();
    try {
      const n = await this.#o.tables.passages.countRows('vector IS NOT NULL');
      const { partitions, config } = ivfPqConfig(n, embedder.dim);
      await this.#o.tables.passages.createIndex('vector', { config, replace: true });
      this.#lastRetrainMs = Date.now() - started;
      this.#lastRetrainEnd = performance.now();
      this.#o.meta.vectorIndexTrainedOn = n;
      this.#o.meta.vectorRetrainMs = this.#lastRetrainMs;
      await this.#saveMeta();
      this.#o.log?.info({ vectors: n, partitions, before: was, ms: Date.now() - started }, 'vector index retrained');
    } catch (err) {
      this.#retrainFailed = true;
      this.#o.log?.warn({ err: err instanceof Error ? err.message : String(err), before: was }, 'vector index retraining failed');
    }
  }

  /** Persists the index metadata; a failure is logged (the next change writes it again). */
  async #saveMeta(): Promise<void> {
    try {
      await this.#o.saveMeta();
    } catch (err) {
      this.#o.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'index meta not saved');
    }
  }

  /**
   * Records a long optimize's length in the index metadata (read back by the next writer's open), when it is ≥ 1 s
   * and differs from the recorded one by more than half: one small write now and then, not one per optimize.
   */
  async #rememberOptimizeMs(ms: number): Promise<void> {
    const meta = this.#o.meta;
    const known = meta.optimizeMs;
    const worth = ms >= 1000 ? ms : undefined;
    if (worth === known) return;
    if (worth !== undefined && known !== undefined && worth > known / 2 && worth < known * 1.5) return;
    if (worth !== undefined) this.#o.log?.info({ ms: worth, before: known ?? null }, 'index optimize: its length is recorded');
    meta.optimizeMs = worth;
    await this.#saveMeta();
  }

  /** Rebuilds the image full-text index with its options (an index written with other options: see FTS_ANALYZER). */
  async #rebuildFts(): Promise<void> {
    const started = Date.now();
    if (this.#imageFtsReady) await this.#o.tables.images.createIndex(ALT_COLUMN, { config: Index.fts(IMAGE_FTS_OPTIONS), replace: true });
    this.#o.meta.ftsAnalyzer = FTS_ANALYZER;
    await this.#o.saveMeta();
    if (this.#imageFtsReady) this.#o.log?.info({ ms: Date.now() - started }, 'image full-text index rebuilt with the current analyzer');
  }
}
