import t from 'tap';
import { RowCache } from '../../index/row-cache.js';
import { createHashingEmbedder } from '../../index/embedder.js';
import { PassageIndex } from '../../index/store.js';
import { compileQuery, parseQuery } from '../../index/query.js';
import { makePage } from '../helpers/page-input.js';

t.test('issue 14: the row cache is bounded in bytes and drops the least recently used first', async (t) => {
  const c = new RowCache<{ text: string }>(1000);
  c.set(1n, { text: 'a'.repeat(200) }); // ≈ 480 bytes
  c.set(2n, { text: 'b'.repeat(200) });
  t.equal(c.size.rows, 2);
  t.ok(c.get(1n), 'row 1 used: row 2 is now the least recently used');
  c.set(3n, { text: 'c'.repeat(200) });
  t.equal(c.get(2n), undefined, 'row 2 dropped');
  t.equal(c.get(1n)?.text[0], 'a');
  t.equal(c.get(3n)?.text[0], 'c');
  t.ok(c.size.bytes <= 1000);
  c.set(4n, { text: 'x'.repeat(5000) });
  t.equal(c.get(4n), undefined, 'a row larger than the whole bound is not kept');
  const off = new RowCache<{ text: string }>(0);
  off.set(1n, { text: 'a' });
  t.equal(off.get(1n), undefined, '0 disables');
});

t.test('issue 14: result rows read once come from the cache, equal, and a replaced page is read anew', async (t) => {
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(32) });
  t.teardown(() => idx.close());
  await idx.upsertPages([makePage(1, 'a.example', ['zebra crossing on a busy road', 'second passage about zebras'])]);
  await idx.textEngineReady();
  const c = compileQuery(parseQuery('zebra'));
  const hits = (await idx.textCandidates(c.text!, null, 10, []))!;
  t.equal(hits.length, 2);
  const first = await idx.passageRows(hits);
  const again = await idx.passageRows(hits);
  t.same([...again.entries()], [...first.entries()], 'the same rows');
  t.notOk('_rowid' in first.get('1:0')!, 'rows go out without the row id');
  await idx.upsertPages([makePage(1, 'a.example', ['zebra crossing, rewritten'], { contentHash: 'v2' })]);
  await idx.textEngineReady();
  const now = (await idx.textCandidates(c.text!, null, 10, []))!;
  const rows = await idx.passageRows(now);
  t.equal(rows.get('1:0')?.text, 'zebra crossing, rewritten', 'the new row, not the cached old one');
  t.equal(rows.get('1:0')?.content_hash, 'v2');
});
