/**
 * Two builds' svc_search compared in one process, pass for pass. On a shared VM the machine's speed moves from one
 * minute to the next by more than most single changes to the search path (docs/bench-history.md): served runs
 * compare only in many alternating pairs.
 * Here both builds run in the same process, alternating passes over every SciFact claim, so each pair of passes
 * shares the machine's minute; the ratio of each pair, and its median, is the comparison.
 *
 * Each build is another checkout's compiled tree (`npx tsc -p .` there): its PassageIndex (a reader, no writes), the
 * hashing stand-in embedder, and its svc_search handler called as the search threads call it (`tool.run`, then the
 * output schema and the JSON the HTTP thread makes). No HTTP: the search threads' part of a served search.
 *
 *   npx tsc -p . && node dist/bench/search-ab.js --a /work/old-checkout --b . [--data-dir /tmp/load-sf] [--passes 8]
 *
 * `--data-dir` holds a SciFact index ingested with the hashing embedder (bench/load.ts builds one there on its first
 * run). Prints the passes and a table. Bounded by `--passes`; no network.
 *
 * On a kept large index instead (bench/index-query.ts `--keep`: synthetic vectors, so no embedder; BM25 ranking), with
 * the 3-word all-required form of the claims and without a row cache, so every result page's rows come from the
 * table as they do for a query not seen before at 1M passages; each pass also gives its p50 and p95 per search:
 *
 *   node dist/bench/search-ab.js --a /work/old-checkout --b . --lance /tmp/bench1m/1000000/lance \
 *        --queries all-required --row-cache-mb 0 [--passes 4]
 *
 * `--segments`: each reader starts from the newest engine segment of its build's format (bench/engine-segments.ts or
 * a served writer publishes one), as a restarted process does.
 */
import '../fixtures/loopback-only.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import type * as EmbedderModule from '../index/serving/embedder.js';
import type * as StoreModule from '../index/engines/lance/store.js';
import type * as ThreadsModule from '../index/engines/lance/lance-threads.js';
import type * as SearchModule from '../tools/search.js';
import { pct, requireEach, SCIFACT, shortQuery } from './synthetic.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    'data-dir': { type: 'string', default: '/tmp/load-sf' },
    // A kept index (its lance folder) instead of the SciFact one: no embedder, BM25.
    lance: { type: 'string' },
    // `claims` as written, or `all-required`: `+a +b +c` of each claim's three longest content words (bench/synthetic.ts).
    queries: { type: 'string', default: 'claims' },
    // The readers' row cache (MiB); unset: the machine-sized default.
    'row-cache-mb': { type: 'string' },
    passes: { type: 'string', default: '8' },
    // Each reader loads the newest engine segment of its own build's format (written beside the index by that build)
    // instead of scanning: the postings and page records as a restarted process serves them.
    segments: { type: 'boolean', default: false },
  },
});
if (!values.a) throw new Error('--a: the checkout to compare against (its dist/ built)');
if (!['claims', 'all-required'].includes(values.queries!)) throw new Error('--queries must be claims or all-required');
const kept = values.lance !== undefined;
const lance = kept ? resolve(values.lance!) : join(resolve(values['data-dir']), 'lance');
if (!existsSync(join(lance, 'passages.lance'))) throw new Error(`no index at ${lance}: run bench/load.ts --data-dir once`);
const passes = Math.max(1, Math.min(50, Number(values.passes)));
const rowCacheBytes = values['row-cache-mb'] === undefined ? undefined : Math.max(0, Number(values['row-cache-mb'])) * 2 ** 20;
const claims = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()].flatMap((q) => {
  if (values.queries === 'claims') return [q];
  const short = shortQuery(q);
  return short.split(' ').length >= 2 ? [requireEach(short)] : [];
});

interface Pass {
  /** ms per search (the pass's time over its searches), and the p50 and p95 of one search. */
  readonly mean: number;
  readonly p50: number;
  readonly p95: number;
}

interface Build {
  readonly label: string;
  /** One pass over every claim. */
  pass(): Promise<Pass>;
  close(): Promise<void>;
}

