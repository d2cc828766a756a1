/**
 * Fleet crawl throughput against the politeness bound (issue 10). H generated hosts on the local test web (loopback
 * only), per-host gap d: the whole fleet may not exceed H/d requests per second, however many workers it has.
 * Runs 1, 2 and 4 crawler workers (each its own state connection, frontier claims, FleetScheduler and robots cache,
 * as separate `svc serve --role crawler` processes would have) on one shared state file for the same time window,
 * and counts requests from the test web's access log (robots.txt, sitemaps and llms.txt included: they spend the
 * same politeness budget). The workers share this process's CPU; pages go to a sink that drops them (the index's
 * write cost is the indexer's, measured in bench/crawl.ts).
 *
 * `--backend postgres` puts the shared state on a real PostgreSQL server (the tests' helper, on loopback in a temp dir,
 * a fresh database per row): each worker then has its own connection pool, as workers on separate machines would.
 *
 * Run: node --import tsx bench/crawl-fleet.ts [--hosts 8] [--gap-ms 200] [--seconds 10] [--workers 1,2,4]
 *                                             [--backend sqlite|postgres]
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createCrawler } from '../crawler/crawler.js';
import { startTestWeb } from '../fixtures/test-web/index.js';
import { openStateDb } from '../state/db.js';
import { EntityStore } from '../state/entities.js';
import { openPostgresRepositories } from '../state/repos/postgres.js';
import { sqliteRepositories } from '../state/repos/sqlite.js';
import type { Repositories } from '../state/repos/types.js';
import { startPostgres } from '../test/helpers/postgres-server.js';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '8' },
    'gap-ms': { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    workers: { type: 'string', default: '1,2,4' },
    backend: { type: 'string', default: 'sqlite' },
  },
});
if (!['sqlite', 'postgres'].includes(values.backend)) throw new Error('--backend: sqlite or postgres');
const pgServer = values.backend === 'postgres' ? await startPostgres() : null;
const H = Number(values.hosts);
const D = Number(values['gap-ms']);
const SECONDS = Number(values.seconds);
const WORKERS = values.workers.split(',').map(Number);
const PAGES = Math.ceil(((SECONDS * 1000) / D) * 1.5) + 10; // more pages than the fleet can fetch in the window

const web = await startTestWeb({ generatedHosts: H, generatedPages: PAGES });
const hosts = Array.from({ length: H }, (_, i) => `gen-${i}.test`);
const bound = H / (D / 1000);

interface Row {
  workers: number;
  requests: number;
  seconds: number;
  perSecond: number;
  ratio: number;
  minGapMs: number;
  violations: number;
  perWorker: number[];
}

async function run(n: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  const config = loadConfig({
    env: {},
    flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: D, crawlConcurrency: H },
  });
  const sink = { upsertPage: async () => {}, removePage: async () => {} };
  const dbs = pgServer ? [] : Array.from({ length: n }, () => openStateDb(join(dir, 'state.sqlite')));
  const pgUrl = pgServer ? await pgServer.createDatabase(`fleet_${n}_${Date.now()}`) : null;
  const workerRepos: Repositories[] = pgUrl
    ? await Promise.all(Array.from({ length: n }, () => openPostgresRepositories(pgUrl, { defaultGapMs: config.crawlGapMs })))
    : dbs.map((db) => sqliteRepositories(db, { defaultGapMs: config.crawlGapMs }));
  const items = new Array<number>(n).fill(0);
  const crawlers = workerRepos.map((repos, k) => {
    const c = createCrawler({
      config,
      repos,
      sink,
      entities: repos.entities ?? new EntityStore(dbs[k]!),
      workerName: `w${k}`,
      admit: (u) => new URL(u).hostname.endsWith('.test'),
    });
    c.onItem(() => items[k]!++);
    return c;
  });
  for (const h of hosts) await crawlers[0]!.enqueue(web.url(h, '/'), { priority: 'submitted', reason: 'seed' });
  const start = web.accessLog.length;
  const t0 = performance.now();
  await Promise.all(crawlers.map((c) => c.runUntilIdle({ timeoutMs: SECONDS * 1000 })));
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(crawlers.map((c) => c.stop()));
  if (pgUrl) for (const r of workerRepos) await r.close();
  for (const db of dbs) db.close();
  rmSync(dir, { recursive: true, force: true });
  const entries = web.accessLog.slice(start);
  let minGap = Infinity;
  let violations = 0;
  for (const h of hosts) {
    const e = entries.filter((x) => x.host === h);
    for (let i = 1; i < e.length; i++) {
      const g = e[i]!.at - e[i - 1]!.at;
      minGap = Math.min(minGap, g);
      if (g < D) violations++;
    }
  }
  const perSecond = entries.length / seconds;
  return {
    workers: n,
    requests: entries.length,
    seconds,
    perSecond,
    ratio: perSecond / bound,
    minGapMs: minGap,
    violations,
    perWorker: items,
  };
}

const rows: Row[] = [];
for (const n of WORKERS) rows.push(await run(n));
await web.close();
await pgServer?.stop();

console.log(
  `\nFleet crawl throughput (${values.backend}): H = ${H} hosts, gap d = ${D} ms, bound H/d = ${bound.toFixed(1)} req/s, window ${SECONDS} s\n`,
);
console.log('| workers | requests | seconds | req/s | ratio to H/d | min per-host gap (ms) | gap violations | items per worker |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.workers} | ${r.requests} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.minGapMs} | ${r.violations} | ${r.perWorker.join(' / ')} |`,
  );
}
