/**
 * Whole passage rows by Lance row id, least recently used out first, bounded in (estimated) bytes. A row id names
 * one immutable row for the life of the table: a replaced page gets new rows, compaction writes its rows into new
 * fragments with new ids, and fragment ids are never reused, so a cached row is never stale — at worst it belongs to
 * a row since deleted, which no search returns any more (and callers still check each row against its key and
 * content hash). It spares the result page's read of the table on every query (a take of ~20 rows × 25 columns
 * costs ≈ 6 ms at 10k passages, most of a small index's query: docs/bench-index.md).
 */
export class RowCache<R extends object> {
  readonly #rows = new Map<bigint, { row: R; bytes: number }>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get(id: bigint): R | undefined {
    const e = this.#rows.get(id);
    if (!e) return undefined;
    this.#rows.delete(id); // most recently used last
    this.#rows.set(id, e);
    return e.row;
  }

  set(id: bigint, row: R): void {
    if (this.#maxBytes <= 0) return;
    const bytes = estimateBytes(row);
    if (bytes > this.#maxBytes) return;
    const old = this.#rows.get(id);
    if (old) {
      this.#bytes -= old.bytes;
      this.#rows.delete(id);
    }
    this.#rows.set(id, { row, bytes });
    this.#bytes += bytes;
    for (const [k, e] of this.#rows) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#rows.delete(k);
      this.#bytes -= e.bytes;
    }
  }

  /**
   * Keeps a row only if it fits in the bound without dropping another (a prefill of a small index's rows: it never
   * pushes out rows results were read for). False when it did not fit: the bound is reached.
   */
  fill(id: bigint, row: R): boolean {
    if (this.#rows.has(id)) return true;
    const bytes = estimateBytes(row);
    if (this.#bytes + bytes > this.#maxBytes) return false;
    this.#rows.set(id, { row, bytes });
    this.#bytes += bytes;
    return true;
  }

  /** Bytes left under the bound. */
  get room(): number {
    return this.#maxBytes - this.#bytes;
  }

  get size(): { rows: number; bytes: number } {
    return { rows: this.#rows.size, bytes: this.#bytes };
  }
}

/** Two bytes per string character plus a fixed cost per field: an estimate, for the bound only. */
function estimateBytes(row: object): number {
  let n = 64;
  for (const v of Object.values(row)) n += 16 + (typeof v === 'string' ? 2 * v.length : 8);
  return n;
}
