/**
 * The text engine's state at one table version as one flat binary image (docs/architecture.md#persisted-engine-segments):
 * typed arrays written raw, each at an 8-byte aligned offset, then a JSON header and a fixed footer. Decoding builds
 * views over the image's memory, not copies, so an image in a SharedArrayBuffer is read by every search thread of a
 * process from one copy; the same bytes are the segment file a reader loads instead of scanning the table.
 */
import { randomBytes } from 'node:crypto';
import type { LoopBudget } from '../../../event-loop.js';
import type { PostingsState, Segment } from '../memory/postings.js';
import { RowTable } from '../memory/row-table.js';
import { TermTable } from '../memory/term-table.js';
import type { SharedVectorBlock } from '../memory/flat-vectors.js';
import type { SnippetState } from '../memory/snippet-store.js';
import type { TitleStatsState } from '../memory/title-stats.js';
import type { DocAttributesState } from '../memory/doc-attributes.js';
import type { PageSections } from './page-table.js';

/** A snapshot's state (`TextSnapshot.exportState`): what an engine image holds. */
export interface SnapshotState {
  readonly postings: PostingsState;
  readonly pageOf: Int32Array;
  readonly ordinalOf: Int32Array;
  readonly pageNoOf: Int32Array;
  readonly prevOfPage: Int32Array;
  /**
   * Per page: its fields, its title's analysed terms (title ids are a thread's own: `titleTermIds` maps them again),
   * its newest document, as a table read in place (page-table.ts).
   */
  readonly pages: PageSections;
  /** Per document, the filter attributes (doc-attributes.ts), read in place. */
  readonly attributes: DocAttributesState;
  readonly snippets: SnippetState | null;
  /** `block`: the rows already in a shared kernel memory (made by this process's first reader of the image). */
  readonly vectors: { readonly dim: number; readonly rows: Float32Array; readonly block?: SharedVectorBlock } | null;
  /**
   * The title statistics of the state's pages (title-stats.ts, exact: `TextSnapshot.titles`): a reader takes them
   * instead of analysing every title.
   */
  readonly titles: TitleStatsState;
}

/** Bumped when the layout changes: an image of another format is ignored (the engine scans and writes a new one). */
export const IMAGE_FORMAT = 5;
const MAGIC = 'SVCENGI1';
const FOOTER_BYTES = 12;

export type Kind = 'u8' | 'u16' | 'u32' | 'i32' | 'f32' | 'f64';
export type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array | Float64Array;
const CTORS = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f32: Float32Array,
  f64: Float64Array,
} as const;

/** What an image was made from: a reader uses it only when every field matches what it would build itself. */
export interface ImageIdentity {
  /** The passages table version the state is at. */
  readonly version: number;
  /** Text analysis version (maintenance.ts `ANALYSIS_VERSION`): a change makes old images unusable. */
  readonly analysis: number;
  readonly maxTermLength: number;
}

export interface ImageHeader extends ImageIdentity {
  readonly format: number;
  /** Random: tells two images apart (metrics: every thread reports the image it reads). */
  readonly id: string;
  readonly sections: Record<string, readonly [offset: number, length: number, kind: Kind]>;
  readonly segments: readonly { readonly lo: number; readonly hi: number }[];
  readonly totalLength: number;
  readonly bitsets: readonly number[];
  readonly snippets: Omit<SnippetState, 'chunks' | 'at' | 'len'> & { readonly chunks: number };
  readonly vectorDim: number | null;
  /** The values the per-document attribute codes stand for (doc-attributes.ts). */
  readonly attributeValues: DocAttributesState['values'];
}

/** An image: its bytes (shared between threads when a SharedArrayBuffer) and its header. */
export interface EngineImage {
  readonly buffer: SharedArrayBuffer | ArrayBuffer;
  readonly header: ImageHeader;
  /**
   * Its vectors in a shared kernel memory, set by the process's first reader (text-engine.ts): the threads the image
   * is posted to read that memory in place instead of each copying the rows into its own.
   */
  vectors?: SharedVectorBlock;
}

/** `n` rounded up to a multiple of 8, in floating point: images pass 2 GiB, where 32-bit bit operations wrap negative. */
export const align8 = (n: number): number => Math.ceil(n / 8) * 8;

/** Copies a snapshot's state into a new image in shared memory. */
export function encodeImage(state: SnapshotState, identity: ImageIdentity): EngineImage {
  return allSteps(imageSteps(state, identity));
}

/** Runs steps to the end at once. */
function allSteps<T>(steps: Generator<void, T>): T {
  for (let r = steps.next(); ; r = steps.next()) if (r.done) return r.value;
}

/**
 * `encodeImage` in slices, yielding to the event loop between the copies of its arrays when `budget` says so (a
 * merge of a large index must not hold searches). The state must not change meanwhile.
 */
export async function encodeImageInSlices(state: SnapshotState, identity: ImageIdentity, budget: LoopBudget): Promise<EngineImage> {
  const steps = imageSteps(state, identity);
  for (let r = steps.next(); ; r = steps.next()) {
    if (r.done) return r.value;
    await budget.tick();
  }
}

