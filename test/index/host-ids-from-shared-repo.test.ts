import t, { type Test } from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { join } from 'node:path';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';

const page = (ref: number, host: string): PageInput => {
  const text = `Passage of page ${ref} about passports on ${host}`;
  return {
    pageRef: ref,
    url: `https://${host}/p/${ref}`,
    canonicalUrl: null,
    host,
    title: `Page ${ref}`,
    description: '',
    lang: 'en',
    publishedAt: null,
    modifiedAt: null,
    dateSource: 'none',
    fetchedAt: '2026-11-20T00:00:00Z',
    contentHash: `hash-${ref}`,
    snippet: { nosnippet: false, maxSnippet: null },
    filetype: 'html',
    signals: { declaredTypes: [], addressCountries: [], addressRegions: [] },
    images: [],
    passages: [{ ordinal: 0, text, snippetText: text, headingPath: [] }],
  };
};

/** host -> host_id as stored in both tables (read straight from LanceDB); a disagreement between rows fails. */
const storedHostIds = async (t: Test, lance: string): Promise<Record<string, number>> => {
  const conn = await lancedb.connect(lance);
  const out: Record<string, number> = {};
  for (const name of ['pages', 'passages']) {
    const rows = (await (await conn.openTable(name)).query().select(['host', 'host_id']).toArray()) as { host: string; host_id: number }[];
    for (const r of rows) {
      if (out[r.host] !== undefined && out[r.host] !== r.host_id) t.fail(`${r.host}: rows with ${out[r.host]} and ${r.host_id}`);
      out[r.host] = r.host_id;
    }
  }
  conn.close();
  return out;
};

t.test('issue 10: host ids of index rows come from the shared HostIdsRepo, not from the index writer', async (t) => {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  const hostIds = sqliteRepositories(db).hostIds;
  // Another writer (another process) saw two hosts first: the index must not hand out 1 and 2 again.
  t.equal(await hostIds.idFor('elsewhere-1.test'), 1);
  t.equal(await hostIds.idFor('b.test'), 2);
  const idx = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null, hostIds });
  await idx.upsertPages([page(1, 'a.test'), page(2, 'b.test')]);
  const ids = await storedHostIds(t, join(dir, 'lance'));
  t.same(ids, { 'a.test': await hostIds.idFor('a.test'), 'b.test': 2 });
  t.equal(ids['a.test'], 3, 'a new host gets the next id of the database');
  t.same(idx.hostIdsUnder('a.test'), [3]);
  t.same(
    (await retrieve(idx, { query: 'passports site:b.test' })).passages.map((p) => p.row.host),
    ['b.test'],
  );
  await idx.close();
  db.close();
});

t.test('issue 10: an index written with its own host ids adopts the database ids at open (site: still right)', async (t) => {
  const dir = t.testdir();
  const lance = join(dir, 'lance');
  const before = await PassageIndex.open({ dir: lance, embedder: null });
  await before.upsertPages([page(1, 'a.test'), page(2, 'b.test'), page(3, 'c.test')]);
  t.same(await storedHostIds(t, lance), { 'a.test': 1, 'b.test': 2, 'c.test': 3 }, 'allocated by the index');
  await before.close();

  const db = openStateDb(join(dir, 'state.sqlite'));
  const hostIds = sqliteRepositories(db).hostIds;
  // The database already knows c.test and b.test under other ids.
  t.equal(await hostIds.idFor('c.test'), 1);
  t.equal(await hostIds.idFor('b.test'), 2);
  const after = await PassageIndex.open({ dir: lance, embedder: null, hostIds });
  t.same(await storedHostIds(t, lance), { 'a.test': 3, 'b.test': 2, 'c.test': 1 }, 'rows rewritten to the database ids');
  t.same([after.hostIdsUnder('a.test'), after.hostIdsUnder('c.test')], [[3], [1]]);
  for (const h of ['a.test', 'b.test', 'c.test'])
    t.same(
      (await retrieve(after, { query: `passports site:${h}` })).passages.map((p) => p.row.host),
      [h],
      `site:${h}`,
    );
  await after.close();
  // Reopened: nothing left to adopt, the ids hold.
  const again = await PassageIndex.open({ dir: lance, embedder: null, hostIds });
  t.same(await storedHostIds(t, lance), { 'a.test': 3, 'b.test': 2, 'c.test': 1 });
  await again.close();
  db.close();
});
