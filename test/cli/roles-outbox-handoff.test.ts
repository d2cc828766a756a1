/**
 * issue 10, roles: a crawler-role process and an indexer-role process on one data dir (shared state file, one index
 * folder) and an api-role reader, all in this test process with their own stores. The crawler role never writes
 * the index (its pages wait in the outbox); the indexer drains the outbox into the index, each page once; the api
 * role neither crawls nor writes and sees the indexer's pages through the index's read-consistency check.
 */
import t from 'tap';
import { loadConfig } from '../../config.js';
import { createServices, type Services } from '../../main.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { join } from 'node:path';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { waitFor } from '../helpers/wait-for.js';

let web: TestWeb;
t.before(async () => {
  web = await startTestWeb({ generatedHosts: 3, generatedPages: 6 });
});
t.teardown(() => web.close());

/** How long each wait below may take (the helper's default is longer, for the multi-process fleets). */
const WAIT_MS = 20_000;

t.test('issue 10: roles crawler → outbox → indexer → index; api neither crawls nor writes', async (t) => {
  const dir = t.testdir();
  const config = loadConfig({
    // The crawler and the api role open the index before any indexer exists: no writer to wait for.
    env: { SVC_INDEX_READ_CONSISTENCY_S: '0', SVC_INDEX_WAIT_FOR_WRITER_S: '0' },
    flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 20, crawlConcurrency: 4 },
  });
  const open = (role: 'api' | 'crawler' | 'indexer'): Promise<Services> => createServices(config, { role, embedder: null });
  const crawler = await open('crawler');
  const api = await open('api');
  t.teardown(async () => {
    await crawler.close();
    await api.close();
  });
  t.ok(crawler.crawler, 'the crawler role crawls');
  t.equal(api.crawler, null, 'the api role does not');

  for (let i = 0; i < 3; i++) crawler.crawler!.enqueue(web.url(`gen-${i}.test`, '/'), { priority: 'submitted', reason: 'seed' });
  const outcomes: string[] = [];
  crawler.crawler!.onItem((o) => {
    if (o.outcome === 'indexed') outcomes.push(o.url);
  });
  const r = await crawler.crawler!.runUntilIdle({ timeoutMs: 30_000 });
  t.equal(r.queued, 0, 'crawl finished');
  t.equal(outcomes.length, 3 * 7, 'every generated page extracted (3 hosts × home + 6 pages)');

  // Nothing in the index yet: the pages wait in the outbox for the indexer.
  t.equal((await api.deps.index.stats()).pages, 0, 'the crawler role never writes the index');
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const outbox = sqliteRepositories(db).outbox;
  t.match(await outbox.stats(), { pending: outcomes.length, leased: 0 }, 'one outbox entry per extracted page');
  t.match((await crawler.readiness!()).checks, {
    role: 'crawler',
    outbox: new RegExp(`^${outcomes.length} pending, 0 leased, lag \\d+ ms$`),
  });

  const indexer = await open('indexer');
  t.teardown(() => indexer.close());
  t.equal(indexer.crawler, null, 'the indexer role does not crawl');
  indexer.start();
  await waitFor('the outbox drained', async () => (await outbox.stats()).pending + (await outbox.stats()).leased === 0, WAIT_MS);
  await waitFor('the api role to see the pages', async () => (await api.deps.index.stats()).pages === outcomes.length, WAIT_MS);
  // The api role learns the writer's new hosts when it next looks (followHostsMs, at most a second here).
  await waitFor('the api role to know the new hosts', async () => api.deps.index.hostIdsUnder('gen-1.test').length === 1, WAIT_MS);
  t.equal((await indexer.deps.index.stats()).pages, outcomes.length, 'each page written once (one row per page)');
  const hits = await retrieve(api.deps.index, { query: `site:gen-1.test` });
  t.ok(hits.passages.length > 0, 'the api role finds the new pages, site: included (host ids from the state)');
  t.ok(hits.passages.every((p) => p.row.host === 'gen-1.test'));
  t.match((await indexer.readiness!()).checks, { role: 'indexer', outbox: /^0 pending, 0 leased, lag 0 ms$/ });
  t.same((await api.readiness!()).checks.role, 'api');
});
