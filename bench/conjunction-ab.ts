/**
 * Two builds' BM25 arm for required words (`+a +b +c`), in one process at a time, on the same kept index (the
 * target: 3-word all-required queries at 1M passages, docs/benchmarks.md). Each build is another checkout's compiled tree (`npx tsc -p .`
 * there); this opens its PassageIndex as a reader (no writes), builds its in-process postings, and times
 * `textCandidates` — the postings' conjunction and the candidates' rows, at the depth retrieval asks (k = 300) — for
 * the first `--queries` 3-word all-required queries of bench/index-query.ts (the three longest content words of each
 * SciFact claim), `--reps` passes, keeping each query's best time. Builds run one after the other, `--rounds` times
 * alternating, so a minute's machine speed weighs on both. The part of a served search this measures is named: the
 * result rows' read, grouping and JSON are not in it (bench/index-query.ts times the whole).
 *
 *   npx tsc -p . && node dist/bench/conjunction-ab.js --a /work/old-checkout --b . --lance /tmp/bench1m/1000000/lance
 *        [--queries 300] [--reps 5] [--rounds 2] [--k 300]
 *
 * Bounded by its arguments; no network.
 */
import '../fixtures/loopback-only.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import type * as QueryModule from '../index/retrieval/query.js';
import type * as StoreModule from '../index/engines/lance/store.js';
import type * as ThreadsModule from '../index/engines/lance/lance-threads.js';
import { pct, requireEach, SCIFACT, shortQuery } from './synthetic.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    lance: { type: 'string' },
    queries: { type: 'string', default: '300' },
    reps: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    k: { type: 'string', default: '300' },
  },
});
if (!values.a || !values.lance) throw new Error('--a: the checkout to compare against (its dist/ built); --lance: a kept index');
const lance = resolve(values.lance);
if (!existsSync(join(lance, 'passages.lance'))) throw new Error(`no index at ${lance}`);
const nq = Math.max(1, Math.min(1000, Number(values.queries)));
const reps = Math.max(1, Math.min(20, Number(values.reps)));
const rounds = Math.max(1, Math.min(10, Number(values.rounds)));
const k = Math.max(1, Math.min(1000, Number(values.k)));
const shorts = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()]
  .map(shortQuery)
  .filter((q) => q.split(' ').length >= 2)
  .slice(0, nq);

async function run(root: string): Promise<string> {
  const dist = (m: string) => pathToFileURL(join(resolve(root), 'dist', m)).href;
  const { setLanceCpuThreads } = (await import(dist('index/engines/lance/lance-threads.js'))) as typeof ThreadsModule;
  const { PassageIndex } = (await import(dist('index/engines/lance/store.js'))) as typeof StoreModule;
  const { compileQuery, parseQuery } = (await import(dist('index/retrieval/query.js'))) as typeof QueryModule;
  setLanceCpuThreads();
  const idx = await PassageIndex.open({ dir: lance, embedder: null, optimizeEvery: Number.MAX_SAFE_INTEGER, writes: false });
  try {
    await idx.textEngineReady();
    const compiled = shorts.map((q) => compileQuery(parseQuery(requireEach(q))));
    const best = compiled.map(() => Infinity);
    for (let r = 0; r < reps; r++)
      for (const [i, c] of compiled.entries()) {
        if (!c.text) continue;
        const t0 = performance.now();
        await idx.textCandidates(c.text, {}, k, c.hitColumns);
        best[i] = Math.min(best[i]!, performance.now() - t0);
      }
    const ms = best.filter(Number.isFinite);
    const mean = ms.reduce((s, x) => s + x, 0) / ms.length;
    const bitsets = idx.textPostingsStats()?.bitsets;
    const f = (x: number) => x.toFixed(2);
    return `| ${root} | ${ms.length} | ${f(mean)} | ${f(pct(ms, 50))} | ${f(pct(ms, 90))} | ${f(pct(ms, 95))} | ${f(Math.max(...ms))} | ${
      bitsets ? `${bitsets.terms} / ${(bitsets.bytes / 2 ** 20).toFixed(1)}` : '–'
    } |`;
  } finally {
    await idx.close();
  }
}

const rows: string[] = [];
for (let r = 0; r < rounds; r++)
  for (const root of [values.a, values.b]) {
    rows.push(await run(root));
    process.stderr.write(`${rows.at(-1)}\n`);
  }
console.log(`\ntextCandidates, 3-word all-required queries, k = ${k}, best of ${reps} per query, ms; ${lance}\n`);
console.log('| build | queries | mean | p50 | p90 | p95 | max | bitsets: terms / MiB |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
for (const row of rows) console.log(row);
