/**
 * Opening an index's tables where it lives (a local folder or an object-storage prefix, location.ts): connect,
 * create what is missing with the schemas of columns.ts, bring old tables' schemas up to date, decide whether the
 * stored vectors can be used with the given embedder, and roll back a write its writer did not finish.
 */
import type { VectorsUnused } from '../../retrieval/engine-seam.js';
import * as lancedb from '@lancedb/lancedb';
import type { Table } from '@lancedb/lancedb';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { imageSchema, pageSchema, passageSchema } from './columns.js';
import type { Embedder } from '../../serving/embedder.js';
import { IndexOpenError, notCommittedYet, openError, readIndexMeta, writeIndexMeta, type IndexLocation } from './location.js';
import { ANALYSIS_VERSION, FTS_ANALYZER, type IndexMeta, type IndexTables } from './maintenance.js';
import { recoverInterruptedWrite } from './write-journal.js';

/**
 * Lance file format of new tables. 2.1 reads single rows of string columns without decoding whole pages, so taking a
 * few passages' text is several times faster than with the 2.0 default. Existing tables keep theirs.
 */
const NEW_TABLE_OPTIONS = { existOk: true, storageOptions: { new_table_data_storage_version: '2.1' } };

/** The tables the writer creates (the metadata is written between the first and the others). */
const TABLES = ['passages', 'pages', 'images'] as const;
/** How often a reader looks for the writer's tables while it waits for them. */
const WRITER_POLL_MS = 200;

export interface OpenedTables extends IndexTables {
  readonly db: lancedb.Connection;
  readonly meta: IndexMeta;
  /** The embedder given, or null when the stored vectors come from another model (or there are none). */
  readonly embedder: Embedder | null;
  /** Set when an embedder was given but its vectors cannot be used here: what a response tells its caller. */
  readonly vectorsUnused: VectorsUnused | null;
}

/** A configured embedder left unused because the index's vectors are another model's, or absent. */
export type { VectorsUnused } from '../../retrieval/engine-seam.js';

/** How a process that does not write the index opens it (`OpenOptions.writes`). */
export interface ReaderOpen {
  /**
   * How long to wait for the writer to create the tables and the index metadata when there are none yet. After it,
   * the reader creates empty ones itself (as a lone process on a fresh data dir must). 0: at once.
   */
  readonly waitForWriterMs: number;
}

/**
 * Opens (creating when needed) the tables at `location`. A reader creates nothing and upgrades no schema: on object
 * storage two processes creating one table both commit, the later as an Overwrite that can drop the writer's rows;
 * so readers wait for the writer's tables and metadata.
 */
