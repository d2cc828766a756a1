/**
 * Benchmarks for the index-text parts: token estimate accuracy (MAE vs o200k per language) and speed, excerpt
 * building, and context packing throughput for 100 and 1,000 candidates.
 * Run: node --import tsx bench/context-pack.ts
 * Data is read in place from ../shared/data (SciFact corpus, trafilatura eval pages). Loops are bounded.
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { parse } from 'node-html-parser';
import { packContext, type PackCandidate } from '../index/retrieval/context-packer.js';
import { buildExcerpt } from '../index/retrieval/snippets.js';
import { estimateTokens } from '../index/retrieval/tokens.js';

const shared = fileURLToPath(new URL('../../shared/data/', import.meta.url));

function sciFact(): string[] {
  return gunzipSync(readFileSync(`${shared}beir/scifact/corpus.jsonl.gz`))
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const d = JSON.parse(l) as { title: string; text: string };
      return `${d.title}\n${d.text}`;
    });
}

/**
 * Paragraphs (> 80 chars) of trafilatura eval pages, by <html lang> (two-letter prefix) and page parity: the price
 * tables were fitted on even pages (parity 0) of en and fr; odd pages (parity 1) are held out.
 */
function webParagraphs(langs: readonly string[]): Map<string, string[]> {
  const base = `${shared}web/trafilatura-eval/`;
  const out = new Map<string, string[]>();
  const seen = new Map<string, number>();
  for (const line of readFileSync(`${base}ground-truth.jsonl`, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const row = JSON.parse(line) as { html_lang_attr: string; html_path: string };
    const lang = row.html_lang_attr.slice(0, 2);
    if (!langs.includes(lang)) continue;
    const k = seen.get(lang) ?? 0;
    seen.set(lang, k + 1);
    const key = `${lang}:${k % 2}`;
    const list = out.get(key) ?? [];
    const root = parse(gunzipSync(readFileSync(`${base}${row.html_path}`)).toString('utf8'));
    for (const p of root.querySelectorAll('p')) {
      const text = p.textContent.replace(/\s+/gu, ' ').trim();
      if (text.length > 80) list.push(text);
    }
    out.set(key, list);
  }
  return out;
}

function table(title: string, head: string[], rows: (string | number)[][]): void {
  console.log(`\n${title}`);
  const all = [head, ...rows.map((r) => r.map(String))];
  const w = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(w[i] ?? 0)).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`);
  for (const r of all.slice(1)) console.log(line(r));
}

/**
 * Runs `fn` repeatedly for about `ms` milliseconds (at most `maxIter` times). Reports wall-clock ops/s and CPU
 * time per op: the machine is shared, so CPU time is the steadier figure.
 */
function measure(fn: () => void, ms = 1500, maxIter = 100_000): { opsPerSec: number; meanMs: number; cpuMs: number; iterations: number } {
  for (let i = 0; i < 3; i++) fn(); // warm-up
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let n = 0;
  while (n < maxIter && performance.now() - start < ms) {
    fn();
    n++;
  }
  const elapsed = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { opsPerSec: (n * 1000) / elapsed, meanMs: elapsed / n, cpuMs: (cpu.user + cpu.system) / 1000 / n, iterations: n };
}

const docs = sciFact();
const web = webParagraphs(['en', 'fr', 'de', 'es', 'pl']);

// 1. Accuracy of the estimate against o200k.
const accuracy: (string | number)[][] = [];
const both = (lang: string) => [...(web.get(`${lang}:0`) ?? []), ...(web.get(`${lang}:1`) ?? [])];
const sets: [string, string[]][] = [
  ['English: SciFact passages, held out (docs 2500+)', docs.slice(2500)],
  ['English: SciFact passages, fit half (docs 0-2499)', docs.slice(0, 2500)],
  ['English web: trafilatura en pages, held out (odd)', web.get('en:1') ?? []],
  ['French web: trafilatura fr pages, all', both('fr')],
  ['French web: trafilatura fr pages, held out (odd)', web.get('fr:1') ?? []],
  ['German web: de pages (not a target, not fitted)', both('de')],
  ['Spanish web: es pages (not a target, not fitted)', both('es')],
  ['Polish web: pl pages (not a target, not fitted)', both('pl')],
];
for (const [name, texts] of sets) {
  let abs = 0;
  let bias = 0;
  for (const text of texts) {
    const real = countTokens(text);
    const est = estimateTokens(text);
    abs += Math.abs(est - real) / real;
    bias += (est - real) / real;
  }
  accuracy.push([name, texts.length, `${((abs / texts.length) * 100).toFixed(2)}%`, `${((bias / texts.length) * 100).toFixed(2)}%`]);
}
table('Token estimate vs o200k_base (gpt-tokenizer)', ['text set', 'texts', 'mean abs. rel. error', 'mean signed error'], accuracy);

// 2. Speed of the estimate vs the real tokenizer.
const sample = docs.slice(0, 1000);
const chars = sample.reduce((s, d) => s + d.length, 0);
const est = measure(
  () => {
    for (const d of sample) estimateTokens(d);
  },
  2000,
  50,
);
const real = measure(
  () => {
    for (const d of sample) countTokens(d);
  },
  2000,
  50,
);
table(
  'Token counting speed (1,000 SciFact passages per op)',
  ['counter', 'MB/s (wall)', 'passages/s (wall)', 'MB/s (CPU)'],
  [
    [
      'estimateTokens (no vocabulary)',
      ((chars * est.opsPerSec) / 1e6).toFixed(2),
      Math.round(1000 * est.opsPerSec),
      (chars / 1e3 / est.cpuMs).toFixed(2),
    ],
    [
      'gpt-tokenizer countTokens (o200k)',
      ((chars * real.opsPerSec) / 1e6).toFixed(2),
      Math.round(1000 * real.opsPerSec),
      (chars / 1e3 / real.cpuMs).toFixed(2),
    ],
  ],
);

// 3. Excerpts.
const policy = { nosnippet: false, maxSnippet: null };
const terms = ['cells', 'expression', 'human'];
const ex = measure(
  () => {
    for (const d of sample.slice(0, 200)) buildExcerpt(d, terms, policy);
  },
  1500,
  1000,
);
table(
  'buildExcerpt (240 chars, 3 terms, SciFact passages)',
  ['excerpts/s (wall)', 'µs/excerpt (wall)', 'µs/excerpt (CPU)'],
  [[Math.round(200 * ex.opsPerSec), ((ex.meanMs * 1000) / 200).toFixed(1), ((ex.cpuMs * 1000) / 200).toFixed(1)]],
);

// 4. Packing throughput.
function candidates(n: number): PackCandidate[] {
  const out: PackCandidate[] = [];
  for (let i = 0; i < n; i++) {
    const pageRef = Math.floor(i / 3) + 1;
    const host = `host${pageRef % 40}.example`;
    out.push({
      pageRef,
      url: `https://${host}/articles/${pageRef}`,
      host,
      title: docs[pageRef % docs.length]!.split('\n')[0]!,
      passage: docs[i % docs.length]!.split('\n')[1] ?? '',
      score: 1 / (i + 1),
      publishedAt: '2025-03-01T00:00:00Z',
      modifiedAt: null,
      fetchedAt: '2026-11-01T00:00:00Z',
      ordinal: i % 3,
    });
  }
  return out;
}
const rows: (string | number)[][] = [];
const now = new Date('2026-11-21T00:00:00Z');
for (const n of [100, 1000]) {
  const cs = candidates(n);
  for (const [maxTokens, maxSources] of [
    [2000, 8],
    [8000, 30],
  ] as const) {
    const m = measure(() => packContext(cs, { maxTokens, maxSources, now }), 2000, 5000);
    const r = packContext(cs, { maxTokens, maxSources, now });
    rows.push([
      n,
      maxTokens,
      maxSources,
      m.opsPerSec.toFixed(0),
      m.meanMs.toFixed(2),
      m.cpuMs.toFixed(2),
      r.selected.length,
      r.tokensEstimated,
      r.hostsUsed,
    ]);
  }
}
table(
  'packContext throughput',
  ['candidates', 'max_tokens', 'max_sources', 'packs/s (wall)', 'ms/pack (wall)', 'ms/pack (CPU)', 'items', 'tokens_estimated', 'hosts'],
  rows,
);
