/**
 * The column table of the three LanceDB tables: each column once, from which schemas, row types and every read's
 * column list are generated, so a column is added or renamed in one place. Order matters only for new tables.
 */
import type { DataType, Field as ArrowField, Schema as ArrowSchema } from 'apache-arrow';
import { Bool, Field, FixedSizeList, Float32, Float64, Int32, Schema, Utf8 } from './arrow.js';
import type { DateSource } from '../../../page-model.js';
import type { Province, SourceType } from '../../retrieval/source-type.js';
import type { TitleIds } from '../memory/title-stats.js';

/** A column: how it is stored and which reads select it. `T` is its TypeScript type (null included when nullable). */
export interface Column<T, R extends string> {
  /** The Arrow type; `dim` is the vector dimension (only the vector column uses it). */
  readonly arrow: (dim: number) => DataType;
  readonly nullable: boolean;
  readonly reads: readonly R[];
  /** Type-level only: never set at run time. */
  readonly _ts?: T;
}

type Columns<R extends string> = Readonly<Record<string, Column<unknown, R>>>;

/** A column builder over the reads `R` of one table. */
function columnsOf<R extends string>() {
  const make =
    <T>(arrow: (dim: number) => DataType, nullable: boolean) =>
    (...reads: R[]): Column<T, R> => ({ arrow, nullable, reads });
  return {
    int32: make<number>(() => new Int32(), false),
    int32OrNull: make<number | null>(() => new Int32(), true),
    float64: make<number>(() => new Float64(), false),
    bool: make<boolean>(() => new Bool(), false),
    text: <T extends string = string>(...reads: R[]) => make<T>(() => new Utf8(), false)(...reads),
    textOrNull: <T extends string = string>(...reads: R[]) => make<T | null>(() => new Utf8(), true)(...reads),
    vector: make<readonly number[] | null>((dim) => new FixedSizeList(dim, new Field('item', new Float32(), true)), true),
  };
}

/** The TypeScript type of a column. */
type ValueOf<C> = C extends Column<infer T, string> ? T : never;

/** Row type of the columns of `C` that read `R` needs (read-only fields, snake_case as stored). */
export type RowOf<C extends Columns<string>, R extends string> = {
  readonly [K in keyof C as R extends C[K]['reads'][number] ? K : never]: ValueOf<C[K]>;
};

/** Names of the columns of `C` that read `R` needs. */
export type ColumnsFor<C extends Columns<string>, R extends string> = keyof RowOf<C, R> & string;

/** The column list read `read` selects, in table order. */
export function columnsFor<C extends Columns<string>, R extends C[keyof C]['reads'][number]>(table: C, read: R): ColumnsFor<C, R>[] {
  return Object.keys(table).filter((name) => (table[name]!.reads as readonly string[]).includes(read)) as ColumnsFor<C, R>[];
}

/** The Arrow schema of a table; `dim` null leaves out the vector column (an index without an embedder has none). */
export function arrowSchema(table: Columns<string>, dim: number | null = null): ArrowSchema {
  const fields: ArrowField[] = [];
  for (const [name, c] of Object.entries(table)) {
    if (name === 'vector') {
      if (dim !== null) fields.push(new Field(name, c.arrow(dim), c.nullable));
    } else fields.push(new Field(name, c.arrow(0), c.nullable));
  }
  return new Schema(fields);
}

/**
 * Reads of the `passages` table: `hit` (kept small: every column is a random access per candidate), `match` (what a
 * query's code checks read), `row` (a rendered passage), `continuation` (a page in order), `key`, `vector`.
 */
type PassageRead = 'hit' | 'match' | 'row' | 'continuation' | 'key' | 'vector';
const p = columnsOf<PassageRead>();

