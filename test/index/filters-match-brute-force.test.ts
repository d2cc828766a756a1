/**
 * Issue 42: the in-process postings answer every query, filtered or not. Random corpora (hosts of several source types
 * and provinces, two languages, dates over two years) are written in batches with random optimize points; random
 * queries with operators and random filters run through retrieval, and the passages they return must be exactly those
 * a brute-force pass over the stored rows finds: the row's page attributes compared here with the filter's values
 * (hosts by name, not by id), the query's terms looked up in its analysed text, and the operators' code checks. In
 * hybrid mode every passage returned must pass the same filters and checks.
 */
import t from 'tap';
import fc from 'fast-check';
import * as lancedb from '@lancedb/lancedb';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { compileQuery, parseQuery } from '../../index/retrieval/query.js';
import { FRESHNESS_WINDOWS, retrieve, type SearchFilters } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';

const VOCAB = ['vitamin', 'library', 'bone', 'density', 'river', 'cells', 'memory', 'sleep', 'zinc', 'permit'];
// A federal, two provincial (Ontario, Quebec), a municipal (Ontario) and two other hosts, one a subdomain of another.
const HOSTS = ['www.canada.ca', 'www.ontario.ca', 'www.quebec.ca', 'www.toronto.ca', 'b.example', 'news.b.example'];
const NOW = new Date('2026-11-28T00:00:00Z');
const DAY = 86_400_000;

const word = fc.constantFrom(...VOCAB);
const pageArb = fc.record({
  host: fc.constantFrom(...HOSTS),
  lang: fc.constantFrom('en', 'fr'),
  daysOld: fc.integer({ min: 0, max: 730 }),
  title: fc.array(word, { minLength: 1, maxLength: 2 }),
  passages: fc.array(fc.array(word, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }),
});
const queryArb = fc.record({
  words: fc.array(word, { minLength: 1, maxLength: 3 }),
  // Any operator makes every word required (a strict query): operators in a third of the queries or so.
  required: fc.oneof(
    { weight: 5, arbitrary: fc.constant<string[]>([]) },
    { weight: 1, arbitrary: fc.array(word, { minLength: 1, maxLength: 1 }) },
  ),
  excluded: fc.oneof(
    { weight: 5, arbitrary: fc.constant<string[]>([]) },
    { weight: 1, arbitrary: fc.array(word, { minLength: 1, maxLength: 1 }) },
  ),
  site: fc.option(fc.tuple(fc.constantFrom('b.example', 'ontario.ca', 'canada.ca', 'toronto.ca'), fc.boolean()), { freq: 4 }),
});
const filterValues = {
  language: fc.constantFrom('en', 'fr'),
  country: fc.constantFrom('ca', 'us'),
  province: fc.constantFrom('on', 'qc'),
  sourceType: fc.constantFrom('government' as const, 'government:provincial' as const, 'government:municipal' as const, 'other' as const),
  freshness: fc.constantFrom('30d' as const, '365d' as const),
};
// Mostly none or one filter (several at once rarely leave a passage in a small corpus), sometimes any combination.
const filterArb: fc.Arbitrary<SearchFilters> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({}) },
  {
    weight: 5,
    arbitrary: fc.oneof(
      ...Object.entries(filterValues).map(([k, v]) => (v as fc.Arbitrary<string>).map((x): SearchFilters => ({ [k]: x }) as SearchFilters)),
    ),
  },
  { weight: 1, arbitrary: fc.record(filterValues, { requiredKeys: [] }) },
);

type Query = typeof queryArb extends fc.Arbitrary<infer Q> ? Q : never;
const queryText = (q: Query) =>
  [
    ...q.words,
    ...q.required.map((w) => `+${w}`),
    ...q.excluded.map((w) => `-${w}`),
    ...(q.site ? [`${q.site[1] ? '-' : ''}site:${q.site[0]}`] : []),
  ].join(' ');

