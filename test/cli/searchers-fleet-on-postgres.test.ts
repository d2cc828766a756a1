/**
 * Searcher processes on PostgreSQL and object storage: 1 `--role indexer` writing a 4-shard index, 2 `--role crawler`
 * workers over the fixture web, 2 `--role searcher` processes serving shards 0,1 and 2,3, and 2 `--role api`
 * replicas asking them (SVC_SHARD_SOURCE=searchers), each process with its own data dir, sharing SVC_DATABASE_URL (the
 * searcher registry among the rest) and one index location (SeaweedFS where the weed binary is, else a local folder).
 * Both replicas answer the crawl whole (coverage 4/4, the same answers); kill -9 one searcher → `partial_results` with
 * coverage 2/4 and no error over a burst of queries through both replicas, /readyz and /metrics say 2/4 once its
 * heartbeat lapses; restarted, it registers again and the answers are whole and the same as before. A second
 * indexer asking for a shard the first owns is refused, and the fleet fetched each host's robots.txt once.
 */
import { join } from 'node:path';
import t from 'tap';
import { CrawlFrontier } from '../../crawler/crawl-frontier.js';
import { shardOf } from '../../index/shards/sharded-index.js';
import { openPostgresRepositories } from '../../state/repos/postgres.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { seaweedfsUnavailable, startSeaweedfs, type SeaweedfsServer } from '../helpers/seaweedfs-server.js';
import { serveRole, type ServeProcess, type ServeRole } from '../helpers/serve-role.js';
import { waitFor } from '../helpers/wait-for.js';

const GAP = 100;
const LEASE = 2000;
const HOSTS = ['gen-0.test', 'gen-1.test', 'gen-2.test'];
const SECRET = 'fleet-test-secret-0123456789abcdef';

interface SearchBody {
  results: { url: string; page_ref: number }[];
  coverage?: { shards: { answered: number; total: number } };
  warnings: { code: string }[];
}

