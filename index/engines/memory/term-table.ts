/**
 * A frozen term dictionary read in place (docs/architecture.md#persisted-engine-segments): the terms as UTF-16 code
 * units end to end, each one's start, and an open-addressing hash table of term ids, all typed arrays. An engine
 * image holds these three arrays, so a thread that loads the image looks a term up in shared memory instead of
 * building a Map of every term first (work and memory per thread that grow with the vocabulary).
 */

/** FNV-1a over a term's UTF-16 code units: the slot its probe starts at (the table's length is a power of two). */
export function termHash(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The arrays a `TermTable` reads (engine-image.ts writes them as sections). */
export interface TermTableArrays {
  /** Every term's UTF-16 code units, in id order. */
  readonly chars: Uint16Array;
  /** Term id → its units `chars[offsets[id], offsets[id + 1])`. */
  readonly offsets: Uint32Array;
  /** Open addressing, linear probing: id + 1 per used slot, 0 empty; a power-of-two length at least twice the terms. */
  readonly slots: Uint32Array;
}

export class TermTable {
  readonly #chars: Uint16Array;
  readonly #offsets: Uint32Array;
  readonly #slots: Uint32Array;
  readonly #mask: number;

  constructor(a: TermTableArrays) {
    if (a.offsets.length < 1 || (a.slots.length & (a.slots.length - 1)) !== 0 || a.slots.length < a.offsets.length)
      throw new Error('TermTable: malformed arrays');
    this.#chars = a.chars;
    this.#offsets = a.offsets;
    this.#slots = a.slots;
    this.#mask = a.slots.length - 1;
  }

  /** The table over `terms` (id = index): new arrays. */
  static build(terms: readonly string[]): TermTable {
    const offsets = new Uint32Array(terms.length + 1);
    let at = 0;
    terms.forEach((t, i) => {
      offsets[i] = at;
      at += t.length;
    });
    offsets[terms.length] = at;
    const chars = new Uint16Array(at);
    terms.forEach((t, i) => {
      const o = offsets[i]!;
      for (let j = 0; j < t.length; j++) chars[o + j] = t.charCodeAt(j);
    });
    let size = 16;
    while (size < 2 * terms.length) size *= 2;
    const slots = new Uint32Array(size);
    const mask = size - 1;
    terms.forEach((t, id) => {
      let s = termHash(t) & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = id + 1;
    });
    return new TermTable({ chars, offsets, slots });
  }

  get arrays(): TermTableArrays {
    return { chars: this.#chars, offsets: this.#offsets, slots: this.#slots };
  }

  /** How many terms. */
  get length(): number {
    return this.#offsets.length - 1;
  }

  /** A term's id, or undefined when the table does not hold it. */
  get(term: string): number | undefined {
    const chars = this.#chars;
    const offsets = this.#offsets;
    const slots = this.#slots;
    const n = term.length;
    for (let s = termHash(term) & this.#mask; ; s = (s + 1) & this.#mask) {
      const v = slots[s]!;
      if (v === 0) return undefined;
      const id = v - 1;
      const a = offsets[id]!;
      if (offsets[id + 1]! - a !== n) continue;
      let j = 0;
      while (j < n && chars[a + j] === term.charCodeAt(j)) j++;
      if (j === n) return id;
    }
  }

  /** The term with this id. */
  at(id: number): string {
    return String.fromCharCode(...this.#chars.subarray(this.#offsets[id]!, this.#offsets[id + 1]!));
  }

  /** Every term in id order (one decode of the units, then slices). */
  toArray(): string[] {
    const c = this.#chars;
    const text = Buffer.from(c.buffer as ArrayBuffer, c.byteOffset, c.byteLength).toString('utf16le');
    const out = new Array<string>(this.length);
    for (let i = 0; i < out.length; i++) out[i] = text.slice(this.#offsets[i]!, this.#offsets[i + 1]!);
    return out;
  }
}
