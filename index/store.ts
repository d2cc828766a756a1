/**
 * The passage index: LanceDB tables in `<dataDir>/lance`.
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
 * Writes are serialised through one queue. Unindexed rows stay searchable (LanceDB searches them flat) until
 * `optimize()` folds them into the indexes; optimize runs every `optimizeEvery` writes.
 */
import * as lancedb from '@lancedb/lancedb';
import { Index, MatchQuery, type FullTextQuery, type Table } from '@lancedb/lancedb';
import { Bool, Field, FixedSizeList, Float32, Float64, Int32, Schema, Utf8 } from 'apache-arrow';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { DateSource, PageInput, PageSink } from '../page-model.js';
import type { Embedder } from './embedder.js';
import { classifySource, type Province, type SourceType } from './source-type.js';
import { estimateTokens } from './tokens.js';
import { analyzerLang, indexText, MAX_TERM_LENGTH, STOP_WORDS } from './analyzer.js';
import { SEARCH_COLUMN, type MatchColumn } from './query.js';
import { TitleStats } from './title-stats.js';
import { beginWrite, recoverInterruptedWrite } from './write-journal.js';
import { localIndexLocation, openError, readIndexMeta, writeIndexMeta, type IndexLocation } from './location.js';

/** Ranking modes a response names. `-hashing` marks the deterministic stand-in embedder (no semantics). */
export const RANKING_MODES = ['hybrid-rrf', 'bm25', 'vector', 'hybrid-rrf-hashing', 'vector-hashing'] as const;
/** One of {@link RANKING_MODES}. */
export type RankingMode = (typeof RANKING_MODES)[number];

/**
 * FTS index options. The text is analysed before it reaches LanceDB (analyzer.ts: folding, language-aware stop words
 * and stemming), so the index only splits on white space: what it matches and what retrieval verifies in code are
 * the same terms by construction.
 *
 * `withPosition: false`: phrases are matched as "all words" by the index and checked for order and adjacency in code
 * (query.ts `matches`). LanceDB 0.31 and 0.37 could not compact a positions index with an unindexed tail (0.31:
 * "Error decoding batch: LanceError(Arrow)…"; 0.37: lance-format/lance#7653; on 2 cores a hang); 0.39 can
 * (docs/bench-index.md "LanceDB 0.39"), but positions cost 2–3× the optimize time and the code check is exact anyway.
 * Changing any option here rebuilds the FTS indexes of an existing index when it opens (`FTS_ANALYZER`).
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
 * English analyzer over raw text: version 1) is re-analysed from its stored text when opened.
 */
const ANALYSIS_VERSION = 2;

/** A stored passage row (the fields search reads). */
export interface PassageRow {
  readonly page_ref: number;
  readonly ordinal: number;
  readonly text: string;
  readonly snippet_text: string;
  readonly heading_path: string;
  readonly tokens: number;
  readonly title: string;
  readonly url: string;
  readonly host: string;
  readonly host_id: number;
  readonly filetype: string;
  readonly lang: string | null;
  readonly country: string | null;
  readonly province: string | null;
  readonly source_type: string;
  readonly date_ms: number;
  readonly published_at: string | null;
  readonly modified_at: string | null;
  readonly fetched_at: string;
  readonly date_source: string;
  readonly group_key: string;
  readonly content_hash: string;
  readonly nosnippet: boolean;
  readonly max_snippet: number | null;
  readonly external_id: string | null;
  /** 1-based page of a paged document (PDF) the passage is on; null for HTML and text. */
  readonly page_no: number | null;
}

/** A page as stored: the PageInput fields (without its passages, images and raw signals) plus what the index derived. */
export interface StoredPage extends Omit<PageInput, 'passages' | 'images' | 'signals' | 'externalId'> {
  readonly country: string | null;
  readonly province: Province | null;
  readonly sourceType: SourceType;
  readonly passageCount: number;
  readonly externalId: string | null;
}

/** One passage of a page, for continuation reads. */
export interface StoredPassage {
  readonly ordinal: number;
  readonly text: string;
  readonly snippetText: string;
  readonly headingPath: string[];
  readonly tokens: number;
  /** 1-based page of a paged document (PDF); null otherwise. */
  readonly page: number | null;
}

/** Image metadata hit. */
export interface ImageHit {
  readonly pageRef: number;
  readonly pageUrl: string;
  readonly host: string;
  readonly src: string;
  readonly alt: string;
  readonly width: number | null;
  readonly height: number | null;
}

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
}

const PASSAGE_ROW_COLUMNS = [
  'page_ref', 'ordinal', 'text', 'snippet_text', 'heading_path', 'tokens', 'title', 'url', 'host', 'host_id', 'filetype',
  'lang', 'country', 'province', 'source_type', 'date_ms', 'published_at', 'modified_at', 'fetched_at', 'date_source',
  'group_key', 'content_hash', 'nosnippet', 'max_snippet', 'external_id', 'page_no',
] as const satisfies readonly (keyof PassageRow)[];

/**
 * What a candidate carries before it is chosen: enough to rank, check operators (except the body), collapse
 * near-duplicates, cap hosts and apply the snippet policy. Every column read costs a random access per candidate,
 * so the rest of the row is read only for the passages a response uses (`passageRows`, via `hydrate`).
 */
