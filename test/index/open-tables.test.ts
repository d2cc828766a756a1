/**
 * issue 10: a reader opening an index beside its writer waits for tables the writer is still creating. On object
 * storage a table is listed from its first objects on, before its first version: opening it then failed
 * ("Table … was not found … _versions") and the reader process exited (seen in the fleet test). LanceDB on a folder
 * shows the same state: a table directory without a version.
 */
import * as lancedb from '@lancedb/lancedb';
import t from 'tap';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { pageSchema } from '../../index/engines/lance/columns.js';
import { indexLocation } from '../../index/engines/lance/location.js';
import { openTables } from '../../index/engines/lance/open-tables.js';

t.test('a table listed before its first version: a reader waits for it, within its wait for the writer', async (t) => {
  const loc = indexLocation(loadConfig({ env: { SVC_DATA_DIR: t.testdir() } }));
  const writer = await openTables(loc, null, undefined);
  writer.db.close();
  // The pages table as listed mid-creation: its directory, no version yet.
  rmSync(join(loc.uri, 'pages.lance'), { recursive: true });
  mkdirSync(join(loc.uri, 'pages.lance'));

  await t.rejects(openTables(loc, null, undefined, { waitForWriterMs: 0 }), /not found/, 'a reader that does not wait: the error');

  const started = Date.now();
  const opening = openTables(loc, null, undefined, { waitForWriterMs: 10_000 });
  await new Promise((r) => setTimeout(r, 600));
  // The writer's commit lands.
  rmSync(join(loc.uri, 'pages.lance'), { recursive: true });
  const db = await lancedb.connect(loc.uri);
  (await db.createEmptyTable('pages', pageSchema, { existOk: true })).close();
  db.close();
  const reader = await opening;
  t.teardown(() => reader.db.close());
  t.ok(Date.now() - started >= 500, `waited for the commit (${Date.now() - started} ms)`);
  t.equal(await reader.pages.countRows(), 0, 'then opened it');
});
