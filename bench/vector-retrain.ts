/**
 * The vector arm of an index whose IVF-PQ index grew by the writer's optimizes, before and after the writer retrains
 * it (maintenance.ts `vectorRetrainDue`), and what delta segments cost a query.
 *
 *   nice -n 5 node dist/bench/vector-retrain.js --index /tmp/ivf-grown/lance --work /tmp/ivf-work \
 *       [--queries 200] [--k 300] [--deltas 1,2,4,8] [--delta-rows 1000]
 *   nice -n 5 node dist/bench/vector-retrain.js --retrain /tmp/bench1m384/1000000/lance --dim 384
 *
 * `--retrain DIR` only opens a writer on the index in DIR (in place; its vectors from the hashing embedder of `--dim`
 * dimensions) and optimizes it, so the writer's rule retrains its vector index when due, and prints how long that took.
 *
 * `--index` is a 1-shard index of synthetic passages (hashing embedder) written page batch by page batch with the
 * writer's default maintenance, as bench/shards.ts builds one; it is copied to `--work` and only the copy changes:
 *   1. a plain LanceDB optimize folds the rows the last writer left unindexed (what its next optimize would do);
 *   2. "grown": the search as `PassageIndex.vectorCandidates` makes it (cosine, nprobes 20, refine 5, k) per query:
 *      CPU ms (process.cpuUsage, LanceDB's threads included), wall p50/p95, recall@10 and @k against an exact flat
 *      search of the same vectors, and one query's counts from LanceDB's analyzed plan;
 *   3. a writer (`PassageIndex`) opens the copy and optimizes: its rule retrains the index beside the write queue;
 *      prints how long the optimize held the queue and how long the retraining took;
 *   4. "retrained": the same measures;
 *   5. then rows are appended (copies of stored rows under new page refs, so they are never in the exact top k) and
 *      folded by plain optimizes, each adding a delta segment; at each count of `--deltas` the search is measured
 *      again (recall there counts the copies as misses: compare the CPU and the counts).
 */
import '../fixtures/loopback-only.js';
import * as lancedb from '@lancedb/lancedb';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import { plainRows } from '../index/engines/lance/rows.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { PassageIndex, shardVectorSearch } from '../index/engines/lance/store.js';
import { createHashingEmbedder } from '../index/serving/embedder.js';
import { pct, SCIFACT } from './synthetic.js';
import { exactNearest, hitsOf, planCounts, recall, servedSearch } from './vector-arm.js';

const { values } = parseArgs({
  options: {
    index: { type: 'string' },
    work: { type: 'string', default: '/tmp/ivf-work' },
    queries: { type: 'string', default: '200' },
    k: { type: 'string', default: '300' },
    deltas: { type: 'string', default: '1,2,4,8' },
    'delta-rows': { type: 'string', default: '1000' },
    retrain: { type: 'string' },
    dim: { type: 'string', default: '256' },
  },
});
setLanceCpuThreads();
const embedder = createHashingEmbedder(Number(values.dim));

/** A writer on `dir` optimizes it and waits for the retraining that may start; prints the times and its log lines. */
async function retrainWithWriter(dir: string): Promise<void> {
  const lines: string[] = [];
  const note = (o: unknown, msg?: string) => {
    if (msg?.startsWith('vector index')) lines.push(`${msg} ${JSON.stringify(o)}`);
  };
  const writer = await PassageIndex.open({
    dir,
    embedder,
    textEngine: false,
    refreshAfterMs: 0,
    log: { info: note, warn: note, debug: () => undefined },
  });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await writer.optimize();
  const held = performance.now() - t0;
  await writer.maintenanceSettled();
  const total = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  await writer.close();
  console.log(
    `optimize held the write queue ${Math.round(held)} ms; optimize + retraining ${Math.round(total)} ms wall, ` +
      `${Math.round((cpu.user + cpu.system) / 1000)} ms CPU`,
  );
  for (const l of lines) console.log(l);
  if (lines.length === 0) console.log('no retraining was due');
}

