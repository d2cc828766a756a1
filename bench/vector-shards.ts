/**
 * The vector arm of one index against the same passages as N shards (issue 43): LanceDB's IVF-PQ search as
 * `PassageIndex.vectorCandidates` makes it (cosine, hit columns), run on the 1-shard index and on each shard of the
 * N-shard one with several settings (nprobes, refine factor, k asked of each shard), each compared with the exact
 * top k of the same vectors (a flat search of every shard, merged; cached in `--exact` since it is slow).
 *
 * Prints per setting: CPU ms per query (process.cpuUsage, LanceDB's threads included; a whole query: every shard's
 * search, one after another), recall@k and recall@10 of the merged top k against the exact one, and one query's
 * counts from LanceDB's analyzed plan (index deltas, partitions searched, PQ comparisons, full vectors read to refine).
 * Counts and recall do not depend on the machine's load; CPU does a little.
 *
 *   nice -n 5 node --import tsx bench/vector-shards.ts --one /tmp/bench-shards-1m/one/lance \
 *       --sharded /tmp/bench-shards-1m/n4/lance [--queries 200] [--k 300] [--exact /tmp/vecshard-exact.json]
 *
 * Both indexes must hold the same synthetic pages (bench/shards.ts builds them): a passage is matched by
 * `page_ref:ordinal`. Reads only.
 */
import '../fixtures/loopback-only.js';
import * as lancedb from '@lancedb/lancedb';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { shardVectorSearch, type VectorSearchPlan } from '../index/engines/lance/store.js';
import { createHashingEmbedder } from '../index/serving/embedder.js';
import { SCIFACT } from './synthetic.js';
import { exactNearest, hitsOf, nearest, planCounts, recall, servedSearch, type VectorHit } from './vector-arm.js';

const { values } = parseArgs({
  options: {
    one: { type: 'string' },
    sharded: { type: 'string' },
    queries: { type: 'string', default: '200' },
    k: { type: 'string', default: '300' },
    exact: { type: 'string', default: '/tmp/vecshard-exact.json' },
  },
});
setLanceCpuThreads();
const k = Number(values.k);
const nq = Number(values.queries);

/** The shards' folders under an N-shard index (`shard-<i>of<N>`), in order. */
function shardDirs(root: string): string[] {
  const { shards } = JSON.parse(readFileSync(join(root, 'svc-index-meta.json'), 'utf8')) as { shards: number };
  return Array.from({ length: shards }, (_, i) => join(root, `shard-${i}of${shards}`));
}
const open = async (dir: string) => (await lancedb.connect(dir)).openTable('passages');

const queries = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()].slice(0, nq).map((q) => q.slice(0, 300));
const vectors = (await createHashingEmbedder().embed(queries)).map((v) => Array.from(v));
const one = values.one ? await open(values.one) : null;
const shards = values.sharded ? await Promise.all(shardDirs(values.sharded).map(open)) : [];

// The exact top k of each query: a flat search of every shard (the same passages as the 1-shard index), merged.
// `most`: the most of a query's exact top k one shard holds (a shard returning fewer misses some).
let exact: string[][];
let most: number[];
if (existsSync(values.exact) && (JSON.parse(readFileSync(values.exact, 'utf8')) as { k: number; q: number }).k === k) {
  const held = JSON.parse(readFileSync(values.exact, 'utf8')) as { k: number; q: number; top: string[][]; most: number[] };
  if (held.q < nq) throw new Error(`${values.exact} holds ${held.q} queries: remove it or ask fewer`);
  exact = held.top.slice(0, nq);
  most = held.most.slice(0, nq);
} else {
  const from = shards.length > 0 ? shards : [one!];
  exact = [];
  most = [];
  for (const v of vectors) {
    const lists = await Promise.all(from.map(async (t, shard) => (await exactNearest(t, v, k)).map((h) => ({ ...h, shard }))));
    const best = nearest(lists, k) as (VectorHit & { shard: number })[];
    exact.push(best.map((h) => h.key));
    most.push(Math.max(...from.map((_, i) => best.filter((h) => h.shard === i).length)));
    if (exact.length % 50 === 0) process.stderr.write(`exact: ${exact.length}/${vectors.length}\n`);
  }
  writeFileSync(values.exact, JSON.stringify({ k, q: nq, top: exact, most }));
}

interface Setting {
  readonly label: string;
  readonly tables: lancedb.Table[];
  /** The search each table makes: given, or store.ts's `shardVectorSearch` for its share of the index. */
  readonly plan: VectorSearchPlan;
}

async function run(s: Setting): Promise<void> {
  for (const v of vectors.slice(0, 3)) for (const t of s.tables) await servedSearch(t, v, s.plan).toArrow(); // warm
  const c0 = process.cpuUsage();
  let atK = 0;
  let at10 = 0;
  const each: number[] = [];
  for (let i = 0; i < vectors.length; i++) {
    const lists: VectorHit[][] = [];
    for (const [j, t] of s.tables.entries()) {
      const c1 = process.cpuUsage();
      lists.push(hitsOf(await servedSearch(t, vectors[i]!, s.plan).toArrow()));
      const d = process.cpuUsage(c1);
      each[j] = (each[j] ?? 0) + d.user + d.system;
    }
    const r = recall(
      nearest(lists, k).map((h) => h.key),
      exact[i]!,
    );
    atK += r.atK;
    at10 += r.at10;
  }
  const c = process.cpuUsage(c0);
  const counts = await planCounts(s.tables.map((t) => servedSearch(t, vectors[0]!, s.plan)));
  const short = s.tables.length > 1 ? most.filter((m) => m > s.plan.limit).length : 0;
  console.log(
    [
      s.label,
      s.plan.nprobes,
      s.plan.refineFactor,
      s.plan.limit,
      ((c.user + c.system) / 1000 / vectors.length).toFixed(1) +
        (each.length > 1 ? ` (${each.map((x) => (x / 1000 / vectors.length).toFixed(0)).join(' + ')})` : ''),
      (atK / vectors.length).toFixed(3),
      (at10 / vectors.length).toFixed(3),
      short,
      counts.deltas,
      counts.partitions,
      counts.searched,
      counts.pqCompared,
      counts.refined,
    ].join(' | '),
  );
}

console.log(`${vectors.length} queries, k = ${k}`);
console.log(
  'index | nprobes | refine | k per shard | CPU ms/query (per shard) | recall@k | recall@10 | queries a shard held more of the exact top k than it returned | deltas | partitions | searched | PQ compared | refined',
);
// index:nprobes:refine[:k per shard | share]; `share`: store.ts's `shardVectorSearch` of the given nprobes and refine.
const SETTINGS = (process.env.VECSHARD_SETTINGS ?? 'one:20:5,n:20:5,n:20:5:share').split(',').map((x) => x.split(':'));
for (const [which, probes, refine, per] of SETTINGS) {
  const tables = which === 'one' ? (one ? [one] : []) : shards;
  if (tables.length === 0) continue;
  const nprobes = Number(probes);
  const refineFactor = Number(refine);
  const plan =
    per === 'share'
      ? shardVectorSearch(k, tables.length, nprobes, refineFactor)
      : { limit: per === undefined ? k : Number(per), nprobes, refineFactor };
  await run({ label: which === 'one' ? '1 shard' : `${tables.length} shards`, tables, plan });
}
