import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { corpusPage, readCorpus } from '../../cli/ingest.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { analyze, passageAnalyses, stem, termOf, wordTokens } from '../../index/retrieval/analyzer.js';
import { nearKeyHash } from '../../index/retrieval/near-keys.js';
import { diversify, fuseRrf, groupPages, hydrate, retrieve, type RankedPassage } from '../../index/retrieval/retrieval.js';
import { PassageIndex, type PassageHit, type PassageRow } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';

// A small real corpus: the first 300 SciFact abstracts, read from ../shared at test time, spread over web hosts.
const CORPUS = fileURLToPath(new URL('../../../shared/data/beir/scifact/corpus.jsonl.gz', import.meta.url));
const HOSTS = ['a.example', 'www.b.example', 'b.example', 'c.example', 'news.d.example'];
const TYPES = ['html', 'pdf', 'html', 'txt', 'html'];

async function buildCorpus(): Promise<PageInput[]> {
  const pages: PageInput[] = [];
  let i = 0;
  for await (const doc of readCorpus(CORPUS)) {
    const host = HOSTS[i % HOSTS.length]!;
    const ft = TYPES[i % TYPES.length]!;
    const p = corpusPage(doc, i + 1, 'scifact', '2026-11-20T00:00:00Z');
    pages.push({
      ...p,
      host,
      url: `https://${host}/${i % 2 ? 'archive' : 'articles'}/${doc._id}.${ft}`,
      filetype: ft,
      lang: i % 7 === 0 ? 'fr' : 'en',
      modifiedAt: i % 3 === 0 ? '2026-11-19T00:00:00Z' : '2024-01-01T00:00:00Z',
    });
    if (++i >= 300) break;
  }
  return pages;
}

// Test-side check, looser than the index's analysis on purpose (expression ~ expressed): a token sharing the stem prefix.
const has = (r: PassageRow, word: string) => {
  const s = stem(word, 'en');
  const prefix = s.slice(0, Math.max(4, Math.min(6, s.length)));
  return wordTokens(`${r.title} ${r.text}`).some((tok) => tok.startsWith(prefix));
};
// Exact check with the index's analysis (what the code verifies).
const holds = (r: PassageRow, word: string) => {
  const analysis = passageAnalyses(r.lang, r.title, [r.text])[0]!;
  return analyze(`${r.title}\n${r.text}`, analysis).includes(termOf(word, analysis) ?? '');
};

