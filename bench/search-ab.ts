/**
 * Two builds' svc_search compared in one process, pass for pass (issue 14 item 3). On this shared VM the machine's
 * speed moves by 10–30 % from one minute to the next (bench/load.ts's /healthz rate alone ranged 12.8–15.9k req/s in
 * one session), more than most single changes to the search path: served runs compare only in many alternating pairs.
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
 */
import '../fixtures/loopback-only.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import type * as EmbedderModule from '../index/embedder.js';
import type * as StoreModule from '../index/store.js';
import type * as SearchModule from '../tools/search.js';
import { SCIFACT } from './synthetic.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    'data-dir': { type: 'string', default: '/tmp/load-sf' },
    passes: { type: 'string', default: '8' },
  },
});
if (!values.a) throw new Error('--a: the checkout to compare against (its dist/ built)');
const lance = join(resolve(values['data-dir']), 'lance');
if (!existsSync(join(lance, 'passages.lance'))) throw new Error(`no index at ${lance}: run bench/load.ts --data-dir once`);
const passes = Math.max(1, Math.min(50, Number(values.passes)));
const claims = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()];

interface Build {
  readonly label: string;
  /** One pass over every claim; ms per search. */
  pass(): Promise<number>;
  close(): Promise<void>;
}

/** Loads a build's compiled modules (by file URL: each checkout's own module instances) and opens its reader. */
async function load(root: string, label: string): Promise<Build> {
  const dist = (p: string) => pathToFileURL(join(resolve(root), 'dist', p)).href;
  if (!existsSync(join(resolve(root), 'dist', 'tools', 'search.js'))) throw new Error(`${root}: dist/ missing, run npx tsc -p . there`);
  // Typed as this checkout's modules; the other checkout's have the same shape at the calls made here.
  const { PassageIndex } = (await import(dist('index/store.js'))) as typeof StoreModule;
  const { createHashingEmbedder } = (await import(dist('index/embedder.js'))) as typeof EmbedderModule;
  const { searchTool } = (await import(dist('tools/search.js'))) as typeof SearchModule;
  const index = await PassageIndex.open({ dir: lance, embedder: createHashingEmbedder(), writes: false });
  await index.textEngineReady();
  const inputs = claims.map((q) => searchTool.input.parse({ q, limit: 10 }));
  const deps = { config: { ranking: 'auto' }, index, now: () => new Date() } as never;
  return {
    label,
    async pass() {
      const t0 = performance.now();
      for (const input of inputs)
        JSON.stringify(searchTool.output.parse(await searchTool.run(input, { deps, caller: { keyId: 'bench', digest: 'bench' } })));
      return (performance.now() - t0) / inputs.length;
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
const ta: number[] = [];
const tb: number[] = [];
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
const ratios = ta.map((x, i) => tb[i]! / x);
console.log(`${claims.length} SciFact claims per pass, ${passes} timed pairs; node ${process.version}\n`);
console.log('| pass | a ms per search | b ms per search | b / a |');
console.log('|---:|---:|---:|---:|');
ta.forEach((x, i) => console.log(`| ${i + 1} | ${x.toFixed(3)} | ${tb[i]!.toFixed(3)} | ${ratios[i]!.toFixed(3)} |`));
console.log(`| median | ${median(ta).toFixed(3)} | ${median(tb).toFixed(3)} | **${median(ratios).toFixed(3)}** |`);
console.log(`\na = ${a.label}, b = ${b.label}`);
process.exit(0);
