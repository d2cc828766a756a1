/**
 * Main-text extraction quality of crawler/extract.ts, side by side with trafilatura (the extractor the field compares
 * itself with) on the same pages in the same run, against the ground truth that ships with the real pages in
 * ../shared/data/web (read at run time, never copied):
 *  - article-extraction-benchmark (Zyte, 181 pages): per-document precision/recall of word tokens (bag of words)
 *    and of word 4-gram shingles (the benchmark's own measure), averaged over documents; F1 from the mean P and R.
 *  - trafilatura-eval (990 pages): `with` snippets that must appear and `without` snippets that must not, substring
 *    matching on whitespace-normalised text, counts summed over pages (trafilatura's eval_common.py).
 *  - readability-test-pages (130 pages): bag of words against the text of Readability's expected article (tags
 *    stripped to spaces, entities decoded), precision/recall per page averaged; F1 from the mean P and R.
 *
 * trafilatura runs from a venv this script makes once under ~/.cache/svc-bench (pip, pinned below) on the HTML svc's
 * decodeHtml produced, timed in its own process around extract() alone (bench/anchors/trafilatura_anchor.py).
 *
 * Run: node --import tsx bench/extract-quality.ts [--sets zyte,traf,read] [--limit N] [--no-anchor]
 *      [--reuse-anchor] [--worst N] [--page ID] [--verbose]
 *  --no-anchor     svc alone; --reuse-anchor: trafilatura's texts from the last full run (same pages), not re-run
 *  --worst N       per set, the N pages where svc loses most to trafilatura, and the snippet set by language
 *  --page ID       prints svc's and trafilatura's text of one page (id as listed by --worst)
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { parse } from 'node-html-parser';
import { decodeHtml, extractPage } from '../crawler/extract.js';

const here = dirname(fileURLToPath(import.meta.url));
const WEB = resolve(here, '..', '..', 'shared', 'data', 'web');
const { values } = parseArgs({
  options: {
    sets: { type: 'string', default: 'zyte,traf,read' },
    limit: { type: 'string' },
    'no-anchor': { type: 'boolean', default: false },
    'reuse-anchor': { type: 'boolean', default: false },
    worst: { type: 'string' },
    page: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const LIMIT = values.limit !== undefined ? Number(values.limit) : Infinity;
const SETS = new Set(values.sets!.split(','));
const WORST = values.worst !== undefined ? Number(values.worst) : 0;
const TRAFILATURA = 'trafilatura==2.3.1';
/** lxml 6 moved lxml.html.clean out; jusText (a trafilatura fallback) still imports it. */
const TRAFILATURA_DEPS = ['lxml_html_clean==0.4.6'];
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'svc-bench');

type SetName = 'zyte' | 'traf' | 'read';
interface Page {
  readonly set: SetName;
  readonly id: string;
  readonly url: string;
  readonly lang: string;
  readonly html: string;
  /** zyte: articleBody; read: expected article text; traf: unused (snippets below). */
  readonly expected: string;
  readonly with: readonly string[];
  readonly without: readonly string[];
}

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
const ws = (s: string): string => s.replace(/\s+/g, ' ');

