/**
 * A sharded index answers exactly as one index of the same pages: random corpora (repeated texts, so ties are common;
 * several hosts; two languages; dates over two years), written in batches with some pages replaced and one removed,
 * into N ∈ {1, 2, 3, 5} shards; random queries with operators and filters give the same ranked pages, scores, match
 * bands and host-diversity collapse from svc_search's retrieval (BM25, vector, hybrid, two result pages), and the same
 * passages with the same scores from svc_context's. The 3-shard index is also asked as an `api` replica asks searcher
 * processes (each shard over HTTP, shard 1 served by two of them): the same answers again.
 */
import t from 'tap';
import { join } from 'node:path';
import fc from 'fast-check';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { contextPassages, searchPages, type SearchFilters } from '../../index/retrieval/retrieval.js';
import { openIndex, ShardedIndex, shardOf, type ServedIndex } from '../../index/shards/sharded-index.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';
import { liveOf, remoteIndex, startShardServer } from '../helpers/shard-servers.js';

const VOCAB = ['vitamin', 'library', 'bone', 'density', 'river', 'cells', 'memory', 'sleep', 'zinc', 'permit'];
const HOSTS = ['www.canada.ca', 'www.ontario.ca', 'www.quebec.ca', 'b.example', 'news.b.example'];
const NOW = new Date('2026-11-28T00:00:00Z');
const DAY = 86_400_000;
const SHARDS = [1, 2, 3, 5] as const;

const word = fc.constantFrom(...VOCAB);
const passageArb = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(' '));
const pageArb = fc.record({
  host: fc.constantFrom(...HOSTS),
  lang: fc.constantFrom('en', 'fr'),
  daysOld: fc.integer({ min: 0, max: 730 }),
  title: fc.array(word, { minLength: 1, maxLength: 2 }),
  // A few fixed texts besides the random ones: identical passages on several pages tie exactly.
  passages: fc.array(fc.oneof(passageArb, fc.constantFrom('bone density', 'river library memory')), { minLength: 1, maxLength: 3 }),
});
const queryArb = fc.record({
  words: fc.array(word, { minLength: 1, maxLength: 3 }),
  required: fc.oneof({ weight: 5, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.array(word, { maxLength: 1 }) }),
  excluded: fc.oneof({ weight: 5, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.array(word, { maxLength: 1 }) }),
  // Mostly absent: any operator makes every word required, and most random phrases match nothing.
  phrase: fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom(['bone', 'density'], ['river', 'library']), fc.tuple(word, word)) },
  ),
  site: fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('b.example', 'ontario.ca', 'canada.ca'), fc.boolean()) },
  ),
  mode: fc.constantFrom('bm25' as const, 'vector' as const, 'hybrid' as const),
});
const filterArb: fc.Arbitrary<SearchFilters> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constantFrom<SearchFilters>({ language: 'fr' }, { province: 'on' }, { freshness: '365d' }) },
);
type Query = typeof queryArb extends fc.Arbitrary<infer Q> ? Q : never;
const queryText = (q: Query) =>
  [
    ...q.words,
    ...q.required.map((w) => `+${w}`),
    ...q.excluded.map((w) => `-${w}`),
    ...(q.phrase ? [`"${q.phrase.join(' ')}"`] : []),
    ...(q.site ? [`${q.site[1] ? '-' : ''}site:${q.site[0]}`] : []),
  ].join(' ');

/** Everything a caller could tell apart in svc_search's and svc_context's retrieval, as one string. */
async function answers(idx: ServedIndex, asks: readonly [Query, SearchFilters][]): Promise<string[]> {
  const out: string[] = [];
  for (const [q, filters] of asks) {
    const query = queryText(q);
    for (const offset of [0, 5]) {
      const res = await searchPages(idx, { query, mode: q.mode, filters, now: NOW, limit: 5, offset });
      out.push(
        JSON.stringify({
          query,
          offset,
          ranking: res.ranking,
          duplicates: res.duplicates,
          collapsed: res.collapsedPerHost,
          pages: res.pages.map((p) => ({
            ref: p.best.row.page_ref,
            best: [p.best.row.ordinal, p.best.score, p.best.bm25Score, p.best.similarity],
            passages: p.passages.map((x) => x.row.ordinal),
            folded: p.folded,
            band: res.bands.get(p.best.row.page_ref),
            text: p.best.row.snippet_text,
          })),
        }),
      );
    }
    const ctx = await contextPassages(idx, { query, mode: q.mode, filters, now: NOW, maxPassages: 12 });
    out.push(
      JSON.stringify({
        query,
        belowFloor: ctx.belowFloor,
        passages: ctx.passages.map((p) => [p.row.page_ref, p.row.ordinal, p.score, p.bm25Score, p.similarity, p.row.text]),
      }),
    );
  }
  return out;
}