const why = postgresUnavailable();
if (why) {
  if (process.env.CI) t.fail(`PostgreSQL searcher fleet test cannot run: ${why}`);
  else t.test('PostgreSQL searcher fleet test', { skip: why }, async () => undefined);
} else {
  let web: TestWeb;
  let server: PostgresServer;
  const noS3 = seaweedfsUnavailable();
  if (noS3 && process.env.CI) t.fail(`the searcher fleet's index on SeaweedFS cannot run: ${noS3}`);
  let s3: SeaweedfsServer | null = null;
  t.before(async () => {
    [web, server, s3] = await Promise.all([
      startTestWeb({ generatedHosts: 3, generatedPages: 6 }),
      startPostgres(),
      noS3 ? Promise.resolve(null) : startSeaweedfs(),
    ]);
  });
  t.teardown(async () => {
    await web?.close();
    await server?.stop();
    await s3?.stop();
  });

  t.test('1 indexer, 2 crawlers, 2 searchers of 2 shards each, 2 api replicas; kill -9 a searcher, then restart it', async (t) => {
    const databaseUrl = await server.createDatabase('searchers');
    const repos = await openPostgresRepositories(databaseUrl, { defaultGapMs: GAP });
    t.teardown(() => repos.close());
    const frontier = new CrawlFrontier(repos.frontier);
    for (const h of HOSTS) await frontier.enqueue(web.url(h, '/'), { priority: 'submitted', reason: 'seed', scope: [h] });
    const { key } = await repos.keys.create({ name: 'fleet', perMinute: 100_000, perDay: 1_000_000 });

    const since = web.accessLog.length;
    const root = t.testdir();
    const indexEnv: Record<string, string> = s3 ? s3.env('searchers') : { SVC_INDEX_URI: join(root, 'index') };
    t.comment(`index at ${s3 ? 's3:// (SeaweedFS)' : `a local folder (${noS3})`}`);
    const serve = (role: ServeRole, name: string, args: string[] = []): ServeProcess =>
      serveRole({
        role,
        dataDir: join(root, name),
        leaseMs: LEASE,
        // Seven processes start at once on the CI's two cores: a start may take longer than the default wait.
        listenTimeoutMs: 120_000,
        args,
        env: {
          SVC_LOG_LEVEL: 'warn',
          SVC_DATABASE_URL: databaseUrl,
          ...indexEnv,
          SVC_INDEX_SHARDS: '4',
          SVC_INDEX_READ_CONSISTENCY_S: '0',
          SVC_FLEET_SECRET: SECRET,
          SVC_SEARCHER_HEARTBEAT_MS: '300',
          SVC_SEARCHER_TTL_MS: '1500',
          SVC_SHARD_DEADLINE_MS: '3000',
          SVC_SHARD_SOURCE: 'searchers',
          SVC_RESOLVE: web.pins.filter((p) => p.startsWith('gen-')).join(' '),
          SVC_CRAWL_ALLOW_LOOPBACK: '1',
          SVC_CRAWL_GAP_MS: String(GAP),
          SVC_CRAWL_CONCURRENCY: '2',
        },
      });
    const procs: ServeProcess[] = [
      serve('indexer', 'indexer'),
      serve('crawler', 'crawler-1'),
      serve('crawler', 'crawler-2'),
      serve('searcher', 'searcher-a', ['--shards', '0,1']),
      serve('searcher', 'searcher-b', ['--shards', '2-3']),
      serve('api', 'api-1'),
      serve('api', 'api-2'),
    ];
    t.teardown(async () => {
      for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    });
    await Promise.all(procs.map((p) => p.url));
    const apiUrls = await Promise.all(procs.filter((p) => p.role === 'api').map((p) => p.url));

    const unfinished = async () => (await repos.frontier.counts()).queued + (await repos.frontier.counts()).leased;
    await waitFor('the crawl to finish', async () => (await unfinished()) === 0, 60_000);
    await waitFor(
      'the outbox to drain',
      async () => (await repos.outbox.stats()).pending + (await repos.outbox.stats()).leased === 0,
      60_000,
    );
    // One fetch of each host's robots.txt for the whole fleet (both crawlers; none was killed).
    for (const h of HOSTS) {
      const robots = web.accessLog.slice(since).filter((e) => e.host === h && e.path === '/robots.txt');
      t.equal(robots.length, 1, `${h}: robots.txt fetched once by the fleet`);
    }
    // Exactly one writer per shard: a second indexer for a shard the first holds is refused, in one line.
    const second = serve('indexer', 'indexer-2', ['--shards', '2']);
    t.equal(await second.exited, 1, 'a second indexer for an owned shard exits 1');
    t.match(second.out, /svc serve: shard 2 is written by indexer-/, 'and says which shard and who writes it');
    const live = await repos.searchers.live(1500);
    const victimId = live.find((e) => e.shards.includes(2))?.id;
    t.same(
      live.map((e) => [e.shards, e.shardCount]).sort(),
      [
        [[0, 1], 4],
        [[2, 3], 4],
      ],
      'both searchers registered their shards in PostgreSQL',
    );

    let last = '';
    const search = async (base: string, q: string): Promise<{ status: number; body: SearchBody | null }> => {
      const res = await fetch(`${base}/api/v1/search?${new URLSearchParams({ q, limit: '20' })}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const text = await res.text();
      last = `${res.status} ${text.slice(0, 300)}`;
      return { status: res.status, body: res.ok ? (JSON.parse(text) as SearchBody) : null };
    };
    const Q = 'generated page number filler';
    const hostsOf = (b: SearchBody | null) => new Set((b?.results ?? []).map((r) => new URL(r.url).hostname)).size;
    for (const base of apiUrls)
      await waitFor(
        `${base} to serve the crawl from every shard`,
        async () => {
          const r = await search(base, Q);
          return hostsOf(r.body) === 3 && r.body?.coverage?.shards.answered === 4;
        },
        30_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; last answer: ${last}`);
      });
    const whole = await Promise.all(apiUrls.map((b) => search(b, Q)));
    t.same(whole[0]!.body, whole[1]!.body, 'both replicas give the same answer');
    t.match(whole[0]!.body, { coverage: { shards: { answered: 4, total: 4 } } });
    t.notOk(whole[0]!.body!.warnings.some((w) => w.code === 'partial_results'));
    const wholeRefs = whole[0]!.body!.results.map((r) => r.page_ref);

    // kill -9 the searcher of shards 2 and 3.
    const victim = procs.find((p) => p.dataDir.endsWith('searcher-b'))!;
    victim.child.kill('SIGKILL');
    t.equal(await victim.exited, null, 'killed');
    const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => search(apiUrls[i % 2]!, i % 3 === 0 ? Q : `page number ${i}`)));
    t.same(
      burst.filter((r) => r.status !== 200).map((r) => r.status),
      [],
      'no error over a burst of queries through both replicas',
    );
    t.ok(
      burst.every((r) => r.body?.coverage?.shards.answered === 2 && r.body.coverage.shards.total === 4),
      'each answer covers 2 of 4 shards',
    );
    t.ok(
      burst.every((r) => r.body!.warnings.some((w) => w.code === 'partial_results')),
      'each answer carries partial_results',
    );
    const partial = burst[0]!.body!.results.map((r) => r.url);
    t.ok(partial.length > 0, 'the answering shards still give pages');
    t.same(
      partial.filter((u) => shardOf(u, 4) >= 2),
      [],
      'none of the missing shards',
    );

    const readyShards = async (base: string) =>
      ((await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, string> }).checks.shards ?? '';
    for (const base of apiUrls)
      await waitFor(`${base} to see the lapsed heartbeat`, async () => (await readyShards(base)).startsWith('2/4'), 20_000);
    const ready = await fetch(`${apiUrls[0]}/readyz`);
    t.equal(ready.status, 200, 'still ready: partial answers are answers');
    const metrics = await (await fetch(`${apiUrls[0]}/metrics`)).text();
    t.match(metrics, /^svc_shards_covered 2$/m);
    t.match(metrics, /^svc_shard_live_searchers\{shard="3"\} 0$/m);

    // Restarted: it registers again, and the answers are whole and as before.
    const back = serve('searcher', 'searcher-b', ['--shards', '2-3']);
    procs.push(back);
    await back.url;
    for (const base of apiUrls) await waitFor(`${base} to see it back`, async () => (await readyShards(base)).startsWith('4/4'), 30_000);
    const again = await Promise.all(apiUrls.map((b) => search(b, Q)));
    for (const r of again) {
      t.equal(r.status, 200);
      t.match(r.body, { coverage: { shards: { answered: 4, total: 4 } } });
      t.same(
        r.body!.results.map((x) => x.page_ref),
        wholeRefs,
        'whole again: the same pages as before the kill',
      );
    }

    for (const p of procs) if (p !== victim) p.child.kill('SIGTERM');
    t.same(
      await Promise.all(procs.filter((p) => p !== victim).map((p) => p.exited)),
      procs.filter((p) => p !== victim).map(() => 0),
      'clean exits',
    );
    t.same(
      (await repos.searchers.live(60_000)).map((e) => e.id),
      [victimId],
      'stopped searchers leave the registry; only the killed one’s entry is left, to lapse',
    );
  });
}
