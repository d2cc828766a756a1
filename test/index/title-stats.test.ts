import fc from 'fast-check';
import t from 'tap';
import { analyze } from '../../index/retrieval/analyzer.js';

const titleTerms = (q: string) => analyze(q, 'en');
const en = (titles: string[]) => titles.map((title) => ({ title, lang: 'en' }));
import { TitleStats, titleTermIds, titleTerms as exportedTitleTerms, unpackTitleIds } from '../../index/engines/memory/title-stats.js';

t.test('title BM25: matching terms score, rarer terms weigh more, longer titles less', async (t) => {
  const titles = [
    ...Array.from({ length: 50 }, (_, i) => `Annual report ${i} of the water board`),
    'Zinc transporters in the gut',
    'Zinc',
    'Water quality and zinc levels in northern rivers and lakes of the region',
  ];
  const s = TitleStats.of(en(titles));
  t.equal(s.size, titles.length);
  const q = titleTerms('zinc transporter');
  t.same(q, ['zinc', 'transport'], 'the index analysis: stemmed');
  t.equal(s.score(q, 'Annual report 3 of the water board', 'en'), 0, 'no query term, no score');
  t.ok(s.score(q, 'Zinc transporters in the gut', 'en') > s.score(q, 'Zinc', 'en'), 'two terms beat one');
  t.ok(
    s.score(q, 'Zinc', 'en') > s.score(q, 'Water quality and zinc levels in northern rivers and lakes of the region', 'en'),
    'length normalisation',
  );
  t.ok(
    s.score(titleTerms('zinc'), 'Zinc', 'en') > s.score(titleTerms('water'), 'Water', 'en'),
    'a rare term weighs more than a common one',
  );
  t.equal(s.score(titleTerms('the of and'), 'The of and', 'en'), 0, 'stop words carry no weight');
  t.equal(new TitleStats().score(q, 'Zinc', 'en'), 0, 'no statistics, no score');
});

/** Statistics with their terms in order: what two counts of the same titles agree on. */
const plain = (s: TitleStats) => {
  const { titles, terms, dfTerms, dfCounts } = s.exportState();
  return { titles, terms, df: dfTerms.map((w, i) => [w, dfCounts[i]!] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1)) };
};

t.test('titles added and removed in any order leave exactly the statistics of a count of the titles left', async (t) => {
  const word = fc.constantFrom('zinc', 'water', 'report', 'levels', 'rivers', 'the');
  await fc.assert(
    fc.property(
      fc.array(fc.record({ title: fc.array(word, { minLength: 0, maxLength: 4 }), keep: fc.boolean() }), { maxLength: 30 }),
      (ops) => {
        const s = new TitleStats();
        for (const o of ops) s.addTerms(exportedTitleTerms(o.title.join(' '), 'en'));
        for (const o of ops) if (!o.keep) s.removeTerms(exportedTitleTerms(o.title.join(' '), 'en'));
        const counted = TitleStats.of(en(ops.filter((o) => o.keep).map((o) => o.title.join(' '))));
        return JSON.stringify(plain(s)) === JSON.stringify(plain(counted));
      },
    ),
  );
  const s = TitleStats.of(en(['Zinc report', 'Water report']));
  const q = titleTerms('zinc report');
  const before = s.score(q, 'Zinc report', 'en');
  s.removeTerms(exportedTitleTerms('Water report', 'en'));
  t.not(s.score(q, 'Zinc report', 'en'), before, 'a removal changes the next score of the same query terms');
  t.same(
    plain(s),
    {
      titles: 1,
      terms: 2,
      df: [
        ['report', 1],
        ['zinc', 1],
      ],
    },
    'terms no title holds are dropped',
  );
});

t.test("issue 14: a title's terms handed over as ids (the postings keep them per page) score as the title itself does", async (t) => {
  const titles = [
    'Zinc transporters in the gut and the zinc balance',
    'Les transporteurs de zinc dans l’intestin',
    'Water quality and zinc levels in northern rivers',
    '',
    'Report',
  ];
  const langs = ['en', 'fr', null, 'en', 'de'];
  const s = TitleStats.of(titles.map((title, i) => ({ title, lang: langs[i]! })));
  for (const query of ['zinc transporter', 'zinc zinc levels', 'intestin zinc', 'report', 'nothing here']) {
    const q = titleTerms(query);
    titles.forEach((title, i) => {
      const lang = langs[i];
      const given = s.score(q, title, lang, titleTermIds(exportedTitleTerms(title, lang)));
      t.equal(given, s.score(q, title, lang), `${query} / ${title || '(empty)'} (${lang}): as ids, the same bits (${given.toFixed(4)})`);
    });
  }
});

