/**
 * Two builds' extractPage (parse, content choice, text: the per-page path bench/extract-quality.ts times) compared
 * in one process over every page of the three sets in ../shared/data/web. A shared VM's speed moves from minute to
 * minute by more than an extractor change, so both builds run each page back to back, which one goes first
 * alternating by page and round; per round and set, the mean ms/page of each; medians over the rounds at the end.
 *
 * Run: git archive <commit> | tar -x -C /tmp/old && ln -s "$PWD/node_modules" /tmp/old/node_modules
 *      node --import tsx bench/extract-ab.ts --a /tmp/old [--b .] [--rounds 3]
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { decodeHtml, type extractPage } from '../crawler/extract.js';

type ExtractFn = typeof extractPage;
const here = dirname(fileURLToPath(import.meta.url));
const WEB = resolve(here, '..', '..', 'shared', 'data', 'web');
const { values } = parseArgs({
  options: { a: { type: 'string' }, b: { type: 'string', default: resolve(here, '..') }, rounds: { type: 'string', default: '3' } },
});
if (values.a === undefined) throw new Error('--a <checkout of the other build> is required');
const load = async (dir: string): Promise<ExtractFn> =>
  ((await import(join(resolve(dir), 'crawler', 'extract.ts'))) as { extractPage: ExtractFn }).extractPage;
const A = await load(values.a);
const B = await load(values.b!);
const ROUNDS = Number(values.rounds);
const SETS = ['zyte', 'traf', 'read'] as const;

interface Page {
  readonly set: (typeof SETS)[number];
  readonly url: string;
  readonly html: string;
}

/** The pages bench/extract-quality.ts reads, HTML and URL only. */
function loadPages(): Page[] {
  const pages: Page[] = [];
  const zyte = join(WEB, 'article-extraction-benchmark');
  const truth = JSON.parse(readFileSync(join(zyte, 'ground-truth.json'), 'utf8')) as Record<string, { url: string }>;
  for (const [id, gt] of Object.entries(truth)) {
    const file = join(zyte, 'html', `${id}.html.gz`);
    if (existsSync(file)) pages.push({ set: 'zyte', url: gt.url, html: decodeHtml(gunzipSync(readFileSync(file))) });
  }
  const traf = join(WEB, 'trafilatura-eval');
  for (const line of readFileSync(join(traf, 'ground-truth.jsonl'), 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const gt = JSON.parse(line) as { url: string; html_path: string };
    const file = join(traf, gt.html_path);
    if (existsSync(file)) pages.push({ set: 'traf', url: gt.url, html: decodeHtml(gunzipSync(readFileSync(file))) });
  }
  const read = join(WEB, 'readability-test-pages');
  for (const name of readdirSync(read).sort()) {
    const src = join(read, name, 'source.html.gz');
    if (existsSync(src) && existsSync(join(read, name, 'expected.html.gz')))
      pages.push({ set: 'read', url: 'http://fakehost/test/page.html', html: decodeHtml(gunzipSync(readFileSync(src))) });
  }
  return pages;
}

const median = (x: readonly number[]): number => {
  const y = [...x].sort((p, q) => p - q);
  const m = y.length >> 1;
  return y.length % 2 === 1 ? y[m]! : (y[m - 1]! + y[m]!) / 2;
};

const pages = loadPages();
// Warm-up: both builds' code compiled before the first measured round.
for (const p of pages.slice(0, 100)) {
  A(p.html, { url: p.url });
  B(p.html, { url: p.url });
}
const perRound = new Map(SETS.map((s) => [s, { a: [] as number[], b: [] as number[] }]));
for (let k = 0; k < ROUNDS; k++) {
  const sum = new Map(SETS.map((s) => [s, { a: 0, b: 0, n: 0 }]));
  pages.forEach((p, i) => {
    const acc = sum.get(p.set)!;
    const time = (f: ExtractFn): number => {
      const t0 = performance.now();
      f(p.html, { url: p.url });
      return performance.now() - t0;
    };
    if ((i + k) % 2 === 0) {
      acc.a += time(A);
      acc.b += time(B);
    } else {
      acc.b += time(B);
      acc.a += time(A);
    }
    acc.n++;
  });
  const line: string[] = [];
  for (const s of SETS) {
    const { a, b, n } = sum.get(s)!;
    perRound.get(s)!.a.push(a / n);
    perRound.get(s)!.b.push(b / n);
    line.push(`${s} ${(a / n).toFixed(2)} vs ${(b / n).toFixed(2)}`);
  }
  console.log(`round ${k + 1}: ${line.join('; ')} ms/page (a vs b)`);
}
for (const s of SETS) {
  const { a, b } = perRound.get(s)!;
  const ratio = median(a.map((x, i) => b[i]! / x));
  console.log(`${s}: a ${median(a).toFixed(2)}, b ${median(b).toFixed(2)} ms/page (medians of ${ROUNDS} rounds), b/a ${ratio.toFixed(3)}`);
}
