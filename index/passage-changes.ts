/**
 * Which pages each version of the passages table changed, as the writer committed them: lets the in-process postings
 * (text-engine.ts) follow a write by reading the rows of the pages it touched (through the page_ref index) instead
 * of scanning every row id of the table (O(table) per version: ≈ 15–25 ms at 5.6k passages with a crawl's small
 * fragments, and it grows with the table).
 *
 * A version is known only when one commit of this writer made it, alone (the table's version moved by exactly one).
 * Anything else — a compaction, an index update, a rollback, another process's commit, a reader thread started after
 * the commit — leaves its version unknown, and a sync across an unknown version scans as before. The readers of
 * this process (search threads) are sent the writer's commits (`PassageCommit`, tools/search-pool.ts).
 */

/** One commit of the writer: the table version it made and the pages whose passages it wrote or deleted. */
export interface PassageCommit {
  readonly version: number;
  readonly pageRefs: readonly number[];
}

/** Versions remembered (the oldest are forgotten first; a sync spanning more scans). */
const KEEP_VERSIONS = 4096;

export class PassageChanges {
  readonly #byVersion = new Map<number, readonly number[]>();

  /** Records a commit (page refs are integers: a patch puts them in a filter). */
  record(c: PassageCommit): void {
    this.#byVersion.set(
      c.version,
      c.pageRefs.filter((r) => Number.isSafeInteger(r)),
    );
    while (this.#byVersion.size > KEEP_VERSIONS) this.#byVersion.delete(this.#byVersion.keys().next().value!);
  }

  /**
   * The pages the versions after `from` up to `to` changed (each once), or null when any version in between is not
   * known (then only a scan tells what changed).
   */
  pagesBetween(from: number, to: number): number[] | null {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from || to - from > KEEP_VERSIONS) return null;
    const out = new Set<number>();
    for (let v = from + 1; v <= to; v++) {
      const refs = this.#byVersion.get(v);
      if (!refs) return null;
      for (const r of refs) out.add(r);
    }
    return [...out];
  }
}
