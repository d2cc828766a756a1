/**
 * A process that reads an index another process writes (`svc serve --role api|crawler`, `svc status`) commits nothing
 * when it opens it. Readers used to build the key indexes of an index that lacked them, and to rebuild or re-analyse an
 * older one. Opened beside the writer's first write, a reader then raced the writer's own index build: two
 * CreateIndex commits on one table version, and the loser failed ("Retryable commit conflict … preempted by
 * concurrent transaction CreateIndex"). Here the index lacks what the writer would add: the page_ref key indexes, the
 * current full-text options and the current text analysis. A reader's open must leave every table's version and index
 * list as they were, and still answer queries; the writer's open (the control) does change them.
 */
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { localIndexLocation } from '../../index/engines/lance/location.js';
import { FTS_OPTIONS } from '../../index/engines/lance/maintenance.js';
import { searchPages } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const TABLES = ['passages', 'pages', 'images'] as const;

/** Each table's version and index columns, read straight from LanceDB. */
async function snapshot(dir: string): Promise<Record<string, { version: number; indexes: string[] }>> {
  const db = await lancedb.connect(dir);
  try {
    const out: Record<string, { version: number; indexes: string[] }> = {};
    for (const name of TABLES) {
      const table = await db.openTable(name);
      out[name] = { version: await table.version(), indexes: (await table.listIndices()).map((i) => i.columns.join(',')).sort() };
      table.close();
    }
    return out;
  } finally {
    db.close();
  }
}

t.test('a reader opening an index that lacks key indexes, current FTS options and analysis commits nothing', async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({ dir, embedder: null, optimizeEvery: 1_000_000 });
  await writer.upsertPages(
    Array.from({ length: 30 }, (_, i) => makePage(i + 1, `h${i % 3}.example`, [`zebra crossing number ${i}`, `quokkas of island ${i}`])),
  );
  await writer.optimize();
  await writer.close();

  // Take away what the writer's open would restore: the page_ref indexes, and the meta's FTS options and analysis;
  // and give the passages the full-text index an index written before issue 42 has (the writer's open drops it).
  const db = await lancedb.connect(dir);
  for (const name of ['passages', 'pages'] as const) {
    const table = await db.openTable(name);
    for (const i of await table.listIndices()) if (i.columns.includes('page_ref')) await table.dropIndex(i.name);
    if (name === 'passages') await table.createIndex('search_text', { config: lancedb.Index.fts(FTS_OPTIONS) });
    table.close();
  }
  db.close();
  const metaFile = join(dir, 'svc-index-meta.json');
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Record<string, unknown>;
  const older = { ...meta, analysis: 1, ftsAnalyzer: 'an-older-build' };
  writeFileSync(metaFile, JSON.stringify(older));

  const before = await snapshot(dir);
  t.same(before.passages!.indexes, ['search_text'], 'passages: the full-text index only (no page_ref)');
  t.same(before.pages!.indexes, [], 'pages: no page_ref index');

  const reader = await PassageIndex.open({
    location: localIndexLocation(dir, 0),
    embedder: null,
    followHostsMs: 100,
    writes: false,
  });
  try {
    const res = await searchPages(reader, { query: 'quokkas island', mode: 'bm25', limit: 5, offset: 0 });
    t.ok(res.pages.length > 0, `the reader answers (${res.pages.length} pages)`);
    t.same(await snapshot(dir), before, 'no table version moved and no index was built by the reader');
  } finally {
    await reader.close();
  }
  t.same(JSON.parse(readFileSync(metaFile, 'utf8')), older, 'the meta is untouched');

  // The control: the writer's open restores all three (so the snapshot above could have moved).
  const again = await PassageIndex.open({ dir, embedder: null });
  await again.close();
  const after = await snapshot(dir);
  t.same(after.passages!.indexes, ['page_ref'], 'the writer rebuilt the passages page_ref index and dropped the full-text one');
  t.same(after.pages!.indexes, ['page_ref'], 'and the pages one');
  t.ok(after.passages!.version > before.passages!.version, 'the writer committed to passages (re-analysis, rebuilds)');
  t.equal(JSON.parse(readFileSync(metaFile, 'utf8')).analysis, meta.analysis, 'and re-analysed to the current version');
});