export const HIT_COLUMNS = ['page_ref', 'ordinal', 'host', 'group_key', 'content_hash', 'title', 'lang'] as const satisfies readonly (keyof PassageRow)[];

/**
 * A candidate passage: the hit columns, the optional ones the query's code checks read, and LanceDB's row id (a
 * fast path back to the whole row while the table is not compacted in between).
 */
export type PassageHit = Pick<PassageRow, (typeof HIT_COLUMNS)[number]> &
  Partial<Pick<PassageRow, Exclude<MatchColumn, 'search_text'>>> & { readonly search_text?: string; readonly _rowid?: bigint };

/** How a passage is found again: its key, and the row id it was read with (when it was). */
export interface PassageKey {
  readonly page_ref: number;
  readonly ordinal: number;
  readonly _rowid?: bigint;
}

const hitColumns = (extra: readonly MatchColumn[]): string[] => [...new Set([...HIT_COLUMNS, ...extra])];

/** The part of an Arrow table `arrowRows` reads (LanceDB's `toArrow()` result). */
interface ArrowColumns {
  readonly numRows: number;
  readonly schema: { readonly fields: readonly { readonly name: string }[] };
  getChild(name: string): Iterable<unknown> | null;
}

/**
 * An Arrow table as plain row objects, built column by column: each column is iterated once (Arrow's batch
 * iterator), where per-row `toJSON()` dispatched a visitor for every cell (≈ 3.7 ms of a 300-candidate query,
 * the largest main-thread cost of a served search after term checks).
 */
function arrowRows<T>(table: ArrowColumns): T[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < table.numRows; i++) out.push({});
  for (const { name } of table.schema.fields) {
    const col = table.getChild(name);
    if (!col) continue;
    let i = 0;
    for (const v of col) out[i++]![name] = v;
  }
  return out as T[];
}

/** Arrow rows (lazy proxies over the batch) as plain objects the caller may keep and annotate. */
function plainRows<T>(rows: readonly unknown[]): T[] {
  return rows.map((r) => {
    const row = r as { toJSON?: () => T };
    return typeof row.toJSON === 'function' ? row.toJSON() : ({ ...(r as object) } as T);
  });
}

/**
 * Lance file format of new tables. 2.1 reads single rows of string columns without decoding whole pages: taking 30
 * passages' text measured 3 ms against 12 ms with the 2.0 default (100k passages). Existing tables keep theirs.
 */
const NEW_TABLE_OPTIONS = { existOk: true, storageOptions: { new_table_data_storage_version: '2.1' } };

const nullableUtf8 = (name: string) => new Field(name, new Utf8(), true);

function passageSchema(dim: number | null): Schema {
  const fields: Field[] = [
    new Field('page_ref', new Int32(), false),
    new Field('ordinal', new Int32(), false),
    new Field('text', new Utf8(), false),
    new Field('search_text', new Utf8(), false),
    new Field('snippet_text', new Utf8(), false),
    new Field('heading_path', new Utf8(), false),
    new Field('page_no', new Int32(), true),
    new Field('tokens', new Int32(), false),
    new Field('title', new Utf8(), false),
    new Field('url', new Utf8(), false),
    new Field('host', new Utf8(), false),
    new Field('host_id', new Int32(), false),
    new Field('filetype', new Utf8(), false),
    nullableUtf8('lang'),
    nullableUtf8('country'),
    nullableUtf8('province'),
    new Field('source_type', new Utf8(), false),
    new Field('date_ms', new Float64(), false),
    nullableUtf8('published_at'),
    nullableUtf8('modified_at'),
    new Field('fetched_at', new Utf8(), false),
    new Field('date_source', new Utf8(), false),
    new Field('group_key', new Utf8(), false),
    new Field('content_hash', new Utf8(), false),
    new Field('nosnippet', new Bool(), false),
    new Field('max_snippet', new Int32(), true),
    nullableUtf8('external_id'),
  ];
  if (dim !== null) fields.push(new Field('vector', new FixedSizeList(dim, new Field('item', new Float32(), true)), true));
  return new Schema(fields);
}

const pageSchema = new Schema([
  new Field('page_ref', new Int32(), false),
  new Field('url', new Utf8(), false),
  nullableUtf8('canonical_url'),
  new Field('host', new Utf8(), false),
  new Field('host_id', new Int32(), false),
  new Field('title', new Utf8(), false),
  new Field('description', new Utf8(), false),
  nullableUtf8('lang'),
  nullableUtf8('published_at'),
  nullableUtf8('modified_at'),
  new Field('date_source', new Utf8(), false),
  new Field('fetched_at', new Utf8(), false),
  new Field('content_hash', new Utf8(), false),
  new Field('nosnippet', new Bool(), false),
  new Field('max_snippet', new Int32(), true),
  new Field('filetype', new Utf8(), false),
  new Field('signals', new Utf8(), false),
  nullableUtf8('country'),
  nullableUtf8('province'),
  new Field('source_type', new Utf8(), false),
  new Field('passage_count', new Int32(), false),
  nullableUtf8('external_id'),
]);

const imageSchema = new Schema([
  new Field('page_ref', new Int32(), false),
  new Field('ordinal', new Int32(), false),
  new Field('page_url', new Utf8(), false),
  new Field('host', new Utf8(), false),
  new Field('src', new Utf8(), false),
  new Field('alt', new Utf8(), false),
  new Field('width', new Int32(), true),
  new Field('height', new Int32(), true),
]);

