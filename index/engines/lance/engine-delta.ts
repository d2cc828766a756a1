/**
 * A delta segment: what the writer's postings took in since the state last published (docs/architecture.md#persisted-engine-segments),
 * as the patches that did it, in order: per patch the row ids tombstoned and the rows added with what the postings
 * read of them (analysed text, passage key, page fields, vector, snippet text). A reader replays the patches on the
 * base image's postings through the very code the writer ran (text-engine.ts `applyDelta`), so it holds the writer's
 * state without reading or analysing a table row. Laid out as an engine image is (engine-image.ts `packSections`),
 * under its own footer mark.
 */
import { randomBytes } from 'node:crypto';
import { IMAGE_FORMAT, packSections, sectionView, unpackHeader, type ImageHeader, type ImageIdentity, type Typed } from './engine-image.js';
import { PAGE_FIELD_ROW_COLUMNS, type PageFieldRow } from './columns.js';

const MAGIC = 'SVCDELT1';

/** The rows one patch added, column by column, as the postings read them from the table's take. */
export interface DeltaRows {
  readonly rowIds: number[];
  readonly text: string[];
  readonly pageRef: number[];
  readonly ordinal: number[];
  readonly pageNo: (number | null)[];
  /** Per row, its page's fields (rows of one page share the object). */
  readonly fields: PageFieldRow[];
  /** Per row its vector, when the take read vectors (null: it did not). */
  readonly vectors: (Float32Array | null)[] | null;
  /** Per row its snippet text, when the take read it (null: it did not). */
  readonly snippets: (string | null)[] | null;
}

/**
 * One patch of the postings: documents given new row ids (a compaction's re-key, text-engine.ts `#rekey`), then
 * tombstones, then the rows added (`#apply`).
 */
export interface DeltaOp {
  /** Document, new row id, … (only those whose row id changed). */
  readonly moves?: readonly number[];
  readonly gone: readonly number[];
  readonly rows: DeltaRows;
}

export interface DeltaHeader extends ImageIdentity {
  readonly format: number;
  readonly id: string;
  /** The table version the patches start from: the base's, or the previous delta's. */
  readonly from: number;
  /** The id of the base image the chain starts from, and of the file just before this one (base or delta). */
  readonly base: string;
  readonly prev: string;
  readonly sections: ImageHeader['sections'];
  /** Per patch: tombstones, rows added, and numbers of its re-key (two per document moved). */
  readonly ops: readonly (readonly [gone: number, rows: number, moves: number])[];
  /** The vectors' dimension when the takes read vectors (0: every one was null), else null. */
  readonly vectorDim: number | null;
  /** Whether the takes read snippet text. */
  readonly snippets: boolean;
  /** Runs of rows of one page (their fields are kept once per run). */
  readonly pages: number;
  /**
   * The writer's title statistics after the patches (titles, their terms in all). A replay changes them exactly as the
   * writer's patches did (the pages added and pruned carry their titles), so a reader checks it got the same.
   */
  readonly titles: { readonly titles: number; readonly terms: number };
}

export interface EngineDelta {
  readonly buffer: SharedArrayBuffer | ArrayBuffer;
  readonly header: DeltaHeader;
}

/** Empty rows to capture a patch into. */
export function emptyRows(vectors: boolean, snippets: boolean): DeltaRows {
  return {
    rowIds: [],
    text: [],
    pageRef: [],
    ordinal: [],
    pageNo: [],
    fields: [],
    vectors: vectors ? [] : null,
    snippets: snippets ? [] : null,
  };
}

