import t from 'tap';
import { analyze } from '../../index/analyzer.js';

const titleTerms = (q: string) => analyze(q, 'en');
const en = (titles: string[]) => titles.map((title) => ({ title, lang: 'en' }));
import { TitleStats, titleTerms as exportedTitleTerms } from '../../index/title-stats.js';

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

t.test('staleness: a full build resets it; adds beyond a fifth of the titles (at least 1000) make it stale', async (t) => {
  const s = TitleStats.of(en(Array.from({ length: 10_000 }, (_, i) => `Title ${i}`)));
  t.notOk(s.stale);
  for (let i = 0; i < 2000; i++) s.add(`More ${i}`, 'en');
  t.notOk(s.stale, '2000 adds to 12000 titles: not yet');
  for (let i = 0; i < 1000; i++) s.add(`More ${i}`, 'en');
  t.ok(s.stale, '3000 adds to 13000 titles: stale');
  t.notOk(TitleStats.of(en(['a b'])).stale);
});

t.test('the sliced build counts exactly what the one-pass build counts', async (t) => {
  const titles = Array.from({ length: 12_345 }, (_, i) => `Report ${i % 97} on ${i % 3 ? 'zinc' : 'water'} levels ${i}`);
  const a = TitleStats.of(en(titles));
  const b = await TitleStats.build(en(titles));
  t.equal(b.size, a.size);
  for (const q of ['zinc', 'water levels', 'report 5']) {
    const terms = titleTerms(q);
    t.equal(b.score(terms, `Report 5 on ${q}`, 'en'), a.score(terms, `Report 5 on ${q}`, 'en'), q);
  }
  t.notOk(b.stale);
});

t.test("issue 14: a title's terms handed over (the postings keep them per page) score as the title itself does", async (t) => {
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
      const given = s.score(q, title, lang, exportedTitleTerms(title, lang));
      t.equal(given, s.score(q, title, lang), `${query} / ${title || '(empty)'} (${lang}): ${given.toFixed(4)}`);
    });
  }
});
