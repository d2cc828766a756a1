/**
 * Issue 10: a process that only reads the index (an `api` replica) opened before the writer's first write must find
 * what the writer then adds — it used to decide once, at open, that there was no full-text index, and answered every
 * text query empty until restarted. Since issue 42 the in-process postings answer every BM25 query, filtered or not:
 * both kinds are checked, and neither may need a full-text index in LanceDB.
 */
import t from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { localIndexLocation } from '../../index/engines/lance/location.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { makePage } from '../helpers/page-input.js';

t.test('issue 10: a reader opened on an empty index finds what the writer adds, by text, with and without filters', async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => writer.close());
  const reader = await PassageIndex.open({ location: localIndexLocation(dir, 0), embedder: null, followHostsMs: 100 });
  t.teardown(() => reader.close());
  t.same((await retrieve(reader, { query: 'zebrafish permits', mode: 'bm25' })).passages, [], 'nothing indexed yet');

  await writer.upsertPages([makePage(1, 'ville.example', ['Zebrafish permits are issued by the city'])]);
  // The language filter compiles against the languages the reader has learned (followHostsMs).
  const deadline = Date.now() + 10_000;
  const filteredQuery = () => retrieve(reader, { query: 'zebrafish permits', mode: 'bm25', filters: { language: 'en' } });
  let filtered = await filteredQuery();
  while (filtered.passages.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    filtered = await filteredQuery();
  }
  t.same(
    filtered.passages.map((p) => p.row.page_ref),
    [1],
    'a filtered text query finds the page',
  );
  const plain = await retrieve(reader, { query: 'zebrafish permits', mode: 'bm25' });
  t.same(
    plain.passages.map((p) => p.row.page_ref),
    [1],
    'an unfiltered one too',
  );
  const db = await lancedb.connect(dir);
  const table = await db.openTable('passages');
  t.notOk(
    (await table.listIndices()).some((i) => i.columns.includes('search_text')),
    'no full-text index on the passages: the postings answered both',
  );
  t.equal(reader.textPostingsStats()!.answers >= 3, true, 'the reader counted its answers from the postings');
  table.close();
  db.close();
});
