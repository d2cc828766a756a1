/**
 * An engine image's page records read in place (docs/architecture.md#persisted-engine-segments): the page refs in
 * ascending order, each page's newest document, and its record (its fields and title terms) as JSON bytes, decoded
 * only when that page is asked for. So a thread that loads an image builds nothing per page or document: what it
 * decodes is the pages its queries return, and the pages written after the image are its own (text-engine.ts).
 */
import type { PageFieldRow } from './columns.js';

/** The sections of the page table (views of an image's memory, or arrays made by `encodePages`). */
export interface PageSections {
  readonly refs: Int32Array;
  readonly lastDoc: Int32Array;
  /** Byte offset of page i's record in `json`; one more entry than pages (the end). */
  readonly at: Uint32Array;
  readonly json: Uint8Array;
}

/** A page's record as the image holds it. */
export interface ImagePageRecord {
  readonly fields: PageFieldRow;
  readonly titleTerms: readonly string[];
}

/** A page to write into a table: its record already as JSON bytes (copied from an image) or as fields and terms. */
export type PageEntry = { readonly ref: number; readonly lastDoc: number } & ({ readonly json: Uint8Array } | ImagePageRecord);

export class PageTable {
  constructor(readonly sections: PageSections) {}

  get size(): number {
    return this.sections.refs.length;
  }

  /** The index of a page (binary search over the sorted refs); -1 when the table does not hold it. */
  indexOf(ref: number): number {
    const refs = this.sections.refs;
    let lo = 0;
    let hi = refs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const r = refs[mid]!;
      if (r === ref) return mid;
      if (r < ref) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The JSON bytes of page i's record (a view: copied as they are into the next image). */
  bytes(i: number): Uint8Array {
    const { at, json } = this.sections;
    return json.subarray(at[i]!, at[i + 1]!);
  }

  /** Page i's record, decoded. */
  record(i: number): ImagePageRecord {
    const b = this.bytes(i);
    // Buffer, not TextDecoder: the image may be a SharedArrayBuffer, which TextDecoder refuses.
    const [fields, titleTerms] = JSON.parse(Buffer.from(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength).toString('utf8')) as [
      PageFieldRow,
      string[],
    ];
    return { fields, titleTerms };
  }
}

/** The sections of a page table holding these pages (any order; refs distinct). */
export function encodePages(entries: PageEntry[]): PageSections {
  entries.sort((a, b) => a.ref - b.ref);
  const parts = entries.map((e) => ('json' in e ? e.json : Buffer.from(JSON.stringify([e.fields, e.titleTerms]), 'utf8')));
  const n = entries.length;
  const refs = new Int32Array(n);
  const lastDoc = new Int32Array(n);
  const at = new Uint32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    refs[i] = entries[i]!.ref;
    lastDoc[i] = entries[i]!.lastDoc;
    at[i] = total;
    total += parts[i]!.byteLength;
  }
  at[n] = total;
  const json = new Uint8Array(total);
  for (let i = 0; i < n; i++) json.set(parts[i]!, at[i]!);
  return { refs, lastDoc, at, json };
}
