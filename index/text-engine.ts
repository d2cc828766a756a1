/**
 * Keeps the in-process postings (postings.ts) in step with the passages table, and says when they may answer.
 *
 * The postings are built for one table version at a time: a full scan of `search_text` at open, then, for each new
 * version, the difference of live row ids (rows added: their text taken by row id; rows gone: tombstoned). Lance
 * row ids are stable within a version and a version never changes, so postings built for version v and row takes
 * from the table at version v agree. A query uses the postings only when they are at the version the table reads
 * now (`current`); otherwise it goes to LanceDB's full-text index as before and a sync starts in the background.
 * A writer's own commits therefore never make a query miss a page it just wrote, and a reader follows the writer's
 * versions within its consistency interval plus one sync.
 *
 * The scans run in the background on a second table handle checked out at the target version (the serving handle
 * is never moved); work on the main thread is done in slices (one Arrow batch at a time) so serving continues.
 */
import type { Connection, Table } from '@lancedb/lancedb';
import { Postings } from './postings.js';

type Log = { info(o: object, msg: string): void; warn(o: object, msg: string): void } | undefined;

/** Tombstones beyond this share of the documents trigger a rebuild (they still weigh in the statistics). */
const REBUILD_DEAD_SHARE = 0.25;

export interface TextEngineStats {
  readonly version: number | null;
  readonly docs: number;
  readonly live: number;
  readonly terms: number;
  readonly postings: number;
  readonly lastSyncMs: number | null;
}

export class TextEngine {
  readonly #db: Connection;
  readonly #table: Table;
  readonly #tableName: string;
  readonly #log: Log;
  readonly #maxTermLength: number;
  #postings: Postings | null = null;
  #version: number | null = null;
  #syncing: Promise<void> | null = null;
  #again = false;
  #closed = false;
  #lastSyncMs: number | null = null;

  constructor(args: { db: Connection; table: Table; tableName: string; log: Log; maxTermLength: number }) {
    this.#db = args.db;
    this.#table = args.table;
    this.#tableName = args.tableName;
    this.#log = args.log;
    this.#maxTermLength = args.maxTermLength;
  }

  /** The postings when they are at `version` (the version the serving table reads); otherwise null and a sync starts. */
  at(version: number): Postings | null {
    if (this.#postings && this.#version === version) return this.#postings;
    this.schedule();
    return null;
  }

  /** Starts a sync to the table's latest version (coalesced with one already running). */
  schedule(): void {
    if (this.#closed) return;
    if (this.#syncing) {
      this.#again = true;
      return;
    }
    this.#syncing = this.#run().finally(() => {
      this.#syncing = null;
      if (this.#again && !this.#closed) {
        this.#again = false;
        this.schedule();
      }
    });
  }

  /** Resolves when no sync is running (tests and benchmarks: wait until the postings can answer). */
  async idle(): Promise<void> {
    while (this.#syncing) await this.#syncing;
  }

  stats(): TextEngineStats {
    const s = this.#postings?.size;
    return {
      version: this.#version,
      docs: s?.docs ?? 0,
      live: s?.live ?? 0,
      terms: s?.terms ?? 0,
      postings: s?.postings ?? 0,
      lastSyncMs: this.#lastSyncMs,
    };
  }

  /** Stops syncing and waits for a running scan to let go of its table handle (before the connection closes). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#postings = null;
    await this.#syncing?.catch(() => undefined);
  }

  async #run(): Promise<void> {
    const started = performance.now();
    let pinned: Table | null = null;
    try {
      const target = await this.#table.version();
      if (this.#postings && this.#version === target) return;
      pinned = await this.#db.openTable(this.#tableName);
      await pinned.checkout(target);
      const rebuild = !this.#postings || this.#postings.deadShare > REBUILD_DEAD_SHARE;
      // Patched in place: nothing asks for the old version any more (the serving table is at `target` or later).
      if (!rebuild) this.#version = null;
      const postings = rebuild ? await this.#build(pinned) : await this.#patch(pinned, this.#postings!);
      if (this.#closed || postings === null) return;
      this.#postings = postings;
      this.#version = target;
      this.#lastSyncMs = performance.now() - started;
      if (rebuild) this.#log?.info({ version: target, ...postings.size, ms: Math.round(this.#lastSyncMs) }, 'text postings built');
    } catch (err) {
      // The table moved on under the scan (a compacted version's files removed) or the store failed: LanceDB's own
      // index keeps answering; the next version change retries.
      this.#log?.warn({ err: (err as Error).message }, 'text postings sync failed');
    } finally {
      pinned?.close();
    }
  }

  async #build(table: Table): Promise<Postings | null> {
    const postings = new Postings({ maxTermLength: this.#maxTermLength });
    for await (const batch of table.query().select(['search_text']).withRowId()) {
      if (this.#closed) return null;
      const text = batch.getChild('search_text');
      const ids = rowIdsOf(batch);
      if (!text || !ids) throw new Error('text postings: the scan returned no search_text or _rowid');
      for (let i = 0; i < batch.numRows; i++) postings.add(ids[i]!, (text.get(i) as string | null) ?? '');
      if (postings.size.docs % 65_536 < batch.numRows) postings.flush(); // bounded segments: no giant seal at the end
      await yieldToLoop();
    }
    postings.flush();
    return postings;
  }

  async #patch(table: Table, postings: Postings): Promise<Postings | null> {
    const live = new Set<number>();
    const added: number[] = [];
    for await (const batch of table.query().select(['ordinal']).withRowId()) {
      if (this.#closed) return null;
      const ids = rowIdsOf(batch);
      if (!ids) throw new Error('text postings: the scan returned no _rowid');
      for (const id of ids) {
        live.add(id);
        if (!postings.has(id)) added.push(id);
      }
    }
    if (this.#closed) return null;
    const gone: number[] = [];
    for (const id of postings.liveRowIds()) if (!live.has(id)) gone.push(id);
    postings.remove(gone);
    for (let i = 0; i < added.length; i += 4096) {
      const slice = added.slice(i, i + 4096);
      const batch = await table.takeRowIds(slice).select(['search_text']).withRowId().toArrow();
      const text = batch.getChild('search_text');
      const ids = rowIdsOf(batch);
      if (!text || !ids) throw new Error('text postings: the take returned no search_text or _rowid');
      for (let j = 0; j < batch.numRows; j++) postings.add(ids[j]!, (text.get(j) as string | null) ?? '');
      await yieldToLoop();
    }
    postings.flush();
    return postings;
  }
}

/** The `_rowid` column as numbers (Lance row ids: fragment id << 32 | offset, far below 2^53). */
function rowIdsOf(batch: { getChild(name: string): { toArray(): unknown } | null }): number[] | null {
  const col = batch.getChild('_rowid');
  if (!col) return null;
  const arr = col.toArray() as BigUint64Array | bigint[];
  const out = new Array<number>(arr.length);
  for (let i = 0; i < arr.length; i++) out[i] = Number(arr[i]!);
  return out;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
