/**
 * A shard's IVF-PQ search asks for its share of the index's top k (docs/architecture.md#shards): the plan of
 * `shardVectorSearch`, and a sharded index over real LanceDB ANN indexes answering with it while the merged vector
 * arm still returns the index's k nearest of what the shards gave.
 */
import t from 'tap';
import { join } from 'node:path';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex, shardVectorSearch } from '../../index/engines/lance/store.js';
import { openIndex, type ShardedIndex } from '../../index/shards/sharded-index.js';
import { makePage } from '../helpers/page-input.js';

/** P(X > limit) for X ~ Binomial(k, p): how often a shard holds more of the index's top k than it returns. */
function binomialTail(k: number, p: number, limit: number): number {
  let logC = 0; // log C(k, 0)
  let tail = 0;
  for (let x = 0; x <= k; x++) {
    if (x > 0) logC += Math.log(k - x + 1) - Math.log(x);
    if (x > limit) tail += Math.exp(logC + x * Math.log(p) + (k - x) * Math.log(1 - p));
  }
  return tail;
}

t.test('a whole index searches as before; a shard for its share with a margin', async (t) => {
  t.same(shardVectorSearch(300, 1), { limit: 300, nprobes: 20, refineFactor: 5 });
  t.same(shardVectorSearch(300, 4), { limit: 105, nprobes: 10, refineFactor: 5 }, 'k 300 over 4 shards');
  for (const k of [300, 1000])
    for (let n = 2; n <= 8; n++) {
      const plan = shardVectorSearch(k, n);
      t.ok(plan.limit <= k && plan.limit * n >= k, `k ${k}, ${n} shards: the merge still holds k (${plan.limit} each)`);
      t.ok(plan.nprobes >= 1 && plan.nprobes < 20, `k ${k}, ${n} shards: fewer partitions probed`);
      t.equal(plan.refineFactor, 5, `k ${k}, ${n} shards: refine factor`);
      const tail = binomialTail(k, 1 / n, plan.limit);
      t.ok(tail < 1e-3, `k ${k}, ${n} shards: a shard holds more of the top k than it returns with probability ${tail}`);
    }
});

t.test('over ANN indexes each shard returns its share and the merge the k nearest of them', async (t) => {
  const embedder = createHashingEmbedder(32);
  // Low thresholds so that each small shard has an IVF-PQ index, as a large one would; no vectors in memory, so the
  // search is LanceDB's.
  const opts = { embedder, refreshAfterMs: 0, optimizeEvery: 1_000_000, vectorIndexThreshold: 300, flatVectorBytes: 0 };
  const pages = Array.from({ length: 800 }, (_, i) =>
    makePage(i + 1, `h${i % 11}.example`, [`river crossing ${i} near the old mill`, `notes on quokkas and zinc ${i % 17}`]),
  );
  const dir = t.testdir();
  const sharded = (await openIndex({ ...opts, dir: join(dir, 'n2'), shards: 2 })) as ShardedIndex;
  const one = await PassageIndex.open({ ...opts, dir: join(dir, 'one') });
  t.teardown(async () => {
    await sharded.close();
    await one.close();
  });
  await sharded.upsertPages(pages);
  await one.upsertPages(pages);
  await sharded.optimize();
  await one.optimize();
  const built = await Promise.all([one, ...sharded.shards].map(async (s) => (await s.stats()).vectorIndex));
  t.same(built, [true, true, true], 'every dataset has its ANN index');

  const [q] = await embedder.embed(['quokkas and zinc near the river']);
  const k = 300;
  const plan = shardVectorSearch(k, 2);
  const lists = await Promise.all(sharded.shards.map((s) => s.vectorCandidates(q!, {}, k)));
  for (const [i, list] of lists.entries()) t.equal(list.length, plan.limit, `shard ${i} returns its share (${plan.limit} of ${k})`);
  t.equal((await one.vectorCandidates(q!, {}, k)).length, k, 'an index of one shard returns k');

  const merged = await sharded.vectorCandidates(q!, {}, k);
  t.equal(merged.length, k, 'the merged arm holds k');
  const union = lists.flat().sort((a, b) => a._distance - b._distance);
  t.same(
    merged.map((r) => r._distance),
    union.slice(0, k).map((r) => r._distance),
    "the merged arm is the k nearest of the shards' answers",
  );
});