/** A stored row's page attributes against a filter's values, written out here (hosts by name). */
function passes(row: Record<string, unknown>, f: SearchFilters, site: [string, boolean] | null): boolean {
  const host = String(row.host);
  if (site) {
    const under = host === site[0] || host.endsWith(`.${site[0]}`);
    if (under === site[1]) return false;
  }
  if (f.language !== undefined && row.lang !== f.language) return false;
  if (f.country !== undefined && row.country !== f.country) return false;
  if (f.province !== undefined && row.province !== f.province) return false;
  if (f.sourceType === 'government' && !String(row.source_type).startsWith('government:')) return false;
  if (f.sourceType !== undefined && f.sourceType !== 'government' && row.source_type !== f.sourceType) return false;
  if (f.freshness !== undefined && !(Number(row.date_ms) >= NOW.getTime() - FRESHNESS_WINDOWS[f.freshness])) return false;
  return true;
}

t.test('issue 42: filtered and operator queries return exactly the passages a brute-force pass over the stored rows finds', async (t) => {
  let queries = 0;
  let nonEmpty = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(pageArb, { minLength: 5, maxLength: 40 }),
      fc.integer({ min: 1, max: 3 }),
      fc.boolean(),
      fc.array(fc.tuple(queryArb, filterArb), { minLength: 12, maxLength: 12 }),
      async (specs, batches, optimizeBetween, asks) => {
        const dir = t.testdir();
        const idx = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), refreshAfterMs: 0, optimizeEvery: 1_000_000 });
        try {
          const pages: PageInput[] = specs.map((s, i) =>
            makePage(
              i + 1,
              s.host,
              s.passages.map((p) => p.join(' ')),
              { lang: s.lang, title: s.title.join(' '), modifiedAt: new Date(NOW.getTime() - s.daysOld * DAY).toISOString() },
            ),
          );
          const per = Math.ceil(pages.length / batches);
          for (let i = 0; i < pages.length; i += per) {
            await idx.upsertPages(pages.slice(i, i + per));
            if (optimizeBetween) await idx.optimize();
          }
          const db = await lancedb.connect(dir);
          const table = await db.openTable('passages');
          const rows = (await table.query().toArray()) as Record<string, unknown>[];
          table.close();
          db.close();
          const answered = idx.textPostingsStats()!.answers;
          let found = 0;
          for (const [q, filters] of asks) {
            const query = queryText(q);
            const c = compileQuery(parseQuery(query));
            const text = c.text!;
            const passing = new Set(
              rows.filter((r) => passes(r, filters, q.site) && c.matches(r as never)).map((r) => `${r.page_ref}:${r.ordinal}`),
            );
            const want = rows
              .filter((r) => {
                const terms = new Set(String(r.search_text).split(' '));
                const textMatch =
                  text.must.every((g) => g.some((x) => terms.has(x))) &&
                  (text.must.length > 0 || text.should.some((x) => terms.has(x.term)));
                return textMatch && passes(r, filters, q.site) && c.matches(r as never);
              })
              .map((r) => `${r.page_ref}:${r.ordinal}`)
              .sort();
            const got = (await retrieve(idx, { query, mode: 'bm25', filters, now: NOW })).passages
              .map((p) => `${p.row.page_ref}:${p.row.ordinal}`)
              .sort();
            // The vector arm (from the vectors in memory, filtered by the same per-document test) adds passages that
            // share no word, never one a filter or an operator rules out.
            for (const p of (await retrieve(idx, { query, mode: 'hybrid', filters, now: NOW })).passages)
              if (!passing.has(`${p.row.page_ref}:${p.row.ordinal}`))
                throw new Error(`${query} ${JSON.stringify(filters)} (hybrid): ${p.row.page_ref}:${p.row.ordinal} is not let through`);
            queries++;
            if (want.length > 0) {
              nonEmpty++;
              found++;
            }
            if (JSON.stringify(got) !== JSON.stringify(want))
              throw new Error(`${query} ${JSON.stringify(filters)}: got ${got.join(',')} want ${want.join(',')}`);
          }
          // Every query that found passages was answered by the postings (the one BM25 engine), filtered or not.
          if (!(idx.textPostingsStats()!.answers - answered >= found)) throw new Error('a query was answered by another engine');
        } finally {
          await idx.close();
        }
      },
    ),
    { numRuns: 12 },
  );
  t.ok(nonEmpty > queries / 4, `${queries} queries agree with the brute-force pass, ${nonEmpty} of them with passages to find`);
});
