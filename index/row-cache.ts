import { totalmem } from 'node:os';

/**
 * Passage rows by Lance row id (whole rows, or the result rows svc_search reads: the store tells them apart and
 * never lets a result row stand in for a whole one), least recently used out first, bounded in (estimated) bytes. A
 * row id names one immutable row for the life of the table: a replaced page gets new rows, compaction writes its rows
 * into new fragments with new ids, and fragment ids are never reused, so a cached row is never stale — at worst it
 * belongs to a row since deleted, which no search returns any more (and callers still check each row against its key
 * and content hash). It spares the result page's read of the table on every query (a take of ~20 rows × 25 columns
 * costs ≈ 6 ms at 10k passages, most of a small index's query: docs/bench-index.md).
 */
export class RowCache<R extends object> {
  /** `pass`: the prefill pass that kept the row (0: read for a result). */
  readonly #rows = new Map<bigint, { row: R; bytes: number; pass: number }>();
  #passes = 0;
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
    this.#rows.set(id, { row, bytes, pass: 0 });
    this.#bytes += bytes;
    for (const [k, e] of this.#rows) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#rows.delete(k);
      this.#bytes -= e.bytes;
    }
  }

  /**
   * A prefill pass: returns a function that keeps one row, false once the bound is reached. With `evictOlder` (a scan
   * of the whole table: rows from before it are of row ids it no longer has, or will be read again anyway) the pass
   * pushes out rows kept before it, least recently used first, but never its own; without it (rows a write added to
   * a larger index) it only takes free room, so the rows results were read for stay.
   */
  fillPass(evictOlder: boolean): (id: bigint, row: R) => boolean {
    const pass = ++this.#passes;
    return (id, row) => {
      if (this.#rows.has(id)) return true;
      const bytes = estimateBytes(row);
      if (bytes > this.#maxBytes) return false;
      while (this.#bytes + bytes > this.#maxBytes) {
        const first = this.#rows.entries().next();
        if (!evictOlder || first.done || first.value[1].pass === pass) return false;
        this.#rows.delete(first.value[0]);
        this.#bytes -= first.value[1].bytes;
      }
      this.#rows.set(id, { row, bytes, pass });
      this.#bytes += bytes;
      return true;
    };
  }

  /**
   * Rows that moved to new row ids unchanged (a compaction the postings followed): each kept row is kept under its
   * new id from now on (where that id is kept already, that row stays and the old one goes).
   */
  rekey(pairs: readonly (readonly [bigint, bigint])[]): void {
    for (const [from, to] of pairs) {
      const e = this.#rows.get(from);
      if (!e) continue;
      this.#rows.delete(from);
      if (this.#rows.has(to)) this.#bytes -= e.bytes;
      else this.#rows.set(to, e);
    }
  }

  /** Whether the row is kept (without counting as a use). */
  has(id: bigint): boolean {
    return this.#rows.has(id);
  }

  /** The bound, and the bytes left under it. */
  get bound(): { maxBytes: number; room: number } {
    return { maxBytes: this.#maxBytes, room: this.#maxBytes - this.#bytes };
  }

  get size(): { rows: number; bytes: number } {
    return { rows: this.#rows.size, bytes: this.#bytes };
  }
}

/**
 * The cache's default bound: 1/32 of the machine's memory, at least 64 MiB and at most 1 GiB (768 MiB on a 24 GiB
 * machine). A row's estimate is ≈ 4 KiB (its 26 columns, the page's fields repeated in each passage row), so an index of
 * up to ≈ 100k–200k passages is served from memory, as SQLite FTS5 serves rows from the page cache; a larger one keeps
 * the rows its results read. The bound is the cache's whole cost: it never grows past it.
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