t.test('operators on a small real corpus', async (t) => {
  const pages = await buildCorpus();
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(128) });
  t.teardown(() => idx.close());
  await idx.upsertPages(pages);
  // Whole rows for every candidate, so the assertions can read any column.
  const q = async (query: string, extra: object = {}) => {
    const r = await retrieve(idx, { query, ...extra });
    const passages = await hydrate(idx, r.passages);
    t.equal(passages.length, r.passages.length, 'every candidate hydrates');
    return { ...r, passages };
  };

  const base = await q('cells');
  t.ok(base.passages.length > 20, 'a common word finds many passages');
  t.equal(base.ranking, 'hybrid-rrf-hashing');

  await t.test('issue 15: a query with an operator requires every bare word (spec §1.1); +word requires one', async (t) => {
    const r = await q('cells protein expression -zebrafishnonexistentword', { mode: 'bm25' });
    t.ok(r.passages.length > 0);
    t.ok(r.passages.every((p) => ['cells', 'protein', 'expression'].every((w) => holds(p.row, w))));
    const h = await q('cells protein expression -zebrafishnonexistentword');
    t.ok(
      h.passages.every((p) => ['cells', 'protein', 'expression'].every((w) => holds(p.row, w))),
      'vector-arm candidates obey the same rule',
    );
    const plus = await q('+cells +protein expression');
    t.ok(plus.passages.length > 0 && plus.passages.every((p) => holds(p.row, 'cells') && holds(p.row, 'protein')), '+word is required');
    const quoted = await q('"cells" protein');
    t.ok(quoted.passages.length > 0 && quoted.passages.every((p) => holds(p.row, 'cells')), 'a quoted single word is required');
  });

  await t.test('issue 15: a query without operators is ranked: any word matches, more of them rank higher', async (t) => {
    // Over the pages analysed as English: the English abstracts declared French here are analysed as French, and an
    // unclear query's French reading weighs their rarer French terms more (docs/api-search.md, Text analysis).
    const r = await q('cells protein expression', { mode: 'bm25', filters: { language: 'en' } });
    const all3 = (p: (typeof r.passages)[number]) => ['cells', 'protein', 'expression'].every((w) => holds(p.row, w));
    t.ok(
      r.passages.some((p) => !all3(p)),
      'passages holding only some of the words are answers too',
    );
    t.ok(
      r.passages.every((p) => ['cells', 'protein', 'expression'].some((w) => holds(p.row, w))),
      'every answer holds at least one word',
    );
    const firstPartial = r.passages.findIndex((p) => !all3(p));
    const lastFull = r.passages.map(all3).lastIndexOf(true);
    t.ok(lastFull >= 0 && firstPartial >= 0);
    const fullShare = r.passages.slice(0, 10).filter(all3).length;
    t.ok(fullShare >= 8, `the first 10 answers hold all three words (${fullShare}/10): coordination ranks them first`);
    const question = await q('what does protein expression do in the cells', { mode: 'bm25' });
    const plain = await q('protein expression in cells', { mode: 'bm25' });
    t.same(
      question.passages.slice(0, 10).map((p) => p.row.page_ref),
      plain.passages.slice(0, 10).map((p) => p.row.page_ref),
      'question and stop words do not drive the ranking',
    );
  });

  await t.test('exact phrase', async (t) => {
    const r = await q('"stem cells"');
    t.ok(r.passages.length > 0);
    for (const p of r.passages)
      t.ok(/stem cells/i.test(`${p.row.title} ${p.row.text}`.replace(/\s+/g, ' ')), `page ${p.row.page_ref} has the phrase`);
  });

  await t.test('-word and --word exclude', async (t) => {
    const all = await q('cells');
    const without = await q('cells -cancer');
    const without2 = await q('cells --cancer');
    t.ok(without.passages.length > 0 && without.passages.length < all.passages.length);
    t.notOk(without.passages.some((p) => has(p.row, 'cancer')));
    t.same(without2.passages.map((p) => p.row.page_ref).sort(), without.passages.map((p) => p.row.page_ref).sort());
    const noPhrase = await q('cells -"stem cells"');
    t.notOk(noPhrase.passages.some((p) => /stem cells/i.test(`${p.row.title} ${p.row.text}`)));
  });

  await t.test('site: host and subdomains; alternatives; negation', async (t) => {
    const b = await q('cells site:b.example');
    t.ok(b.passages.length > 0);
    t.same([...new Set(b.passages.map((p) => p.row.host))].sort(), ['b.example', 'www.b.example']);
    const alt = await q('cells site:a.example site:c.example');
    t.same([...new Set(alt.passages.map((p) => p.row.host))].sort(), ['a.example', 'c.example']);
    const neg = await q('cells -site:b.example');
    t.notOk(neg.passages.some((p) => p.row.host.endsWith('b.example')));
    t.ok(neg.passages.length > 0);
    t.same((await q('cells site:unknown.example')).passages, [], 'an unknown site matches nothing');
    t.same((await q('cells site:example')).passages.length > 0, true, 'a parent domain covers every subdomain');
  });

  await t.test('filetype:, inurl:, intitle: and their negations', async (t) => {
    const pdf = await q('cells filetype:pdf');
    t.ok(pdf.passages.length > 0 && pdf.passages.every((p) => p.row.filetype === 'pdf'));
    const two = await q('cells filetype:pdf filetype:txt');
    t.same([...new Set(two.passages.map((p) => p.row.filetype))].sort(), ['pdf', 'txt']);
    t.notOk((await q('cells -filetype:html')).passages.some((p) => p.row.filetype === 'html'));
    const arch = await q('cells inurl:archive');
    t.ok(arch.passages.length > 0 && arch.passages.every((p) => p.row.url.includes('/archive/')));
    t.notOk((await q('cells -inurl:archive')).passages.some((p) => p.row.url.includes('/archive/')));
    const title = await q('intitle:"cells"');
    t.ok(title.passages.length > 0 && title.passages.every((p) => /\bcells\b/i.test(p.row.title)));
    t.notOk((await q('cells -intitle:"cells"')).passages.some((p) => /\bcells\b/i.test(p.row.title)));
  });

  await t.test('combination from the spec example shape', async (t) => {
    const r = await q('intitle:"cells" site:b.example filetype:html -cancer -inurl:archive');
    for (const p of r.passages) {
      t.ok(/\bcells\b/i.test(p.row.title) && p.row.host.endsWith('b.example') && p.row.filetype === 'html');
      t.notOk(has(p.row, 'cancer') || p.row.url.includes('archive'));
    }
    const opsOnly = await q('site:c.example filetype:txt');
    t.ok(opsOnly.passages.length > 0, 'operators alone scan with filters');
    t.ok(opsOnly.passages.every((p) => p.row.host === 'c.example' && p.row.filetype === 'txt'));
  });

  await t.test('filters: language, freshness, source type', async (t) => {
    const fr = await q('cells', { filters: { language: 'fr' } });
    t.ok(fr.passages.length > 0 && fr.passages.every((p) => p.row.lang === 'fr'));
    const fresh = await q('cells', { filters: { freshness: '7d' }, now: new Date('2026-11-21T00:00:00Z') });
    t.ok(fresh.passages.length > 0 && fresh.passages.every((p) => p.row.modified_at === '2026-11-19T00:00:00Z'));
    t.same((await q('cells', { filters: { sourceType: 'government' } })).passages, []);
    t.ok((await q('cells', { filters: { sourceType: 'other' } })).passages.length > 0);
    t.same((await q('cells', { filters: { language: 'de' } })).passages, []);
  });

  await t.test('modes: bm25, vector; an unknown word', async (t) => {
    t.equal((await q('cells', { mode: 'bm25' })).ranking, 'bm25');
    t.equal((await q('cells', { mode: 'vector' })).ranking, 'vector-hashing');
    const ranked = await q('cells zebrafishnonexistentword', { mode: 'bm25' });
    t.ok(ranked.passages.length > 0, 'a ranked query answers with the words that exist');
    t.same((await q('zebrafishnonexistentword', { mode: 'bm25' })).passages, [], 'nothing matches: empty');
    t.same((await q('zebrafishnonexistentword qqqxxyyzz', { mode: 'bm25' })).passages, [], 'no word matches: empty');
  });

  await t.test('a required word the index has never seen empties the query, wherever it stands', async (t) => {
    for (const query of [
      '+zebrafishnonexistentword cells',
      'cells protein +zebrafishnonexistentword',
      'cells "zebrafishnonexistentword"',
      'cells zebrafishnonexistentword site:example',
    ]) {
      t.same((await q(query, { mode: 'bm25' })).passages, [], query);
      t.same((await q(query)).passages, [], `${query} (hybrid)`);
    }
    const words = await q('+cells +protein', { mode: 'bm25' });
    t.ok(words.passages.length > 0, 'the same words without the unknown one match');
  });

  await t.test('stop words neither match nor exclude', async (t) => {
    const ids = (r: Awaited<ReturnType<typeof q>>) => r.passages.map((p) => `${p.row.page_ref}:${p.row.ordinal}`);
    // (Compared within English: "cells" alone is read in English and French, "the cells" in English only.)
    t.same(ids(await q('the cells', { mode: 'bm25' })), ids(await q('cells of', { mode: 'bm25' })));
    t.ok((await q('the cells', { mode: 'bm25' })).passages.length > 0);
    t.same(ids(await q('+the +cells', { mode: 'bm25' })), ids(await q('+cells +of', { mode: 'bm25' })));
    t.same(
      ids(await q('cells the -the', { mode: 'bm25' })),
      ids(await q('+cells +the', { mode: 'bm25' })),
      'an excluded stop word excludes nothing',
    );
    t.same((await q('the of and', { mode: 'bm25' })).passages, [], 'only stop words: nothing to match on');
  });

  await t.test('a removed page disappears', async (t) => {
    const top = (await q('cells', { mode: 'bm25' })).passages[0]!.row.page_ref;
    await idx.removePage(top);
    t.notOk((await q('cells')).passages.some((p) => p.row.page_ref === top));
  });
});

