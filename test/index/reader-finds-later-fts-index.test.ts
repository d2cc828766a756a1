/**
 * Issue 10: a process that only reads the index (an `api` replica) opened before the writer's first write must start
 * using the full-text index the writer then builds — it used to decide once, at open, that there was none, and
 * answered every text query empty until restarted. Filtered queries are the ones LanceDB's full-text index answers
 * (unfiltered ones go to the in-process postings), so both kinds are checked.
 */
import t from 'tap';
import { PassageIndex } from '../../index/store.js';
import { localIndexLocation } from '../../index/location.js';
import { retrieve } from '../../index/retrieval.js';
import { makePage } from '../helpers/page-input.js';

t.test('issue 10: a reader opened on an empty index finds what the writer adds, by text, with and without filters', async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => writer.close());
  const reader = await PassageIndex.open({ location: localIndexLocation(dir, 0), embedder: null, followHostsMs: 100 });
  t.teardown(() => reader.close());
  t.equal(reader.fullTextReady(), false, 'nothing indexed yet');

  await writer.upsertPages([makePage(1, 'ville.example', ['Zebrafish permits are issued by the city'])]);
  const deadline = Date.now() + 10_000;
  while (!reader.fullTextReady() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.equal(reader.fullTextReady(), true, "the reader learned of the writer's full-text index");
  const filtered = await retrieve(reader, { query: 'zebrafish permits', mode: 'bm25', filters: { language: 'en' } });
  t.same(
    filtered.passages.map((p) => p.row.page_ref),
    [1],
    'a filtered text query (LanceDB full-text index) finds the page',
  );
  const plain = await retrieve(reader, { query: 'zebrafish permits', mode: 'bm25' });
  t.same(
    plain.passages.map((p) => p.row.page_ref),
    [1],
    'an unfiltered one (in-process postings) too',
  );
});
