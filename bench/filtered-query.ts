/**
 * Filtered BM25 queries: p50/p95 of the served retrieval (`searchPages`) with each filter a caller can set, and how far
 * each BM25 engine's scores are from a naive BM25 computed here over every passage's analysed terms (issue 42 item 1:
 * which engine answers every query).
 *
 *   node --import tsx bench/filtered-query.ts [--size 100000] [--queries 200] [--keep DIR] [--text-engine postings|lance]
 *
 * The corpus is bench/synthetic.ts's passages (real SciFact sentences) with the page attributes varied by page ref so
 * every filter selects a known share: a quarter of the pages French, a fifth on provincial government hosts of
 * Ontario, dates spread over two years, 500 hosts. No vectors (BM25 rows only). `--keep DIR` builds once under DIR and
 * reuses it. `--text-engine lance` opens the index without the in-process postings, where the code still has that
 * choice; the report names the engine that answered (`textPostingsStats`'s query counter where it exists).
 * Score agreement: for the first 50 claims, the top 10 of LanceDB's own full-text index on `search_text` (when the
 * table has one) and of the postings, against BM25 (k1 1.2, b 0.75, Lucene idf) over the table's live rows.
 */
import '../fixtures/loopback-only.js';
import * as lancedb from '@lancedb/lancedb';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import { analyze } from '../index/retrieval/analyzer.js';
import { searchPages, type SearchFilters } from '../index/retrieval/retrieval.js';
import { PassageIndex } from '../index/engines/lance/store.js';
import type { PageInput } from '../page-model.js';
import { pct, SCIFACT, sentencePool, shortQuery, syntheticPages } from './synthetic.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';

setLanceCpuThreads();

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '200' },
    keep: { type: 'string' },
    'text-engine': { type: 'string', default: 'postings' },
  },
});
const SIZE = Number(values.size);
const NQ = Number(values.queries);
const NOW = new Date('2026-11-28T00:00:00Z');

/** The synthetic pages with attributes varied by page ref (deterministic). */
function* variedPages(n: number, pool: Awaited<ReturnType<typeof sentencePool>>): Generator<PageInput> {
  for (const p of syntheticPages(n, pool)) {
    const r = p.pageRef;
    const gov = r % 5 === 0;
    const host = gov ? `dept${r % 50}.gov.on.ca` : p.host;
    const day = new Date(NOW.getTime() - (r % 730) * 86_400_000).toISOString();
    yield { ...p, host, url: `https://${host}/doc/${r}.html`, lang: r % 4 === 0 ? 'fr' : 'en', modifiedAt: day };
  }
}

