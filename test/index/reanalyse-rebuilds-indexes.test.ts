/**
 * Issue 14: an index written by an older text analysis is re-analysed at open (every passage row rewritten). The
 * full-text index was rebuilt, but the vector and page_ref indexes covered none of the rewritten rows until later
 * writes triggered an optimize: a quiet index then searched its vectors flat (≈ 4× slower hybrid queries at 100k).
 */
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { searchPages } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

t.test('issue 14: after a re-analysis at open every passage index covers every row', async (t) => {
  const dir = t.testdir();
  // A low vector-index threshold so that this small table has an IVF-PQ index, as a large one would.
  const open = () => PassageIndex.open({ dir, embedder: createHashingEmbedder(32), optimizeEvery: 1_000_000, vectorIndexThreshold: 300 });
  let idx = await open();
  await idx.upsertPages(
    Array.from({ length: 200 }, (_, i) =>
      makePage(i + 1, `h${i % 7}.example`, [`zebra crossing number ${i} on the road`, `a second passage about quokkas ${i}`]),
    ),
  );
  await idx.optimize();
  await idx.close();
  const indexes = async () => {
    const db = await lancedb.connect(dir);
    const table = await db.openTable('passages');
    const list = await table.listIndices();
    table.close();
    db.close();
    return Object.fromEntries(list.map((i) => [i.columns.join(','), { indexed: i.numIndexedRows, unindexed: i.numUnindexedRows }]));
  };
  const built = await indexes();
  t.same(Object.keys(built).sort(), ['page_ref', 'vector'], 'vector and page_ref indexes (no full-text one: the postings answer BM25)');
  for (const [col, n] of Object.entries(built)) t.same(n, { indexed: 400, unindexed: 0 }, `${col}: every row indexed after the build`);

  // As if written by the first analysis: the next open re-analyses every passage.
  const metaFile = join(dir, 'svc-index-meta.json');
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { analysis?: number };
  t.ok((meta.analysis ?? 1) > 1, 'the index records its analysis version');
  writeFileSync(metaFile, JSON.stringify({ ...meta, analysis: 1 }));
  idx = await open();
  t.teardown(() => idx.close());
  t.equal(JSON.parse(readFileSync(metaFile, 'utf8')).analysis, meta.analysis, 're-analysed to the current version');
  const after = await indexes();
  t.same(Object.keys(after).sort(), ['page_ref', 'vector'], 'the same indexes after the re-analysis');
  for (const [col, n] of Object.entries(after)) t.same(n, { indexed: 400, unindexed: 0 }, `${col}: every rewritten row indexed at open`);

  const res = await searchPages(idx, { query: 'quokkas 17', mode: 'hybrid', limit: 5, offset: 0 });
  t.equal(res.pages[0]?.best.row.page_ref, 18, 'and the index answers from its rewritten rows');
});
