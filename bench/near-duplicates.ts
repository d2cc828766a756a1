/**
 * Near-duplicate precision / recall of the page fingerprint (index/retrieval/near-print.ts) on the labelled pairs of real pages
 * in fixtures/near-duplicates/pairs.json, at the threshold the index folds with and at its neighbours.
 *
 *   node --import tsx bench/near-duplicates.ts           # the table
 *   node --import tsx bench/near-duplicates.ts --build   # (re)writes the fixture from ../shared/data/web
 *
 * A pair is predicted "same" when both pages have a print and the prints differ in at most the threshold's bits.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NEAR_PRINT_MAX_BITS, nearPrintDistance, nearPrintOf, printWords, type NearPrint } from '../index/retrieval/near-print.js';
import { SHARED_DATA_DIR } from '../fixtures/test-web/index.js';
import {
  aebTruth,
  PAIRS_FILE,
  readPairs,
  specMainText,
  type Edit,
  type LabelledPair,
  type PageSpec,
} from '../test/helpers/near-duplicate-pairs.js';

const EDIT_SETS: Edit[][] = [
  ['nav', 'footer'],
  ['ads'],
  ['date'],
  ['comments'],
  ['share', 'date'],
  ['nav', 'footer', 'ads', 'comments'],
  ['strip'],
  ['comments', 'ads', 'date'],
  ['note'],
  ['trim'],
  ['note', 'trim', 'date'],
];
/** Pages shorter than this (words of main text) are left out of the set: their print is null by design. */
const MIN_WORDS = 120;
const PER_KIND = 40;

const words = (spec: PageSpec): number => printWords(specMainText(spec)).length;

function buildPairs(): LabelledPair[] {
  const truth = aebTruth();
  const aeb = Object.keys(truth)
    .sort()
    .filter((id) => words({ set: 'aeb', id, form: 'html', edits: [] }) >= MIN_WORDS);
  const html = (id: string, edits: Edit[] = []): PageSpec => ({ set: 'aeb', id, form: 'html', edits });
  const pairs: LabelledPair[] = [];
  // Same article, another template: the Readability test page and its reader-mode rendering.
  const rd = readdirSync(join(SHARED_DATA_DIR, 'web', 'readability-test-pages')).sort();
  let n = 0;
  for (const id of rd) {
    if (n >= PER_KIND) break;
    const a: PageSpec = { set: 'readability', id, form: 'html', edits: [] };
    const b: PageSpec = { set: 'readability', id, form: 'expected', edits: [] };
    if (words(a) < MIN_WORDS || words(b) < MIN_WORDS) continue;
    pairs.push({ a, b, same: true, kind: 'template' });
    n++;
  }
  // Same article as a bare print-style page (the annotated article body).
  n = 0;
  for (const id of aeb) {
    if (n >= PER_KIND) break;
    const b: PageSpec = { set: 'aeb', id, form: 'truth', edits: [] };
    if (words(b) < MIN_WORDS) continue;
    pairs.push({ a: html(id), b, same: true, kind: 'print' });
    n++;
  }
  // Same page with boilerplate added or removed.
  aeb.slice(0, PER_KIND).forEach((id, i) => {
    pairs.push({ a: html(id), b: html(id, EDIT_SETS[i % EDIT_SETS.length]!), same: true, kind: 'boilerplate' });
  });
  // Different articles of one site (its real template), and the same with identical added boilerplate.
  const byHost = new Map<string, string[]>();
  for (const id of aeb) {
    const host = new URL(truth[id]!.url).host;
    byHost.set(host, [...(byHost.get(host) ?? []), id]);
  }
  for (const ids of byHost.values())
    for (let i = 0; i + 1 < ids.length; i++) {
      pairs.push({ a: html(ids[i]!), b: html(ids[i + 1]!), same: false, kind: 'same-site' });
      const edits: Edit[] = ['nav', 'footer', 'share', 'comments'];
      pairs.push({ a: html(ids[i]!, edits), b: html(ids[i + 1]!, edits), same: false, kind: 'same-template' });
    }
  // Different articles of different sites.
  for (let i = 0; i < PER_KIND; i++) pairs.push({ a: html(aeb[i]!), b: html(aeb[aeb.length - 1 - i]!), same: false, kind: 'different' });
  return pairs;
}

if (process.argv.includes('--build')) {
  const pairs = buildPairs();
  const how =
    'Built by `node --import tsx bench/near-duplicates.ts --build` from ../shared/data/web (article-extraction-benchmark, ' +
    'readability-test-pages). Positives: template = a Readability test page vs its reader-mode rendering; print = a ' +
    'benchmark page vs its annotated article body as a bare page; boilerplate = a page vs itself with navigation, ' +
    'footer, in-article ads, a date line, a share bar, a comment thread or a syndication note added, its last ' +
    `paragraph cut, or its nav/header/footer/aside removed. Negatives: same-site = two articles of one host; same-template = the same with identical boilerplate ` +
    `added to both; different = articles of different hosts. Pages under ${MIN_WORDS} words of main text are left out.`;
  // One pair a line: the file stays small and reads as a list.
  writeFileSync(PAIRS_FILE, `{"how": ${JSON.stringify(how)},\n"pairs": [\n${pairs.map((p) => JSON.stringify(p)).join(',\n')}\n]}\n`);
  console.log(`wrote ${pairs.length} pairs to ${PAIRS_FILE.pathname}`);
}

const { pairs } = readPairs();
const prints = new Map<string, NearPrint | null>();
const printOf = (s: PageSpec): NearPrint | null => {
  const k = JSON.stringify(s);
  if (!prints.has(k)) prints.set(k, nearPrintOf(specMainText(s)));
  return prints.get(k)!;
};
const dist = pairs.map((p) => {
  const a = printOf(p.a);
  const b = printOf(p.b);
  return a && b ? nearPrintDistance(a, b) : Infinity;
});

console.log(`pairs: ${pairs.length} (${pairs.filter((p) => p.same).length} near-copies)`);
console.log('| max bits | precision | recall | false + | false - |');
for (const t of [4, 6, 8, NEAR_PRINT_MAX_BITS, 12, 14, 16].filter((x, i, a) => a.indexOf(x) === i).sort((x, y) => x - y)) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  pairs.forEach((p, i) => {
    const yes = dist[i]! <= t;
    if (yes && p.same) tp++;
    else if (yes) fp++;
    else if (p.same) fn++;
  });
  const mark = t === NEAR_PRINT_MAX_BITS ? ' (used)' : '';
  console.log(`| ${t}${mark} | ${(tp / Math.max(1, tp + fp)).toFixed(3)} | ${(tp / Math.max(1, tp + fn)).toFixed(3)} | ${fp} | ${fn} |`);
}
const kinds = [...new Set(pairs.map((p) => p.kind))];
console.log('\n| kind | pairs | distances (sorted) |');
for (const k of kinds) {
  const ds = pairs
    .map((p, i) => (p.kind === k ? dist[i]! : -1))
    .filter((d) => d >= 0)
    .sort((x, y) => x - y);
  console.log(`| ${k} | ${ds.length} | ${ds.map((d) => (d === Infinity ? '∅' : d)).join(' ')} |`);
}