function loadPages(): Page[] {
  const pages: Page[] = [];
  if (SETS.has('zyte')) {
    const dir = join(WEB, 'article-extraction-benchmark');
    const truth = JSON.parse(readFileSync(join(dir, 'ground-truth.json'), 'utf8')) as Record<string, { articleBody: string; url: string }>;
    let n = 0;
    for (const [id, gt] of Object.entries(truth)) {
      if (n >= LIMIT) break;
      const file = join(dir, 'html', `${id}.html.gz`);
      if (!existsSync(file)) continue;
      const html = decodeHtml(gunzipSync(readFileSync(file)));
      pages.push({ set: 'zyte', id: id.slice(0, 12), url: gt.url, lang: '', html, expected: gt.articleBody, with: [], without: [] });
      n++;
    }
  }
  if (SETS.has('traf')) {
    const dir = join(WEB, 'trafilatura-eval');
    const lines = readFileSync(join(dir, 'ground-truth.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    let n = 0;
    for (const line of lines) {
      if (n >= LIMIT) break;
      const gt = JSON.parse(line) as { url: string; html_path: string; html_lang_attr?: string; with: string[]; without: string[] };
      const file = join(dir, gt.html_path);
      if (!existsSync(file)) continue;
      const html = decodeHtml(gunzipSync(readFileSync(file)));
      const lang = (gt.html_lang_attr ?? '?').toLowerCase().slice(0, 2) || '?';
      pages.push({ set: 'traf', id: gt.html_path, url: gt.url, lang, html, expected: '', with: gt.with, without: gt.without });
      n++;
    }
  }
  if (SETS.has('read')) {
    const dir = join(WEB, 'readability-test-pages');
    let n = 0;
    for (const name of readdirSync(dir).sort()) {
      if (n >= LIMIT) break;
      const src = join(dir, name, 'source.html.gz');
      const exp = join(dir, name, 'expected.html.gz');
      if (!existsSync(src) || !existsSync(exp)) continue;
      const html = decodeHtml(gunzipSync(readFileSync(src)));
      // Tags stripped to spaces first (so adjacent blocks never glue words), then entities decoded.
      const expected = parse(
        gunzipSync(readFileSync(exp))
          .toString('utf8')
          .replace(/<[^>]*>/g, ' '),
      ).text;
      const meta = JSON.parse(readFileSync(join(dir, name, 'expected-metadata.json'), 'utf8')) as { lang?: string | null };
      const lang = (meta.lang ?? '?').toLowerCase().slice(0, 2);
      pages.push({ set: 'read', id: name, url: 'http://fakehost/test/page.html', lang, html, expected, with: [], without: [] });
      n++;
    }
  }
  return pages;
}

/** One page's score: the parts each set sums or averages. */
interface PageScore {
  tokP: number;
  tokR: number;
  shP: number;
  shR: number;
  tp: number;
  fn: number;
  fp: number;
  tn: number;
  /** A per-page figure to rank losses by: F1 for zyte (shingles) and read, −(fn + fp) for traf. */
  rank: number;
}

function score(page: Page, text: string): PageScore {
  if (page.set === 'traf') {
    const t = ws(text);
    let tp = 0,
      fn = 0,
      fp = 0,
      tn = 0;
    for (const w of page.with) {
      if (t.includes(ws(w).trim())) tp++;
      else fn++;
    }
    for (const w of page.without) {
      if (t.includes(ws(w).trim())) fp++;
      else tn++;
    }
    return { tokP: 0, tokR: 0, shP: 0, shR: 0, tp, fn, fp, tn, rank: -(fn + fp) };
  }
  const exp = tokens(page.expected);
  const got = tokens(text);
  const a = pr(bag(exp), bag(got));
  const b = page.set === 'zyte' ? pr(shingles(exp), shingles(got)) : a;
  return { tokP: a.p, tokR: a.r, shP: b.p, shR: b.r, tp: 0, fn: 0, fp: 0, tn: 0, rank: f1(b.p, b.r) };
}

interface Run {
  readonly texts: string[];
  readonly ms: number[];
}

function runSvc(pages: readonly Page[]): Run {
  const texts: string[] = [];
  const ms: number[] = [];
  for (const p of pages) {
    const t0 = performance.now();
    const page = extractPage(p.html, { url: p.url });
    ms.push(performance.now() - t0);
    texts.push(page.mainText);
  }
  return { texts, ms };
}

/** The venv holding trafilatura (made once, reused): its python. */
function trafilaturaPython(): string {
  const venv = join(CACHE, 'trafilatura-venv');
  const py = join(venv, 'bin', 'python');
  const ready = join(venv, TRAFILATURA);
  if (!existsSync(ready)) {
    process.stderr.write(`  making ${venv} (pip install ${TRAFILATURA})…\n`);
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(py, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', TRAFILATURA, ...TRAFILATURA_DEPS], {
      stdio: 'inherit',
    });
    writeFileSync(ready, new Date().toISOString());
  }
  return py;
}

function runTrafilatura(pages: readonly Page[]): Run {
  mkdirSync(CACHE, { recursive: true });
  // Keyed by the decoded HTML too: a change to decodeHtml gives trafilatura a new input.
  const key = (p: Page): string => `${p.set}:${p.id}:${createHash('sha1').update(p.html).digest('hex').slice(0, 16)}`;
  const kept = join(CACHE, `extract-quality-${TRAFILATURA.replace('==', '-')}.jsonl`);
  if (values['reuse-anchor'] && existsSync(kept)) {
    const byKey = new Map<string, { text: string; ms: number }>();
    for (const l of readFileSync(kept, 'utf8').split('\n')) {
      if (l === '') continue;
      const r = JSON.parse(l) as { key: string; text: string; ms: number };
      byKey.set(r.key, r);
    }
    if (pages.every((p) => byKey.has(key(p))))
      return { texts: pages.map((p) => byKey.get(key(p))!.text), ms: pages.map((p) => byKey.get(key(p))!.ms) };
    process.stderr.write('  --reuse-anchor: the kept run lacks some pages, running trafilatura\n');
  }
  const input = join(CACHE, 'extract-quality-pages.jsonl');
  const output = join(CACHE, 'extract-quality-out.jsonl');
  writeFileSync(input, pages.map((p) => JSON.stringify({ html: p.html, url: p.url })).join('\n') + '\n');
  execFileSync(trafilaturaPython(), [join(here, 'anchors', 'trafilatura_anchor.py'), input, output], { stdio: 'inherit' });
  const rows = readFileSync(output, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { text: string; ms: number });
  if (rows.length !== pages.length) throw new Error(`trafilatura answered ${rows.length} of ${pages.length} pages`);
  const old = new Map<string, string>();
  if (existsSync(kept))
    for (const l of readFileSync(kept, 'utf8').split('\n')) if (l !== '') old.set((JSON.parse(l) as { key: string }).key, l);
  pages.forEach((p, i) => old.set(key(p), JSON.stringify({ key: key(p), ...rows[i] })));
  writeFileSync(kept, [...old.values()].join('\n') + '\n');
  return { texts: rows.map((r) => r.text), ms: rows.map((r) => r.ms) };
}

interface Totals {
  readonly docs: number;
  readonly p: number;
  readonly r: number;
  readonly f: number;
  readonly extra: string;
  readonly ms: number;
}

function totals(set: SetName, scores: readonly PageScore[], ms: readonly number[]): Totals {
  const n = Math.max(1, scores.length);
  const sum = (k: keyof PageScore): number => scores.reduce((a, s) => a + s[k], 0);
  const msPage = ms.reduce((a, b) => a + b, 0) / n;
  if (set === 'traf') {
    const [tp, fn, fp, tn] = [sum('tp'), sum('fn'), sum('fp'), sum('tn')];
    const p = tp / Math.max(1, tp + fp);
    const r = tp / Math.max(1, tp + fn);
    const acc = (tp + tn) / Math.max(1, tp + tn + fp + fn);
    return { docs: scores.length, p, r, f: f1(p, r), extra: `accuracy ${fmt(acc)} (tp ${tp}, fn ${fn}, fp ${fp}, tn ${tn})`, ms: msPage };
  }
  const p = sum('shP') / n;
  const r = sum('shR') / n;
  let extra = '';
  if (set === 'zyte') {
    const tp = sum('tokP') / n;
    const tr = sum('tokR') / n;
    extra = `bag of words ${fmt(tp)} / ${fmt(tr)} / ${fmt(f1(tp, tr))}`;
  }
  return { docs: scores.length, p, r, f: f1(p, r), extra, ms: msPage };
}

const SET_LABEL: Record<SetName, [string, string]> = {
  zyte: ['article-extraction-benchmark', 'word 4-gram shingles, mean per doc'],
  traf: ['trafilatura-eval', 'with/without snippets, summed'],
  read: ['readability-test-pages', 'bag of words vs expected article, mean per doc'],
};

const pages = loadPages();
const svc = runSvc(pages);
const anchor = values['no-anchor'] ? null : runTrafilatura(pages);

console.log('| corpus | docs | measure | extractor | precision | recall | F1 | extra | ms/page |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const set of ['zyte', 'traf', 'read'] as const) {
  const idx = pages.flatMap((p, i) => (p.set === set ? [i] : []));
  if (idx.length === 0) continue;
  const runs: [string, Run][] = [['svc', svc]];
  if (anchor) runs.push([TRAFILATURA.replace('==', ' '), anchor]);
  const perRun = runs.map(([name, run]) => {
    const scores = idx.map((i) => score(pages[i]!, run.texts[i]!));
    return {
      name,
      scores,
      t: totals(
        set,
        scores,
        idx.map((i) => run.ms[i]!),
      ),
    };
  });
  for (const { name, t } of perRun) {
    const [label, measure] = SET_LABEL[set];
    console.log(
      `| ${label} | ${t.docs} | ${measure} | ${name} | ${fmt(t.p)} | ${fmt(t.r)} | **${fmt(t.f)}** | ${t.extra} | ${t.ms.toFixed(1)} |`,
    );
  }
  if (values.verbose)
    for (const [k, i] of idx.entries()) {
      const s = perRun[0]!.scores[k]!;
      if ((set === 'traf' && s.fn > 0) || (set !== 'traf' && s.rank < 0.6))
        console.error(
          `${set} ${pages[i]!.id} ${pages[i]!.url} ${set === 'traf' ? `missing ${s.fn}/${pages[i]!.with.length}` : `P=${fmt(s.shP)} R=${fmt(s.shR)}`}`,
        );
    }
  if (WORST > 0) worst(set, idx, perRun);
}

if (values.page !== undefined) {
  const i = pages.findIndex((p) => p.id === values.page || p.id.startsWith(values.page!));
  if (i < 0) console.error(`no page ${values.page}`);
  else {
    const p = pages[i]!;
    console.log(`\n## ${p.set} ${p.id} ${p.url}\n### svc\n${svc.texts[i]}\n`);
    if (anchor) console.log(`### trafilatura\n${anchor.texts[i]}\n`);
    if (p.set === 'traf') {
      const t = ws(svc.texts[i]!);
      for (const w of p.with) if (!t.includes(ws(w).trim())) console.log(`MISSING: ${w}`);
      for (const w of p.without) if (t.includes(ws(w).trim())) console.log(`KEPT BOILERPLATE: ${w}`);
    }
  }
}

/** The pages where svc loses most to trafilatura (or scores lowest without it), then per language for traf. */
function worst(set: SetName, idx: readonly number[], perRun: readonly { name: string; scores: PageScore[] }[]): void {
  const svcScores = perRun[0]!.scores;
  const other = perRun[1]?.scores;
  const rows = idx.map((i, k) => ({ page: pages[i]!, s: svcScores[k]!, o: other?.[k], gap: svcScores[k]!.rank - (other?.[k]?.rank ?? 1) }));
  rows.sort((a, b) => a.gap - b.gap);
  console.log(`\n${set}: ${WORST} largest losses (svc − trafilatura of ${set === 'traf' ? '−(fn+fp)' : 'F1'})`);
  for (const r of rows.slice(0, WORST)) {
    const d = (s: PageScore | undefined): string =>
      s === undefined ? '-' : set === 'traf' ? `fn ${s.fn} fp ${s.fp}` : `P ${fmt(s.shP)} R ${fmt(s.shR)}`;
    console.log(`  ${r.gap.toFixed(2)}  ${r.page.id} [${r.page.lang}] ${r.page.url.slice(0, 80)}  svc ${d(r.s)} | traf ${d(r.o)}`);
  }
  if (set !== 'traf') return;
  const byLang = new Map<string, number[]>();
  idx.forEach((i, k) => {
    const l = pages[i]!.lang;
    const a = byLang.get(l) ?? [0, 0, 0, 0, 0, 0, 0];
    const s = svcScores[k]!;
    const o = other?.[k];
    a[0]! += 1;
    a[1]! += s.tp;
    a[2]! += s.fn;
    a[3]! += s.fp;
    a[4]! += o?.tp ?? 0;
    a[5]! += o?.fn ?? 0;
    a[6]! += o?.fp ?? 0;
    byLang.set(l, a);
  });
  console.log('  lang pages | svc tp fn fp | traf tp fn fp');
  for (const [l, a] of [...byLang].sort((x, y) => y[1][0]! - x[1][0]!))
    console.log(`  ${l.padEnd(4)} ${String(a[0]).padStart(5)} | ${a[1]} ${a[2]} ${a[3]} | ${a[4]} ${a[5]} ${a[6]}`);
}
