/**
 * An index asked over searcher processes when shards fail (issue 43, item 5): a shard with no live searcher, a dead
 * searcher still registered, or one past the per-shard deadline is left out of the query, which answers from the
 * others exactly as an index of only those shards would (their statistics, their pages) and says which shards it
 * covers; a shard served twice fails over to its other searcher; once the shard is back the answers are whole again.
 */
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { searchPages } from '../../index/retrieval/retrieval.js';
import { openIndex, ShardedIndex, shardOf, type ServedIndex } from '../../index/shards/sharded-index.js';
import type { LiveSearcher } from '../../index/shards/remote-shard.js';
import { makePage } from '../helpers/page-input.js';
import { liveOf, remoteIndex, startShardServer, type ShardServer } from '../helpers/shard-servers.js';

const NOW = new Date('2026-11-28T00:00:00Z');
const TEXTS = ['bone density and vitamin d', 'river library memory', 'sleep and memory in cells', 'zinc permit for river works'];

const ranked = async (idx: ServedIndex, query: string) => {
  const res = await searchPages(idx, { query, mode: 'hybrid', now: NOW, limit: 10, offset: 0 });
  return res.pages.map((p) => [p.best.row.page_ref, p.best.score]);
};

t.test('a missing, dead or late shard is left out: the others answer as an index of them alone, then whole again', async (t) => {
  const embedder = createHashingEmbedder(32);
  const local = (await openIndex({ dir: join(t.testdir(), 'idx'), shards: 3, embedder, refreshAfterMs: 0 })) as ShardedIndex;
  t.teardown(() => local.close());
  const pages = Array.from({ length: 24 }, (_, i) =>
    makePage(i + 1, ['a.example', 'b.example', 'c.example'][i % 3]!, [TEXTS[i % TEXTS.length]!, `${TEXTS[(i + 1) % 4]} part ${i}`], {
      title: TEXTS[(i + 2) % 4]!,
    }),
  );
  await local.upsertPages(pages);
  const [s0, s1, s2] = local.shards;
  const shardOfRef = new Map(pages.map((p) => [p.pageRef, shardOf(p.url, 3)]));

  const a: ShardServer = await startShardServer(
    new Map([
      [0, s0!],
      [1, s1!],
    ]),
  );
  let b: ShardServer = await startShardServer(
    new Map([
      [1, s1!],
      [2, s2!],
    ]),
  );
  let live: LiveSearcher[] = liveOf([a, b], 3);
  const { index: remote, directory } = await remoteIndex({ count: 3, live: () => live, embedder, deadlineMs: 2000 });
  t.teardown(async () => {
    await remote.close();
    await a.close();
    await b.close();
  });

  const query = 'river memory';
  const whole = await ranked(local, query);
  t.ok(whole.length > 0, 'the query matches pages');
  let r = await remote.covered(() => ranked(remote, query));
  t.same(r.value, whole, 'all shards live: the answer of one index');
  t.same(r.coverage, { answered: 3, total: 3, missing: [] });

  // Searcher b dies but is still registered: shard 1 fails over to a, shard 2 is left out.
  await b.close();
  r = await remote.covered(() => ranked(remote, query));
  t.same(r.coverage, { answered: 2, total: 3, missing: [2] }, 'shard 2 is missing, shard 1 answered by its other searcher');
  t.same(r.value, await ranked(ShardedIndex.ofShards([s0!, s1!], local.location), query), 'as an index of shards 0 and 1 alone');
  t.ok(
    r.value.every(([ref]) => shardOfRef.get(ref as number) !== 2),
    'no page of the missing shard',
  );

  // No live searcher at all for shard 2 (its entry expired): left out without a request.
  live = liveOf([a], 3);
  await directory.refresh();
  t.same(directory.liveCounts(), [1, 1, 0]);
  r = await remote.covered(() => ranked(remote, query));
  t.same(r.coverage.missing, [2]);
  await t.rejects(
    remote.getPage(pages[0]!.pageRef),
    { name: 'ShardUnavailableError' },
    'outside a query scope the failure is the caller’s',
  );

  // A searcher that accepts and never answers, the only one of shard 0: past the deadline, shard 0 is left out.
  const hung = createServer(() => undefined);
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    hung.closeAllConnections();
    hung.close();
  });
  const hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
  live = [{ id: 'hung', url: hungUrl, shards: [0], shardCount: 3 }, ...liveOf([a], 3).map((s) => ({ ...s, shards: [1] }))];
  await directory.refresh();
  r = await remote.covered(() => ranked(remote, query));
  t.same(r.coverage, { answered: 1, total: 3, missing: [0, 2] }, 'the late shard and the absent one are left out');
  t.same(r.value, await ranked(ShardedIndex.ofShards([s1!], local.location), query), 'as shard 1 alone');

  // Back: both searchers serve again (b on a new address): whole answers.
  b = await startShardServer(
    new Map([
      [1, s1!],
      [2, s2!],
    ]),
  );
  live = liveOf([a, b], 3);
  await directory.refresh();
  r = await remote.covered(() => ranked(remote, query));
  t.same(r.coverage, { answered: 3, total: 3, missing: [] });
  t.same(r.value, whole, 'whole again');
  // Another index's searchers (another shard count) are not asked.
  live = [...liveOf([a, b], 3), { id: 'other', url: hungUrl, shards: [0], shardCount: 4 }];
  await directory.refresh();
  t.same(directory.liveCounts(), [1, 2, 1]);
});

t.test('the shard route answers only the fleet secret, bounds its bodies and refuses unknown calls', async (t) => {
  const local = (await openIndex({ dir: join(t.testdir(), 'idx'), shards: 2, embedder: null })) as ShardedIndex;
  t.teardown(() => local.close());
  await local.upsertPages([makePage(1, 'a.example', ['bone density'])]);
  const srv = await startShardServer(new Map([[0, local.shards[0]!]]));
  t.teardown(() => srv.close());
  const post = (path: string, auth: string | null, body = '{}') =>
    fetch(`${srv.url}/internal/v1/shard/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
      body,
    });
  t.equal((await post('0/status', null)).status, 401, 'no secret');
  t.equal((await post('0/status', 'Bearer svc_live_notthesecret')).status, 401, 'an API key-like value');
  t.equal((await post('0/status', 'Bearer test-fleet-secret-012345678')).status, 401, 'a near miss');
  const ok = await post('0/status', 'Bearer test-fleet-secret-0123456789');
  t.equal(ok.status, 200);
  t.match(await ok.json(), { version: Number, embedderModel: null, vectorsUnused: null });
  const stats = await post('0/stats', 'Bearer test-fleet-secret-0123456789');
  t.match(await stats.json(), { pages: shardOf('https://a.example/page-1', 2) === 0 ? 1 : 0 });
  t.equal((await post('1/status', 'Bearer test-fleet-secret-0123456789')).status, 404, 'a shard it does not serve');
  t.equal((await post('0/dropTable', 'Bearer test-fleet-secret-0123456789')).status, 400, 'an unknown call');
  t.equal((await post('0/corpusStats', 'Bearer test-fleet-secret-0123456789', '{"terms": 3}')).status, 400, 'malformed arguments');
  const big = JSON.stringify({ terms: ['x'.repeat(5 * 2 ** 20)] });
  t.equal((await post('0/corpusStats', 'Bearer test-fleet-secret-0123456789', big)).status, 413, 'a body over the bound');
});
