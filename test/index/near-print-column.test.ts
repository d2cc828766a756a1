/**
 * The near_print column through the real LanceDB tables: a page written gets its print in the passages and pages
 * tables, a query folds a near-copy by it, and an index written before the column existed opens, takes it on empty
 * (its pages fold by exact keys only) and prints a page when it is written again.
 */
import t from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { formatNearPrint, nearPrintOf } from '../../index/retrieval/near-print.js';
import { searchPages } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { readPairs, specMainText } from '../helpers/near-duplicate-pairs.js';
import { makePage } from '../helpers/page-input.js';

// A real article and its copy with a syndication note and a date line (the labelled set's texts).
const pair = readPairs().pairs.find((p) => p.kind === 'boilerplate' && p.b.edits.includes('note'))!;
const paragraphs = (text: string) => text.split(/\n\n+/).filter((x) => x.trim() !== '');
const original = paragraphs(specMainText(pair.a));
const copy = paragraphs(specMainText(pair.b));
const query = original
  .find((p) => p.split(/\s+/).length >= 12)!
  .split(/\s+/)
  .slice(0, 10)
  .join(' ');

const pages = () => [
  makePage(1, 'news.example', original, { contentHash: 'a'.repeat(64) }),
  makePage(2, 'mirror.example', copy, { contentHash: 'b'.repeat(64) }),
];

t.test('a written page carries its print; a query folds the copy into the original', async (t) => {
  const index = await PassageIndex.open({ dir: t.testdir(), embedder: null });
  t.teardown(() => index.close());
  await index.upsertPages(pages());
  const res = await searchPages(index, { query, mode: 'bm25', limit: 10, offset: 0 });
  t.equal(res.pages.length, 1);
  const kept = res.pages[0]!.best.row.page_ref;
  t.same(res.pages[0]?.folded, [3 - kept], 'the other copy is folded into the one shown');
  t.equal(res.duplicates, 1);
  t.equal(res.pages[0]?.best.row.near_print, formatNearPrint(nearPrintOf((kept === 1 ? original : copy).join('\n'))!));
});

t.test('an index without the near_print column is upgraded on open and prints pages written again', async (t) => {
  const dir = t.testdir();
  const first = await PassageIndex.open({ dir, embedder: null });
  await first.upsertPages(pages());
  await first.close();
  // What an index written before the column looks like: both tables without it.
  const db = await lancedb.connect(dir);
  for (const name of ['passages', 'pages']) {
    const table = await db.openTable(name);
    await table.dropColumns(['near_print']);
    t.notOk((await table.schema()).fields.some((f) => f.name === 'near_print'));
    table.close();
  }
  const index = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => index.close());
  const before = await searchPages(index, { query, mode: 'bm25', limit: 10, offset: 0 });
  t.same(
    before.pages.map((p) => [p.best.row.page_ref, p.best.row.near_print]).sort(),
    [
      [1, null],
      [2, null],
    ],
    'old pages have no print: nothing folds them but exact keys',
  );
  t.equal(await index.nearCopyCount('mirror.example'), 0);
  await index.upsertPages(pages());
  const after = await searchPages(index, { query, mode: 'bm25', limit: 10, offset: 0 });
  t.same(
    after.pages.map((p) => [p.best.row.page_ref, ...p.folded].sort()),
    [[1, 2]],
  );
});

t.test("nearCopyCount counts a host's pages that fold into an earlier one of its own", async (t) => {
  const index = await PassageIndex.open({ dir: t.testdir(), embedder: null });
  t.teardown(() => index.close());
  const [a, b] = pages();
  await index.upsertPages([
    a!,
    { ...b!, host: 'news.example', url: 'https://news.example/print/1' },
    makePage(3, 'news.example', paragraphs(specMainText(readPairs().pairs.find((p) => p.kind === 'different')!.b))),
    { ...b!, pageRef: 4 },
  ]);
  t.equal(await index.nearCopyCount('news.example'), 1);
  t.equal(await index.nearCopyCount('mirror.example'), 0, 'a copy on another host does not count');
  t.equal(await index.nearCopyCount('unknown.example'), 0);
});
