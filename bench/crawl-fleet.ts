/**
 * Fleet crawl throughput against the politeness bound. H generated hosts on the local test web (loopback
 * only), per-host gap d: the whole fleet may not exceed H/d requests per second, however many workers it has.
 * Runs 1, 2 and 4 crawler workers, each **its own process** (as `svc serve --role crawler` workers are: its own state
 * connection, frontier claims, FleetScheduler and robots cache), on one shared state for the same time window, and
 * counts requests from the test web's access log (robots.txt, sitemaps and llms.txt included: they spend the same
 * politeness budget). Pages go to a sink that drops them (the index's write cost is the indexer's, measured in
 * bench/crawl.ts). The test web runs in this process; each worker reports its longest event-loop stall.
 *
 * `--backend sqlite` shares the state file of one data dir; `--backend postgres` puts the shared state on a real
 * PostgreSQL server (the tests' helper, on loopback in a temp dir, a fresh database per row), each worker with its own
 * connection pool, as workers on separate machines would have.
 *
 * Run: node --import tsx bench/crawl-fleet.ts [--hosts 8] [--gap-ms 200] [--seconds 10] [--workers 1,2,4]
 *                                             [--backend sqlite|postgres]
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createCrawler, type CrawlerOptions } from '../crawler/crawler.js';
import { startTestWeb } from '../fixtures/test-web/index.js';
import { openStateDb } from '../state/db.js';
import { EntityStore } from '../state/entities.js';
import { openPostgresRepositories } from '../state/repos/postgres.js';
import { sqliteRepositories } from '../state/repos/sqlite.js';
import type { Repositories } from '../state/repos/types.js';
import { startPostgres } from '../test/helpers/postgres-server.js';
import { LoopDelayMonitor } from './loop-delay.js';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '8' },
    'gap-ms': { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    workers: { type: 'string', default: '1,2,4' },
    backend: { type: 'string', default: 'sqlite' },
    /** Internal: run as one worker process (the parent passes a JSON {@link WorkerJob}). */
    worker: { type: 'string' },
  },
});

/** What a worker process is told to do. */
interface WorkerJob {
  readonly name: string;
  readonly dir: string;
  readonly pgUrl: string | null;
  readonly pins: string[];
  readonly gapMs: number;
  readonly concurrency: number;
  readonly seeds: string[];
  /** A host of its own to crawl a few pages of first, in a throwaway state, so the window measures a warm process. */
  readonly warmUp: string;
}

/** What a worker process reports at the end. */
interface WorkerReport {
  readonly items: number;
  readonly loopMaxMs: number;
}

/**
 * One crawler worker: opens its own state connection, signals `ready`, and on `go` (the window in ms) crawls until the
 * window ends, then reports and exits.
 */
