/**
 * Which pages each passages-table version changed, as this writer committed them, so the postings read only those
 * pages instead of scanning every row id. A version made by anything else stays unknown and falls back to a scan;
 * search threads receive the commits as `PassageCommit` (tools/search-pool.ts).
 */

/**
 * One writer commit: the version it made and the pages it changed; or a maintenance mark (`pageRefs` empty) at its
 * `begin` and `end` versions. Versions in between are known to keep every passage, so a reader re-keys, not scans.
 */
export interface PassageCommit {
  readonly version: number;
  readonly pageRefs: readonly number[];
  readonly maintenance?: 'begin' | 'end';
}

/** What the versions between two changed: the pages written or deleted, and whether rows may have moved. */
export interface PassageChangeSpan {
  readonly pageRefs: number[];
  readonly moved: boolean;
}

/** Versions remembered (the oldest are forgotten first; a sync spanning more scans). */
const KEEP_VERSIONS = 4096;

const MOVED: readonly number[] = [];

export class PassageChanges {
  /** Per version: the pages its commit named, or `MOVED` (maintenance: no passage written, rows may have moved). */
  readonly #byVersion = new Map<number, readonly number[]>();
  /** The version a maintenance running now started from (every later version is its own), or null. */
  #maintainingFrom: number | null = null;

  /** Records a commit or a maintenance mark (page refs are integers: a patch puts them in a filter). */
  record(c: PassageCommit): void {
    if (!Number.isSafeInteger(c.version)) return;
    if (c.maintenance === 'begin') {
      this.#maintainingFrom = c.version;
      return;
    }
    if (c.maintenance === 'end') {
      const from = this.#maintainingFrom;
      this.#maintainingFrom = null;
      if (from === null || c.version - from > KEEP_VERSIONS) return;
      for (let v = from + 1; v <= c.version; v++) this.#set(v, MOVED);
      return;
    }
    this.#set(
      c.version,
      c.pageRefs.filter((r) => Number.isSafeInteger(r)),
    );
  }

  #set(version: number, refs: readonly number[]): void {
    this.#byVersion.set(version, refs);
    while (this.#byVersion.size > KEEP_VERSIONS) this.#byVersion.delete(this.#byVersion.keys().next().value!);
  }

  /**
   * The pages the versions after `from` up to `to` changed (each once) and whether any of them moved rows, or null
   * when any version in between is not known (then only a scan tells what changed).
   */
  between(from: number, to: number): PassageChangeSpan | null {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from || to - from > KEEP_VERSIONS) return null;
    const out = new Set<number>();
    let moved = false;
    const running = this.#maintainingFrom;
    for (let v = from + 1; v <= to; v++) {
      const refs = this.#byVersion.get(v) ?? (running !== null && v > running ? MOVED : undefined);
      if (!refs) return null;
      if (refs === MOVED) moved = true;
      for (const r of refs) out.add(r);
    }
    return { pageRefs: [...out], moved };
  }
}
