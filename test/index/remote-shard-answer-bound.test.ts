/**
 * A searcher's answer larger than the api's bound is not read: the call fails as the shard being unavailable (its
 * searcher is failed over, then the shard left out of the query), whatever Content-Length the searcher declared.
 */
import t from 'tap';
import { join } from 'node:path';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { RemoteShard, SearcherDirectory, ShardUnavailableError } from '../../index/shards/remote-shard.js';
import { makePage } from '../helpers/page-input.js';
import { liveOf, startShardServer, TEST_FLEET_SECRET } from '../helpers/shard-servers.js';

t.test('an answer over maxAnswerBytes fails the call; one under it is read', async (t) => {
  const idx = await PassageIndex.open({ dir: join(t.testdir(), 'idx'), embedder: null, refreshAfterMs: 0 });
  t.teardown(() => idx.close());
  await idx.upsertPages([makePage(1, 'a.example', ['bone density and vitamin d']), makePage(2, 'b.example', ['river library'])]);
  const server = await startShardServer(new Map([[0, idx]]));
  const directory = new SearcherDirectory(async () => liveOf([server], 1), 1);
  await directory.refresh();
  t.teardown(async () => {
    directory.stop();
    await server.close();
  });
  const shard = (maxAnswerBytes: number) =>
    new RemoteShard({ shard: 0, directory, embedder: null, secret: TEST_FLEET_SECRET, timeoutMs: 10_000, maxAnswerBytes });

  const page = await shard(64 * 1024).getPage(1);
  t.equal(page?.pageRef, 1, 'under the bound: the page is read');
  await t.rejects(shard(64).getPage(1), ShardUnavailableError, 'over the bound: the shard is unavailable');
  t.equal((await shard(64 * 1024).stats()).pages, 2, 'the connection serves the next call');
});