export async function openTables(
  location: IndexLocation,
  wanted: Embedder | null,
  log: Pick<Logger, 'warn'> | undefined,
  reader?: ReaderOpen,
): Promise<OpenedTables> {
  if (location.kind === 'local') mkdirSync(location.uri, { recursive: true });
  mkdirSync(location.journalDir, { recursive: true });
  // LANCE_CPU_THREADS is the process entry's to set (index/engines/lance/lance-threads.ts), never a library's.
  let db: lancedb.Connection;
  let names: Set<string>;
  try {
    db = await lancedb.connect(location.uri, {
      storageOptions: { ...location.storageOptions },
      ...(location.readConsistencyS !== undefined ? { readConsistencyInterval: location.readConsistencyS } : {}),
    });
    names = new Set(await db.tableNames());
  } catch (err) {
    // The first request to object storage is where wrong credentials, a missing bucket or a dead endpoint show:
    // a startup error that says which, and carries no secret.
    throw location.kind === 's3' ? openError(err, location) : err;
  }
  if (!names.has('passages')) {
    // The root of a sharded index holds its shard count, no tables: opened as one dataset it would get tables of its own.
    const root = await readIndexMeta<{ shards?: number }>(db, location, names);
    if (root?.shards !== undefined && root.shards > 1) {
      db.close();
      throw new IndexOpenError(
        `the index at ${location.label} has ${root.shards} shards: open it with openIndex (index/shards/), not as one dataset`,
      );
    }
  }
  let stored = names.has('passages') ? await readIndexMeta<IndexMeta>(db, location, names) : null;
  /** Whether the writer has created everything: the three tables and the metadata. */
  const created = () => stored !== null && TABLES.every((n) => names.has(n));
  if (reader && !created()) {
    const deadline = Date.now() + reader.waitForWriterMs;
    while (Date.now() < deadline && !created()) {
      await new Promise((r) => setTimeout(r, WRITER_POLL_MS));
      names = new Set(await db.tableNames());
      stored = names.has('passages') ? await readIndexMeta<IndexMeta>(db, location, names) : null;
    }
    if (!created() && reader.waitForWriterMs > 0)
      log?.warn(
        { waitedMs: reader.waitForWriterMs },
        'index: no writer created the index tables in time; this reader creates empty ones (start the indexer first)',
      );
  }
  // A table listed while the writer creates it (object storage lists its first objects before its first version) is
  // waited for by a reader, as long as it waits for the writer at all; a writer opens what it finds.
  // One deadline for all three tables: a reader waits for the writer's creation once, not once per table.
  const openDeadline = reader ? Date.now() + reader.waitForWriterMs : 0;
  const open = (name: string): Promise<Table> => (reader ? openWhenCommitted(db, name, openDeadline) : db.openTable(name));
  let meta: IndexMeta;
  let passages: Table;
  if (stored) {
    meta = stored;
    passages = await open('passages');
    // Indexes written before passages kept PDF page numbers get the column, empty: a schema change
    // of one nullable column, no rewrite of the rows.
    if (!reader && !(await passages.schema()).fields.some((f) => f.name === 'page_no'))
      await passages.addColumns([{ name: 'page_no', valueSql: 'CAST(NULL AS INT)' }]);
    // Likewise the near-duplicate print: pages written before it have none until rewritten (exact content hashes
    // still fold them).
    if (!reader && !(await passages.schema()).fields.some((f) => f.name === 'near_print'))
      await passages.addColumns([{ name: 'near_print', valueSql: 'CAST(NULL AS STRING)' }]);
  } else {
    meta = {
      vectorModelId: wanted?.modelId ?? null,
      vectorDim: wanted?.dim ?? null,
      analysis: ANALYSIS_VERSION,
      ftsAnalyzer: FTS_ANALYZER,
    };
    passages = await db.createEmptyTable('passages', passageSchema(meta.vectorDim), NEW_TABLE_OPTIONS);
    await writeIndexMeta(db, location, meta);
  }
  let embedder = wanted;
  let vectorsUnused: VectorsUnused | null = null;
  if (embedder && (meta.vectorModelId !== embedder.modelId || meta.vectorDim !== embedder.dim)) {
    const reembedding = meta.reembed?.modelId === embedder.modelId;
    vectorsUnused = { stored: meta.vectorModelId, configured: embedder.modelId, ...(reembedding ? { reembedding } : {}) };
    // The writer's open says what it does about it (store.ts `reembed`); a reader only reports.
    if (reader)
      log?.warn(
        { stored: meta.vectorModelId, embedder: embedder.modelId, reembedding },
        reembedding
          ? 'index vectors are being re-embedded with the configured model by the writer: vector ranking starts once this process reopens the index'
          : 'index vectors come from another model (or none): vector ranking off until the writer re-embeds them (svc reindex --vectors, or a writer started with the model)',
      );
    embedder = null;
  }
  const pages = names.has('pages') ? await open('pages') : await db.createEmptyTable('pages', pageSchema, NEW_TABLE_OPTIONS);
  if (!reader && !(await pages.schema()).fields.some((f) => f.name === 'near_print'))
    await pages.addColumns([{ name: 'near_print', valueSql: 'CAST(NULL AS STRING)' }]);
  const images = names.has('images') ? await open('images') : await db.createEmptyTable('images', imageSchema, NEW_TABLE_OPTIONS);
  // A write killed half-way is rolled back by the next writer to open, never by a reader: a search thread of the
  // writer's own process shares its pid and cannot tell a write in flight from a dead one.
  if (!reader) {
    const rolledBack = await recoverInterruptedWrite(location.journalDir, { passages, pages, images });
    if (rolledBack.length > 0) log?.warn({ tables: rolledBack }, 'an interrupted index write was rolled back');
  }
  return { db, passages, pages, images, meta, embedder, vectorsUnused };
}

/**
 * Opens a table found listed, waiting until `deadline` (epoch ms; polling) while it has no committed version yet: the
 * writer is creating it. Any other failure, or still none at the deadline, throws.
 */
async function openWhenCommitted(db: lancedb.Connection, name: string, deadline: number): Promise<Table> {
  for (;;) {
    try {
      return await db.openTable(name);
    } catch (err) {
      if (!notCommittedYet(err) || Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, WRITER_POLL_MS));
    }
  }
}
