/** The shards a searcher process holds (`svc serve --role searcher --shards 0,1`), each opened as one reader. */
import type { IndexLocation } from '../engines/lance/location.js';
import { shardLocation } from '../engines/lance/shard-layout.js';
import { PassageIndex, type OpenOptions } from '../engines/lance/store.js';

/** Raised when `--shards` names a shard the index does not have. */
export class ShardListError extends Error {
  override readonly name = 'ShardListError';
}

/**
 * Opens shards `only` (default: every one) of the `count`-shard index at `location` read-only, as an `api` replica
 * opens an index (the caller's read consistency, postings that follow the writer). An index of one shard is its root.
 */
export async function openSearcherShards(
  opts: Omit<OpenOptions, 'location' | 'dir' | 'writes'> & {
    readonly location: IndexLocation;
    readonly count: number;
    readonly only?: readonly number[] | undefined;
  },
): Promise<Map<number, PassageIndex>> {
  const { location, count, only, ...open } = opts;
  const wanted = only ?? Array.from({ length: count }, (_, i) => i);
  const outside = wanted.filter((i) => i < 0 || i >= count);
  if (outside.length > 0)
    throw new ShardListError(`--shards ${outside.join(',')}: the index has ${count} shard${count === 1 ? '' : 's'} (0-${count - 1})`);
  const out = new Map<number, PassageIndex>();
  try {
    for (const i of wanted)
      out.set(
        i,
        await PassageIndex.open({
          ...open,
          writes: false,
          shardCount: count,
          location: count > 1 ? shardLocation(location, i, count) : location,
        }),
      );
  } catch (err) {
    await Promise.all([...out.values()].map((s) => s.close().catch(() => undefined)));
    throw err;
  }
  return out;
}
