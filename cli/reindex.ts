/**
 * `svc reindex --vectors [--data-dir D] [--embedder auto|model|hashing] [--batch N]`: gives every passage a vector of
 * the configured model now (index/engines/lance/reembed.ts), when the index was built without vectors or with another model. The
 * index's writer does it by itself in the background (`SVC_REEMBED=background`, the default); this is the same pass on
 * demand, to completion, with progress. Stopped (Ctrl-C, SIGTERM) it keeps what it did: the next run resumes.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { indexLocation } from '../index/engines/lance/location.js';
import { openIndex, ShardedIndex, type ServedIndex } from '../index/shards/sharded-index.js';
import { parseShardList } from './shard-list.js';
import { pickEmbedder } from './ingest.js';
import { UsageError, type CliIo } from './io.js';
import { reembedWithProgress } from './reembed-run.js';
import { onStopSignals } from './stop-signals.js';

const USAGE = 'usage: svc reindex --vectors [--data-dir D] [--embedder auto|model|hashing] [--batch N] [--shards 0-3]';

/** `svc reindex`. */
export async function reindexCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      vectors: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      embedder: { type: 'string', default: 'auto' },
      batch: { type: 'string' },
      shards: { type: 'string' },
    },
  });
  if (!values.vectors) throw new UsageError(`svc reindex re-embeds the passages only: give --vectors\n${USAGE}`);
  const batch = values.batch === undefined ? undefined : Number(values.batch);
  if (batch !== undefined && (!Number.isInteger(batch) || batch < 1 || batch > 10_000))
    throw new UsageError(`--batch must be an integer from 1 to 10000\n${USAGE}`);
  let shards: number[] | undefined;
  try {
    shards = values.shards === undefined ? undefined : parseShardList(values.shards);
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const kind = values.embedder ?? 'auto';
  if (kind === 'none') throw new UsageError(`--embedder none leaves nothing to embed\n${USAGE}`);
  const config = loadConfig({ env: io.env, flags: { dataDir: values['data-dir'] } });
  const embedder = await pickEmbedder(kind, config, io);
  if (!embedder) throw new UsageError('svc reindex --vectors needs a model: set SVC_MODEL_DIR (and SVC_MODEL), or --embedder hashing');
  let index: ServedIndex;
  try {
    // A sharded index: every shard, or those of --shards.
    index = await openIndex({
      location: indexLocation(config),
      ...(shards ? { onlyShards: shards } : {}),
      embedder,
      reembed: true,
      optimizeEvery: Number.MAX_SAFE_INTEGER,
      textEngine: false,
    });
  } catch (err) {
    await embedder.close();
    if (err instanceof RangeError) throw new UsageError(`--shards: ${err.message}`);
    throw err;
  }
  const stop = onStopSignals();
  try {
    const result = await reembedWithProgress(index, io, {
      everyMs: config.progressMs,
      signal: stop.signal,
      ...(batch !== undefined ? { batchPassages: batch } : {}),
    });
    if (result === 'none') io.stdout.write(`vectors: every passage has a vector of ${embedder.modelId} already; nothing to do\n`);
    if (result === 'stopped') {
      io.stdout.write(
        `re-embedding stopped by ${stop.received() ?? 'a signal'}: what is done is kept; run the same command again to finish\n`,
      );
      return 130;
    }
    // Folds the rewritten rows into the indexes (and builds the vector index on a large index).
    if (result === 'done') await index.optimize();
    const s = await index.stats();
    const which = index instanceof ShardedIndex ? ` (shards ${index.heldShards.join(',')} of ${index.shardCount})` : '';
    io.stdout.write(`index${which}: ${s.pages} pages, ${s.passages} passages, ${s.vectors} vectors, ranking ${s.rankingMode}\n`);
    return 0;
  } finally {
    stop.dispose();
    await index.close();
    await embedder.close();
  }
}