const dir = values.keep ?? join('/tmp', `svc-filtered-${process.pid}`);
const indexDir = join(dir, `${SIZE}-varied`);
const fresh = !existsSync(indexDir);
mkdirSync(indexDir, { recursive: true });
const pool = await sentencePool();
const textEngine = values['text-engine'] === 'postings';
const idx = await PassageIndex.open({ dir: indexDir, embedder: null, textEngine });
if (fresh) {
  const t0 = performance.now();
  let batch: PageInput[] = [];
  for (const p of variedPages(SIZE, pool)) {
    batch.push(p);
    if (batch.length >= 2000) {
      await idx.upsertPages(batch);
      batch = [];
    }
  }
  await idx.upsertPages(batch);
  await idx.optimize();
  process.stderr.write(`built ${SIZE} passages in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
}
const t1 = performance.now();
await idx.textEngineReady();
process.stderr.write(`postings ready in ${((performance.now() - t1) / 1000).toFixed(1)} s\n`);

const all = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()];
const shorts = all
  .map(shortQuery)
  .filter((q) => q.split(' ').length >= 2)
  .slice(0, NQ + 50);
const cases: { label: string; filters: SearchFilters; site?: string }[] = [
  { label: 'none', filters: {} },
  { label: 'language=fr (25 %)', filters: { language: 'fr' } },
  { label: 'source_type=government (20 %)', filters: { sourceType: 'government' } },
  { label: 'province=on (20 %)', filters: { province: 'on' } },
  { label: 'freshness=30d (4 %)', filters: { freshness: '30d' } },
  { label: 'site:host7.example (0.2 %)', filters: {}, site: 'host7.example' },
  { label: 'language=en + province=on', filters: { language: 'en', province: 'on' } },
];

const engineOf = (): string => {
  // `answers` exists once the postings are the one engine (issue 42); before, filtered queries went to LanceDB.
  const s = idx.textPostingsStats() as { answers?: number } | null;
  if (s?.answers !== undefined) return `postings answered ${s.answers} BM25 arms (the one engine)`;
  return textEngine ? 'postings (unfiltered) / LanceDB FTS (filtered)' : 'LanceDB FTS';
};

console.log(
  `\n${SIZE} passages, ${NQ} queries per row (3 content words of each SciFact claim, ranked), text engine option: ${values['text-engine']}`,
);
console.log('| filter | p50 ms | p95 ms | mean results |');
console.log('|---|---|---|---|');
for (const c of cases) {
  const run = async (q: string) =>
    (
      await searchPages(idx, {
        query: c.site ? `${q} site:${c.site}` : q,
        mode: 'bm25',
        filters: c.filters,
        now: NOW,
        limit: 10,
        offset: 0,
      })
    ).pages.length;
  for (const q of shorts.slice(NQ, NQ + 50)) await run(q); // warm-up, untimed
  const lat: number[] = [];
  let results = 0;
  for (const q of shorts.slice(0, NQ)) {
    const t0 = performance.now();
    results += await run(q);
    lat.push(performance.now() - t0);
  }
  console.log(`| ${c.label} | ${pct(lat, 50).toFixed(1)} | ${pct(lat, 95).toFixed(1)} | ${(results / NQ).toFixed(1)} |`);
}
console.log(`engine counters: ${engineOf()}`);

// Score agreement with a naive BM25 over every live row's analysed terms.
const db = await lancedb.connect(indexDir);
const table = await db.openTable('passages');
const df = new Map<string, number>();
const docs = new Map<bigint, Map<string, number>>();
const lens = new Map<bigint, number>();
let total = 0;
for await (const batch of table.query().select(['search_text']).withRowId()) {
  const text = batch.getChild('search_text')!;
  const ids = batch.getChild('_rowid')!;
  for (let i = 0; i < batch.numRows; i++) {
    const terms = String(text.get(i) ?? '')
      .split(' ')
      .filter(Boolean);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    const id = ids.get(i) as bigint;
    docs.set(id, tf);
    lens.set(id, terms.length);
    total += terms.length;
  }
}
const N = docs.size;
const avgdl = total / N;
const naive = (terms: readonly string[], id: bigint): number => {
  const tf = docs.get(id)!;
  const dl = lens.get(id)!;
  let s = 0;
  for (const t of terms) {
    const f = tf.get(t) ?? 0;
    if (f === 0) continue;
    const n = df.get(t)!;
    s += Math.log(1 + (N - n + 0.5) / (n + 0.5)) * ((f * 2.2) / (f + 1.2 * (0.25 + (0.75 * dl) / avgdl)));
  }
  return s;
};
const hasFts = (await table.listIndices()).some((i) => i.columns.includes('search_text'));
let lanceMax = 0;
let lanceSum = 0;
let lanceN = 0;
let lanceTopSame = 0;
let postMax = 0;
let postSum = 0;
let postN = 0;
const claims = all.slice(0, 50);
for (const claim of claims) {
  const terms = [...new Set(analyze(claim, 'en'))];
  if (terms.length === 0) continue;
  const truth = [...docs.keys()]
    .map((id) => [id, naive(terms, id)] as const)
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10);
  if (hasFts) {
    const rows = await table
      .query()
      .fullTextSearch(new lancedb.MatchQuery(terms.join(' '), 'search_text', { operator: lancedb.Operator.Or }))
      .select(['_score'])
      .withRowId()
      .limit(10)
      .toArray();
    for (const r of rows as { _rowid: bigint; _score: number }[]) {
      const want = naive(terms, r._rowid);
      const rel = Math.abs(r._score - want) / want;
      lanceMax = Math.max(lanceMax, rel);
      lanceSum += rel;
      lanceN++;
    }
    const got = new Set((rows as { _rowid: bigint }[]).map((r) => r._rowid));
    lanceTopSame += truth.filter(([id]) => got.has(id)).length / Math.max(1, truth.length);
  }
  const snapHits = await idx.textCandidates({ must: [], should: terms.map((term) => ({ term, weight: 1 })), probe: [] }, {}, 10);
  for (const h of snapHits ?? []) {
    const want = naive(terms, h._rowid!);
    const rel = Math.abs(h._score - want) / want;
    postMax = Math.max(postMax, rel);
    postSum += rel;
    postN++;
  }
}
console.log('\n| engine | hits compared | mean relative score error vs naive BM25 | max | top-10 overlap with naive |');
console.log('|---|---|---|---|---|');
if (hasFts)
  console.log(
    `| LanceDB FTS | ${lanceN} | ${(lanceSum / lanceN).toExponential(2)} | ${lanceMax.toExponential(2)} | ${((100 * lanceTopSame) / claims.length).toFixed(1)} % |`,
  );
else console.log('| LanceDB FTS | – | the table has no full-text index | – | – |');
console.log(`| postings | ${postN} | ${(postSum / Math.max(1, postN)).toExponential(2)} | ${postMax.toExponential(2)} | – |`);
await idx.close();