/** The encoding as steps: one per array copied. */
function* imageSteps(state: SnapshotState, identity: ImageIdentity): Generator<void, EngineImage> {
  const sections: [string, Typed][] = [];
  const p = state.postings;
  // The term dictionary and row id → document as tables a reader searches in place (no map built per thread).
  const terms = (p.terms instanceof TermTable ? p.terms : TermTable.build(p.terms)).arrays;
  sections.push(['termChars', terms.chars], ['termOffsets', terms.offsets], ['termSlots', terms.slots]);
  sections.push(['rowSlots', RowTable.slots(p.rowIds, p.dead)]);
  p.segments.forEach((g, i) => sections.push([`seg${i}.offsets`, g.offsets], [`seg${i}.docs`, g.docs], [`seg${i}.tfs`, g.tfs]));
  sections.push(['rowIds', p.rowIds], ['lengths', p.lengths], ['dead', p.dead], ['df', p.df]);
  for (const [id, set] of p.bitsets) sections.push([`bits${id}`, set]);
  sections.push(['pageOf', state.pageOf], ['ordinalOf', state.ordinalOf], ['pageNoOf', state.pageNoOf], ['prevOfPage', state.prevOfPage]);
  const pg = state.pages;
  sections.push(['pageRefs', pg.refs], ['pageLastDoc', pg.lastDoc], ['pageAt', pg.at], ['pageJson', pg.json]);
  const at = state.attributes;
  sections.push(['attrHost', at.host], ['attrDate', at.date], ['attrLang', at.lang], ['attrCountry', at.country]);
  sections.push(['attrProvince', at.province], ['attrSourceType', at.sourceType]);
  const sn = state.snippets;
  if (sn) {
    sections.push(['snipAt', sn.at], ['snipLen', sn.len]);
    sn.chunks.forEach((c, i) => sections.push([`snip${i}`, c]));
  }
  if (state.vectors) sections.push(['vectors', state.vectors.rows]);
  sections.push(['titles', Buffer.from(JSON.stringify(state.titles), 'utf8')]);
  const header: ImageHeader = {
    ...identity,
    format: IMAGE_FORMAT,
    id: randomBytes(8).toString('hex'),
    sections: {},
    segments: p.segments.map((g) => ({ lo: g.lo, hi: g.hi })),
    totalLength: p.totalLength,
    bitsets: p.bitsets.map(([id]) => id),
    snippets: sn
      ? { maxBytes: sn.maxBytes, docs: sn.docs, bytes: sn.bytes, allocated: sn.allocated, full: sn.full, chunks: sn.chunks.length }
      : { maxBytes: 0, docs: 0, bytes: 0, allocated: 0, full: true, chunks: -1 },
    vectorDim: state.vectors?.dim ?? null,
    attributeValues: at.values,
  };
  return yield* packSteps(sections, header, MAGIC);
}

/**
 * Lays typed arrays out raw at 8-byte aligned offsets in shared memory, then the header (with `sections` filled in)
 * as JSON, then the footer with `magic`: the one layout of engine images and of the delta segments (engine-delta.ts)
 * that carry a subset of rows.
 */
export function packSections<H extends { readonly sections: Record<string, readonly [number, number, Kind]> }>(
  sections: readonly (readonly [string, Typed])[],
  header: H,
  magic: string,
): { buffer: SharedArrayBuffer; header: H } {
  return allSteps(packSteps(sections, header, magic));
}

/** `packSections` as steps: one per array copied. */
function* packSteps<H extends { readonly sections: Record<string, readonly [number, number, Kind]> }>(
  sections: readonly (readonly [string, Typed])[],
  header: H,
  magic: string,
): Generator<void, { buffer: SharedArrayBuffer; header: H }> {
  const placed: Record<string, readonly [number, number, Kind]> = {};
  let at = 0;
  for (const [name, a] of sections) {
    placed[name] = [at, a.length, kindOf(a)];
    at = align8(at + a.byteLength);
  }
  const full = { ...header, sections: placed };
  const json = Buffer.from(JSON.stringify(full), 'utf8');
  const buffer = new SharedArrayBuffer(at + json.length + FOOTER_BYTES);
  const bytes = new Uint8Array(buffer);
  for (const [name, a] of sections) {
    bytes.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), placed[name]![0]);
    yield;
  }
  bytes.set(json, at);
  const footer = new DataView(buffer, at + json.length);
  footer.setUint32(0, json.length, true);
  for (let i = 0; i < magic.length; i++) footer.setUint8(4 + i, magic.charCodeAt(i));
  return { buffer, header: full };
}