t.test('N shards give exactly the answers of one index (svc_search: bm25, vector, hybrid; svc_context)', async (t) => {
  let compared = 0;
  let nonEmpty = 0;
  let remoteCompared = 0;
  // One folder per index built (t.testdir() is one folder per test).
  const base = t.testdir();
  let built = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(pageArb, { minLength: 4, maxLength: 30 }),
      fc.integer({ min: 1, max: 3 }),
      fc.array(fc.tuple(fc.nat(), passageArb), { maxLength: 3 }),
      fc.option(fc.nat(), { freq: 2 }),
      fc.array(fc.tuple(queryArb, filterArb), { minLength: 10, maxLength: 10 }),
      async (specs, batches, replace, remove, asks) => {
        const pages: PageInput[] = specs.map((s, i) =>
          makePage(i + 1, s.host, s.passages, {
            lang: s.lang,
            title: s.title.join(' '),
            modifiedAt: new Date(NOW.getTime() - s.daysOld * DAY).toISOString(),
          }),
        );
        let reference: string[] | null = null;
        for (const n of SHARDS) {
          const idx = await openIndex({
            dir: join(base, `index-${built++}`),
            shards: n,
            embedder: createHashingEmbedder(32),
            refreshAfterMs: 0,
          });
          try {
            if ((idx instanceof ShardedIndex ? idx.shardCount : 1) !== n) throw new Error(`opened ${n} shards as another count`);
            const per = Math.ceil(pages.length / batches);
            for (let i = 0; i < pages.length; i += per) await idx.upsertPages(pages.slice(i, i + per));
            // Replacements (tombstones in one shard's postings) and a removal, the same writes for every N.
            for (const [at, text] of replace) {
              const p = pages[at % pages.length]!;
              await idx.upsertPage({ ...p, passages: [{ ordinal: 0, text, snippetText: text, headingPath: [] }] });
            }
            if (remove !== null) await idx.removePage(pages[remove % pages.length]!.pageRef);
            const got = await answers(idx, asks);
            if (reference === null) reference = got;
            else
              for (let i = 0; i < got.length; i++)
                if (got[i] !== reference[i]) throw new Error(`${n} shards:\n  got  ${got[i]}\n  want ${reference[i]}`);
            if (n === 3 && idx instanceof ShardedIndex) {
              const [s0, s1, s2] = idx.shards;
              const servers = [
                await startShardServer(
                  new Map([
                    [0, s0!],
                    [1, s1!],
                  ]),
                ),
                await startShardServer(
                  new Map([
                    [1, s1!],
                    [2, s2!],
                  ]),
                ),
              ];
              const { index: remote } = await remoteIndex({ count: 3, live: () => liveOf(servers, 3), embedder: idx.embedder });
              try {
                const over = await answers(remote, asks);
                for (let i = 0; i < over.length; i++)
                  if (over[i] !== reference![i]) throw new Error(`3 shards over searchers:\n  got  ${over[i]}\n  want ${reference![i]}`);
                remoteCompared += over.length;
              } finally {
                await remote.close();
                await Promise.all(servers.map((s) => s.close()));
              }
            }
          } finally {
            await idx.close();
          }
        }
        compared += reference!.length;
        nonEmpty += reference!.filter((a) => a.includes('"ref"') || a.includes('"passages":[[')).length;
      },
    ),
    { numRuns: 6, endOnFailure: process.env.SHARD_NO_SHRINK === '1' },
  );
  t.ok(nonEmpty > compared / 4, `${compared} answers agree over 1, 2, 3 and 5 shards, ${nonEmpty} of them not empty`);
  t.equal(remoteCompared, compared, 'every answer also agrees from 3 shards asked over HTTP');
});

t.test('a page goes to the shard of its URL, the count is stored, and an index of one shard keeps the old layout', async (t) => {
  t.equal(shardOf('https://a.example/x', 1), 0);
  const spread = new Set(Array.from({ length: 200 }, (_, i) => shardOf(`https://h${i}.example/p`, 5)));
  t.same([...spread].sort(), [0, 1, 2, 3, 4], 'URLs spread over every shard');
  t.equal(shardOf('https://b.example/page-1', 3), shardOf('https://b.example/page-1', 3), 'stable');

  const dir = join(t.testdir(), 'one');
  const one = await openIndex({ dir, shards: 1, embedder: null });
  t.ok(one instanceof PassageIndex, 'one shard: a plain PassageIndex at the location');
  await one.upsertPage(makePage(1, 'b.example', ['bone density']));
  await one.close();
  // Opened again asking for 3: the index was created with 1, and the stored count wins.
  const again = await openIndex({ dir, shards: 3, embedder: null });
  t.ok(again instanceof PassageIndex, 'an existing one-shard index stays one shard');
  t.equal((await again.stats()).pages, 1);
  await again.close();

  const dir3 = join(t.testdir(), 'three');
  const three = await openIndex({ dir: dir3, shards: 3, embedder: null });
  t.ok(three instanceof ShardedIndex);
  const sharded = three as ShardedIndex;
  const pages = Array.from({ length: 12 }, (_, i) => makePage(i + 1, 'b.example', [`bone density ${VOCAB[i % VOCAB.length]}`]));
  await sharded.upsertPages(pages);
  const counts = await Promise.all(sharded.shards.map(async (s) => (await s.stats()).pages));
  t.same(
    counts,
    [0, 1, 2].map((i) => pages.filter((p) => shardOf(p.url, 3) === i).length),
    'each page is in the shard its URL hashes to',
  );
  t.equal((await sharded.stats()).pages, 12);
  await sharded.close();
  await t.rejects(
    PassageIndex.open({ dir: dir3, embedder: null }),
    { name: 'IndexOpenError', message: /has 3 shards/ },
    'the root of a sharded index is not opened as one dataset',
  );
  const reopened = await openIndex({ dir: dir3, embedder: null });
  t.ok(reopened instanceof ShardedIndex && reopened.shardCount === 3, 'reopened without a count: the stored 3');
  t.equal((await reopened.stats()).pages, 12);
  await reopened.close();
});
