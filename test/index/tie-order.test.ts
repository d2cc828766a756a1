import t from 'tap';
import { join } from 'node:path';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';

const page = (ref: number): PageInput =>
  makePage(
    ref,
    `h${ref}.test`,
    [`Municipal composting schedule number ${ref % 3 === 0 ? 'alpha' : 'beta'} for the green bin collection.`],
    {
      url: `http://h${ref}.test/compost.html`,
      title: 'Composting',
      fetchedAt: '2026-11-01T00:00:00.000Z',
    },
  );

t.test('equal scores rank by page_ref every time, so paging is stable (issue 4)', async (t) => {
  const index = await PassageIndex.open({ dir: join(t.testdir(), 'lance'), embedder: null });
  t.teardown(() => index.close());
  // Upserted in a shuffled order, one page per host, texts of equal length and term counts: BM25 ties.
  for (const ref of [7, 3, 12, 1, 9, 4, 11, 2, 10, 5, 8, 6]) await index.upsertPage(page(ref));
  await index.optimize();
  const order = async () => (await retrieve(index, { query: 'composting collection' })).passages.map((p) => p.row.page_ref);
  const first = await order();
  t.same(
    [...first].sort((a, b) => a - b),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    `all twelve pages (${first.join(',')})`,
  );
  for (let i = 0; i < 5; i++) t.same(await order(), first, `run ${i + 2} ranks the same way`);
  const scores = (await retrieve(index, { query: 'composting collection' })).passages;
  for (let i = 1; i < scores.length; i++) {
    const [a, b] = [scores[i - 1]!, scores[i]!];
    if (a.score === b.score) t.ok(a.row.page_ref < b.row.page_ref, `tie ${a.row.page_ref} before ${b.row.page_ref}`);
  }
});

t.test(
  'pages written after the index was built become findable by title-boosted queries without a manual optimize (issue 4)',
  async (t) => {
    const index = await PassageIndex.open({ dir: join(t.testdir(), 'lance'), embedder: null, refreshAfterMs: 200 });
    t.teardown(() => index.close());
    for (const ref of [7, 3, 12]) await index.upsertPage(page(ref));
    // "composting" is in every title: LanceDB leaves unindexed rows out of such boolean queries until a refresh.
    let found: number[] = [];
    for (let i = 0; i < 100 && found.length < 3; i++) {
      found = (await retrieve(index, { query: 'composting' })).passages.map((p) => p.row.page_ref).sort((a, b) => a - b);
      if (found.length < 3) await new Promise((r) => setTimeout(r, 100));
    }
    t.same(found, [3, 7, 12], 'all three pages found once the debounced refresh ran');
  },
);