if (values.retrain) {
  await retrainWithWriter(values.retrain);
  process.exit(0);
}
if (!values.index || !existsSync(values.index)) throw new Error('--index: the folder of a grown index');
const k = Number(values.k);
const work = values.work;
rmSync(work, { recursive: true, force: true });
cpSync(values.index, work, { recursive: true });

const queries = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()].slice(0, Number(values.queries)).map((q) => q.slice(0, 300));
const vectors = (await embedder.embed(queries)).map((v) => Array.from(v));
const plan = shardVectorSearch(k, 1);

const db = await lancedb.connect(work);
const table = await db.openTable('passages');
const vectorIndexName = async () => (await table.listIndices()).find((i) => i.columns.includes('vector'))!.name;

const t0 = performance.now();
await table.optimize({ cleanupOlderThan: new Date() });
console.log(`folded the unindexed rows: ${Math.round(performance.now() - t0)} ms`);

// The exact top k of each query: a flat search of every vector.
const exact: string[][] = [];
for (const v of vectors) exact.push((await exactNearest(table, v, k)).map((h) => h.key));

const served = (v: number[]) => servedSearch(table, v, plan);

console.log(`${vectors.length} queries, k ${k}, nprobes ${plan.nprobes}, refine ${plan.refineFactor}`);
console.log(
  'index | rows | segments | unindexed | CPU ms/query | wall p50 ms | wall p95 ms | recall@10 | recall@k | partitions ranked | searched | PQ compared | refined',
);
async function measure(label: string): Promise<void> {
  await table.checkoutLatest();
  const stats = (await table.indexStats(await vectorIndexName()))!;
  for (const v of vectors.slice(0, 5)) await served(v).toArrow(); // warm
  const walls: number[] = [];
  let at10 = 0;
  let atK = 0;
  const c0 = process.cpuUsage();
  for (const [i, v] of vectors.entries()) {
    const w0 = performance.now();
    const got = hitsOf(await served(v).toArrow()).map((h) => h.key);
    walls.push(performance.now() - w0);
    const r = recall(got, exact[i]!);
    atK += r.atK;
    at10 += r.at10;
  }
  const c = process.cpuUsage(c0);
  const counts = await planCounts([served(vectors[0]!)]);
  console.log(
    [
      label,
      await table.countRows(),
      stats.numIndices ?? 1,
      stats.numUnindexedRows,
      ((c.user + c.system) / 1000 / vectors.length).toFixed(1),
      pct(walls, 50).toFixed(1),
      pct(walls, 95).toFixed(1),
      (at10 / vectors.length).toFixed(3),
      (atK / vectors.length).toFixed(3),
      counts.partitions,
      counts.searched,
      counts.pqCompared,
      counts.refined,
    ].join(' | '),
  );
}

await measure('grown');

// The writer's rule: an optimize, then the retraining beside the queue.
await retrainWithWriter(work);
await measure('retrained');

// Delta segments: appended copies of stored rows, folded by plain optimizes (no writer: nothing retrains).
const wanted = values.deltas.split(',').map(Number);
const rowsPer = Number(values['delta-rows']);
const schema = await table.schema();
/** Added to a copied row's page ref: never a stored page's. */
const COPY_REF = 10_000_000;
for (let round = 0; round < 64 && wanted.length > 0; round++) {
  const rows = plainRows<Record<string, unknown>>(
    await table
      .query()
      .limit(rowsPer)
      .offset(round * rowsPer)
      .toArray(),
  );
  for (const o of rows) {
    o.page_ref = Number(o.page_ref) + COPY_REF;
    if (o.vector && !Array.isArray(o.vector)) o.vector = Array.from(o.vector as Iterable<number>);
  }
  await table.add(lancedb.makeArrowTable(rows, { schema }));
  await table.optimize({ cleanupOlderThan: new Date() });
  const segments = (await table.indexStats(await vectorIndexName()))!.numIndices ?? 1;
  while (wanted.length > 0 && segments >= wanted[0]!) {
    wanted.shift();
    await measure(`+${round + 1} optimizes`);
  }
}
table.close();
db.close();
