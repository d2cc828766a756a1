import t, { type Test } from 'tap';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { openStateDb } from '../../state/db.js';
import { sqliteEntities, sqliteRepositories } from '../../state/repos/sqlite.js';
import { Documents } from '../../state/documents.js';
import { EntityStore } from '../../state/entities.js';
import type { PassageIndex } from '../../index/engines/lance/store.js';
import { callTool } from '../../tools/call-tool.js';
import type { ServiceDeps } from '../../tools/deps.js';
import { freshTool } from '../../tools/fresh.js';
import type { SvcError } from '../../errors.js';

function setup(t: Test, now: string) {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const documents = new Documents(db);
  const deps: ServiceDeps = {
    config: loadConfig({ env: {}, flags: { dataDir: dir } }),
    repos: sqliteRepositories(db),
    log: createLogger({ level: 'silent' }),
    now: () => new Date(now),
    index: null as unknown as PassageIndex, // svc_fresh reads the document registry only
    entities: sqliteEntities(new EntityStore(db)),
    crawler: null,
  };
  return { documents, ctx: { deps, caller: { keyId: 'k', digest: 'd' } } };
}

t.test('svc_fresh: empty registry → empty list with the window', async (t) => {
  const { ctx } = setup(t, '2026-06-10T12:00:00.000Z');
  const out = await callTool(freshTool, {}, ctx);
  t.same(out, { window: '24h', since: '2026-06-09T12:00:00.000Z', pages: [] });
});

t.test('svc_fresh: new and changed pages within the window, newest first; removed pages left out', async (t) => {
  const { ctx, documents } = setup(t, '2026-06-10T12:00:00.000Z');
  const a = documents.allocate('https://a.example.ca/', 'a.example.ca');
  const b = documents.allocate('https://b.example.ca/', 'b.example.ca');
  const c = documents.allocate('https://c.example.ca/', 'c.example.ca');
  const d = documents.allocate('https://d.example.ca/', 'd.example.ca');
  documents.recordIndexed(a, { contentHash: 'a1', title: 'A', at: '2026-06-01T00:00:00.000Z' });
  documents.recordIndexed(a, { contentHash: 'a2', title: 'A v2', at: '2026-06-10T11:30:00.000Z' }); // changed 30 min ago
  documents.recordIndexed(b, { contentHash: 'b1', title: 'B', at: '2026-06-10T09:00:00.000Z' }); // new 3 h ago
  documents.recordIndexed(c, { contentHash: 'c1', title: 'C', at: '2026-06-08T00:00:00.000Z' }); // new 2.5 days ago
  documents.recordIndexed(d, { contentHash: 'd1', title: 'D', at: '2026-06-10T11:00:00.000Z' });
  documents.recordExcluded(d, 'excluded', 'noindex', '2026-06-10T11:10:00.000Z');
  const h1 = await callTool(freshTool, { window: '1h' }, ctx);
  t.same(
    h1.pages.map((p) => [p.url, p.change]),
    [['https://a.example.ca/', 'changed']],
  );
  t.equal(h1.pages[0]?.first_seen, '2026-06-01T00:00:00.000Z');
  t.equal(h1.pages[0]?.title, 'A v2');
  const h6 = await callTool(freshTool, { window: '6h' }, ctx);
  t.same(
    h6.pages.map((p) => [p.page_ref, p.change]),
    [
      [a, 'changed'],
      [b, 'new'],
    ],
  );
  const d7 = await callTool(freshTool, { window: '7d', limit: 2 }, ctx);
  t.same(
    d7.pages.map((p) => p.page_ref),
    [a, b],
    'limit applies after ordering',
  );
  const d30 = await callTool(freshTool, { window: '30d', limit: 50 }, ctx);
  t.same(
    d30.pages.map((p) => p.page_ref),
    [a, b, c],
  );
});

t.test('svc_fresh: any other window or limit → 422', async (t) => {
  const { ctx } = setup(t, '2026-06-10T12:00:00.000Z');
  for (const bad of [{ window: '2h' }, { window: '24H' }, { window: '' }, { limit: 51 }, { limit: 0 }, { limit: 1.5 }]) {
    const e = await callTool(freshTool, bad, ctx).catch((x: SvcError) => x);
    t.equal((e as SvcError).code, 'validation_failed', JSON.stringify(bad));
  }
  t.equal(freshTool.rest[0].path, '/fresh');
  t.equal(freshTool.annotations.readOnlyHint, true);
});
