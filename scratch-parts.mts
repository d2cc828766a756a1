// Which partition count survives LanceDB's next optimize, and what it costs a query (scratch, not committed).
import * as lancedb from '@lancedb/lancedb';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readQueries } from './cli/eval.js';
import { HIT_COLUMNS } from './index/engines/lance/columns.js';
import { plainRows } from './index/engines/lance/rows.js';
import { setLanceCpuThreads } from './index/engines/lance/lance-threads.js';
import { createHashingEmbedder } from './index/serving/embedder.js';
import { pct, SCIFACT } from './bench/synthetic.js';
setLanceCpuThreads();
const dir = '/tmp/ivf-p';
rmSync(dir, { recursive: true, force: true });
cpSync('/tmp/ivf-grown/lance/passages.lance', join(dir, 'passages.lance'), { recursive: true });
const t = await (await lancedb.connect(dir)).openTable('passages');
await t.optimize({ cleanupOlderThan: new Date() });
const n = await t.countRows();
const k = 300;
const qs = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()].slice(0, 100).map((q) => q.slice(0, 300));
const vs = (await createHashingEmbedder().embed(qs)).map((v) => Array.from(v));
const keys = (r: any) => Array.from({ length: r.numRows }, (_, i) => `${r.getChild('page_ref').get(i)}:${r.getChild('ordinal').get(i)}`);
const exact: string[][] = [];
for (const v of vs) exact.push(keys(await t.vectorSearch(v).distanceType('cosine').bypassVectorIndex().select(['page_ref', 'ordinal']).limit(k).toArrow()));
const q = (v: number[], np: number) => t.vectorSearch(v).distanceType('cosine').select([...HIT_COLUMNS, '_distance']).withRowId().limit(k).nprobes(np).refineFactor(5);
async function measure(label: string, np = 20) {
  const name = (await t.listIndices()).find((i) => i.columns.includes('vector'))!.name;
  const st = (await t.indexStats(name))!;
  const plan = await q(vs[0]!, np).analyzePlan();
  const g = (re: RegExp, f: string) => new RegExp(`${f}=([\\d.]+ ?[KM]?)`).exec(re.exec(plan)?.[0] ?? '')?.[1];
  for (const v of vs.slice(0, 3)) await q(v, np).toArrow();
  const c0 = process.cpuUsage(); const walls: number[] = []; let a10 = 0, ak = 0;
  for (const [i, v] of vs.entries()) {
    const w = performance.now(); const got = keys(await q(v, np).toArrow()); walls.push(performance.now() - w);
    const want = exact[i]!; const s = new Set(want); ak += got.filter((x) => s.has(x)).length / want.length;
    const s10 = new Set(want.slice(0, 10)); a10 += got.slice(0, 10).filter((x) => s10.has(x)).length / 10;
  }
  const c = process.cpuUsage(c0);
  console.log([label, np, st.numIndices, ((c.user + c.system) / 1000 / vs.length).toFixed(1), pct(walls, 50).toFixed(1), pct(walls, 95).toFixed(1), (a10 / vs.length).toFixed(3), (ak / vs.length).toFixed(3), g(/ANNIvfPartition.*$/m, 'partitions_ranked'), g(/ANNSubIndex.*$/m, 'index_comparisons')].join(' | '));
}
console.log(`n ${n}; label | nprobes | segments | CPU ms/q | p50 | p95 | recall@10 | recall@300 | partitions ranked | PQ compared`);
const schema = await t.schema();
for (const per of (process.env.PER ?? '8192,4096').split(',').map(Number)) {
  const P = Math.max(1, Math.round(n / per));
  const t0 = performance.now(); const c0 = process.cpuUsage();
  await t.createIndex('vector', { config: lancedb.Index.ivfPq({ distanceType: 'cosine', numPartitions: P, numSubVectors: 16 }), replace: true });
  const c = process.cpuUsage(c0);
  console.log(`P ${P} (${per} rows each): build ${Math.round(performance.now() - t0)} ms wall, ${Math.round((c.user + c.system) / 1000)} ms CPU`);
  await measure(`P ${P} built`);
  for (const np of (process.env.NP ?? '').split(',').filter(Boolean).map(Number)) await measure(`P ${P} built`, np);
  const rows = plainRows<Record<string, unknown>>(await t.query().limit(1000).toArray());
  for (const o of rows) { o.page_ref = Number(o.page_ref) + 10_000_000; if (o.vector && !Array.isArray(o.vector)) o.vector = Array.from(o.vector as Iterable<number>); }
  await t.add(lancedb.makeArrowTable(rows, { schema }));
  await t.optimize({ cleanupOlderThan: new Date() });
  await measure(`P ${P} +1 optimize`);
  await t.delete('page_ref >= 10000000');
  await t.optimize({ cleanupOlderThan: new Date() });
}
