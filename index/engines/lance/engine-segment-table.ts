/**
 * Segment files of an index on object storage (docs/architecture.md#persisted-engine-segments): one row per file in
 * a table of the index's own LanceDB connection, so they reach the bucket through the object-store access the index
 * already has (as its metadata does, location.ts), with no second client or credentials of their own. A file is one
 * commit (whole or absent); the manifest, written after the files it names, is the commit that makes them visible.
 */
import type { Connection, Table } from '@lancedb/lancedb';
import { makeArrowTable } from '@lancedb/lancedb';
import { Binary, Field, Float64, Schema, Utf8 } from './arrow.js';
import type { SegmentFiles } from './engine-segments.js';

/** The table of an object-storage index that holds its segment files. */
export const SEGMENT_TABLE = 'svc_engine_segments';
const schema = new Schema([
  new Field('name', new Utf8(), false),
  new Field('body', new Binary(), false),
  new Field('written_ms', new Float64(), false),
]);
/** The names engine-segments.ts gives files: checked before one goes into a predicate. */
const NAME = /^[a-z]+-\d{12}-[0-9a-f]+\.(bin|json)$/;

/** Segment files as rows of `SEGMENT_TABLE` (engine-segments.ts `SegmentFiles`). */
export class SegmentTable implements SegmentFiles {
  readonly #db: Connection;
  readonly #graceMs: number;
  readonly label: string;

  /** `graceMs`: how long a reader may still be at a version of the table that holds a removed file. */
  constructor(db: Connection, label: string, graceMs: number) {
    this.#db = db;
    this.#graceMs = graceMs;
    this.label = `${label} table ${SEGMENT_TABLE}`;
  }

  /** The table at its newest version (null: none yet); `create`: made when absent (the writer). */
  async #open(create: boolean): Promise<Table | null> {
    if (create) return this.#db.createEmptyTable(SEGMENT_TABLE, schema, { existOk: true });
    if (!(await this.#db.tableNames()).includes(SEGMENT_TABLE)) return null;
    try {
      return await this.#db.openTable(SEGMENT_TABLE);
    } catch {
      return null; // listed before its first commit (the writer is creating it)
    }
  }

  async #with<T>(create: boolean, none: T, fn: (t: Table) => Promise<T>): Promise<T> {
    const table = await this.#open(create);
    if (!table) return none;
    try {
      return await fn(table);
    } finally {
      table.close();
    }
  }

  list(): Promise<{ name: string; mtimeMs: number }[]> {
    return this.#with(false, [], async (t) => {
      const rows = (await t.query().select(['name', 'written_ms']).toArray()) as { name: string; written_ms: number }[];
      return rows.map((r) => ({ name: r.name, mtimeMs: r.written_ms }));
    });
  }

  read(name: string, onChunk?: (chunk: Uint8Array) => void): Promise<Uint8Array<SharedArrayBuffer>> {
    if (!NAME.test(name)) return Promise.reject(new Error(`engine segments: not a segment name: ${name}`));
    return this.#with(false, null, async (t) => {
      const rows = (await t.query().where(`name = '${name}'`).select(['body']).limit(1).toArray()) as { body: Uint8Array }[];
      return rows[0]?.body ?? null;
    }).then((body) => {
      if (!body) throw new Error(`${name}: absent`);
      const bytes = new Uint8Array(new SharedArrayBuffer(body.length));
      bytes.set(body);
      onChunk?.(bytes);
      return bytes;
    });
  }

  async write(name: string, data: Uint8Array | string): Promise<void> {
    if (!NAME.test(name)) throw new Error(`engine segments: not a segment name: ${name}`);
    const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    await this.#with(true, undefined, (t) =>
      t.add(makeArrowTable([{ name, body, written_ms: Date.now() }], { schema })).then(() => undefined),
    );
  }

  async remove(names: readonly string[]): Promise<void> {
    const ok = names.filter((n) => NAME.test(n));
    if (ok.length === 0) return;
    await this.#with(false, undefined, async (t) => {
      await t.delete(`name IN (${ok.map((n) => `'${n}'`).join(', ')})`);
      // The deleted rows' objects go once no reader can be at a version that still holds them. Lance's optimize also
      // compacts (rewrites the live rows, the base image among them), so it runs only when a base goes, after a merge
      // wrote a new base anyway: the cost stays of the order of the merge's, and small files wait until then.
      if (ok.some((n) => n.startsWith('segment-'))) await t.optimize({ cleanupOlderThan: new Date(Date.now() - this.#graceMs) });
    });
  }
}
