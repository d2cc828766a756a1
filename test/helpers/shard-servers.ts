/**
 * Searcher routes on loopback for component tests: each server answers the internal shard route (the one a
 * `--role searcher` process mounts) for the shards it is given, and `remoteIndex` composes them as an `api` replica
 * over searchers does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type { PassageIndex } from '../../index/engines/lance/store.js';
import { localIndexLocation } from '../../index/engines/lance/location.js';
import { RemoteShard, SearcherDirectory, type LiveSearcher } from '../../index/shards/remote-shard.js';
import { mountShardRoute } from '../../index/shards/searcher-route.js';
import { ShardedIndex } from '../../index/shards/sharded-index.js';
import type { Embedder } from '../../index/serving/embedder.js';

export const TEST_FLEET_SECRET = 'test-fleet-secret-0123456789';

export interface ShardServer {
  readonly url: string;
  readonly shards: readonly number[];
  close(): Promise<void>;
}

/** A server answering the shard route for `shards` (shard number → the index that holds it). */
export async function startShardServer(shards: ReadonlyMap<number, PassageIndex>, secret = TEST_FLEET_SECRET): Promise<ShardServer> {
  const app = new Koa();
  const router = new Router();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      ctx.status = (err as { status?: number }).status ?? 500;
      ctx.body = { error: (err as Error).message };
    }
  });
  mountShardRoute(router, { shards, secret });
  app.use(router.routes());
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    shards: [...shards.keys()],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** An index over `count` remote shards; `live()` is the registry as the test sets it. */
export async function remoteIndex(o: {
  count: number;
  live: () => readonly LiveSearcher[];
  embedder: Embedder | null;
  deadlineMs?: number;
}): Promise<{ index: ShardedIndex; directory: SearcherDirectory; sources: RemoteShard[] }> {
  const directory = new SearcherDirectory(async () => o.live(), o.count);
  const sources = Array.from(
    { length: o.count },
    (_, shard) => new RemoteShard({ shard, directory, embedder: o.embedder, secret: TEST_FLEET_SECRET, timeoutMs: o.deadlineMs ?? 30_000 }),
  );
  await directory.refresh();
  const index = ShardedIndex.over(sources, localIndexLocation('/nonexistent-remote-index'), { deadlineMs: o.deadlineMs ?? 30_000 });
  return { index, directory, sources };
}

/** Registry rows for `servers` of a `count`-shard index. */
export const liveOf = (servers: readonly ShardServer[], count: number): LiveSearcher[] =>
  servers.map((s, i) => ({ id: `searcher-${i}`, url: s.url, shards: s.shards, shardCount: count }));
