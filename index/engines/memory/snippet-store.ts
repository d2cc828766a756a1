import { defaultRowCacheBytes } from './row-cache.js';
import { grow } from './typed-arrays.js';

/**
 * Each passage's `snippet_text` by document, as UTF-8 in a few large byte arrays bounded in bytes, so result rows
 * are read from memory instead of a LanceDB take; far denser than the row cache. A document's text never changes,
 * so entries are append-only; once the bound is reached `put` answers false and reads go to the table.
 */
export class SnippetStore {
  readonly #maxBytes: number;
  readonly #chunkBytes: number;
  readonly #chunks: Uint8Array[] = [];
  /** Bytes written into the last chunk. */
  #used = 0;
  /** Bytes of every chunk allocated (what the bound counts: the chunks' whole size). */
  #allocated = 0;
  /** Per document: its chunk and offset as chunk · 2^CHUNK_BITS + offset, or one of the markers below. */
  #at: Float64Array = new Float64Array(1024).fill(ABSENT);
  #len: Int32Array = new Int32Array(1024);
  #docs = 0;
  #bytes = 0;
  #full = false;
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder('utf-8');

  /** `maxBytes`: the bound on the chunks' bytes (0: keeps nothing). */
  constructor(maxBytes: number) {
    this.#maxBytes = Math.max(0, Math.floor(maxBytes));
    this.#chunkBytes = Math.min(CHUNK_BYTES, this.#maxBytes);
    this.#full = this.#maxBytes === 0;
  }

  /**
   * Keeps a document's text (null: the passage has none to quote). False when it does not fit the bound: nothing is
   * kept for it, nor for any document after it (`full`). A text UTF-8 cannot hold exactly is left out (true).
   */
  put(doc: number, text: string | null): boolean {
    const slot = this.#slot(doc, text === null);
    if (slot !== 'text' || text === null) return slot !== false;
    // UTF-8 cannot hold a lone surrogate (the encoder would put U+FFFD in its place): such a text is not kept, and its
    // reads go to the table. (Text read from the table never has one; this keeps `get` exact for any string.)
    if (LONE_SURROGATE.test(text)) return true;
    // A UTF-16 unit takes at most 3 bytes in UTF-8 (a surrogate pair, 2 units, takes 4).
    const chunk = this.#room(3 * text.length);
    if (!chunk) return this.#fail();
    const { written } = this.#encoder.encodeInto(text, chunk.subarray(this.#used));
    this.#append(doc, written);
    return true;
  }

