import t from 'tap';
import { join } from 'node:path';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { makePage } from '../helpers/page-input.js';

// Two passages alike in every statistic BM25 reads (length, one term of the query each, each term in one passage),
// among filler pages so that IDF is well defined. Titles hold no query word (no title boost).
const FILLER = [
  'Council minutes for the spring session.',
  'Library opening hours in winter.',
  'Road repairs near the bridge.',
  'Parking rules for the market.',
];

t.test('issue 15: a repeated query word counts once per occurrence (Lucene BM25), through the fast single match query', async (t) => {
  const index = await PassageIndex.open({ dir: join(t.testdir(), 'lance'), embedder: null });
  t.teardown(() => index.close());
  await index.upsertPage(makePage(1, 'a.test', ['Glacier melt report for the northern valley.']));
  await index.upsertPage(makePage(2, 'b.test', ['Wildfire smoke report for the northern valley.']));
  for (const [i, text] of FILLER.entries()) await index.upsertPage(makePage(10 + i, `f${i}.test`, [text]));
  await index.optimize();
  const score = async (query: string) => {
    const r = await retrieve(index, { query, mode: 'bm25' });
    return new Map(r.passages.map((p) => [p.row.page_ref, p.score]));
  };

  const once = await score('glacier wildfire');
  t.equal(once.get(1), once.get(2), 'one occurrence each: a tie');
  const single = await score('glacier');
  const twice = await score('glacier glacier wildfire');
  // glacier weighs 2 of 3: BM25 doubles for page 1 (2 × its single-term score) and coordination is ½ + ½ × ⅔;
  // page 2 holds 1 of 3 words: its single-term score × (½ + ½ × ⅓).
  t.ok(Math.abs(twice.get(1)! - 2 * single.get(1)! * (0.5 + 0.5 * (2 / 3))) < 1e-4, `page 1: ${twice.get(1)} = 2 × ${single.get(1)} × 5/6`);
  t.ok(
    Math.abs(twice.get(2)! - (once.get(2)! / (0.5 + 0.5 * 0.5)) * (0.5 + 0.5 * (1 / 3))) < 1e-4,
    `page 2: ${twice.get(2)} holds one of three`,
  );
  const thrice = await score('glacier glacier glacier wildfire');
  t.ok(
    Math.abs(thrice.get(1)! - 3 * single.get(1)! * (0.5 + 0.5 * (3 / 4))) < 1e-4,
    `three occurrences count three times (${thrice.get(1)})`,
  );
  const order = (await retrieve(index, { query: 'wildfire glacier glacier', mode: 'bm25' })).passages.map((p) => p.row.page_ref);
  t.same(order, [1, 2], 'the repeated word ranks its passage first');
});