async function workerMain(job: WorkerJob): Promise<void> {
  /** A crawler over `repos` whose pages go to a sink that drops them, admitting the URLs `admit` accepts. */
  const crawlerFor = (
    dataDir: string,
    repos: Repositories,
    entities: CrawlerOptions['entities'],
    name: string,
    admit: (u: string) => boolean,
  ) =>
    createCrawler({
      config: loadConfig({
        env: {},
        flags: { dataDir, resolve: job.pins, crawlAllowLoopback: true, crawlGapMs: job.gapMs, crawlConcurrency: job.concurrency },
      }),
      repos,
      sink: { upsertPage: async () => {}, removePage: async () => {} },
      entities,
      workerName: name,
      admit,
    });
  {
    // Warm-up (module loading, first parses) on the worker's own host and state, which the window never sees.
    const dir = mkdtempSync(join(tmpdir(), 'bench-fleet-warm-'));
    const db = openStateDb(join(dir, 'state.sqlite'));
    const repos = sqliteRepositories(db, { defaultGapMs: 0 });
    const warmHost = new URL(job.warmUp).hostname;
    const warm = crawlerFor(dir, repos, new EntityStore(db), `${job.name}-warm`, (u) => new URL(u).hostname === warmHost);
    await warm.enqueue(job.warmUp, { priority: 'submitted', reason: 'seed' });
    await warm.runUntilIdle({ maxPages: 6, timeoutMs: 5000 });
    await warm.stop();
    await repos.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const db = job.pgUrl ? null : openStateDb(join(job.dir, 'state.sqlite'));
  const repos = job.pgUrl
    ? await openPostgresRepositories(job.pgUrl, { defaultGapMs: job.gapMs })
    : sqliteRepositories(db!, { defaultGapMs: job.gapMs });
  const crawler = crawlerFor(job.dir, repos, repos.entities ?? new EntityStore(db!), job.name, (u) =>
    new URL(u).hostname.endsWith('.test'),
  );
  let items = 0;
  crawler.onItem(() => items++);
  for (const url of job.seeds) await crawler.enqueue(url, { priority: 'submitted', reason: 'seed' });
  process.send!({ ready: true });
  const [windowMs] = (await once(process, 'message')) as [number];
  const loop = new LoopDelayMonitor(10);
  loop.enable();
  await crawler.runUntilIdle({ timeoutMs: windowMs });
  loop.disable();
  await crawler.stop();
  await repos.close();
  db?.close();
  const report: WorkerReport = { items, loopMaxMs: loop.maxNs / 1e6 };
  process.send!(report, () => process.exit(0));
}

if (values.worker !== undefined) {
  await workerMain(JSON.parse(values.worker) as WorkerJob);
} else {
  if (!['sqlite', 'postgres'].includes(values.backend)) throw new Error('--backend: sqlite or postgres');
  const pgServer = values.backend === 'postgres' ? await startPostgres() : null;
  const H = Number(values.hosts);
  const D = Number(values['gap-ms']);
  const SECONDS = Number(values.seconds);
  const WORKERS = values.workers.split(',').map(Number);
  const PAGES = Math.ceil(((SECONDS * 1000) / D) * 1.5) + 10; // more pages than the fleet can fetch in the window

  // H hosts for the fleet, and one more per worker for its warm-up.
  const web = await startTestWeb({ generatedHosts: H + Math.max(...WORKERS), generatedPages: PAGES });
  const hosts = Array.from({ length: H }, (_, i) => `gen-${i}.test`);
  const bound = H / (D / 1000);

  interface Row {
    workers: number;
    requests: number;
    perSecond: number;
    ratio: number;
    minGapMs: number;
    /** Until every worker had finished its last item and reported (s). */
    seconds: number;
    /** Per-host gaps between consecutive requests: median, 95th percentile and longest (ms). */
    gapP50: number;
    gapP95: number;
    gapMax: number;
    violations: number;
    reports: WorkerReport[];
  }

  const run = async (n: number): Promise<Row> => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
    const pgUrl = pgServer ? await pgServer.createDatabase(`fleet_${n}_${Date.now()}`) : null;
    if (!pgUrl) openStateDb(join(dir, 'state.sqlite')).close(); // migrated once, before the workers open it
    const children: ChildProcess[] = [];
    for (let k = 0; k < n; k++) {
      const job: WorkerJob = {
        name: `w${k}`,
        dir,
        pgUrl,
        pins: web.pins,
        gapMs: D,
        concurrency: H,
        seeds: k === 0 ? hosts.map((h) => web.url(h, '/')) : [],
        warmUp: web.url(`gen-${H + k}.test`, '/'),
      };
      children.push(
        fork(import.meta.filename, ['--worker', JSON.stringify(job)], {
          execArgv: ['--import', 'tsx'],
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        }),
      );
      // The seeds are in before the next worker starts.
      await once(children[k]!, 'message');
    }
    const reports = children.map(
      (c) =>
        new Promise<WorkerReport>((resolve, reject) => {
          c.once('message', (m) => resolve(m as WorkerReport));
          c.once('exit', (code) => reject(new Error(`worker exited with ${code} before reporting`)));
        }),
    );
    const start = web.accessLog.length;
    const goAt = Date.now();
    for (const c of children) c.send(SECONDS * 1000);
    const done = await Promise.all(reports);
    const seconds = (Date.now() - goAt) / 1000;
    rmSync(dir, { recursive: true, force: true });
    // The window's requests: the workers stop claiming at its end and finish what they hold.
    const entries = web.accessLog.slice(start).filter((e) => e.at < goAt + SECONDS * 1000);
    let minGap = Infinity;
    let violations = 0;
    const gaps: number[] = [];
    for (const h of hosts) {
      const e = entries.filter((x) => x.host === h);
      for (let i = 1; i < e.length; i++) {
        const g = e[i]!.at - e[i - 1]!.at;
        gaps.push(g);
        minGap = Math.min(minGap, g);
        if (g < D) violations++;
      }
    }
    gaps.sort((a, b) => a - b);
    const q = (p: number) => gaps[Math.min(gaps.length - 1, Math.floor(p * gaps.length))] ?? 0;
    const perSecond = entries.length / SECONDS;
    return {
      workers: n,
      requests: entries.length,
      seconds,
      perSecond,
      ratio: perSecond / bound,
      minGapMs: minGap,
      gapP50: q(0.5),
      gapP95: q(0.95),
      gapMax: gaps.at(-1) ?? 0,
      violations,
      reports: done,
    };
  };

  const rows: Row[] = [];
  for (const n of WORKERS) rows.push(await run(n));
  await web.close();
  await pgServer?.stop();

  console.log(
    `\nFleet crawl throughput (${values.backend}, one process per worker): H = ${H} hosts, gap d = ${D} ms, bound H/d = ${bound.toFixed(1)} req/s, window ${SECONDS} s\n`,
  );
  console.log(
    '| workers | requests in the window | all done after (s) | req/s | ratio to H/d | per-host gap min / p50 / p95 / max (ms) | gap violations | items per worker | longest event-loop stall per worker (ms) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.workers} | ${r.requests} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.minGapMs} / ${r.gapP50} / ${r.gapP95} / ${r.gapMax} | ${r.violations} | ${r.reports.map((x) => x.items).join(' / ')} | ${r.reports.map((x) => x.loopMaxMs.toFixed(0)).join(' / ')} |`,
    );
  }
}