const rp = (ref: number, ordinal: number, host = 'h', extra: Partial<PassageRow & PassageHit> = {}): RankedPassage => ({
  row: { page_ref: ref, ordinal, host, group_key: `g${ref}`, content_hash: `c${ref}`, ...extra } as PassageRow,
  score: 0,
  bm25Rank: null,
  vectorRank: null,
  bm25Score: null,
  similarity: null,
});

t.test('RRF fusion', async (t) => {
  const a = [rp(1, 0), rp(2, 0), rp(3, 0)];
  const b = [rp(3, 0), rp(4, 0), rp(1, 0)];
  const f = fuseRrf(a, b);
  t.same(
    f.map((p) => p.row.page_ref),
    [1, 3, 2, 4],
  );
  t.equal(f[0]!.score, 1 / 61 + 1 / 63);
  t.same([f[0]!.bm25Rank, f[0]!.vectorRank], [1, 3]);
});

t.test('RRF fusion: the order a sort of every fused passage gives, on random arms (property)', async (t) => {
  // Page refs small and huge (past the numeric fusion key), ordinals; each arm a random subset in random order.
  const passage = fc.record({ ref: fc.oneof(fc.nat(40), fc.constant(2 ** 40), fc.constant(2 ** 40 + 1)), ordinal: fc.nat(3) });
  fc.assert(
    fc.property(
      fc.uniqueArray(passage, { selector: (p) => `${p.ref}:${p.ordinal}`, maxLength: 120, size: 'max' }),
      fc.nat(),
      (all, seed) => {
        let x = seed;
        const rand = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
        const pick = () => all.filter(() => rand() < 0.6).sort(() => rand() - 0.5);
        const a = pick().map((p) => rp(p.ref, p.ordinal));
        const b = pick().map((p) => ({ ...rp(p.ref, p.ordinal), similarity: rand() }));
        // The reference: every passage's RRF sum, sorted by score, then page_ref, then ordinal.
        const want = new Map<string, { ref: number; ordinal: number; score: number; bm25Rank: number | null; vectorRank: number | null }>();
        a.forEach((p, i) =>
          want.set(`${p.row.page_ref}:${p.row.ordinal}`, {
            ref: p.row.page_ref,
            ordinal: p.row.ordinal,
            score: 1 / (61 + i),
            bm25Rank: i + 1,
            vectorRank: null,
          }),
        );
        b.forEach((p, i) => {
          const k = `${p.row.page_ref}:${p.row.ordinal}`;
          const cur = want.get(k);
          want.set(k, {
            ref: p.row.page_ref,
            ordinal: p.row.ordinal,
            score: (cur?.score ?? 0) + 1 / (61 + i),
            bm25Rank: cur?.bm25Rank ?? null,
            vectorRank: i + 1,
          });
        });
        const expected = [...want.values()].sort((p, q) => q.score - p.score || p.ref - q.ref || p.ordinal - q.ordinal);
        const got = fuseRrf(a, b).map((p) => ({
          ref: p.row.page_ref,
          ordinal: p.row.ordinal,
          score: p.score,
          bm25Rank: p.bm25Rank,
          vectorRank: p.vectorRank,
        }));
        return JSON.stringify(got) === JSON.stringify(expected);
      },
    ),
    { numRuns: 300 },
  );
  t.pass('300 random pairs of arms fused as the reference sorts them');
});