interface IndexMeta {
  /** Vector space of the `vector` column, or null when the table has none. */
  vectorModelId: string | null;
  vectorDim: number | null;
  /** Analysis of `search_text` (absent: version 1). */
  analysis?: number;
  /**
   * The analyzer the full-text indexes were built with (`FTS_ANALYZER`); absent in indexes written before it was
   * recorded (LanceDB 0.31). Queries are tokenized with the parameters stored in the index, so an index built with
   * other options is rebuilt when opened (see `#loadState`).
   */
  ftsAnalyzer?: string;
}

/**
 * Identifies the full-text index options as built by this code: an index built with others (an older analysis, or
 * LanceDB 0.31's defaults, which 0.38+ reads with a larger stop-word list) is rebuilt when opened.
 */
const FTS_ANALYZER = JSON.stringify({ passages: FTS_OPTIONS, images: IMAGE_FTS_OPTIONS });

/** Languages are stored as a lower-case primary subtag so they can be compared as closed-set literals. */
export function normaliseLang(lang: string | null): string | null {
  if (!lang) return null;
  const p = lang.trim().toLowerCase().split(/[-_]/, 1)[0] ?? '';
  return /^[a-z]{2,3}$/.test(p) ? p : null;
}

const toMs = (iso: string | null): number | null => {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : null;
};

/** Serialises writes: each task starts after the previous one settled. */
class WriteQueue {
  #tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(task, task);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}

/** The LanceDB-backed passage index. Implements the crawler's PageSink. */
export class PassageIndex implements PageSink {
  readonly #db: lancedb.Connection;
  readonly #passages: Table;
  readonly #pages: Table;
  readonly #images: Table;
  readonly #location: IndexLocation;
  readonly #log: OpenOptions['log'];
  readonly #queue = new WriteQueue();
  readonly #hostIds = new Map<string, number>();
  readonly #langs = new Set<string>();
  readonly #optimizeEvery: number;
  readonly #vectorIndexThreshold: number;
  readonly #meta: IndexMeta;
  /** The embedder whose vectors are in the table (null: no usable vectors). */
  readonly embedder: Embedder | null;
  #writes = 0;
  /** Writes not yet folded into the indexes (reset by every optimize). */
  #unrefreshed = 0;
  #refreshTimer: NodeJS.Timeout | null = null;
  #lastOptimizeMs = 0;
  readonly #refreshAfterMs: number;
  #nextHostId = 1;
  #ftsReady = false;
  #imageFtsReady = false;
  #keyIndexes = false;
  #titleStats = new TitleStats();
  #vectorIndex = false;
  #closed = false;

  private constructor(args: {
    db: lancedb.Connection; passages: Table; pages: Table; images: Table; location: IndexLocation; log: OpenOptions['log'];
    embedder: Embedder | null; optimizeEvery: number; vectorIndexThreshold: number; meta: IndexMeta; refreshAfterMs: number;
  }) {
    this.#refreshAfterMs = args.refreshAfterMs;
    this.#meta = args.meta;
    this.#db = args.db;
    this.#passages = args.passages;
    this.#pages = args.pages;
    this.#images = args.images;
    this.#location = args.location;
    this.#log = args.log;
    this.embedder = args.embedder;
    this.#optimizeEvery = args.optimizeEvery;
    this.#vectorIndexThreshold = args.vectorIndexThreshold;
  }