/** The header of bytes `packSections` wrote with `magic`, its sections checked to lie inside them; throws otherwise. */
export function unpackHeader<H extends { readonly format: number; readonly sections: ImageHeader['sections'] }>(
  buffer: SharedArrayBuffer | ArrayBuffer,
  magic: string,
): H {
  const n = buffer.byteLength;
  if (n < FOOTER_BYTES) throw new Error('engine image: too short');
  const footer = new DataView(buffer, n - FOOTER_BYTES);
  for (let i = 0; i < magic.length; i++)
    if (footer.getUint8(4 + i) !== magic.charCodeAt(i)) throw new Error('engine image: not an image (bad footer)');
  const len = footer.getUint32(0, true);
  if (len > n - FOOTER_BYTES) throw new Error('engine image: bad header length');
  const header = JSON.parse(Buffer.from(buffer as ArrayBuffer, n - FOOTER_BYTES - len, len).toString('utf8')) as H;
  if (header.format !== IMAGE_FORMAT) throw new Error(`engine image: format ${header.format}, not ${IMAGE_FORMAT}`);
  for (const [name, [offset, length, kind]] of Object.entries(header.sections))
    if (offset % 8 !== 0 || offset + length * CTORS[kind].BYTES_PER_ELEMENT > n - FOOTER_BYTES - len)
      throw new Error(`engine image: section ${name} out of bounds`);
  return header;
}

/** A typed view of one section of bytes `packSections` wrote (throws when it is absent or of another kind). */
export function sectionView<K extends Kind>(
  buffer: SharedArrayBuffer | ArrayBuffer,
  sections: ImageHeader['sections'],
  name: string,
  kind: K,
): InstanceType<(typeof CTORS)[K]> {
  const s = sections[name];
  if (!s || s[2] !== kind) throw new Error(`engine image: no ${kind} section ${name}`);
  return new CTORS[kind](buffer as ArrayBuffer, s[0], s[1]) as InstanceType<(typeof CTORS)[K]>;
}

/** The header of an image's bytes; throws on bytes that are not an image (a cut file, another format's). */
export function readHeader(buffer: SharedArrayBuffer | ArrayBuffer): ImageHeader {
  return unpackHeader<ImageHeader>(buffer, MAGIC);
}

/**
 * The snapshot state an image holds, as views over its bytes: nothing copied, and no work per term, row or page
 * (the term, row and page tables are read in place).
 */
export function decodeImage(image: EngineImage): SnapshotState {
  const { buffer, header: h } = image;
  const view = <K extends Kind>(name: string, kind: K) => sectionView(buffer, h.sections, name, kind);
  const terms = new TermTable({ chars: view('termChars', 'u16'), offsets: view('termOffsets', 'u32'), slots: view('termSlots', 'u32') });
  const segments: Segment[] = h.segments.map((g, i) => ({
    offsets: view(`seg${i}.offsets`, 'u32'),
    docs: view(`seg${i}.docs`, 'u32'),
    tfs: view(`seg${i}.tfs`, 'u16'),
    lo: g.lo,
    hi: g.hi,
  }));
  const postings: PostingsState = {
    terms,
    segments,
    rowIds: view('rowIds', 'f64'),
    lengths: view('lengths', 'u32'),
    dead: view('dead', 'u8'),
    df: view('df', 'u32'),
    totalLength: h.totalLength,
    bitsets: h.bitsets.map((id) => [id, view(`bits${id}`, 'u32')] as const),
    rowSlots: view('rowSlots', 'u32'),
  };
  const pages: PageSections = {
    refs: view('pageRefs', 'i32'),
    lastDoc: view('pageLastDoc', 'i32'),
    at: view('pageAt', 'u32'),
    json: view('pageJson', 'u8'),
  };
  const attributes: DocAttributesState = {
    host: view('attrHost', 'i32'),
    date: view('attrDate', 'f64'),
    lang: view('attrLang', 'u16'),
    country: view('attrCountry', 'u16'),
    province: view('attrProvince', 'u8'),
    sourceType: view('attrSourceType', 'u8'),
    values: h.attributeValues,
  };
  const sn = h.snippets;
  const snippets: SnippetState | null =
    sn.chunks < 0
      ? null
      : {
          ...sn,
          chunks: Array.from({ length: sn.chunks }, (_, i) => view(`snip${i}`, 'u8')),
          at: view('snipAt', 'f64'),
          len: view('snipLen', 'i32'),
        };
  return {
    postings,
    pageOf: view('pageOf', 'i32'),
    ordinalOf: view('ordinalOf', 'i32'),
    pageNoOf: view('pageNoOf', 'i32'),
    prevOfPage: view('prevOfPage', 'i32'),
    pages,
    attributes,
    snippets,
    vectors:
      h.vectorDim === null ? null : { dim: h.vectorDim, rows: view('vectors', 'f32'), ...(image.vectors ? { block: image.vectors } : {}) },
    // Parsed when read: a snapshot that takes over its maker's statistics (text-engine.ts `#fromImage`) never reads them.
    get titles(): TitleStatsState {
      const b = view('titles', 'u8');
      return JSON.parse(Buffer.from(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength).toString('utf8')) as TitleStatsState;
    },
  };
}

function kindOf(a: Typed): Kind {
  if (a instanceof Uint8Array) return 'u8';
  if (a instanceof Uint16Array) return 'u16';
  if (a instanceof Uint32Array) return 'u32';
  if (a instanceof Int32Array) return 'i32';
  if (a instanceof Float32Array) return 'f32';
  return 'f64';
}