t.test('groupPages collapses near-duplicates by canonical group and content hash', async (t) => {
  const list = [rp(1, 0), rp(2, 0, 'h', { content_hash: 'c1' }), rp(1, 1), rp(3, 0, 'h', { group_key: 'g1' }), rp(4, 0)];
  const g = groupPages(list, { collapseNearDuplicates: true });
  t.same(
    g.pages.map((p) => [p.best.row.page_ref, p.passages.length]),
    [
      [1, 2],
      [4, 1],
    ],
  );
  t.equal(g.duplicates, 2);
  t.equal(groupPages(list, { collapseNearDuplicates: false }).pages.length, 4);
});

t.test('groupPages folds a page whose print is near a kept one into it, and counts it there', async (t) => {
  const x = '0123456789abcdef';
  const near = '0123456789abcd10'; // 4 bits from x
  const far = 'fedcba9876543210';
  const list = [
    rp(1, 0, 'a', { near_print: x }),
    rp(2, 0, 'b', { near_print: far }),
    rp(3, 0, 'c', { near_print: near }),
    rp(4, 0, 'd', { near_print: null }),
    rp(5, 0, 'e', { content_hash: 'c2' }),
    rp(3, 1, 'c', { near_print: near }),
    rp(1, 1, 'a', { near_print: x }),
  ];
  const g = groupPages(list, { collapseNearDuplicates: true });
  t.same(
    g.pages.map((p) => [p.best.row.page_ref, p.passages.length, p.folded]),
    [
      [1, 2, [3]],
      [2, 1, [5]],
      [4, 1, []],
    ],
  );
  t.equal(g.duplicates, 2);
  t.same(
    groupPages(list, { collapseNearDuplicates: false }).pages.map((p) => p.folded),
    [[], [], [], [], []],
  );
});

