/**
 * Where the shards of a sharded index live and how many it has (index/shards/): the LanceDB side of the layout, so
 * the composition above it never holds a connection. An index of one shard keeps the layout it always had (its
 * tables at the location itself), so indexes written before shards open unchanged.
 */
import * as lancedb from '@lancedb/lancedb';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readHostRows, type HostRow } from './host-ids.js';
import { openError, readIndexMeta, writeIndexMeta, type IndexLocation } from './location.js';

/** The index metadata at the root of a sharded index: only its shard count (each shard keeps its own metadata). */
interface ShardMeta {
  readonly shards?: number;
}

/** The folder (or prefix) of shard `i` of `n`: `shard-<i>of<n>` under the index location. */
export function shardLocation(root: IndexLocation, i: number, n: number): IndexLocation {
  const name = `shard-${i}of${n}`;
  const uri = root.kind === 'local' ? join(root.uri, name) : `${root.uri.replace(/\/+$/, '')}/${name}`;
  return { ...root, uri, journalDir: join(root.journalDir, name), label: `${root.label} ${name}` };
}

/**
 * How many of the index's top `k` results (by any one score) one of `shards` shards returns so that the merge of the
 * shards' lists still holds the index's top k but in rare cases: pages go to shards by a hash of their URL, so the
 * count of the top k in one shard is about a binomial draw of k with probability 1/shards; its expected value plus four
 * standard deviations (105 of 300 over 4 shards), never more than k. The text arm asks again when a shard may hold
 * more (exact); the vector arm, approximate anyway, does not.
 */
export function shardShareOfTop(k: number, shards: number): number {
  if (shards <= 1 || k <= 0) return k;
  const p = 1 / shards;
  return Math.min(k, Math.ceil(k * p + 4 * Math.sqrt(k * p * (1 - p))));
}

/** `fn` over a connection to `location` (its folder made first when local), closed after. */
async function withConnection<T>(location: IndexLocation, fn: (db: lancedb.Connection) => Promise<T>): Promise<T> {
  if (location.kind === 'local') mkdirSync(location.uri, { recursive: true });
  let db: lancedb.Connection;
  try {
    db = await lancedb.connect(location.uri, { storageOptions: { ...location.storageOptions } });
  } catch (err) {
    throw openError(err, location);
  }
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

/**
 * The shard count stored at `location`: its recorded count, 1 for an index written before shards (tables or metadata
 * at the root), null when nothing is there yet.
 */
export function storedShardCount(location: IndexLocation): Promise<number | null> {
  return withConnection(location, async (db) => {
    const names = new Set(await db.tableNames());
    const meta = await readIndexMeta<ShardMeta>(db, location, names);
    if (meta && typeof meta.shards === 'number') return meta.shards;
    return meta || names.has('passages') ? 1 : null;
  });
}

/**
 * The model the vectors stored at `location` (one dataset) came from, `<folder>/<dtype>`, or the one a re-embedding
 * in progress is giving them; null when the dataset has no vectors of any model yet (or nothing is there).
 */
export function storedVectorModel(location: IndexLocation): Promise<string | null> {
  return withConnection(location, async (db) => {
    const names = new Set(await db.tableNames());
    if (!names.has('passages')) return null;
    const meta = await readIndexMeta<{ vectorModelId?: string | null; reembed?: { modelId?: string } }>(db, location, names);
    return meta?.vectorModelId ?? meta?.reembed?.modelId ?? null;
  });
}

/** Records the shard count of a new sharded index at its root (written once, before any shard's tables). */
export function recordShardCount(location: IndexLocation, shards: number): Promise<void> {
  return withConnection(location, (db) => writeIndexMeta(db, location, { shards } satisfies ShardMeta));
}

/** Host and host id of every page stored at `location` (none when it has no pages table yet). */
export function storedHosts(location: IndexLocation): Promise<HostRow[]> {
  return withConnection(location, async (db) => {
    if (!(await db.tableNames()).includes('pages')) return [];
    const pages = await db.openTable('pages');
    try {
      return await readHostRows(pages, null);
    } finally {
      pages.close();
    }
  });
}