/** A batch of the table's take (the scan columns) as the rows a delta keeps, appended to `into`. */
export function captureRows(batch: DeltaBatch, ids: readonly number[], into: DeltaRows): void {
  const col = (name: string) => batch.getChild(name);
  const text = col('search_text');
  const ref = col('page_ref');
  const ord = col('ordinal');
  const pageNo = col('page_no');
  const vec = into.vectors ? col('vector') : null;
  const snip = into.snippets ? col('snippet_text') : null;
  const fieldCols = PAGE_FIELD_ROW_COLUMNS.map((name) => [name, col(name)] as const);
  let lastRef: number | null = null;
  let fields: PageFieldRow | null = null;
  for (let i = 0; i < batch.numRows; i++) {
    const r = ref?.get(i) as number;
    if (r !== lastRef || !fields) {
      const f: Record<string, unknown> = {};
      for (const [name, c] of fieldCols) f[name] = c?.get(i) ?? null;
      fields = f as unknown as PageFieldRow;
      lastRef = r;
    }
    into.rowIds.push(ids[i]!);
    into.text.push((text?.get(i) as string | null) ?? '');
    into.pageRef.push(r);
    into.ordinal.push(ord?.get(i) as number);
    into.pageNo.push((pageNo?.get(i) as number | null) ?? null);
    into.fields.push(fields);
    if (into.vectors) {
      const v = vec?.get(i) as { toArray(): Float32Array } | null | undefined;
      into.vectors.push(v ? Float32Array.from(v.toArray()) : null);
    }
    if (into.snippets) into.snippets.push((snip?.get(i) as string | null | undefined) ?? null);
  }
}

/** Encodes patches as a delta segment following the file `prev` of the chain that starts at `base`. */
export function encodeDelta(
  ops: readonly DeltaOp[],
  identity: ImageIdentity & Pick<DeltaHeader, 'from' | 'base' | 'prev' | 'titles'>,
): EngineDelta {
  const gone: number[] = [];
  const moves: number[] = [];
  const all: DeltaRows = emptyRows(
    ops.some((o) => o.rows.vectors),
    ops.some((o) => o.rows.snippets),
  );
  for (const o of ops) {
    gone.push(...o.gone);
    if (o.moves) moves.push(...o.moves);
    const r = o.rows;
    for (let i = 0; i < r.rowIds.length; i++) {
      all.rowIds.push(r.rowIds[i]!);
      all.text.push(r.text[i]!);
      all.pageRef.push(r.pageRef[i]!);
      all.ordinal.push(r.ordinal[i]!);
      all.pageNo.push(r.pageNo[i]!);
      all.fields.push(r.fields[i]!);
      all.vectors?.push(r.vectors?.[i] ?? null);
      all.snippets?.push(r.snippets?.[i] ?? null);
    }
  }
  const n = all.rowIds.length;
  const sections: [string, Typed][] = [
    ['gone', Float64Array.from(gone)],
    ['moves', Float64Array.from(moves)],
    ['rowIds', Float64Array.from(all.rowIds)],
    ['pageRef', Float64Array.from(all.pageRef)],
    ['ordinal', Int32Array.from(all.ordinal)],
    ['pageNo', Int32Array.from(all.pageNo, (v) => v ?? -1)],
  ];
  const strings = (name: string, values: readonly (string | null)[]) => {
    const parts = values.map((v) => Buffer.from(v ?? '', 'utf8'));
    const ends = new Uint32Array(values.length);
    let at = 0;
    parts.forEach((b, i) => (ends[i] = at += b.length));
    sections.push(
      [name, Buffer.concat(parts)],
      [`${name}Ends`, ends],
      [`${name}Null`, Uint8Array.from(values, (v) => (v === null ? 1 : 0))],
    );
  };
  strings('text', all.text);
  // Page fields once per run of rows of one page.
  const runs: [number, PageFieldRow][] = [];
  for (let i = 0; i < n; i++) if (i === 0 || all.fields[i] !== all.fields[i - 1]) runs.push([i, all.fields[i]!]);
  sections.push(['pages', Buffer.from(JSON.stringify(runs), 'utf8')]);
  if (all.snippets) strings('snip', all.snippets);
  // Read with the take (even if every one was null): 0 when no row had one.
  const dim = all.vectors ? (all.vectors.find((v) => v !== null)?.length ?? 0) : null;
  if (all.vectors && dim !== null) {
    const rows = new Float32Array(n * dim);
    all.vectors.forEach((v, i) => v && v.length === dim && rows.set(v, i * dim));
    sections.push(['vectors', rows], ['vectorsNull', Uint8Array.from(all.vectors, (v) => (v && v.length === dim ? 0 : 1))]);
  }
  const header: DeltaHeader = {
    ...identity,
    format: IMAGE_FORMAT,
    id: randomBytes(8).toString('hex'),
    sections: {},
    ops: ops.map((o) => [o.gone.length, o.rows.rowIds.length, o.moves?.length ?? 0] as const),
    vectorDim: dim,
    snippets: all.snippets !== null,
    pages: runs.length,
  };
  return packSections(sections, header, MAGIC);
}