/** Loads a build's compiled modules (by file URL: each checkout's own module instances) and opens its reader. */
async function load(root: string, label: string): Promise<Build> {
  const dist = (p: string) => pathToFileURL(join(resolve(root), 'dist', p)).href;
  if (!existsSync(join(resolve(root), 'dist', 'tools', 'search.js'))) throw new Error(`${root}: dist/ missing, run npx tsc -p . there`);
  // Typed as this checkout's modules; the other checkout's have the same shape at the calls made here.
  const { PassageIndex } = (await import(dist('index/engines/lance/store.js'))) as typeof StoreModule;
  const { createHashingEmbedder } = (await import(dist('index/serving/embedder.js'))) as typeof EmbedderModule;
  const { searchTool } = (await import(dist('tools/search.js'))) as typeof SearchModule;
  if (kept) {
    // As svc's own entry sets LanceDB's threads (the table is read on every search here).
    const { setLanceCpuThreads } = (await import(dist('index/engines/lance/lance-threads.js'))) as typeof ThreadsModule;
    setLanceCpuThreads();
  }
  const index = await PassageIndex.open({
    dir: lance,
    embedder: kept ? null : createHashingEmbedder(),
    writes: false,
    ...(kept ? { optimizeEvery: Number.MAX_SAFE_INTEGER } : {}),
    ...(rowCacheBytes === undefined ? {} : { rowCacheBytes }),
    ...(values.segments ? { engineSegments: true } : {}),
  });
  await index.textEngineReady();
  if (values.segments && index.textPostingsStats()?.syncs.loads !== 1) throw new Error(`${label}: no engine segment of its format loaded`);
  const inputs = claims.map((q) => searchTool.input.parse({ q, limit: 10 }));
  const deps = { config: { ranking: 'auto' }, index, now: () => new Date() } as never;
  return {
    label,
    async pass() {
      const each: number[] = [];
      const t0 = performance.now();
      for (const input of inputs) {
        const t = performance.now();
        JSON.stringify(searchTool.output.parse(await searchTool.run(input, { deps, caller: { keyId: 'bench', digest: 'bench' } })));
        each.push(performance.now() - t);
      }
      return { mean: (performance.now() - t0) / inputs.length, p50: pct(each, 50), p95: pct(each, 95) };
    },
    close: () => index.close(),
  };
}

const a = await load(values.a, `a (${values.a})`);
const b = await load(values.b, `b (${values.b})`);
// Warm-up: two passes each (the JIT, the row caches), not timed.
for (let i = 0; i < 2; i++) {
  await a.pass();
  await b.pass();
}
const ta: Pass[] = [];
const tb: Pass[] = [];
for (let i = 0; i < passes; i++) {
  // The order alternates too, so neither build always runs right after the other's garbage.
  const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
  const x = await first.pass();
  const y = await second.pass();
  ta.push(first === a ? x : y);
  tb.push(first === a ? y : x);
}
await a.close();
await b.close();

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((p, q) => p - q);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const ratios = ta.map((x, i) => tb[i]!.mean / x.mean);
const what = `${values.queries === 'claims' ? 'SciFact claims' : '3-word all-required queries'} on ${kept ? lance : 'the SciFact index'}`;
const cache = rowCacheBytes === undefined ? 'row cache default' : `row cache ${values['row-cache-mb']} MiB`;
console.log(`${claims.length} ${what} per pass, ${cache}, ${passes} timed pairs; node ${process.version}\n`);
console.log('| pass | a ms per search | b ms per search | b / a | a p50 / p95 ms | b p50 / p95 ms |');
console.log('|---:|---:|---:|---:|---:|---:|');
const f = (x: Pass) => `${x.p50.toFixed(2)} / ${x.p95.toFixed(2)}`;
ta.forEach((x, i) =>
  console.log(`| ${i + 1} | ${x.mean.toFixed(3)} | ${tb[i]!.mean.toFixed(3)} | ${ratios[i]!.toFixed(3)} | ${f(x)} | ${f(tb[i]!)} |`),
);
const med = (xs: readonly Pass[]): Pass => ({
  mean: median(xs.map((x) => x.mean)),
  p50: median(xs.map((x) => x.p50)),
  p95: median(xs.map((x) => x.p95)),
});
console.log(
  `| median | ${med(ta).mean.toFixed(3)} | ${med(tb).mean.toFixed(3)} | **${median(ratios).toFixed(3)}** | ${f(med(ta))} | ${f(med(tb))} |`,
);
console.log(`\na = ${a.label}, b = ${b.label}`);
process.exit(0);
