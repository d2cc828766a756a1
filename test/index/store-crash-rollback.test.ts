import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as lancedb from '@lancedb/lancedb';
import t, { type Test } from 'tap';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { beginWrite } from '../../index/engines/lance/write-journal.js';
import { runUntilKilled } from '../helpers/kill-child.js';
import { makePage } from '../helpers/page-input.js';

const CHILD = fileURLToPath(new URL('./store-crash-child.ts', import.meta.url));

/** Every passage has its page row, every page row has exactly its passages, all of one version. */
async function checkWhole(t: Test, dir: string): Promise<{ pages: number; passages: number }> {
  const db = await lancedb.connect(dir);
  const pages = (await (await db.openTable('pages')).query().select(['page_ref', 'title', 'passage_count']).toArray()) as {
    page_ref: number;
    title: string;
    passage_count: number;
  }[];
  const passages = (await (await db.openTable('passages')).query().select(['page_ref', 'text']).toArray()) as {
    page_ref: number;
    text: string;
  }[];
  db.close();
  const byRef = new Map<number, string[]>();
  for (const p of passages) byRef.set(p.page_ref, [...(byRef.get(p.page_ref) ?? []), p.text]);
  const rows = new Map(pages.map((p) => [p.page_ref, p]));
  const orphans = [...byRef.keys()].filter((r) => !rows.has(r));
  t.same(orphans, [], 'no passage without its page row');
  let mismatched = 0;
  for (const row of pages) {
    const texts = byRef.get(row.page_ref) ?? [];
    const version = / (v\d+)$/.exec(row.title)?.[1];
    if (texts.length !== row.passage_count || texts.some((x) => !x.endsWith(`version ${version} words alpha beta`))) mismatched++;
  }
  t.equal(mismatched, 0, 'every page row has exactly its own version of its passages');
  return { pages: pages.length, passages: passages.length };
}

t.test('issue 12 item 7: an interrupted write is rolled back at open (deterministic)', async (t) => {
  const dir = t.testdir();
  let idx = await PassageIndex.open({ dir, embedder: null });
  await idx.upsertPages([makePage(1, 'a.example.ca', ['one v1 words'], { title: 'Page 1 v1' })]);
  await idx.close();
  // What the old write order left after a kill: passages of page 2 committed, its page row never written.
  const db = await lancedb.connect(dir);
  const passages = await db.openTable('passages');
  const pagesTable = await db.openTable('pages');
  const images = await db.openTable('images');
  const endWrite = await beginWrite(dir, { passages, pages: pagesTable, images });
  const orphan = (await passages.query().where('page_ref = 1').limit(1).toArray())[0] as Record<string, unknown>;
  await passages.add([{ ...orphan, page_ref: 2, text: 'orphan' }]);
  t.equal(await passages.countRows('page_ref = 2'), 1, 'the orphan passage is there before recovery');
  db.close();
  const journal = join(dir, 'svc-write-journal.json');
  const entry = readFileSync(journal, 'utf8');
  // While its writer runs, another open (svc status beside svc serve) leaves the write alone.
  await (await PassageIndex.open({ dir, embedder: null })).close();
  t.ok(existsSync(journal), 'a running write is not rolled back');
  endWrite();
  // Now as if the writer had been killed: the journal of a process that no longer exists.
  const deadPid = spawnSync(process.execPath, ['-e', '0']).pid;
  writeFileSync(journal, JSON.stringify({ ...JSON.parse(entry), pid: deadPid }));
  idx = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => idx.close());
  t.notOk(existsSync(join(dir, 'svc-write-journal.json')), 'journal consumed');
  const check = await lancedb.connect(dir);
  t.equal(await (await check.openTable('passages')).countRows('page_ref = 2'), 0, 'rolled back');
  t.equal(await (await check.openTable('passages')).countRows('page_ref = 1'), 1, 'earlier pages untouched');
  check.close();
});

t.test('issue 12 item 7: kill -9 during ingest never leaves half pages (bounded loop)', async (t) => {
  const dir = t.testdir();
  let acked = 0;
  // Offsets spread over one batch's ~40-100 ms of commits, so kills land before, between and after them.
  const offsets = [3, 14, 26, 38, 51, 67];
  const rounds = offsets.length;
  for (let i = 0; i < rounds; i++) {
    // Killed a little after a batch was acknowledged: somewhere inside the next batch's commits.
    acked += await runUntilKilled(CHILD, [dir, String(i * 1000)], 'B ', 2, offsets[i]!);
    // Each restart recovers by itself: opening the index is the whole procedure.
    const idx = await PassageIndex.open({ dir, embedder: null });
    await idx.close();
    t.notOk(existsSync(join(dir, 'svc-write-journal.json')), `round ${i}: no journal left after open`);
    const seen = await checkWhole(t, dir);
    t.ok(seen.pages > 0, `round ${i}: ${seen.pages} pages, ${seen.passages} passages checked`);
  }
  t.ok(acked >= rounds, `${acked} batches acknowledged across ${rounds} kills`);
});