/** The header of a delta segment's bytes; throws on bytes that are not one. */
export function readDeltaHeader(buffer: SharedArrayBuffer | ArrayBuffer): DeltaHeader {
  return unpackHeader<DeltaHeader>(buffer, MAGIC);
}

/** A batch of rows as `TextSnapshot.rowAdder` reads a take's (column by name, value by row). */
export interface DeltaBatch {
  readonly numRows: number;
  getChild(name: string): { get(i: number): unknown } | null;
}

/**
 * The patches a delta holds: per patch its re-key (document, new row id, …), its tombstones, and its rows as a batch
 * (`TextSnapshot.rowAdder` adds them).
 */
export function decodeDelta(delta: EngineDelta): { moves: number[]; gone: number[]; batch: DeltaBatch; ids: number[] }[] {
  const { buffer, header: h } = delta;
  const view = <K extends Parameters<typeof sectionView>[3]>(name: string, kind: K) => sectionView(buffer, h.sections, name, kind);
  const gone = view('gone', 'f64');
  const moved = view('moves', 'f64');
  const rowIds = view('rowIds', 'f64');
  const pageRef = view('pageRef', 'f64');
  const ordinal = view('ordinal', 'i32');
  const pageNo = view('pageNo', 'i32');
  const strings = (name: string) => {
    const bytes = view(name, 'u8');
    const ends = view(`${name}Ends`, 'u32');
    const nulls = view(`${name}Null`, 'u8');
    const buf = Buffer.from(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
    return (i: number) => (nulls[i] ? null : buf.toString('utf8', i === 0 ? 0 : ends[i - 1]!, ends[i]!));
  };
  const text = strings('text');
  const snip = h.snippets ? strings('snip') : null;
  const pagesBytes = view('pages', 'u8');
  const runs = JSON.parse(Buffer.from(pagesBytes.buffer as ArrayBuffer, pagesBytes.byteOffset, pagesBytes.byteLength).toString('utf8')) as [
    number,
    PageFieldRow,
  ][];
  const fieldsOf = new Array<PageFieldRow>(rowIds.length);
  runs.forEach(([from, f], k) => fieldsOf.fill(f, from, runs[k + 1]?.[0] ?? rowIds.length));
  const dim = h.vectorDim;
  const vectors = dim !== null ? view('vectors', 'f32') : null;
  const vecNull = dim !== null ? view('vectorsNull', 'u8') : null;
  const out: { moves: number[]; gone: number[]; batch: DeltaBatch; ids: number[] }[] = [];
  let g = 0;
  let r = 0;
  let m = 0;
  for (const [goneN, rowsN, movesN] of h.ops) {
    const lo = r;
    const at = (i: number) => lo + i;
    const columns: Record<string, { get(i: number): unknown }> = {
      search_text: { get: (i) => text(at(i)) ?? '' },
      page_ref: { get: (i) => pageRef[at(i)] },
      ordinal: { get: (i) => ordinal[at(i)] },
      page_no: { get: (i) => (pageNo[at(i)] === -1 ? null : pageNo[at(i)]) },
    };
    for (const name of PAGE_FIELD_ROW_COLUMNS)
      columns[name] = { get: (i) => (fieldsOf[at(i)] as unknown as Record<string, unknown>)[name] };
    if (vectors && vecNull)
      columns.vector = {
        get: (i) => (vecNull[at(i)] ? null : { toArray: () => vectors.subarray(at(i) * dim!, (at(i) + 1) * dim!) }),
      };
    if (snip) columns.snippet_text = { get: (i) => snip(at(i)) };
    out.push({
      moves: Array.from(moved.subarray(m, m + movesN)),
      gone: Array.from(gone.subarray(g, g + goneN)),
      ids: Array.from(rowIds.subarray(lo, lo + rowsN)),
      batch: { numRows: rowsN, getChild: (name) => columns[name] ?? null },
    });
    g += goneN;
    r += rowsN;
    m += movesN;
  }
  return out;
}