  /**
   * `put` with the text as UTF-8 bytes (a column of an Arrow batch, copied without decoding it into a string and
   * encoding it again); null: the passage has none to quote. The bytes must be UTF-8, as an Arrow Utf8 column's are:
   * `get` decodes them as the Arrow reader would (malformed sequences as U+FFFD).
   */
  putUtf8(doc: number, bytes: Uint8Array | null): boolean {
    const slot = this.#slot(doc, bytes === null);
    if (slot !== 'text' || bytes === null) return slot !== false;
    const chunk = this.#room(bytes.length);
    if (!chunk) return this.#fail();
    chunk.set(bytes, this.#used);
    this.#append(doc, bytes.length);
    return true;
  }

  /**
   * What both puts begin with: false when full; the document's slots made; a passage without text recorded (true);
   * otherwise 'text', for the caller to write.
   */
  #slot(doc: number, isNull: boolean): boolean | 'text' {
    if (this.#full) return false;
    if (!Number.isInteger(doc) || doc < 0) throw new RangeError(`snippet store: bad document ${doc}`);
    this.#at = growFilled(this.#at, doc + 1);
    this.#len = grow(this.#len, doc + 1);
    if (!isNull) return 'text';
    this.#set(doc, NULL_TEXT, 0);
    return true;
  }

  /** The chunk `n` more bytes go into (a new one when the last has no room), or null past the bound. */
  #room(n: number): Uint8Array | null {
    if (n > this.#chunkBytes) return null;
    const last = this.#chunks[this.#chunks.length - 1];
    if (last && this.#used + n <= last.length) return last;
    if (this.#allocated + this.#chunkBytes > this.#maxBytes) return null;
    const chunk = new Uint8Array(this.#chunkBytes);
    this.#chunks.push(chunk);
    this.#allocated += this.#chunkBytes;
    this.#used = 0;
    return chunk;
  }

  /** Records `n` bytes just written at the end of the last chunk as the document's text. */
  #append(doc: number, n: number): void {
    this.#set(doc, (this.#chunks.length - 1) * 2 ** CHUNK_BITS + this.#used, n);
    this.#used += n;
    this.#bytes += n;
  }

  /** A document's text: null when it has none, undefined when the store does not hold it. */
  get(doc: number): string | null | undefined {
    const at = doc >= 0 && doc < this.#at.length ? this.#at[doc]! : ABSENT;
    if (at === ABSENT) return undefined;
    if (at === NULL_TEXT) return null;
    const chunk = this.#chunks[Math.floor(at / 2 ** CHUNK_BITS)]!;
    const from = at % 2 ** CHUNK_BITS;
    return this.#decoder.decode(chunk.subarray(from, from + this.#len[doc]!));
  }

  /** Whether the store holds this document's text (or its null). */
  has(doc: number): boolean {
    return doc >= 0 && doc < this.#at.length && this.#at[doc] !== ABSENT;
  }

  /** Documents held, the texts' bytes, the chunks' bytes (what counts against the bound) and whether it is full. */
  get size(): { docs: number; bytes: number; allocated: number; maxBytes: number; full: boolean } {
    return { docs: this.#docs, bytes: this.#bytes, allocated: this.#allocated, maxBytes: this.#maxBytes, full: this.#full };
  }

  /** The store's state for an image (engine-image.ts): views of its arrays, the last chunk cut to its bytes written. */
  exportState(): SnippetState {
    const n = this.#at.length;
    const chunks = this.#chunks.map((c, i) => (i === this.#chunks.length - 1 ? c.subarray(0, this.#used) : c));
    return {
      maxBytes: this.#maxBytes,
      chunks,
      at: this.#at.subarray(0, n),
      len: this.#len.subarray(0, n),
      docs: this.#docs,
      bytes: this.#bytes,
      allocated: this.#allocated,
      full: this.#full,
    };
  }

  /**
   * A store over a saved state: its chunks are used as they are (views other threads may read: never written again,
   * since new text goes to a new chunk); the per-document arrays are written in place, so they are copied.
   */
  static fromState(s: SnippetState): SnippetStore {
    const store = new SnippetStore(s.maxBytes);
    store.#chunks.push(...s.chunks);
    const last = s.chunks[s.chunks.length - 1];
    store.#used = last ? last.length : 0;
    store.#at = s.at.slice();
    store.#len = s.len.slice();
    store.#docs = s.docs;
    store.#bytes = s.bytes;
    store.#allocated = s.allocated;
    store.#full = s.full;
    return store;
  }

  #set(doc: number, at: number, len: number): void {
    if (this.#at[doc] === ABSENT) this.#docs++;
    this.#at[doc] = at;
    this.#len[doc] = len;
  }

  #fail(): false {
    this.#full = true;
    return false;
  }
}

/** A snippet store's state (`SnippetStore.exportState`). */
export interface SnippetState {
  readonly maxBytes: number;
  readonly chunks: readonly Uint8Array[];
  readonly at: Float64Array;
  readonly len: Int32Array;
  readonly docs: number;
  readonly bytes: number;
  readonly allocated: number;
  readonly full: boolean;
}

/** Chunks of 8 MiB (or the whole bound when smaller): a text longer than a chunk is never kept. */
const CHUNK_BITS = 23;
const CHUNK_BYTES = 2 ** CHUNK_BITS;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** `#at` markers: no entry, and a passage without text to quote. */
const ABSENT = -1;
const NULL_TEXT = -2;

/** `grow` for `#at`, whose new elements must read as absent. */
function growFilled(a: Float64Array, need: number): Float64Array {
  if (need <= a.length) return a;
  const b = grow(a, need);
  b.fill(ABSENT, a.length);
  return b;
}

/**
 * The store's default bound, per reader of the index (each search thread holds its own): 1/32 of the machine's memory,
 * at least 64 MiB and at most 1 GiB — 768 MiB on a 24 GiB machine, the quotable text of some 1M passages of
 * 700 bytes.
 */
export function defaultSnippetBytes(machineBytes?: number): number {
  return defaultRowCacheBytes(machineBytes); // the same share of the machine, held once per reader
}