/** Columns of the `passages` table (page fields denormalised, so a search reads one table version). */
export const PASSAGE_COLUMNS = {
  page_ref: p.int32('hit', 'row', 'key', 'vector'),
  ordinal: p.int32('hit', 'row', 'key', 'continuation', 'vector'),
  text: p.text('match', 'row', 'continuation'),
  /** Analysed terms of page title + passage (analyzer.ts): the BM25 index's column. */
  search_text: p.text('match'),
  snippet_text: p.text('row', 'continuation'),
  /** JSON array of the headings above the passage. */
  heading_path: p.text('row', 'continuation'),
  /** 1-based page of a paged document (PDF) the passage is on; null for HTML and text. */
  page_no: p.int32OrNull('row', 'continuation'),
  tokens: p.int32('row', 'continuation'),
  title: p.text('hit', 'row'),
  url: p.text('match', 'row'),
  host: p.text('hit', 'row'),
  host_id: p.int32('row'),
  filetype: p.text('match', 'row'),
  lang: p.textOrNull('hit', 'row'),
  country: p.textOrNull('row'),
  province: p.textOrNull<Province>('row'),
  source_type: p.text<SourceType>('row'),
  /** modified, else published, else fetched time, in ms (0: none): what date filters and sorts read. */
  date_ms: p.float64('row'),
  published_at: p.textOrNull('row'),
  modified_at: p.textOrNull('row'),
  fetched_at: p.text('row'),
  date_source: p.text<DateSource>('row'),
  /** Canonical URL, else URL: passages of one document group under it. */
  group_key: p.text('hit', 'row'),
  content_hash: p.text('hit', 'row'),
  /** The page's near-duplicate fingerprint (near-print.ts), 16 hex digits; null for a short page or an older index. */
  near_print: p.textOrNull('hit', 'row'),
  nosnippet: p.bool('row'),
  max_snippet: p.int32OrNull('row'),
  external_id: p.textOrNull('row'),
  /** Present only when the index has an embedder (its dimension is the embedder's). */
  vector: p.vector('vector'),
} as const;

/**
 * Reads of the `pages` table: `stored` (a whole page), `hosts` (host ids and languages), `titles` (title statistics),
 * `ref`, `prints` (a host's near-duplicate count).
 */
type PageRead = 'stored' | 'hosts' | 'ref' | 'prints';
const g = columnsOf<PageRead>();

/** Columns of the `pages` table: one row per page (PageInput fields and what the index derived). */
export const PAGE_COLUMNS = {
  page_ref: g.int32('stored', 'ref', 'prints'),
  url: g.text('stored', 'prints'),
  canonical_url: g.textOrNull('stored', 'prints'),
  host: g.text('stored', 'hosts', 'prints'),
  host_id: g.int32('hosts'),
  title: g.text('stored'),
  description: g.text('stored'),
  lang: g.textOrNull('stored', 'hosts'),
  published_at: g.textOrNull('stored'),
  modified_at: g.textOrNull('stored'),
  date_source: g.text<DateSource>('stored'),
  fetched_at: g.text('stored'),
  content_hash: g.text('stored', 'prints'),
  /** As the passages' `near_print`. */
  near_print: g.textOrNull('prints'),
  nosnippet: g.bool('stored'),
  max_snippet: g.int32OrNull('stored'),
  filetype: g.text('stored'),
  /** JSON of the page's raw signals (kept for re-derivation; no read needs it today). */
  signals: g.text(),
  country: g.textOrNull('stored'),
  province: g.textOrNull<Province>('stored'),
  source_type: g.text<SourceType>('stored'),
  passage_count: g.int32('stored'),
  external_id: g.textOrNull('stored'),
} as const;

/** Reads of the `images` table: `hit` (an image search result). */
type ImageRead = 'hit';
const i = columnsOf<ImageRead>();

/** Columns of the `images` table: image metadata, never bytes. */
export const IMAGE_COLUMNS = {
  page_ref: i.int32('hit'),
  ordinal: i.int32(),
  page_url: i.text('hit'),
  host: i.text('hit'),
  src: i.text('hit'),
  /** Alt text: the image FTS index's column (`ALT_COLUMN`). */
  alt: i.text('hit'),
  width: i.int32OrNull('hit'),
  height: i.int32OrNull('hit'),
} as const;

type PassageColumns = typeof PASSAGE_COLUMNS;
type PageColumns = typeof PAGE_COLUMNS;

/** Every column of a table as a row (what a write hands LanceDB). */
type WholeRow<C extends Columns<string>> = { readonly [K in keyof C]: ValueOf<C[K]> };

/** A stored passage row: the fields a rendered result reads. */
export type PassageRow = RowOf<PassageColumns, 'row'>;
/** A passage as written (every column; `vector` only when the table has one). */
export type PassageWriteRow = Omit<WholeRow<PassageColumns>, 'vector'> & { vector?: readonly number[] | null };
/** A page row as stored. */
export type PageRow = WholeRow<PageColumns>;
/** An image row as stored. */
export type ImageRow = WholeRow<typeof IMAGE_COLUMNS>;

/** Columns a query's code checks may read besides the hit columns (query.ts picks them per query). */
export type MatchColumn = ColumnsFor<PassageColumns, 'match'>;

