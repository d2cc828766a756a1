/**
 * Main-text extraction quality of crawler/extract.ts against the ground truth that ships with the real pages in
 * ../shared/data/web (read at run time, never copied):
 *  - article-extraction-benchmark (Zyte, 181 pages): per-document precision/recall of word tokens (bag of words)
 *    and of word 4-gram shingles (the benchmark's own measure), averaged over documents; F1 from the mean P and R.
 *  - trafilatura-eval (990 pages): `with` snippets that must appear and `without` snippets that must not, substring
 *    matching on whitespace-normalised text, counts summed over pages (trafilatura's eval_common.py).
 *
 * Run: node --import tsx bench/extract-quality.ts [--limit N] [--verbose]
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { readFileSync, existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { decodeHtml, extractPage } from '../crawler/extract.js';

const here = dirname(fileURLToPath(import.meta.url));
const WEB = resolve(here, '..', '..', 'shared', 'data', 'web');
const args = process.argv.slice(2);
const limitArg = args.indexOf('--limit');
const LIMIT = limitArg >= 0 ? Number(args[limitArg + 1]) : Infinity;
const VERBOSE = args.includes('--verbose');

function tokens(s: string): string[] {
  return s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function shingles(t: readonly string[], n = 4): Map<string, number> {
  const m = new Map<string, number>();
  if (t.length < n) {
    if (t.length > 0) m.set(t.join(' '), 1);
    return m;
  }
  for (let i = 0; i + n <= t.length; i++) {
    const k = t.slice(i, i + n).join(' ');
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return m;
}

function bag(t: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of t) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}

/** Multiset overlap precision/recall (1/1 when both are empty, 0 when only one is). */
function pr(expected: Map<string, number>, got: Map<string, number>): { p: number; r: number } {
  let tp = 0;
  let nGot = 0;
  let nExp = 0;
  for (const v of got.values()) nGot += v;
  for (const v of expected.values()) nExp += v;
  for (const [k, v] of got) tp += Math.min(v, expected.get(k) ?? 0);
  if (nGot === 0 && nExp === 0) return { p: 1, r: 1 };
  return { p: nGot === 0 ? 0 : tp / nGot, r: nExp === 0 ? 0 : tp / nExp };
}

const f1 = (p: number, r: number): number => (p + r === 0 ? 0 : (2 * p * r) / (p + r));
const fmt = (x: number): string => x.toFixed(3);

function zyte(): { docs: number; tokP: number; tokR: number; shP: number; shR: number; ms: number } {
  const dir = join(WEB, 'article-extraction-benchmark');
  const truth = JSON.parse(readFileSync(join(dir, 'ground-truth.json'), 'utf8')) as Record<string, { articleBody: string; url: string }>;
  let n = 0;
  let tokP = 0,
    tokR = 0,
    shP = 0,
    shR = 0,
    ms = 0;
  for (const [id, gt] of Object.entries(truth)) {
    if (n >= LIMIT) break;
    const file = join(dir, 'html', `${id}.html.gz`);
    if (!existsSync(file)) continue;
    const html = decodeHtml(gunzipSync(readFileSync(file)));
    const t0 = performance.now();
    const page = extractPage(html, { url: gt.url });
    ms += performance.now() - t0;
    const exp = tokens(gt.articleBody);
    const got = tokens(page.mainText);
    const a = pr(bag(exp), bag(got));
    const b = pr(shingles(exp), shingles(got));
    tokP += a.p;
    tokR += a.r;
    shP += b.p;
    shR += b.r;
    if (VERBOSE && f1(b.p, b.r) < 0.6) console.error(`zyte ${id} ${gt.url} P=${fmt(b.p)} R=${fmt(b.r)}`);
    n++;
  }
  return { docs: n, tokP: tokP / n, tokR: tokR / n, shP: shP / n, shR: shR / n, ms };
}

function trafilatura(): { docs: number; tp: number; fn: number; fp: number; tn: number; ms: number } {
  const dir = join(WEB, 'trafilatura-eval');
  const lines = readFileSync(join(dir, 'ground-truth.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  let n = 0,
    tp = 0,
    fn = 0,
    fp = 0,
    tn = 0,
    ms = 0;
  for (const line of lines) {
    if (n >= LIMIT) break;
    const gt = JSON.parse(line) as { url: string; html_path: string; with: string[]; without: string[] };
    const file = join(dir, gt.html_path);
    if (!existsSync(file)) continue;
    const html = decodeHtml(gunzipSync(readFileSync(file)));
    const t0 = performance.now();
    const page = extractPage(html, { url: gt.url });
    ms += performance.now() - t0;
    const text = page.mainText.replace(/\s+/g, ' ');
    let miss = 0;
    for (const w of gt.with) {
      if (text.includes(w.replace(/\s+/g, ' ').trim())) tp++;
      else {
        fn++;
        miss++;
      }
    }
    for (const w of gt.without) {
      if (text.includes(w.replace(/\s+/g, ' ').trim())) fp++;
      else tn++;
    }
    if (VERBOSE && miss > 0) console.error(`traf ${gt.html_path} missing ${miss}/${gt.with.length}`);
    n++;
  }
  return { docs: n, tp, fn, fp, tn, ms };
}

const z = zyte();
const t = trafilatura();
const tp = t.tp / Math.max(1, t.tp + t.fp);
const tr = t.tp / Math.max(1, t.tp + t.fn);
const acc = (t.tp + t.tn) / Math.max(1, t.tp + t.tn + t.fp + t.fn);
console.log('| corpus | docs | measure | precision | recall | F1 | extra | ms/page |');
console.log('|---|---|---|---|---|---|---|---|');
console.log(
  `| article-extraction-benchmark | ${z.docs} | word tokens (bag), mean per doc | ${fmt(z.tokP)} | ${fmt(z.tokR)} | ${fmt(f1(z.tokP, z.tokR))} | | ${(z.ms / z.docs).toFixed(1)} |`,
);
console.log(
  `| article-extraction-benchmark | ${z.docs} | word 4-gram shingles, mean per doc | ${fmt(z.shP)} | ${fmt(z.shR)} | ${fmt(f1(z.shP, z.shR))} | | |`,
);
console.log(
  `| trafilatura-eval | ${t.docs} | with/without snippets, summed | ${fmt(tp)} | ${fmt(tr)} | ${fmt(f1(tp, tr))} | accuracy ${fmt(acc)} (tp ${t.tp}, fn ${t.fn}, fp ${t.fp}, tn ${t.tn}) | ${(t.ms / t.docs).toFixed(1)} |`,
);