t.test('groupPages: only kept pages remember their keys; any page ref works; equal to a plain map of pages on random lists', async (t) => {
  // Page 2 is dropped by page 1's content hash; its own group key is not remembered, so page 3 (which shares it) stays.
  const list = [rp(1, 0), rp(2, 0, 'h', { content_hash: 'c1', group_key: 'g9' }), rp(3, 0, 'h', { group_key: 'g9' }), rp(2, 1)];
  const g = groupPages(list, { collapseNearDuplicates: true });
  t.same(
    g.pages.map((p) => [p.best.row.page_ref, p.passages.length]),
    [
      [1, 1],
      [3, 1],
    ],
    "a dropped page's later passages are dropped too",
  );
  t.equal(g.duplicates, 1);

  // The reference: one Map of pages and a set of the kept pages' keys, as groupPages read before its dense slots.
  const reference = (passages: readonly RankedPassage[], collapse: boolean) => {
    const byRef = new Map<number, { best: RankedPassage; passages: RankedPassage[] } | null>();
    const seen = new Set<string>();
    const pages: { best: RankedPassage; passages: RankedPassage[] }[] = [];
    let duplicates = 0;
    for (const p of passages) {
      const cur = byRef.get(p.row.page_ref);
      if (cur !== undefined) {
        cur?.passages.push(p);
        continue;
      }
      if (collapse && (seen.has(p.row.group_key) || seen.has(p.row.content_hash))) {
        byRef.set(p.row.page_ref, null);
        duplicates++;
        continue;
      }
      if (collapse) seen.add(p.row.group_key).add(p.row.content_hash);
      const hit = { best: p, passages: [p] };
      byRef.set(p.row.page_ref, hit);
      pages.push(hit);
    }
    return { pages, duplicates };
  };
  // Page refs dense and not (negative, past the dense range, fractional); keys from small pools, so they collide.
  const ref = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constantFrom(-3, 2 ** 22, 2 ** 22 + 1, 2 ** 40, 1.5, 4_000_000));
  const passage = fc.record({ ref, ordinal: fc.nat(3), g: fc.nat(12), c: fc.nat(12) });
  // The keys' hashes as the postings give them (nearKeyHash), none (hashed in groupPages), or all equal (every key
  // collides: the strings decide).
  const hashes = fc.constantFrom('given', 'none', 'colliding');
  fc.assert(
    fc.property(fc.array(passage, { maxLength: 120, size: 'max' }), fc.boolean(), hashes, (ps, collapse, mode) => {
      const list = ps.map((x) => {
        const group_key = `https://g${x.g}`;
        const content_hash = `c${x.c}`;
        const h =
          mode === 'none'
            ? {}
            : mode === 'given'
              ? { _groupHash: nearKeyHash(group_key), _contentHash: nearKeyHash(content_hash) }
              : { _groupHash: 7, _contentHash: 7 };
        return rp(x.ref, x.ordinal, 'h', { group_key, content_hash, ...h });
      });
      const got = groupPages(list, { collapseNearDuplicates: collapse });
      const want = reference(list, collapse);
      assert.equal(got.duplicates, want.duplicates);
      assert.deepStrictEqual(
        got.pages.map((p) => p.passages),
        want.pages.map((p) => p.passages),
      );
      assert.ok(got.pages.every((p) => p.best === p.passages[0]));
    }),
    { numRuns: 600 },
  );
  t.pass('600 random lists grouped as the reference groups them');
});

