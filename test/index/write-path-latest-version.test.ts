/**
 * The write path takes merge-insert's by-source delete (a scan of the whole table: ≈ 0.5 s a write at 1M passages)
 * only when a page in the batch loses passages (store.ts `#dropsPassages`). Whichever path a batch takes, a page reads
 * back as exactly what was written last: no passage of an older version is left, none of the new one is missing.
 */
import t from 'tap';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';

async function texts(idx: PassageIndex, ref: number): Promise<string[] | null> {
  const got = await idx.pagePassages(ref, 0, 100);
  return got ? got.passages.map((p) => p.text) : null;
}

t.test('pages that grow, shrink, change ordinals or are new, alone and mixed in one batch', async (t) => {
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(32), optimizeEvery: 1_000_000 });
  t.teardown(() => idx.close());
  await idx.upsertPages([
    makePage(1, 'a.example', ['alpha one', 'alpha two', 'alpha three']),
    makePage(2, 'b.example', ['beta one']),
    makePage(3, 'c.example', ['gamma one', 'gamma two']),
  ]);
  t.same(await texts(idx, 1), ['alpha one', 'alpha two', 'alpha three']);

  // Grows (no passage dropped) beside a new page: the plain merge-insert.
  await idx.upsertPages([makePage(2, 'b.example', ['beta one', 'beta two']), makePage(4, 'd.example', ['delta one'])]);
  t.same(await texts(idx, 2), ['beta one', 'beta two'], 'grown');
  t.same(await texts(idx, 4), ['delta one'], 'new');

  // Shrinks beside one that grows and a new one: the batch needs the by-source delete.
  await idx.upsertPages([
    makePage(1, 'a.example', ['alpha rewritten']),
    makePage(3, 'c.example', ['gamma one', 'gamma two', 'gamma three']),
    makePage(5, 'e.example', ['epsilon one']),
  ]);
  t.same(await texts(idx, 1), ['alpha rewritten'], 'shrunk: the old second and third passages are gone');
  t.same(await texts(idx, 3), ['gamma one', 'gamma two', 'gamma three'], 'grown in the same batch');
  t.same(await texts(idx, 5), ['epsilon one'], 'new in the same batch');
  t.same(
    (await retrieve(idx, { query: '+alpha +three' })).passages.map((p) => p.row.page_ref),
    [],
    'the dropped text no longer matches',
  );

  // Same count, other ordinals: passage 0 gone, 1 and 2 kept.
  const moved: PageInput = {
    ...makePage(4, 'd.example', []),
    passages: [
      { ordinal: 1, text: 'delta moved one', snippetText: 'delta moved one', headingPath: [] },
      { ordinal: 2, text: 'delta moved two', snippetText: 'delta moved two', headingPath: [] },
    ],
  };
  await idx.upsertPages([moved]);
  t.same(await texts(idx, 4), ['delta moved one', 'delta moved two'], 'ordinal 0 is gone');

  const st = await idx.stats();
  t.equal(st.pages, 5);
  t.equal(st.passages, 1 + 2 + 3 + 2 + 1, 'exactly the passages last written');
});
