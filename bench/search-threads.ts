/**
 * Search throughput with more than one thread: is a pool of search threads, each with its own
 * reader of the index, the way past one saturated main thread? Each of `--threads` worker threads opens the services
 * on the same data dir as `svc serve --role api` does (its own LanceDB connection, in-process postings, flat vectors
 * and row cache; a reader: no crawler, no index writes) and calls svc_search's handler (`callTool`, the same code the REST and MCP adapters call, no HTTP)
 * with the SciFact claims in turn for `--seconds`, after a warm-up of 200 claims. It prints searches/s per thread and
 * in all, for 1..`--threads` threads, and the process RSS. No HTTP, no client: the upper bound a search pool could
 * give the served route on this machine, not a served figure (bench/load.ts is the served one).
 *
 *   npx tsc -p . && node dist/bench/search-threads.js [--data-dir /tmp/load-sf] [--threads 2] [--seconds 10]
 *
 * `--data-dir` must hold a SciFact index ingested with the hashing embedder (bench/load.ts builds one there on its
 * first run). Run from dist/: a worker thread does not inherit tsx's loader. Bounded in time; loopback only.
 */
import '../fixtures/loopback-only.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { readQueries } from '../cli/eval.js';
import { SCIFACT } from './synthetic.js';

interface Job {
  readonly dataDir: string;
  readonly seconds: number;
  readonly offset: number;
}
interface Report {
  readonly searches: number;
  readonly seconds: number;
  readonly empty: number;
}

async function worker(job: Job): Promise<Report> {
  const { loadConfig } = await import('../config.js');
  const { createHashingEmbedder } = await import('../index/serving/embedder.js');
  const { createLogger } = await import('../logger.js');
  const { createServices } = await import('../main.js');
  const { callTool } = await import('../tools/call-tool.js');
  const { searchTool } = await import('../tools/search.js');
  const claims = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()];
  const config = loadConfig({ env: {}, flags: { dataDir: job.dataDir, port: 0, crawl: false, logLevel: 'warn', searchThreads: 0 } });
  // Role api: a reader of the index, as a search pool's threads would be (it commits nothing to the index and checks
  // for the writer's new versions every second; index/engines/lance/store.ts `writes`).
  const services = await createServices(config, { role: 'api', log: createLogger({ level: 'warn' }), embedder: createHashingEmbedder() });
  try {
    await services.deps.index.textEngineReady();
    const ctx = { deps: services.deps, caller: { keyId: 'bench', digest: 'bench' } } as never;
    for (let i = 0; i < 200; i++) await callTool(searchTool, { q: claims[i % claims.length]! }, ctx);
    let searches = 0;
    let empty = 0;
    const t0 = performance.now();
    const until = t0 + job.seconds * 1000;
    for (let i = job.offset; performance.now() < until && searches < 1_000_000; i++, searches++) {
      const r = await callTool(searchTool, { q: claims[i % claims.length]! }, ctx);
      if (r.results.length === 0) empty++;
    }
    return { searches, seconds: (performance.now() - t0) / 1000, empty };
  } finally {
    await services.close();
  }
}

if (!isMainThread) {
  parentPort!.postMessage(await worker(workerData as Job));
} else {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string', default: '/tmp/load-sf' },
      threads: { type: 'string', default: '2' },
      seconds: { type: 'string', default: '10' },
    },
  });
  const self = fileURLToPath(import.meta.url);
  if (self.endsWith('.ts')) throw new Error('run from dist/: npx tsc -p . && node dist/bench/search-threads.js');
  const dataDir = resolve(values['data-dir']);
  if (!existsSync(join(dataDir, 'lance'))) throw new Error(`${dataDir} holds no index: run bench/load.ts --data-dir ${dataDir} first`);
  const maxThreads = Math.max(1, Math.min(8, Number(values.threads) || 2));
  const seconds = Math.max(1, Math.min(120, Number(values.seconds) || 10));
  console.log(
    `SciFact index in ${dataDir}, hashing embedder, svc_search handler in process, ${seconds} s per row; node ${process.version}\n`,
  );
  console.log('| threads | searches/s per thread | searches/s in all | × one thread | empty answers | process RSS MiB |');
  console.log('|---:|---|---:|---:|---:|---:|');
  let one = 0;
  for (let n = 1; n <= maxThreads; n++) {
    const reports = await Promise.all(
      Array.from(
        { length: n },
        (_, i) =>
          new Promise<Report>((ok, fail) => {
            const w = new Worker(self, { workerData: { dataDir, seconds, offset: i * 500 } satisfies Job });
            w.once('message', ok);
            w.once('error', fail);
          }),
      ),
    );
    const rates = reports.map((r) => r.searches / r.seconds);
    const all = rates.reduce((s, r) => s + r, 0);
    if (n === 1) one = all;
    const empty = reports.reduce((s, r) => s + r.empty, 0) / reports.reduce((s, r) => s + r.searches, 0);
    const rss = process.memoryUsage().rss / 2 ** 20;
    console.log(
      `| ${n} | ${rates.map((r) => r.toFixed(0)).join(' + ')} | ${all.toFixed(0)} | ${(all / one).toFixed(2)} | ${(empty * 100).toFixed(1)} % | ${rss.toFixed(0)} |`,
    );
  }
}
