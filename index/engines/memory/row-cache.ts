import { totalmem } from 'node:os';
import { LRUCache } from 'lru-cache';

/**
 * Passage rows by Lance row id, LRU bounded in estimated bytes (lru-cache), sparing the result page's table read.
 * A row id names one immutable row for the table's life, so a cached row is never stale; at worst it is deleted and
 * no search returns it. Result rows never stand in for whole rows; this class adds prefill and re-keying.
 */
export class RowCache<R extends object> {
  /** `pass`: the prefill pass that kept the row (0: read for a result). Null when the bound is 0 (nothing kept). */
  readonly #rows: LRUCache<bigint, { row: R; bytes: number; pass: number }> | null;
  #passes = 0;
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = Math.max(0, Math.floor(maxBytes));
    this.#rows = this.#maxBytes > 0 ? new LRUCache({ maxSize: this.#maxBytes, sizeCalculation: (e) => e.bytes }) : null;
  }

  get(id: bigint): R | undefined {
    return this.#rows?.get(id)?.row;
  }

  set(id: bigint, row: R): void {
    const bytes = estimateBytes(row);
    // Checked here, not left to the library: a row too large for the bound leaves the row kept under its id alone.
    if (!this.#rows || bytes > this.#maxBytes) return;
    this.#rows.set(id, { row, bytes, pass: 0 });
  }

  /**
   * A prefill pass: returns a keeper that answers false once the bound is reached. With `evictOlder` (a whole-table
   * scan, so older rows are stale ids or re-read anyway) it evicts earlier rows LRU-first but never its own; without
   * it it only takes free room, so rows results read stay.
   */
  fillPass(evictOlder: boolean): (id: bigint, row: R) => boolean {
    const pass = ++this.#passes;
    return (id, row) => {
      const rows = this.#rows;
      if (rows?.has(id)) return true;
      const bytes = estimateBytes(row);
      if (!rows || bytes > this.#maxBytes) return false;
      // Evicted here rather than by the library's own overflow, which would push out this pass's rows too.
      while (rows.calculatedSize + bytes > this.#maxBytes) {
        const oldest = rows.rkeys().next();
        if (!evictOlder || oldest.done || rows.peek(oldest.value)?.pass === pass) return false;
        rows.delete(oldest.value);
      }
      rows.set(id, { row, bytes, pass });
      return true;
    };
  }

  /**
   * Rows that moved to new row ids unchanged (a compaction the postings followed): each kept row is kept under its
   * new id from now on (where that id is kept already, that row stays and the old one goes).
   */
  rekey(pairs: readonly (readonly [bigint, bigint])[]): void {
    const rows = this.#rows;
    if (!rows) return;
    for (const [from, to] of pairs) {
      const e = rows.peek(from);
      if (!e) continue;
      rows.delete(from);
      if (!rows.has(to)) rows.set(to, e);
    }
  }

  /** Whether the row is kept (without counting as a use). */
  has(id: bigint): boolean {
    return this.#rows?.has(id) ?? false;
  }

  /** The bound, and the bytes left under it. */
  get bound(): { maxBytes: number; room: number } {
    return { maxBytes: this.#maxBytes, room: this.#maxBytes - (this.#rows?.calculatedSize ?? 0) };
  }

  get size(): { rows: number; bytes: number } {
    return { rows: this.#rows?.size ?? 0, bytes: this.#rows?.calculatedSize ?? 0 };
  }
}

/**
 * The cache's default bound: 1/32 of machine memory, clamped to 64 MiB–1 GiB. At about 4 KiB a row, small indexes
 * are served wholly from memory and larger ones keep the rows their results read; the bound is the whole cost.
 */
export function defaultRowCacheBytes(machineBytes = totalmem()): number {
  return Math.min(2 ** 30, Math.max(64 * 2 ** 20, Math.floor(machineBytes / 32)));
}

/** Two bytes per string character plus a fixed cost per field: an estimate, for the bound only. */
function estimateBytes(row: object): number {
  let n = 64;
  for (const v of Object.values(row)) n += 16 + (typeof v === 'string' ? 2 * v.length : 8);
  return n;
}
