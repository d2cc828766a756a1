/**
 * issue 10, the fleet on PostgreSQL and object storage: 3 `svc serve --role crawler` workers, 1 `--role indexer` and
 * 2 `--role api` replicas as separate processes, each with its OWN data dir (as on separate machines), sharing only
 * SVC_DATABASE_URL (the harness's real PostgreSQL) and one index location (SVC_INDEX_URI: s3:// on the harness's
 * SeaweedFS; a local folder only where the weed binary is absent outside CI). The API replicas start before the
 * indexer's first write (they must pick up the indexes it builds). The crawl state —
 * frontier, per-host politeness, documents, host facts, outbox — is PostgreSQL's: no worker's local state file gets
 * a frontier row. From the fixture server's access log: no per-host gap violated across workers, no URL fetched
 * twice except the ones a killed (kill -9 mid-fetch) worker held, and those never concurrently. Every page ends in
 * the index once; both API replicas find a page crawled afterwards (docs/deploy.md: bounded delay), and a key with
 * day quota Q hit concurrently through both replicas admits exactly Q.
 */
import { join } from 'node:path';
import pg from 'pg';
import t from 'tap';
import { CrawlFrontier } from '../../crawler/crawl-frontier.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { indexLocation } from '../../index/engines/lance/location.js';
import { loadConfig } from '../../config.js';
import { openStateDb } from '../../state/db.js';
import { openPostgresRepositories } from '../../state/repos/postgres.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { seaweedfsUnavailable, startSeaweedfs, type SeaweedfsServer } from '../helpers/seaweedfs-server.js';
import { assertFleetCrawl, assertSlowUrlRefetched } from '../helpers/fleet-access-log.js';
import { serveRole, type ServeProcess, type ServeRole } from '../helpers/serve-role.js';
import { waitFor } from '../helpers/wait-for.js';

const GAP = 200;
const LEASE = 2000;
const HOSTS = ['gen-0.test', 'gen-1.test', 'gen-2.test'];

