/**
 * Issue 14: a reader following the writer (a search thread, an api replica) learns the writer's hosts, host ids and
 * languages from the pages rows committed since its last look, not by re-reading every page's host per pages version
 * (222k rows per commit at 1M passages). What it learns must stay what a whole re-read would give: new hosts, new
 * languages, and host ids rewritten by `adopt` (an update) or moved by a compaction.
 */
import t from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { join } from 'node:path';
import { followWriter, type HostRow } from '../../index/engines/lance/host-ids.js';
import { localIndexLocation } from '../../index/engines/lance/location.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { makePage } from '../helpers/page-input.js';

const text = (host: string) => [`Ferry timetables and harbour notices published by ${host}`];

t.test('issue 14: a following reader learns new hosts, languages and adopted host ids after its open', async (t) => {
  const dir = t.testdir();
  const lance = join(dir, 'lance');
  const first = await PassageIndex.open({ dir: lance, embedder: null });
  await first.upsertPages([makePage(1, 'a.test', text('a.test')), makePage(2, 'b.test', text('b.test'))]);

  const reader = await PassageIndex.open({ location: localIndexLocation(lance), embedder: null, followHostsMs: 0, writes: false });
  t.teardown(() => reader.close());
  const sites = async (host: string) =>
    (await retrieve(reader, { query: `ferry timetables site:${host}`, mode: 'bm25' })).passages.map((p) => p.row.page_ref);
  t.same([reader.hostIdsUnder('a.test'), reader.hostIdsUnder('b.test')], [[1], [2]], 'read at open');
  t.equal(reader.hasLang('fr'), false);

  // New pages (a new host, a new language) and a page written again.
  await first.upsertPages([
    makePage(3, 'c.test', text('c.test'), { lang: 'fr' }),
    makePage(1, 'a.test', [...text('a.test'), 'Winter schedule'], { contentHash: 'hash-1b' }),
  ]);
  await reader.catchUp(await first.servingVersion());
  t.same(reader.hostIdsUnder('c.test'), [3], 'a host new since the open');
  t.equal(reader.hasLang('fr'), true, 'a language new since the open');
  t.same(await sites('c.test'), [3]);

  // A compaction rewrites the rows into new fragments: every host stays known under its id.
  await first.optimize();
  await first.upsertPages([makePage(4, 'd.test', text('d.test'))]);
  await reader.catchUp(await first.servingVersion());
  t.same(
    ['a.test', 'b.test', 'c.test', 'd.test'].map((h) => reader.hostIdsUnder(h)),
    [[1], [2], [3], [4]],
    'after a compaction',
  );
  await first.close();

  // Another writer adopts the shared database's ids: the rows are updated in place of the old ones.
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const hostIds = sqliteRepositories(db).hostIds;
  for (const h of ['d.test', 'c.test', 'b.test', 'a.test']) await hostIds.idFor(h); // 1 … 4, in reverse
  const second = await PassageIndex.open({ dir: lance, embedder: null, hostIds });
  t.teardown(() => second.close());
  await reader.catchUp(await second.servingVersion());
  t.same(
    ['a.test', 'b.test', 'c.test', 'd.test'].map((h) => reader.hostIdsUnder(h)),
    [[4], [3], [2], [1]],
    'the adopted ids',
  );
  for (const [host, ref] of [
    ['a.test', 1],
    ['d.test', 4],
  ] as const)
    t.same(await sites(host), [ref], `site:${host} after the adoption`);
});

t.test('issue 14: a look reads only the pages rows committed since the last one', async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => writer.close());
  await writer.upsertPages([1, 2, 3, 4, 5].map((n) => makePage(n, `h${n}.test`, text(`h${n}.test`))));
  const conn = await lancedb.connect(dir, { readConsistencyInterval: 0 });
  t.teardown(() => conn.close());
  const pages = await conn.openTable('pages');
  t.teardown(() => pages.close());

  const looks: { hosts: string[]; count: number }[] = [];
  const follower = followWriter(
    pages,
    0,
    null, // from nothing: the first look reads every row
    (rows: HostRow[], count: number) => void looks.push({ hosts: rows.map((r) => r.host).sort(), count }),
    undefined,
  );
  t.teardown(() => follower.stop());
  await follower.lookNow();
  t.same(looks.at(-1), { hosts: ['h1.test', 'h2.test', 'h3.test', 'h4.test', 'h5.test'], count: 5 });
  await follower.lookNow();
  t.equal(looks.length, 1, 'no look at an unchanged version reads anything');

  await writer.upsertPages([makePage(6, 'h6.test', text('h6.test'))]);
  await follower.lookNow();
  t.same(looks.at(-1), { hosts: ['h6.test'], count: 6 }, 'one new page: its row only');

  await writer.upsertPages([makePage(2, 'h2.test', ['Rewritten'], { contentHash: 'hash-2b', lang: 'de' })]);
  await follower.lookNow();
  t.same(looks.at(-1), { hosts: ['h2.test'], count: 6 }, 'a page written again: its new row only');

  await writer.removePage(3);
  await follower.lookNow();
  t.same(looks.at(-1), { hosts: [], count: 5 }, 'a removal: no rows, the count moves');

  await pages.update({ where: `host = 'h4.test'`, valuesSql: { host_id: 'CAST(40 AS INT)' } });
  await follower.lookNow();
  t.same(looks.at(-1), { hosts: ['h4.test'], count: 5 }, 'an update (adopt): the updated rows');
});

t.test('issue 14: after a rollback (a write interrupted and restored away), rows written next are still read', async (t) => {
  // write-journal.ts rolls an interrupted write back by restoring the version before it; LanceDB keeps fragment ids
  // rising across the restore, so the rows written afterwards have row ids above every one a reader saw.
  const conn = await lancedb.connect(t.testdir());
  t.teardown(() => conn.close());
  const row = (page_ref: number, host: string) => ({ page_ref, host, host_id: page_ref, lang: 'en' });
  const pages = await conn.createTable('pages', [row(1, 'a.test')]);
  t.teardown(() => pages.close());
  const seen: string[][] = [];
  const follower = followWriter(pages, 0, null, (rows: HostRow[]) => void seen.push(rows.map((r) => r.host)), undefined);
  t.teardown(() => follower.stop());
  await follower.lookNow();
  const before = await pages.version();
  await pages.add([row(2, 'interrupted.test')]);
  await follower.lookNow(); // the reader saw the write that is then rolled back
  await pages.checkout(before);
  await pages.restore();
  await pages.add([row(3, 'after.test')]);
  await follower.lookNow();
  t.same(seen, [['a.test'], ['interrupted.test'], ['after.test']]);
});