t.test("candidates from the postings carry their near-duplicate keys' hashes, and follow a page rewritten", async (t) => {
  const pages = (await buildCorpus()).slice(0, 40);
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(128) });
  t.teardown(() => idx.close());
  await idx.upsertPages(pages);
  const hashed = (rows: readonly PassageHit[]) =>
    rows.every((x) => x._groupHash === nearKeyHash(x.group_key) && x._contentHash === nearKeyHash(x.content_hash));
  const rows = async (query: string, mode: 'bm25' | 'vector') => (await retrieve(idx, { query, mode })).passages.map((p) => p.row);
  const bm25 = await rows('cells protein', 'bm25');
  const vector = await rows('cells protein', 'vector');
  t.ok(bm25.length > 5 && vector.length > 5, `both arms find passages (${bm25.length}, ${vector.length})`);
  t.ok(hashed(bm25) && hashed(vector), 'every candidate of both arms carries the hashes of its own keys');
  // The first page again, with another canonical URL and another text: its candidates carry the new keys' hashes.
  const first = pages[0]!;
  const passages = first.passages.map((p, i) =>
    i === 0 ? { ...p, text: `${p.text} zyzzyvaword`, snippetText: `${p.snippetText} zyzzyvaword` } : p,
  );
  await idx.upsertPages([{ ...first, canonicalUrl: 'https://a.example/canonical/x', contentHash: 'f'.repeat(64), passages }]);
  const after = await rows('zyzzyvaword', 'bm25');
  t.ok(
    after.length > 0 && after.every((x) => x.group_key === 'https://a.example/canonical/x'),
    'the rewritten page is found by its new word',
  );
  t.ok(hashed(after), "its candidates carry its new keys' hashes");
  t.ok(after.every((x) => x.content_hash === 'f'.repeat(64)));
});

t.test('diversify: at most 2 per host per page, collapsed counts, stable paging, site: exemption', async (t) => {
  const ranked = ['a', 'a', 'a', 'a', 'b', 'c', 'a', 'b', 'b', 'd'].map((host, i) => ({ host, i }));
  const p1 = diversify(ranked, { limit: 5, offset: 0, exempt: false, hostOf: (x) => x.host });
  t.same(
    p1.window.map((x) => x.i),
    [0, 1, 4, 5, 7],
  );
  t.same(p1.collapsedPerHost, { a: 3 }, 'results 2, 3 and 6 of host a were moved out of page 1');
  const p2 = diversify(ranked, { limit: 5, offset: 5, exempt: false, hostOf: (x) => x.host });
  t.same(
    p2.window.map((x) => x.i),
    [2, 3, 8, 9],
  );
  t.same(p2.collapsedPerHost, { a: 1 }, 'a short page: only capped results remain');
  const all = new Set([...p1.window, ...p2.window].map((x) => x.i));
  t.equal(all.size, 9, 'no result appears on two pages');
  const ex = diversify(ranked, { limit: 5, offset: 0, exempt: true, hostOf: (x) => x.host });
  t.same(
    ex.window.map((x) => x.i),
    [0, 1, 2, 3, 4],
  );
  t.same(ex.collapsedPerHost, {});
});

t.test('title boost: of two passages with the same text, the one whose title has the query word ranks first', async (t) => {
  const dir = t.testdir();
  const idx = await PassageIndex.open({ dir, embedder: null });
  const body = 'Zinc uptake in the gut depends on dietary phytate and on the transporter expression of enterocytes.';
  const filler = (i: number) => `Unrelated note ${i} about weather stations, river gauges and snowfall records in the north.`;
  const pages: PageInput[] = [];
  for (let i = 1; i <= 40; i++) pages.push(makePage(100 + i, 'c.example', [filler(i)], { title: `Field log ${i}` }));
  pages.push(makePage(1, 'a.example', [body], { title: 'Hydrology report' }));
  pages.push(makePage(2, 'b.example', [body], { title: 'Zinc transporters' }));
  await idx.upsertPages(pages);
  await idx.optimize();
  const r = await retrieve(idx, { query: 'zinc transporter', mode: 'bm25' });
  t.same(
    r.passages.map((p) => p.row.page_ref),
    [2, 1],
  );
  t.ok(r.passages[0]!.score > r.passages[1]!.score, 'the title adds to the score');
  const strict = await retrieve(idx, { query: '+zinc +enterocytes', mode: 'bm25' });
  t.same(
    strict.passages.map((p) => p.row.page_ref),
    [2, 1],
    'required words too',
  );
  await idx.close();
  const reopened = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => reopened.close());
  t.same(
    (await retrieve(reopened, { query: 'zinc transporter', mode: 'bm25' })).passages.map((p) => p.row.page_ref),
    [2, 1],
    'title statistics are rebuilt on open',
  );
});
