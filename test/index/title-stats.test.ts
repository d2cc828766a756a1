import t from 'tap';
import { titleTerms } from '../../index/query.js';
import { TitleStats } from '../../index/title-stats.js';

t.test('title BM25: matching terms score, rarer terms weigh more, longer titles less', async (t) => {
  const titles = [
    ...Array.from({ length: 50 }, (_, i) => `Annual report ${i} of the water board`),
    'Zinc transporters in the gut',
    'Zinc',
    'Water quality and zinc levels in northern rivers and lakes of the region',
  ];
  const s = TitleStats.of(titles);
  t.equal(s.size, titles.length);
  const q = titleTerms('zinc transporter');
  t.same(q, ['zinc', 'transporter']);
  t.equal(s.score(q, 'Annual report 3 of the water board'), 0, 'no query term, no score');
  t.ok(s.score(q, 'Zinc transporters in the gut') > s.score(q, 'Zinc'), 'two terms beat one');
  t.ok(s.score(q, 'Zinc') > s.score(q, 'Water quality and zinc levels in northern rivers and lakes of the region'), 'length normalisation');
  t.ok(s.score(titleTerms('zinc'), 'Zinc') > s.score(titleTerms('water'), 'Water'), 'a rare term weighs more than a common one');
  t.equal(s.score(titleTerms('the of and'), 'The of and'), 0, 'stop words carry no weight');
  t.equal(new TitleStats().score(q, 'Zinc'), 0, 'no statistics, no score');
});

t.test('staleness: a full build resets it; adds beyond a fifth of the titles (at least 1000) make it stale', async (t) => {
  const s = TitleStats.of(Array.from({ length: 10_000 }, (_, i) => `Title ${i}`));
  t.notOk(s.stale);
  for (let i = 0; i < 2000; i++) s.add(`More ${i}`);
  t.notOk(s.stale, '2000 adds to 12000 titles: not yet');
  for (let i = 0; i < 1000; i++) s.add(`More ${i}`);
  t.ok(s.stale, '3000 adds to 13000 titles: stale');
  t.notOk(TitleStats.of(['a b']).stale);
});

t.test('the sliced build counts exactly what the one-pass build counts', async (t) => {
  const titles = Array.from({ length: 12_345 }, (_, i) => `Report ${i % 97} on ${i % 3 ? 'zinc' : 'water'} levels ${i}`);
  const a = TitleStats.of(titles);
  const b = await TitleStats.build(titles, 1000);
  t.equal(b.size, a.size);
  for (const q of ['zinc', 'water levels', 'report 5']) {
    const terms = titleTerms(q);
    t.equal(b.score(terms, `Report 5 on ${q}`), a.score(terms, `Report 5 on ${q}`), q);
  }
  t.notOk(b.stale);
});
