/**
 * A query at the version the postings already hold starts no sync (which would read the table's version again, on
 * every shard call of a searcher); a write is still seen by the next query.
 */
import t from 'tap';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const page = (ref: number, word: string) =>
  makePage(ref, `h${ref % 3}.example.ca`, [`${word} river permit bone density page${ref}`, `zinc sleep memory ${word}`], {
    title: `Page ${ref}`,
  });
// Filter-only candidates: answered from the postings at the served version, as every text query is.
const keys = async (idx: PassageIndex) => (await idx.scanCandidates({}, 1_000_000)).map((h) => `${h.page_ref}:${h.ordinal}`);

t.test('queries at the served version start no sync; a write is seen by the next query', async (t) => {
  const dir = t.testdir();
  const idx = await PassageIndex.open({ dir, embedder: null, refreshAfterMs: 0, optimizeEvery: 1_000_000 });
  t.teardown(() => idx.close());
  await idx.upsertPages(Array.from({ length: 30 }, (_, i) => page(i + 1, 'alpha')));
  await idx.textEngineReady();
  const before = idx.textPostingsStats()!.syncs.runs;
  t.ok(before > 0, 'the postings were built by a sync');
  for (let i = 0; i < 25; i++) t.equal((await keys(idx)).length, 60);
  t.equal(idx.textPostingsStats()!.syncs.runs, before, '25 queries at the served version ran no sync');

  await idx.upsertPages([page(100, 'omega')]);
  t.same((await keys(idx)).filter((k) => k.startsWith('100:')).sort(), ['100:0', '100:1'], 'the next query sees the write');
  t.ok(idx.textPostingsStats()!.syncs.runs > before, 'the write brought the postings forward by a sync');
});