  /**
   * Opens (creating when needed) the index in `dir`. When the stored vectors come from another model than
   * `embedder` (or the table has no vector column), vectors are not used: ranking is BM25 until re-ingested.
   */
  static async open(opts: OpenOptions): Promise<PassageIndex> {
    const location = opts.location ?? (opts.dir !== undefined ? localIndexLocation(opts.dir) : undefined);
    if (!location) throw new TypeError('PassageIndex.open needs a dir or a location');
    if (location.kind === 'local') mkdirSync(location.uri, { recursive: true });
    mkdirSync(location.journalDir, { recursive: true });
    // LANCE_CPU_THREADS is the process entry's to set (index/lance-threads.ts), never a library's.
    let db: lancedb.Connection;
    let names: Set<string>;
    try {
      db = await lancedb.connect(location.uri, {
        storageOptions: { ...location.storageOptions },
        ...(location.readConsistencyS !== undefined ? { readConsistencyInterval: location.readConsistencyS } : {}),
      });
      names = new Set(await db.tableNames());
    } catch (err) {
      // The first request to object storage is where wrong credentials, a missing bucket or a dead endpoint show:
      // a startup error that says which, and carries no secret.
      throw location.kind === 's3' ? openError(err, location) : err;
    }
    const stored = names.has('passages') ? await readIndexMeta<IndexMeta>(db, location, names) : null;
    let meta: IndexMeta;
    let passages: Table;
    if (stored) {
      meta = stored;
      passages = await db.openTable('passages');
      // Indexes written before passages kept PDF page numbers (issue 16) get the column, empty: a schema change
      // of one nullable column, no rewrite of the rows.
      if (!(await passages.schema()).fields.some((f) => f.name === 'page_no')) await passages.addColumns([{ name: 'page_no', valueSql: 'CAST(NULL AS INT)' }]);
    } else {
      meta = { vectorModelId: opts.embedder?.modelId ?? null, vectorDim: opts.embedder?.dim ?? null, analysis: ANALYSIS_VERSION, ftsAnalyzer: FTS_ANALYZER };
      passages = await db.createEmptyTable('passages', passageSchema(meta.vectorDim), NEW_TABLE_OPTIONS);
      await writeIndexMeta(db, location, meta);
    }
    let embedder = opts.embedder;
    if (embedder && (meta.vectorModelId !== embedder.modelId || meta.vectorDim !== embedder.dim)) {
      opts.log?.warn(
        { stored: meta.vectorModelId, embedder: embedder.modelId },
        'index vectors come from another model (or none): vector ranking disabled until the corpus is re-indexed',
      );
      embedder = null;
    }
    const pages = names.has('pages') ? await db.openTable('pages') : await db.createEmptyTable('pages', pageSchema, NEW_TABLE_OPTIONS);
    const images = names.has('images') ? await db.openTable('images') : await db.createEmptyTable('images', imageSchema, NEW_TABLE_OPTIONS);
    // A write killed half-way (kill -9 between two table commits) is rolled back before anyone reads.
    const rolledBack = await recoverInterruptedWrite(location.journalDir, { passages, pages, images });
    if (rolledBack.length > 0) opts.log?.warn({ tables: rolledBack }, 'an interrupted index write was rolled back');
    const idx = new PassageIndex({
      db, passages, pages, images, location, log: opts.log, embedder, meta,
      optimizeEvery: opts.optimizeEvery ?? 200, vectorIndexThreshold: opts.vectorIndexThreshold ?? 50_000,
      refreshAfterMs: opts.refreshAfterMs ?? 1000,
    });
    if ((meta.analysis ?? 1) < ANALYSIS_VERSION) {
      await idx.#reanalyse();
      meta.analysis = ANALYSIS_VERSION;
      await writeIndexMeta(db, location, meta);
    }
    await idx.#loadState();
    return idx;
  }