t.test('a reader waits for the writer to create a new index, and creates empty tables only when none comes', async (t) => {
  const warnings: string[] = [];
  const log = { info: () => {}, debug: () => {}, warn: (_o: unknown, msg?: string) => void warnings.push(String(msg)) };

  // The writer comes 300 ms after the reader: the reader opens the writer's tables, it does not create its own.
  const dir = t.testdir();
  const readerOpen = PassageIndex.open({ dir, embedder: null, textEngine: false, writes: false, waitForWriterMs: 60_000, log });
  let readerDone = false;
  void readerOpen.then(() => (readerDone = true));
  await new Promise((r) => setTimeout(r, 300));
  t.equal(readerDone, false, 'the reader is still waiting when the writer starts');
  t.equal((await lancedb.connect(dir).then((db) => db.tableNames())).length, 0, 'and has created no table');
  const writer = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => writer.close());
  const reader = await readerOpen;
  t.teardown(() => reader.close());
  t.same(warnings, [], 'the reader did not give up waiting');
  await writer.upsertPages([makePage(1, 'a.example', ['the first page'])]);
  t.equal((await writer.stats()).pages, 1);

  // No writer at all: after its wait the reader creates empty tables, and says so.
  const lone = t.testdir();
  const alone = await PassageIndex.open({ dir: lone, embedder: null, textEngine: false, writes: false, waitForWriterMs: 300, log });
  t.teardown(() => alone.close());
  t.match(warnings, [/no writer created the index tables in time/], 'a warning names the missing writer');
  t.same((await snapshot(lone)).passages, { version: 1, indexes: [] }, 'empty tables created');
});

t.test("a reader closes cleanly while it is looking for the writer's new version", async (t) => {
  // Closing a LanceDB table while a read on it is in flight fails ("The same native value cannot be borrowed mutably
  // while another borrow is active"); the reader's look for the writer's hosts runs every followHostsMs, so close
  // must wait for the look in flight. Here it looks back to back, so one is in flight at nearly every close.
  const dir = t.testdir();
  const writer = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => writer.close());
  await writer.upsertPages([makePage(1, 'a.example', ['the first page'])]);
  let closed = 0;
  for (let round = 0; round < 20; round++) {
    const reader = await PassageIndex.open({ location: localIndexLocation(dir, 0), embedder: null, followHostsMs: 1, writes: false });
    await new Promise((r) => setTimeout(r, 5 + (round % 4) * 3));
    await reader.close().then(
      () => closed++,
      (err: unknown) => t.fail(`round ${round}: close failed: ${String(err)}`),
    );
  }
  t.equal(closed, 20, 'every close resolved');
});

t.test("a reader leaves a write journal alone, even its own process's: only the writer rolls an interrupted write back", async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({ dir, embedder: null });
  await writer.upsertPages([makePage(1, 'a.example', ['first page text'])]);
  await writer.close();
  const before = await snapshot(dir);
  // A second write whose journal says it started from the versions before it and never ended: written by this very
  // process (same pid and host) with a token no write of this thread holds. That is what a search thread sees of its
  // own process's writer while a write is in flight (tools/search-pool.ts): another thread's running writes.
  const again = await PassageIndex.open({ dir, embedder: null });
  await again.upsertPages([makePage(2, 'b.example', ['second page text'])]);
  await again.close();
  const after = await snapshot(dir);
  t.ok(after.passages!.version > before.passages!.version, 'the second write committed');
  const journal = join(dir, 'svc-write-journal.json');
  const versions = Object.fromEntries(TABLES.map((n) => [n, before[n]!.version]));
  writeFileSync(journal, JSON.stringify({ pid: process.pid, host: hostname(), token: 'another-thread', versions }));

  const reader = await PassageIndex.open({ dir, embedder: null, writes: false });
  t.same(await snapshot(dir), after, "the reader's open restored no table");
  t.ok(existsSync(journal), 'and left the journal for the writer');
  t.equal((await reader.stats()).pages, 2, 'it reads both pages');
  await reader.close();

  // The control: a writer's open judges the journal's writer gone (this process runs no such write) and rolls back.
  const w2 = await PassageIndex.open({ dir, embedder: null });
  t.notOk(existsSync(journal), 'the writer removed the journal');
  t.equal((await w2.stats()).pages, 1, 'and rolled the interrupted write back');
  await w2.close();
});
