/**
 * issue 10, roles as separate processes on one shared state file and one index folder: 3 `svc serve --role crawler`
 * workers and 1 `svc serve --role indexer` over the fixture web (names pinned to loopback). From the fixture
 * server's access log: no per-host gap violated across workers, no URL fetched twice except the ones a killed worker
 * held, and those never concurrently (the second fetch starts after the kill, once the lease lapsed). Every page ends
 * in the index once. The same fleet on PostgreSQL, each process with its own data dir: fleet-on-postgres.test.ts.
 */
import { join } from 'node:path';
import t from 'tap';
import { CrawlFrontier } from '../../crawler/crawl-frontier.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { assertFleetCrawl, assertSlowUrlRefetched } from '../helpers/fleet-access-log.js';
import { serveRole, type ServeProcess } from '../helpers/serve-role.js';
import { waitFor } from '../helpers/wait-for.js';

const GAP = 200;
const LEASE = 2000;
const HOSTS = ['gen-0.test', 'gen-1.test', 'gen-2.test'];

let web: TestWeb;
t.before(async () => {
  web = await startTestWeb({ generatedHosts: 3, generatedPages: 10 });
});
t.teardown(() => web.close());

const serve = (dataDir: string, role: 'crawler' | 'indexer'): ServeProcess =>
  serveRole({
    role,
    dataDir,
    leaseMs: LEASE,
    listenTimeoutMs: 45_000,
    env: {
      SVC_LOG_LEVEL: 'warn',
      SVC_RESOLVE: web.pins.filter((p) => p.startsWith('gen-') || p.startsWith('trap.test:')).join(' '),
      SVC_CRAWL_ALLOW_LOOPBACK: '1',
      SVC_CRAWL_GAP_MS: String(GAP),
      SVC_CRAWL_CONCURRENCY: '2',
    },
  });

t.test('issue 10: 3 crawler processes + 1 indexer on shared state; kill -9 a crawler mid-fetch', async (t) => {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  // The workers' default gap for the hosts the seeds create (as they would create them themselves).
  const frontier = new CrawlFrontier(sqliteRepositories(db, { defaultGapMs: GAP }).frontier);
  for (const h of HOSTS) await frontier.enqueue(web.url(h, '/'), { priority: 'submitted', reason: 'seed', scope: [h] });
  // A URL whose response takes 3 s: the worker that takes it is killed while it waits for the headers.
  const slowUrl = web.url('trap.test', '/slow-headers?ms=3000');
  await frontier.enqueue(slowUrl, { priority: 'submitted', reason: 'seed', scope: ['trap.test'] });
  const since = web.accessLog.length;
  const log = () => web.accessLog.slice(since);

  const procs = [serve(dir, 'indexer'), serve(dir, 'crawler'), serve(dir, 'crawler'), serve(dir, 'crawler')];
  t.teardown(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  });
  const t0 = Date.now();
  await Promise.all(procs.map((p) => p.url));
  t.comment(`4 processes listening after ${Date.now() - t0} ms`);

  // The slow request is in flight: find the worker holding its lease (lease tokens name crawler-<pid>) and kill it.
  await waitFor('the slow fetch to start', () => log().some((e) => e.path.startsWith('/slow-headers') && e.status === 0));
  const holder = db.prepare(`SELECT lease_owner FROM frontier WHERE url = ? AND state = 'leased'`).get(slowUrl) as
    | { lease_owner: string }
    | undefined;
  const pid = Number(/^crawler-(\d+):/.exec(holder?.lease_owner ?? '')?.[1]);
  const victim = procs.find((p) => p.child.pid === pid);
  t.ok(victim && victim !== procs[0], `the holder is one of the crawler processes (${holder?.lease_owner})`);
  const killedAt = Date.now();
  victim!.child.kill('SIGKILL');
  t.equal(await victim!.exited, null, 'killed');
  // What the dead worker held: its leases stay in the table until they lapse (LEASE after their last extension).
  const held = new Set(
    (db.prepare(`SELECT url FROM frontier WHERE state = 'leased' AND lease_owner LIKE ?`).all(`crawler-${pid}:%`) as { url: string }[]).map(
      (r) => r.url,
    ),
  );
  t.ok(held.has(slowUrl), 'the slow URL among them');
  // Its lease as the dead worker left it (extended every third of LEASE while it lived, never again).
  const slowLeaseUntil = (db.prepare('SELECT lease_until FROM frontier WHERE url = ?').get(slowUrl) as { lease_until: number }).lease_until;

  const unfinished = () => (db.prepare(`SELECT count(*) AS n FROM frontier WHERE state NOT IN ('done', 'dead')`).get() as { n: number }).n;
  const outboxLeft = () => (db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n;
  await waitFor('the crawl to finish', () => unfinished() === 0, 50_000);
  t.comment(
    `crawl finished ${Date.now() - killedAt} ms after the kill; last fetch ${Math.max(...log().map((e) => e.at)) - killedAt} ms after; last five: ${log()
      .slice(-5)
      .map((e) => `${e.host}${e.path}@${e.at - killedAt}`)
      .join(' ')}`,
  );
  await waitFor('the outbox to drain', () => outboxLeft() === 0, 50_000);
  t.comment(`crawl and outbox finished ${Date.now() - killedAt} ms after the kill`);

  assertSlowUrlRefetched(t, log(), { killedAt, leaseUntil: slowLeaseUntil });
  assertFleetCrawl(t, log(), { hosts: HOSTS, pages: 10, gapMs: GAP, held, killedAt, url: (h, p) => web.url(h, p) });

  for (const p of procs)
    if (p.out.includes('"level":40') || p.out.includes('"level":50'))
      t.comment(
        p.out
          .split('\n')
          .filter((l) => /"level":[45]0/.test(l))
          .slice(0, 6)
          .join('\n'),
      );
  // Stop the others cleanly, then read the index they wrote.
  for (const p of procs) if (p !== victim) p.child.kill('SIGTERM');
  t.same(await Promise.all(procs.filter((p) => p !== victim).map((p) => p.exited)), [0, 0, 0], 'clean exits');
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  t.teardown(() => index.close());
  t.equal((await index.stats()).pages, 3 * 11 + 1, 'every page in the index once (one row per page)');
});