  /**
   * Rewrites `search_text` of every passage with the current analysis (from its stored title, text and language) and
   * rebuilds the full-text index. Runs once, when an index written by an older version is opened; pages are
   * rewritten in slices of page_refs, each slice one merge-insert commit (a page is never half-rewritten).
   */
  async #reanalyse(): Promise<void> {
    const total = await this.#passages.countRows();
    this.#log?.info({ passages: total }, 'index: re-analysing search_text (new text analysis)');
    if (total > 0) {
      const refs = ((await this.#pages.query().select(['page_ref']).toArray()) as { page_ref: number }[]).map((r) => r.page_ref).sort((a, b) => a - b);
      const schema = await this.#passages.schema();
      for (let i = 0; i < refs.length; i += 2000) {
        const slice = refs.slice(i, i + 2000);
        const rows = plainRows<Record<string, unknown>>(await this.#passages.query().where(`page_ref IN (${slice.join(', ')})`).toArray());
        if (rows.length === 0) continue;
        for (const r of rows) {
          r.search_text = indexText(String(r.title ?? ''), String(r.text ?? ''), analyzerLang(r.lang as string | null));
          if (r.vector && !Array.isArray(r.vector)) r.vector = Array.from(r.vector as Iterable<number>);
        }
        await this.#passages.mergeInsert(['page_ref', 'ordinal']).whenMatchedUpdateAll().execute(this.#arrowRows(rows, schema));
      }
      // The full-text index is rebuilt by #loadState (`FTS_ANALYZER` differs).
      this.#meta.ftsAnalyzer = undefined;
    }
  }

  async #loadState(): Promise<void> {
    const rows = (await this.#pages.query().select(['host', 'host_id', 'lang', 'title']).toArray()) as { host: string; host_id: number; lang: string | null; title: string }[];
    this.#titleStats = await TitleStats.build(rows.map((r) => ({ title: r.title, lang: r.lang })));
    for (const r of rows) {
      this.#hostIds.set(r.host, r.host_id);
      this.#nextHostId = Math.max(this.#nextHostId, r.host_id + 1);
      if (r.lang) this.#langs.add(r.lang);
    }
    const idx = await this.#passages.listIndices();
    this.#ftsReady = idx.some((i) => i.columns.includes(SEARCH_COLUMN));
    if (this.#ftsReady) await this.#ensureKeyIndexes(); // an index written before the key indexes existed
    this.#vectorIndex = idx.some((i) => i.columns.includes('vector'));
    this.#imageFtsReady = (await this.#images.listIndices()).some((i) => i.columns.includes('alt'));
    if (this.#meta.ftsAnalyzer !== FTS_ANALYZER) await this.#rebuildFts();
  }

  /** Rebuilds the full-text indexes with FTS_OPTIONS (an index written with other options: see FTS_ANALYZER). */
  async #rebuildFts(): Promise<void> {
    const started = Date.now();
    if (this.#ftsReady) {
      await this.#passages.createIndex(SEARCH_COLUMN, { config: Index.fts(FTS_OPTIONS), replace: true });
    }
    if (this.#imageFtsReady) await this.#images.createIndex('alt', { config: Index.fts(IMAGE_FTS_OPTIONS), replace: true });
    this.#meta.ftsAnalyzer = FTS_ANALYZER;
    await writeIndexMeta(this.#db, this.#location, this.#meta);
    if (this.#ftsReady || this.#imageFtsReady) this.#log?.info({ ms: Date.now() - started }, 'full-text indexes rebuilt with the current analyzer');
  }

  /** Folder or object-storage URI of the database. */
  get dir(): string {
    return this.#location.uri;
  }

  /** Where the index lives (log `location.label`, never the object: it holds credentials). */
  get location(): IndexLocation {
    return this.#location;
  }

  #hostId(host: string): number {
    let id = this.#hostIds.get(host);
    if (id === undefined) {
      // max + 1, not size + 1: a host whose pages were all removed is gone from the map after a reopen, and its id
      // must not be handed to another host while old ids are still in use.
      id = this.#nextHostId++;
      this.#hostIds.set(host, id);
    }
    return id;
  }

  /** Integer ids of every known host equal to `domain` or under it (site: compiles to these numbers). */
  hostIdsUnder(domain: string): number[] {
    const out: number[] = [];
    for (const [h, id] of this.#hostIds) if (h === domain || h.endsWith(`.${domain}`)) out.push(id);
    return out;
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
    const rows: Record<string, unknown>[] = [];
    const texts: string[] = [];
    const pageRows: Record<string, unknown>[] = [];
    const imageRows: Record<string, unknown>[] = [];
    for (const p of list) {
      if (!Number.isInteger(p.pageRef) || p.pageRef < 0 || p.pageRef > 2 ** 31 - 1) throw new RangeError(`page_ref out of range: ${p.pageRef}`);
      const host = p.host.toLowerCase();
      const hostId = this.#hostId(host);
      const lang = normaliseLang(p.lang);
      const sig = classifySource(host, p.signals);
      const dateMs = toMs(p.modifiedAt) ?? toMs(p.publishedAt) ?? toMs(p.fetchedAt) ?? 0;
      const maxSnippet = p.snippet.maxSnippet === null ? null : Math.max(0, Math.floor(p.snippet.maxSnippet));
      const nosnippet = p.snippet.nosnippet || maxSnippet === 0;
      const common = {
        title: p.title,
        url: p.url,
        host,
        host_id: hostId,
        filetype: p.filetype.toLowerCase(),
        lang,
        country: sig.country,
        province: sig.province,
        source_type: sig.sourceType,
        date_ms: dateMs,
        published_at: p.publishedAt,
        modified_at: p.modifiedAt,
        fetched_at: p.fetchedAt,
        date_source: p.dateSource,
        group_key: p.canonicalUrl ?? p.url,
        content_hash: p.contentHash,
        nosnippet,
        max_snippet: nosnippet ? null : maxSnippet,
        external_id: p.externalId ?? null,
      };
      for (const s of p.passages) {
        rows.push({
          page_ref: p.pageRef,
          ordinal: s.ordinal,
          text: s.text,
          search_text: indexText(p.title, s.text, analyzerLang(lang)),
          snippet_text: s.snippetText,
          heading_path: JSON.stringify(s.headingPath),
          page_no: s.page ?? null,
          tokens: estimateTokens(s.text),
          ...common,
        });
        texts.push(p.title ? `${p.title}\n${s.text}` : s.text);
      }
      pageRows.push({
        page_ref: p.pageRef,
        url: p.url,
        canonical_url: p.canonicalUrl,
        host,
        host_id: hostId,
        title: p.title,
        description: p.description,
        lang,
        published_at: p.publishedAt,
        modified_at: p.modifiedAt,
        date_source: p.dateSource,
        fetched_at: p.fetchedAt,
        content_hash: p.contentHash,
        nosnippet,
        max_snippet: nosnippet ? null : maxSnippet,
        filetype: common.filetype,
        signals: JSON.stringify(p.signals),
        country: sig.country,
        province: sig.province,
        source_type: sig.sourceType,
        passage_count: p.passages.length,
        external_id: p.externalId ?? null,
      });
      p.images.forEach((im, i) =>
        imageRows.push({ page_ref: p.pageRef, ordinal: i, page_url: p.url, host, src: im.src, alt: im.alt, width: im.width, height: im.height }),
      );
    }
    if (this.embedder && rows.length > 0) {
      const vecs = await this.embedder.embed(texts);
      rows.forEach((r, i) => (r.vector = Array.from(vecs[i]!)));
    } else if (this.#hasVectorColumn()) {
      for (const r of rows) r.vector = null;
    }
    const refs = list.map((p) => p.pageRef).join(', ');
    await this.#queue.run(async () => {
      this.#assertOpen();
      // Page rows and images first, passages last: search reads only the passages table, so its commit is the
      // moment the page changes, and by then the page row is there (no reader sees passages of an absent page).
      // The journal makes the three commits one: a crash between them is rolled back at the next open.
      const endWrite = await beginWrite(this.#location.journalDir, { passages: this.#passages, pages: this.#pages, images: this.#images });
      const pageFilter = `page_ref IN (${refs})`;
      await this.#pages.mergeInsert('page_ref').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(this.#arrowRows(pageRows, pageSchema));
      await this.#images.delete(pageFilter);
      if (imageRows.length > 0) await this.#images.add(this.#arrowRows(imageRows, imageSchema));
      if (rows.length > 0) {
        await this.#passages
          .mergeInsert(['page_ref', 'ordinal'])
          .whenMatchedUpdateAll()
          .whenNotMatchedInsertAll()
          .whenNotMatchedBySourceDelete({ where: pageFilter })
          .execute(this.#arrowRows(rows, this.#passageSchemaCache ?? (this.#passageSchemaCache = await this.#passages.schema())));
      } else {
        await this.#passages.delete(pageFilter);
      }
      endWrite();
      for (const r of pageRows) if (typeof r.lang === 'string') this.#langs.add(r.lang);
      for (const p of list) this.#titleStats.add(p.title, normaliseLang(p.lang));
      await this.#afterWrite(list.length);
    });
  }

  #passageSchemaCache: Schema | null = null;

  #hasVectorColumn(): boolean {
    return this.#meta.vectorDim !== null;
  }

  /** Rows → an Arrow table with exactly `schema` (so nullable columns that are all null keep their type). */
  #arrowRows(rows: Record<string, unknown>[], schema: Schema) {
    return lancedb.makeArrowTable(rows, { schema });
  }

  /** Removes a page from every surface (passages first: search stops returning it with that commit). */
  removePage(pageRef: number): Promise<void> {
    if (!Number.isInteger(pageRef)) return Promise.reject(new RangeError('page_ref must be an integer'));
    return this.#queue.run(async () => {
      this.#assertOpen();
      const f = `page_ref = ${pageRef}`;
      const endWrite = await beginWrite(this.#location.journalDir, { passages: this.#passages, pages: this.#pages, images: this.#images });
      await this.#passages.delete(f);
      await this.#pages.delete(f);
      await this.#images.delete(f);
      endWrite();
      await this.#afterWrite(1);
    });
  }

  async #afterWrite(n: number): Promise<void> {
    if (!this.#ftsReady) await this.#ensureFts();
    if (!this.#imageFtsReady && (await this.#images.countRows()) > 0) {
      await this.#images.createIndex('alt', { config: Index.fts(IMAGE_FTS_OPTIONS), replace: true });
      this.#imageFtsReady = true;
    }
    this.#writes += n;
    this.#unrefreshed += n;
    if (this.#writes >= this.#optimizeEvery) {
      this.#writes = 0;
      await this.#optimizeNow();
    } else this.#scheduleRefresh();
  }

  /** Debounced optimize after writes, so new rows reach the indexes within about `refreshAfterMs`. */
  #scheduleRefresh(): void {
    if (this.#refreshAfterMs <= 0 || this.#closed) return;
    if (this.#refreshTimer) clearTimeout(this.#refreshTimer);
    const delay = Math.max(this.#refreshAfterMs, this.#lastOptimizeMs * 10);
    this.#refreshTimer = setTimeout(() => {
      this.#refreshTimer = null;
      if (this.#closed || this.#unrefreshed === 0) return;
      this.optimize().catch((err: unknown) =>
        this.#log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'index refresh failed'),
      );
    }, delay);
    this.#refreshTimer.unref();
  }

  async #ensureFts(): Promise<void> {
    if ((await this.#passages.countRows()) === 0) return;
    await this.#passages.createIndex(SEARCH_COLUMN, { config: Index.fts(FTS_OPTIONS), replace: true });
    this.#ftsReady = true;
    await this.#ensureKeyIndexes();
  }

  /**
   * B-tree indexes on `page_ref`: the vector-hit check, whole-row reads, page reads and
   * deletes all restrict by page_ref; without an index each such predicate scans the column (≈ 30 ms at 1M
   * passages). Created once (also for an index written before they existed); `optimize()` keeps them up to date.
   */
  async #ensureKeyIndexes(): Promise<void> {
    if (this.#keyIndexes) return;
    let done = true;
    for (const table of [this.#passages, this.#pages]) {
      const have = (await table.listIndices()).some((i) => i.columns.includes('page_ref'));
      if (have) continue;
      if ((await table.countRows()) > 0) await table.createIndex('page_ref', { config: Index.btree() });
      else done = false;
    }
    this.#keyIndexes = done;
  }

  async #optimizeNow(): Promise<void> {
    // Compacts small fragments, folds new rows into the FTS/vector indexes and drops old versions. Maintenance is
    // best effort: a failure is logged and the index keeps serving (new rows stay searchable unindexed).
    const started = Date.now();
    this.#unrefreshed = 0;
    const olderThan = new Date(started - 60_000);
    for (const [name, table] of [['passages', this.#passages], ['pages', this.#pages], ['images', this.#images]] as const) {
      try {
        await table.optimize({ cleanupOlderThan: olderThan });
      } catch (err) {
        this.#log?.warn({ table: name, err: err instanceof Error ? err.message : String(err) }, 'index optimize failed');
      }
    }
    if (this.embedder && !this.#vectorIndex) {
      const n = await this.#passages.countRows('vector IS NOT NULL');
      if (n >= this.#vectorIndexThreshold) {
        const partitions = Math.max(1, Math.round(Math.sqrt(n)));
        await this.#passages.createIndex('vector', {
          config: Index.ivfPq({ distanceType: 'cosine', numPartitions: partitions, numSubVectors: Math.max(1, Math.floor(this.embedder.dim / 16)) }),
        });
        this.#vectorIndex = true;
        this.#log?.info({ vectors: n, partitions }, 'vector index built');
      }
    }
    if (this.#titleStats.stale) await this.#rebuildTitleStats();
    this.#lastOptimizeMs = Date.now() - started;
  }

  /** Recounts the title statistics from the stored titles (see title-stats.ts); readers keep the old ones meanwhile. */
  async #rebuildTitleStats(): Promise<void> {
    try {
      const rows = (await this.#pages.query().select(['title', 'lang']).toArray()) as { title: string; lang: string | null }[];
      this.#titleStats = await TitleStats.build(rows);
    } catch (err) {
      this.#log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'title statistics rebuild failed');
    }
  }

  /** BM25 of a title (in `lang`) for analysed query terms, from the title statistics: the BM25 arm's title boost. */
  titleScore(queryTerms: readonly string[], title: string, lang: string | null | undefined): number {
    return this.#titleStats.score(queryTerms, title, lang);
  }

  /** Compacts, updates indexes, and builds the vector index once large enough. Serialised with writes. */
  optimize(): Promise<void> {
    return this.#queue.run(async () => {
      if (this.#closed) return;
      if (!this.#ftsReady) await this.#ensureFts();
      else await this.#ensureKeyIndexes();
      this.#writes = 0;
      await this.#optimizeNow();
    });
  }

  /** The stored page, or null. */
  async getPage(pageRef: number): Promise<StoredPage | null> {
    if (!Number.isInteger(pageRef)) return null;
    const rows = await this.#pages.query().where(`page_ref = ${pageRef}`).limit(1).toArray();
    const r = rows[0] as Record<string, unknown> | undefined;
    return r ? toStoredPage(r) : null;
  }

  /** Ordered passages of a page from `offset` (0-based ordinal position), at most `limit`. */
  async pagePassages(pageRef: number, offset: number, limit: number): Promise<{ page: StoredPage; passages: StoredPassage[]; total: number } | null> {
    if (!Number.isInteger(pageRef) || !Number.isInteger(offset) || !Number.isInteger(limit)) return null;
    // Read passages first then the page: the passages are what must be consistent with each other.
    const rows = (await this.#passages
      .query()
      .where(`page_ref = ${pageRef}`)
      .select(['ordinal', 'text', 'snippet_text', 'heading_path', 'tokens', 'page_no'])
      .toArray()) as { ordinal: number; text: string; snippet_text: string; heading_path: string; tokens: number; page_no: number | null }[];
    if (rows.length === 0) return null;
    const page = await this.getPage(pageRef);
    if (!page) return null;
    rows.sort((a, b) => a.ordinal - b.ordinal);
    const slice = rows.slice(Math.max(0, offset), Math.max(0, offset) + Math.max(0, limit));
    return {
      page,
      total: rows.length,
      passages: slice.map((r) => ({
        ordinal: r.ordinal,
        text: r.text,
        snippetText: r.snippet_text,
        headingPath: JSON.parse(r.heading_path) as string[],
        tokens: r.tokens,
        page: r.page_no ?? null,
      })),
    };
  }

  /** Image metadata whose alt text matches `text` (BM25), best first. */
  async searchImages(text: string, limit: number): Promise<ImageHit[]> {
    const n = Math.max(1, Math.min(100, Math.floor(limit)));
    if (!this.#imageFtsReady || text.trim() === '') return [];
    const rows = (await this.#images
      .query()
      .fullTextSearch(new MatchQuery(text.slice(0, 300), 'alt'))
      .select(['page_ref', 'page_url', 'host', 'src', 'alt', 'width', 'height', '_score'])
      .limit(n)
      .toArray()) as { page_ref: number; page_url: string; host: string; src: string; alt: string; width: number | null; height: number | null }[];
    return rows.map((r) => ({ pageRef: r.page_ref, pageUrl: r.page_url, host: r.host, src: r.src, alt: r.alt, width: r.width, height: r.height }));
  }

  /** Whether the passages' full-text index exists (it is built with the first write). */
  fullTextReady(): boolean {
    return this.#ftsReady;
  }

  /** BM25 arm: passages matching `fts`, best first, with their BM25 score. */
  async ftsCandidates(fts: FullTextQuery, where: string | null, k: number, extra: readonly MatchColumn[] = []): Promise<(PassageHit & { _score: number })[]> {
    if (!this.#ftsReady) return [];
    let q = this.#passages.query().fullTextSearch(fts).select([...hitColumns(extra), '_score']).withRowId().limit(k);
    if (where) q = q.where(where);
    return arrowRows<PassageHit & { _score: number }>(await q.toArrow());
  }

  /** BM25 of `fts` on the given passages (a row-id prefilter: only their postings are scored), keyed `page_ref:ordinal`. */
  async ftsScores(fts: FullTextQuery, passages: readonly PassageKey[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const ids = [...new Set(passages.flatMap((p) => (typeof p._rowid === 'bigint' ? [p._rowid] : [])))];
    if (!this.#ftsReady || ids.length === 0) return out;
    const q = this.#passages
      .query()
      .fullTextSearch(fts)
      .where(`_rowid IN (${ids.join(', ')})`)
      .select(['page_ref', 'ordinal', '_score'])
      .limit(ids.length);
    for (const r of arrowRows<PassageKey & { _score: number }>(await q.toArrow())) out.set(`${r.page_ref}:${r.ordinal}`, r._score);
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
    // Taken by row id and compared here: a vector search restricted by `_rowid IN (…)` scanned the table (≈ 700 ms for
    // 1,000 ids at 1M passages) where the take is a few ms and 1,000 × 384 products are well under one.
    const table = await this.#passages.takeRowIds(ids).select(['page_ref', 'ordinal', 'vector']).toArrow();
    const refs = table.getChild('page_ref');
    const ords = table.getChild('ordinal');
    const vecs = table.getChild('vector');
    if (!refs || !ords || !vecs) return out;
    let qq = 0;
    for (let i = 0; i < vector.length; i++) qq += vector[i]! * vector[i]!;
    for (let r = 0; r < table.numRows; r++) {
      const v = vecs.get(r) as { toArray(): Float32Array } | null;
      if (!v) continue;
      const x = v.toArray();
      if (x.length !== vector.length) continue;
      let dot = 0;
      let xx = 0;
      for (let i = 0; i < x.length; i++) {
        dot += x[i]! * vector[i]!;
        xx += x[i]! * x[i]!;
      }
      if (xx === 0 || qq === 0) continue;
      out.set(`${refs.get(r)}:${ords.get(r)}`, 1 - dot / Math.sqrt(xx * qq));
    }
    return out;
  }

  /** Vector arm: nearest passages by cosine distance (prefiltered by `where`). */
  async vectorCandidates(vector: Float32Array, where: string | null, k: number, extra: readonly MatchColumn[] = []): Promise<(PassageHit & { _distance: number })[]> {
    if (!this.embedder) return [];
    let q = this.#passages.vectorSearch(Array.from(vector)).distanceType('cosine').select([...hitColumns(extra), '_distance']).withRowId().limit(k);
    if (where) q = q.where(where);
    if (this.#vectorIndex) q = q.nprobes(20).refineFactor(5);
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
   * the key index). Every row is checked against the key it was asked for.
   */
  passageRows(keys: readonly PassageKey[]): Promise<Map<string, PassageRow>> {
    return this.#readPassages<PassageRow>(keys, PASSAGE_ROW_COLUMNS);
  }

  async #readPassages<T extends PassageKey>(keys: readonly PassageKey[], columns: readonly string[]): Promise<Map<string, T>> {
    const out = new Map<string, T>();
    const want = new Set(keys.map((k) => `${k.page_ref}:${k.ordinal}`));
    const keep = (rows: T[]) => {
      for (const r of rows) {
        const key = `${r.page_ref}:${r.ordinal}`;
        if (want.has(key)) out.set(key, r);
      }
    };
    const ids = keys.flatMap((k) => (typeof k._rowid === 'bigint' ? [k._rowid] : []));
    if (ids.length > 0) keep(arrowRows<T>(await this.#passages.takeRowIds(ids).select([...columns]).toArrow()));
    const rest = keys.filter((k) => !out.has(`${k.page_ref}:${k.ordinal}`));
    if (rest.length === 0) return out;
    const refs = [...new Set(rest.map((k) => Math.trunc(k.page_ref)))];
    const ords = [...new Set(rest.map((k) => Math.trunc(k.ordinal)))];
    const where = `page_ref IN (${refs.join(', ')}) AND ordinal IN (${ords.join(', ')})`;
    keep(arrowRows<T>(await this.#passages.query().where(where).select([...columns]).toArrow()));
    return out;
  }

  /** The best ranking mode available now. */
  rankingMode(): RankingMode {
    if (!this.embedder) return 'bm25';
    return this.embedder.kind === 'model' ? 'hybrid-rrf' : 'hybrid-rrf-hashing';
  }

  async stats(): Promise<IndexStats> {
    const [pages, passages, images] = await Promise.all([this.#pages.countRows(), this.#passages.countRows(), this.#images.countRows()]);
    const vectors = this.#hasVectorColumn() ? await this.#passages.countRows('vector IS NOT NULL') : 0;
    return {
      pages,
      passages,
      vectors,
      images,
      rankingMode: this.rankingMode(),
      embedder: this.embedder ? { modelId: this.embedder.modelId, kind: this.embedder.kind } : null,
      vectorIndex: this.#vectorIndex,
    };
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('PassageIndex is closed');
  }

  /** Waits for pending writes, then closes the tables (the embedder is the caller's to close). */
  async close(): Promise<void> {
    if (this.#refreshTimer) clearTimeout(this.#refreshTimer);
    this.#refreshTimer = null;
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

function toStoredPage(r: Record<string, unknown>): StoredPage {
  const maxSnippet = r.max_snippet as number | null;
  return {
    pageRef: r.page_ref as number,
    url: r.url as string,
    canonicalUrl: (r.canonical_url as string | null) ?? null,
    host: r.host as string,
    title: r.title as string,
    description: r.description as string,
    lang: (r.lang as string | null) ?? null,
    publishedAt: (r.published_at as string | null) ?? null,
    modifiedAt: (r.modified_at as string | null) ?? null,
    dateSource: r.date_source as DateSource,
    fetchedAt: r.fetched_at as string,
    contentHash: r.content_hash as string,
    snippet: { nosnippet: r.nosnippet as boolean, maxSnippet: maxSnippet ?? null },
    filetype: r.filetype as string,
    country: (r.country as string | null) ?? null,
    province: (r.province as Province | null) ?? null,
    sourceType: r.source_type as SourceType,
    passageCount: r.passage_count as number,
    externalId: (r.external_id as string | null) ?? null,
  };
}