t.test('issue 14: titles as ids, queries interleaved and terms first seen after a query was marked', async (t) => {
  const s = TitleStats.of(en(['Zinc in rivers', 'Copper in lakes', 'Quokka habitats of Rottnest Island', 'Rivers and lakes']));
  const zinc = titleTerms('zinc rivers');
  const copper = titleTerms('copper lakes');
  const a = titleTermIds(exportedTitleTerms('Zinc in rivers', 'en'));
  const b = titleTermIds(exportedTitleTerms('Copper in lakes', 'en'));
  const zincA = s.score(zinc, 'Zinc in rivers', 'en');
  t.ok(zincA > 0);
  t.equal(s.score(zinc, 'Zinc in rivers', 'en', a), zincA);
  t.equal(s.score(copper, 'Copper in lakes', 'en', b), s.score(copper, 'Copper in lakes', 'en'), 'another query marks its own terms');
  t.equal(s.score(copper, 'Zinc in rivers', 'en', a), 0, 'and no longer the first one’s');
  t.equal(s.score(zinc, 'Zinc in rivers', 'en', a), zincA, 'the first one again: marked again');
  // Two statistics in one thread (two indexes, or a rebuild beside the old one), each keeping its last query.
  const other = TitleStats.of(en(['Copper in lakes', 'Rivers of zinc']));
  const riversCopper = titleTerms('rivers copper'); // shares "rivers" with the first query, in another slot
  const otherScore = other.score(riversCopper, 'Rivers of zinc', 'en');
  t.ok(otherScore > 0);
  t.equal(other.score(riversCopper, 'Rivers of zinc', 'en', titleTermIds(exportedTitleTerms('Rivers of zinc', 'en'))), otherScore);
  t.equal(s.score(zinc, 'Zinc in rivers', 'en', a), zincA, 'a query kept while another statistics marked its own');
  t.equal(
    other.score(riversCopper, 'Rivers of zinc', 'en', titleTermIds(exportedTitleTerms('Rivers of zinc', 'en'))),
    otherScore,
    'and that one again',
  );
  // A query term no title had when the query was marked, then a title holding it (a sync between two calls).
  const quokka = titleTerms('quokka habitats');
  t.equal(s.score(quokka, 'Zinc in rivers', 'en', a), 0);
  const c = titleTermIds(exportedTitleTerms('Quokka habitats of Rottnest Island', 'en'));
  t.equal(
    s.score(quokka, 'Quokka habitats of Rottnest Island', 'en', c),
    s.score(quokka, 'Quokka habitats of Rottnest Island', 'en'),
    'the new terms are found',
  );
  t.ok(s.score(quokka, 'Quokka habitats of Rottnest Island', 'en', c) > 0);
});

t.test('issue 14: titles as ids score as the titles themselves for queries of 1 to 400 distinct terms (property)', async (t) => {
  // Words the analyzer keeps as they are (letters only, no stop word, no stem change): "qz" + a base-26 number.
  const word = (n: number) => `qz${n.toString(26).replace(/[0-9]/g, (d) => String.fromCharCode(97 + Number(d)))}x`;
  const vocabulary = Array.from({ length: 3000 }, (_, i) => word(i));
  t.same(titleTerms(`${vocabulary[7]} ${vocabulary[2999]}`), [vocabulary[7], vocabulary[2999]], 'the words are kept as they are');
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.nat(2999), { minLength: 1, maxLength: 20, size: 'max' }), { minLength: 1, maxLength: 60, size: 'max' }),
      fc.array(fc.nat(3999), { minLength: 1, maxLength: 400, size: 'max' }), // ≥ 3000: a word no title has
      (titleWords, queryWords) => {
        const titles = titleWords.map((ws) => ws.map((w) => vocabulary[w]).join(' '));
        const s = TitleStats.of(en(titles));
        const q = titleTerms(queryWords.map((w) => vocabulary[w] ?? word(w)).join(' '));
        for (const title of titles) {
          const ids = titleTermIds(exportedTitleTerms(title, 'en'));
          if (s.score(q, title, 'en', ids) !== s.score(q, title, 'en')) return false;
        }
        return true;
      },
    ),
    { numRuns: 300 },
  );
});

t.test('issue 14: title ids packed in a string: one unit below 2^15, two above, the same ids and scores', async (t) => {
  // This thread's ids for 40,000 more distinct terms: the later ones are above 2^15.
  const words = Array.from({ length: 40_000 }, (_, i) => `pk${i.toString(36)}`);
  const ids = unpackTitleIds(titleTermIds(words));
  t.equal(ids.length, words.length);
  t.ok(
    ids.every((id, i) => i === 0 || id === ids[i - 1]! + 1),
    'new terms get the next ids, in order',
  );
  // The tests before this one give this thread's titles a few thousand terms, so these ids run across 2^15.
  t.ok(ids[0]! < 2 ** 15 - 1 && ids.at(-1)! >= 2 ** 15, `ids ${ids[0]}–${ids.at(-1)} run across 2^15`);
  t.same(unpackTitleIds(titleTermIds(words)), ids, 'known terms keep their ids');
  const big = ids.findIndex((id) => id >= 2 ** 15);
  t.ok(big >= 0);
  const edge = 2 ** 15 - 1 - ids[0]!;
  t.same(unpackTitleIds(titleTermIds([words[edge]!, words[edge + 1]!])), [2 ** 15 - 1, 2 ** 15], 'across 2^15');
  t.equal(titleTermIds([words[edge]!, words[edge + 1]!]).length, 3, 'one unit, then two');
  t.equal(titleTermIds([words[big]!]).length, 2, 'an id above 2^15 takes two units');
  t.equal(titleTermIds([words[0]!, words[0]!]).length, 2, 'ids below 2^15: one unit each');
  t.equal(titleTermIds([]), '');
  // Titles mixing ids below and above 2^15, repeats included: the same bits as the title's own terms.
  const titles = [0, 1, 2, 3].map((j) => [words[j]!, words[big + j]!, words[big + j]!, words[39_999 - j]!, words[j * 7]!].join(' '));
  const s = TitleStats.of(en(titles));
  for (const q of [`${words[big]} ${words[0]}`, words[39_999]!, `${words[1]} ${words[big + 1]} ${words[39_998]} nothing`]) {
    const terms = titleTerms(q);
    for (const title of titles) {
      const packed = titleTermIds(exportedTitleTerms(title, 'en'));
      t.equal(unpackTitleIds(packed).length, 5);
      t.equal(s.score(terms, title, 'en', packed), s.score(terms, title, 'en'), `${q} / ${title}`);
    }
  }
  t.ok(s.score(titleTerms(words[big]!), titles[0]!, 'en', titleTermIds(exportedTitleTerms(titles[0]!, 'en'))) > 0);
});