const why = postgresUnavailable();
if (why) {
  if (process.env.CI) t.fail(`issue 10: PostgreSQL fleet test cannot run: ${why}`);
  else t.test('PostgreSQL fleet test', { skip: why }, async () => undefined);
} else {
  let web: TestWeb;
  let server: PostgresServer;
  const noS3 = seaweedfsUnavailable();
  if (noS3 && process.env.CI) t.fail(`issue 10: the fleet's index on SeaweedFS cannot run: ${noS3}`);
  let s3: SeaweedfsServer | null = null;
  t.before(async () => {
    [web, server, s3] = await Promise.all([
      startTestWeb({ generatedHosts: 3, generatedPages: 10 }),
      startPostgres(),
      noS3 ? Promise.resolve(null) : startSeaweedfs(),
    ]);
  });
  t.teardown(async () => {
    await web?.close();
    await server?.stop();
    await s3?.stop();
  });
  /** Where the fleet's index lives: the bucket (SVC_* variables of the S3 location), else a local folder. */
  const indexEnv = (localDir: string): Record<string, string> => (s3 ? s3.env('fleet') : { SVC_INDEX_URI: localDir });

  const serve = (role: ServeRole, dataDir: string, databaseUrl: string, indexDir: string): ServeProcess =>
    // (indexDir: the local fallback when no SeaweedFS binary is there)
    serveRole({
      role,
      dataDir,
      leaseMs: LEASE,
      // Seven processes start at once on the CI's two cores: a start may take longer than the default wait.
      listenTimeoutMs: 120_000,
      env: {
        SVC_LOG_LEVEL: 'warn',
        SVC_DATABASE_URL: databaseUrl,
        ...indexEnv(indexDir),
        SVC_RESOLVE: web.pins.filter((p) => p.startsWith('gen-') || p.startsWith('trap.test:')).join(' '),
        SVC_CRAWL_ALLOW_LOOPBACK: '1',
        SVC_CRAWL_GAP_MS: String(GAP),
        SVC_CRAWL_CONCURRENCY: '2',
      },
    });

  t.test('issue 10: 3 crawlers + 1 indexer + 2 API replicas on PostgreSQL, own data dirs; kill -9 a crawler mid-fetch', async (t) => {
    const databaseUrl = await server.createDatabase('fleet');
    const repos = await openPostgresRepositories(databaseUrl, { defaultGapMs: GAP });
    t.teardown(() => repos.close());
    const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    t.teardown(() => db.end());
    const one = async <R extends pg.QueryResultRow>(sql: string, args: unknown[] = []): Promise<R | undefined> =>
      (await db.query<R>(sql, args)).rows[0];

    const frontier = new CrawlFrontier(repos.frontier);
    for (const h of HOSTS) await frontier.enqueue(web.url(h, '/'), { priority: 'submitted', reason: 'seed', scope: [h] });
    // A URL whose response takes 3 s: the worker that takes it is killed while it waits for the headers.
    const slowUrl = web.url('trap.test', '/slow-headers?ms=3000');
    await frontier.enqueue(slowUrl, { priority: 'submitted', reason: 'seed', scope: ['trap.test'] });
    const { key } = await repos.keys.create({ name: 'fleet', perMinute: 10_000, perDay: 100_000 });
    const since = web.accessLog.length;
    const log = () => web.accessLog.slice(since);

    const root = t.testdir();
    const indexDir = join(root, 'index');
    t.comment(`index at ${s3 ? 's3:// (SeaweedFS)' : `a local folder (${noS3})`}`);
    const procs = [
      serve('indexer', join(root, 'indexer'), databaseUrl, indexDir),
      ...[1, 2, 3].map((k) => serve('crawler', join(root, `crawler-${k}`), databaseUrl, indexDir)),
      // The API replicas open the index before anything is written to it (issue 10 bug: such a reader never used the
      // full-text index the indexer built later).
      ...[1, 2].map((k) => serve('api', join(root, `api-${k}`), databaseUrl, indexDir)),
    ];
    const apis = procs.filter((p) => p.role === 'api');
    t.teardown(async () => {
      for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    });
    const crawlers = procs.filter((p) => p.role === 'crawler');
    const t0 = Date.now();
    await Promise.all(procs.map((p) => p.url));
    t.comment(`${procs.length} processes listening after ${Date.now() - t0} ms`);

    // The slow request is in flight: find the worker holding its lease (tokens name crawler-<pid>) and kill it.
    await waitFor('the slow fetch to start', () => log().some((e) => e.path.startsWith('/slow-headers') && e.status === 0));
    const holder = await one<{ lease_owner: string }>(`SELECT lease_owner FROM frontier WHERE url = $1 AND state = 'leased'`, [slowUrl]);
    const pid = Number(/^crawler-(\d+):/.exec(holder?.lease_owner ?? '')?.[1]);
    const victim = crawlers.find((p) => p.child.pid === pid);
    t.ok(victim, `the holder is one of the crawler processes (${holder?.lease_owner})`);
    const killedAt = Date.now();
    victim!.child.kill('SIGKILL');
    t.equal(await victim!.exited, null, 'killed');
    const held = new Set(
      (
        await db.query<{ url: string }>(`SELECT url FROM frontier WHERE state = 'leased' AND lease_owner LIKE $1`, [`crawler-${pid}:%`])
      ).rows.map((r) => r.url),
    );
    t.ok(held.has(slowUrl), 'the slow URL among its leases');
    // Its lease as the dead worker left it (extended every third of LEASE while it lived, never again).
    const slowLeaseUntil = Number(
      (await one<{ lease_until: number }>('SELECT lease_until FROM frontier WHERE url = $1', [slowUrl]))?.lease_until,
    );

    const unfinished = async () =>
      Number((await one<{ n: number }>(`SELECT count(*) AS n FROM frontier WHERE state NOT IN ('done', 'dead')`))?.n);
    await waitFor('the crawl to finish', async () => (await unfinished()) === 0, 50_000);
    await waitFor(
      'the outbox to drain',
      async () => (await repos.outbox.stats()).pending + (await repos.outbox.stats()).leased === 0,
      50_000,
    );
    t.comment(`crawl and outbox finished ${Date.now() - killedAt} ms after the kill`);

    assertSlowUrlRefetched(t, log(), { killedAt, leaseUntil: slowLeaseUntil });
    assertFleetCrawl(t, log(), { hosts: HOSTS, pages: 10, gapMs: GAP, held, killedAt, url: (h, p) => web.url(h, p) });

    // The crawl state is the database's: documents and host facts there, no frontier row in any worker's own file.
    t.match(await repos.documents.counts(), { indexed: 3 * 11 + 1 }, 'every page registered once in PostgreSQL');
    t.match(
      (await repos.hosts.evidence('gen-1.test')).facts,
      { robots: { status: 'ok' }, llms: { present: false } },
      'host facts written to PostgreSQL',
    );
    for (const p of crawlers.filter((c) => c !== victim)) {
      const local = openStateDb(join(p.dataDir, 'state.sqlite'));
      const n = (local.prepare('SELECT count(*) AS n FROM frontier').get() as { n: number }).n;
      local.close();
      t.equal(n, 0, `${p.dataDir}: no frontier row in the local state file`);
    }

    // Both API replicas find the crawl; then a page crawled now, within the documented delay (docs/deploy.md).
    let lastAnswer = '';
    const search = async (base: string, q: string) => {
      const res = await fetch(`${base}/api/v1/search?${new URLSearchParams({ q, limit: '20' })}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const body = await res.text();
      lastAnswer = `${res.status} ${body.slice(0, 300)}`;
      return res.ok ? (JSON.parse(body) as { results: { url: string }[] }).results : [];
    };
    const apiUrls = await Promise.all(apis.map((p) => p.url));
    for (const base of apiUrls) {
      await waitFor(
        `${base} to serve the crawl`,
        async () => new Set((await search(base, 'generated page number filler')).map((r) => new URL(r.url).hostname)).size === 3,
        20_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; last answer: ${lastAnswer}`);
      });
    }
    t.pass('both replicas return pages of all three hosts');
    web.setPage('gen-2.test', '/fresh.html', {
      body: '<!doctype html><html lang="en"><head><title>Fresh quokkazephyr</title></head><body><main><h1>Fresh quokkazephyr news</h1><p>A page added after the crawl, about the quokkazephyr, with enough words to form one passage of text.</p></main></body></html>',
    });
    t.teardown(() => web.setPage('gen-2.test', '/fresh.html', null));
    const fresh = web.url('gen-2.test', '/fresh.html');
    await frontier.enqueue(fresh, { priority: 'submitted', reason: 'seed', scope: ['gen-2.test'] });
    await waitFor(
      'the fresh page to be fetched',
      () => log().some((e) => e.host === 'gen-2.test' && e.path === '/fresh.html' && e.status === 200),
      20_000,
    );
    const fetchedAt = log().find((e) => e.host === 'gen-2.test' && e.path === '/fresh.html')!.at;
    const seenAt: number[] = [];
    for (const base of apiUrls) {
      await waitFor(
        `${base} to find the fresh page`,
        async () => (await search(base, 'quokkazephyr')).some((r) => r.url === fresh),
        20_000,
      );
      seenAt.push(Date.now() - fetchedAt);
    }
    t.comment(
      `fresh page searchable on both replicas ${seenAt.join(' / ')} ms after its fetch (documented: docs/deploy.md, index readers)`,
    );
    t.pass('both replicas return the page crawled after the fleet started');

    // A key with day quota Q, hit concurrently through both replicas: exactly Q admitted.
    const Q = 20;
    const limited = await repos.keys.create({ name: 'quota', perMinute: 1000, perDay: Q });
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        fetch(`${apiUrls[i % 2]}/api/v1/search?q=page`, { headers: { authorization: `Bearer ${limited.key}` } }).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    );
    t.equal(statuses.filter((s) => s === 200).length, Q, `exactly Q = ${Q} admitted across both replicas`);
    t.equal(statuses.filter((s) => s === 429).length, 60 - Q, 'the rest refused with 429');

    for (const p of procs) {
      const bad = p.out.split('\n').filter((l) => /"level":[45]0/.test(l) && !l.includes('SVC_DATABASE_URL:'));
      if (bad.length > 0) t.comment(`${p.role}: ${bad.slice(0, 4).join('\n')}`);
    }
    for (const p of procs) if (p !== victim) p.child.kill('SIGTERM');
    t.same(await Promise.all(procs.filter((p) => p !== victim).map((p) => p.exited)), [0, 0, 0, 0, 0], 'clean exits');
    const index = await PassageIndex.open({
      location: indexLocation(loadConfig({ env: indexEnv(indexDir) })),
      embedder: null,
      textEngine: false,
    });
    t.teardown(() => index.close());
    t.equal((await index.stats()).pages, 3 * 11 + 1 + 1, 'every page in the index once (one row per page), the fresh one included');
  });
}
