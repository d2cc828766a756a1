/**
 * Issue 16: passages of paged documents (PDF) keep their page number through the index, and an index written
 * before the page_no column existed opens and takes it on.
 */
import t from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { formatCite } from '../../index/retrieval/cite.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const pdfPage = (ref: number) => {
  const p = makePage(ref, 'docs.example', ['Part one text.', 'Part two text.', 'Part three text.'], {
    filetype: 'pdf',
    url: `https://docs.example/r${ref}.pdf`,
  });
  return { ...p, passages: p.passages.map((s, i) => ({ ...s, page: [1, 1, 3][i]! })) };
};

t.test('issue 16: page numbers round-trip; HTML passages have none', async (t) => {
  const index = await PassageIndex.open({ dir: t.testdir(), embedder: null });
  t.teardown(() => index.close());
  await index.upsertPages([pdfPage(1), makePage(2, 'www.example', ['Html text.'])]);
  const pdf = await index.pagePassages(1, 0, 10);
  t.same(
    pdf?.passages.map((p) => [p.ordinal, p.page]),
    [
      [0, 1],
      [1, 1],
      [2, 3],
    ],
  );
  t.equal(pdf?.page.filetype, 'pdf');
  const html = await index.pagePassages(2, 0, 10);
  t.same(
    html?.passages.map((p) => p.page),
    [null],
  );
});

t.test('issue 16: an index without the page_no column is migrated on open', async (t) => {
  const dir = t.testdir();
  const first = await PassageIndex.open({ dir, embedder: null });
  await first.upsertPages([makePage(1, 'www.example', ['Old html text.'])]);
  await first.close();
  // What an index written before issue 16 looks like: the same tables without the column.
  const db = await lancedb.connect(dir);
  const passages = await db.openTable('passages');
  await passages.dropColumns(['page_no']);
  t.notOk((await passages.schema()).fields.some((f) => f.name === 'page_no'));
  passages.close();
  const index = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => index.close());
  t.same(
    (await index.pagePassages(1, 0, 10))?.passages.map((p) => [p.text, p.page]),
    [['Old html text.', null]],
    'old rows read with no page',
  );
  await index.upsertPages([pdfPage(2)]);
  t.same(
    (await index.pagePassages(2, 0, 10))?.passages.map((p) => p.page),
    [1, 1, 3],
    'new rows keep their pages',
  );
});

t.test('issue 16: a cite names the PDF page', async (t) => {
  t.equal(
    formatCite({ title: 'Zoning bylaw', host: 'docs.example', date: '2024-06-01T00:00:00Z', page: 12 }),
    'Zoning bylaw — docs.example — 2024-06-01 — p. 12',
  );
  t.equal(formatCite({ title: 'Zoning bylaw', host: 'docs.example', page: 3 }), 'Zoning bylaw — docs.example — p. 3');
  t.equal(formatCite({ title: 'Page', host: 'docs.example', page: null }), 'Page — docs.example');
  t.equal(formatCite({ title: 'Page', host: 'docs.example', page: 0 }), 'Page — docs.example', 'no page 0');
});