export const HIT_COLUMNS = columnsFor(PASSAGE_COLUMNS, 'hit');
export const PASSAGE_ROW_COLUMNS = columnsFor(PASSAGE_COLUMNS, 'row');
/**
 * Row columns that are the passage's own (and its key). Every other row column is a field of its page, written
 * alike into each of the page's passages (rows.ts `pageRows`): the in-process postings keep those once per page.
 */
export const PASSAGE_OWN_ROW_COLUMNS = [
  'page_ref',
  'ordinal',
  'text',
  'snippet_text',
  'heading_path',
  'page_no',
  'tokens',
] as const satisfies readonly (typeof PASSAGE_ROW_COLUMNS)[number][];
type OwnRowColumn = (typeof PASSAGE_OWN_ROW_COLUMNS)[number];
/** The page's fields in a passage row. */
export type PageFieldRow = Omit<PassageRow, OwnRowColumn>;
export const PAGE_FIELD_ROW_COLUMNS = PASSAGE_ROW_COLUMNS.filter(
  (c): c is Exclude<typeof c, OwnRowColumn> => !(PASSAGE_OWN_ROW_COLUMNS as readonly string[]).includes(c),
);
/**
 * Row columns a search result does not read (svc_search quotes `snippet_text`): at large sizes each column is its
 * own read, so leaving these out shortens every result page's take.
 */
const NOT_IN_RESULT_ROW = ['text', 'heading_path', 'tokens'] as const satisfies readonly OwnRowColumn[];
type NotInResultRow = (typeof NOT_IN_RESULT_ROW)[number];
/** A passage row as a search result reads it: the whole row but for `NOT_IN_RESULT_ROW`. */
export type ResultRow = Omit<PassageRow, NotInResultRow>;
export const RESULT_ROW_COLUMNS = PASSAGE_ROW_COLUMNS.filter(
  (c): c is Exclude<typeof c, NotInResultRow> => !(NOT_IN_RESULT_ROW as readonly string[]).includes(c),
);
/** Whether a row read as a result row or a whole row is whole (the row cache holds both kinds). */
export const isWholeRow = (r: ResultRow): r is PassageRow => 'text' in r;
export const CONTINUATION_COLUMNS = columnsFor(PASSAGE_COLUMNS, 'continuation');
export const KEY_COLUMNS = columnsFor(PASSAGE_COLUMNS, 'key');
export const VECTOR_COLUMNS = columnsFor(PASSAGE_COLUMNS, 'vector');
export const STORED_PAGE_COLUMNS = columnsFor(PAGE_COLUMNS, 'stored');
export const HOST_COLUMNS = columnsFor(PAGE_COLUMNS, 'hosts');
export const PRINT_COLUMNS = columnsFor(PAGE_COLUMNS, 'prints');
/** A page as a host's near-duplicate count reads it. */
export type PrintRow = RowOf<PageColumns, 'prints'>;
export const IMAGE_HIT_COLUMNS = columnsFor(IMAGE_COLUMNS, 'hit');

/** The image FTS index's column. */
export const ALT_COLUMN = 'alt' satisfies keyof typeof IMAGE_COLUMNS;

/**
 * A candidate passage: the hit columns, the match columns the query's code checks read, and LanceDB's row id (a
 * fast path back to the whole row while the table is not compacted in between).
 */
export type PassageHit = RowOf<PassageColumns, 'hit'> &
  Partial<RowOf<PassageColumns, 'match'>> & {
    readonly _rowid?: bigint;
    /** `near-keys.ts` `nearKeyHash` of `group_key` and of `content_hash`, when the postings gave the candidate. */
    readonly _groupHash?: number;
    readonly _contentHash?: number;
    /** Its page title's terms as ids (title-stats.ts `titleTermIds`), when the postings gave the candidate. */
    readonly _titleIds?: TitleIds;
  };

/** How a passage is found again: its key, and the row id it was read with (when it was). */
export type PassageKey = RowOf<PassageColumns, 'key'> & { readonly _rowid?: bigint };

/** A passage's identity as text, `page_ref:ordinal`: how maps of passages are keyed between the index and retrieval. */
export const passageKey = (r: Pick<PassageKey, 'page_ref' | 'ordinal'>): string => `${r.page_ref}:${r.ordinal}`;

export const passageSchema = (dim: number | null): ArrowSchema => arrowSchema(PASSAGE_COLUMNS, dim);
export const pageSchema = arrowSchema(PAGE_COLUMNS);
export const imageSchema = arrowSchema(IMAGE_COLUMNS);
