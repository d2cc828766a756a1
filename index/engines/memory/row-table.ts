/**
 * Row id → document, frozen and read in place (docs/architecture.md#persisted-engine-segments): an open-addressing
 * hash table of document ids over the row ids the documents had when it was built. An engine image holds it, so a
 * thread that loads the image finds a row's document in shared memory instead of filling a Map with every row first.
 * Row ids that change later (a re-key, new documents, tombstones) are the postings' own small map and checks.
 */

/** Mixes a row id (an integer below 2^53: Lance's fragment << 32 | offset) into a slot. */
function rowHash(rowId: number): number {
  const lo = rowId >>> 0;
  const hi = (rowId / 4294967296) >>> 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class RowTable {
  /** The row ids the table was built over (by document); never written. */
  readonly #rowIds: Float64Array;
  /** Open addressing, linear probing: document + 1 per used slot, 0 empty; a power-of-two length. */
  readonly #slots: Uint32Array;
  readonly #mask: number;

  constructor(rowIds: Float64Array, slots: Uint32Array) {
    if ((slots.length & (slots.length - 1)) !== 0 || slots.length === 0) throw new Error('RowTable: malformed slots');
    this.#rowIds = rowIds;
    this.#slots = slots;
    this.#mask = slots.length - 1;
  }

  /** The slots over the documents `dead` does not mark (row ids of live documents are distinct). */
  static slots(rowIds: Float64Array, dead: Uint8Array): Uint32Array {
    let live = 0;
    for (let d = 0; d < rowIds.length; d++) if (dead[d] === 0) live++;
    let size = 16;
    while (size < 2 * live) size *= 2;
    const slots = new Uint32Array(size);
    const mask = size - 1;
    for (let d = 0; d < rowIds.length; d++) {
      if (dead[d] !== 0) continue;
      let s = rowHash(rowIds[d]!) & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = d + 1;
    }
    return slots;
  }

  get slots(): Uint32Array {
    return this.#slots;
  }

  /** The document that had this row id when the table was built (live then), or -1. */
  find(rowId: number): number {
    const slots = this.#slots;
    const ids = this.#rowIds;
    for (let s = rowHash(rowId) & this.#mask; ; s = (s + 1) & this.#mask) {
      const v = slots[s]!;
      if (v === 0) return -1;
      if (ids[v - 1] === rowId) return v - 1;
    }
  }
}
