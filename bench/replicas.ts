/**
 * API replicas on shared state: the cost of going shared. The same SciFact index is served by
 *   1. one process on the embedded SQLite state (the two-command default),
 *   2. one `api` replica on PostgreSQL,
 *   3. two `api` replicas on the same PostgreSQL (one key shared by both, so every request's quota decision is
 *      the same row's atomic conditional increment, the fleet-exact path),
 * and each configuration gets `GET /healthz`, then `GET /api/v1/requests/<unknown id>` (key check, quota decision
 * and one state read, answered 404: the shared state's own per-request cost), then `GET /api/v1/search?q=<claim>`,
 * each for `--seconds`, from one undici client with `--connections` keep-alive connections spread over the
 * replicas. Prints req/s, p50/p99, errors and search as a share of /healthz per configuration.
 *
 *   node --import tsx bench/replicas.ts [--data-dir /tmp/load-sf] [--connections 20] [--seconds 10]
 *
 * `--data-dir` must hold a SciFact index ingested with the hashing embedder (bench/load.ts builds one there on its
 * first run). PostgreSQL is the test harness's (Debian's binaries, a temp dir, loopback, stopped at the end).
 * Replicas share the data dir's index folder (read only: the `api` role never writes it). On this 2-core machine
 * two replicas share the same two cores, so the third row shows what the shared state costs under contention, not
 * how a second machine would scale.
 */
import '../fixtures/loopback-only.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { readQueries } from '../cli/eval.js';
import { loadConfig } from '../config.js';
import { createHashingEmbedder } from '../index/serving/embedder.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { createLogger } from '../logger.js';
import { createServices, startServer } from '../main.js';
import { startPostgres } from '../test/helpers/postgres-server.js';
import { SCIFACT, pct } from './synthetic.js';

setLanceCpuThreads();

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string', default: '/tmp/load-sf' },
    connections: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '10' },
    // Internal: this process is one replica.
    serve: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    key: { type: 'string' },
  },
});
const dataDir = resolve(values['data-dir']!);

if (values.serve) {
  const databaseUrl = values['database-url'];
  const config = loadConfig({
    env: {},
    flags: { dataDir, port: 0, crawl: false, logLevel: 'warn', ...(databaseUrl ? { databaseUrl } : {}) },
  });
  const services = await createServices(config, {
    log: createLogger({ level: 'warn' }),
    embedder: createHashingEmbedder(),
    role: databaseUrl ? 'api' : 'all',
  });
  const key = values.key ?? (await services.keys.create({ name: 'bench-replicas', perMinute: 100_000_000, perDay: 1_000_000_000 })).key;
  const running = await startServer(services);
  process.stderr.write(`${JSON.stringify({ tag: 'svc-bench-ready', url: running.url, key })}\n`);
  for await (const line of createInterface({ input: process.stdin })) if (line === 'stop') break;
  await running.close();
  await services.close();
  process.exit(0);
}

if (!existsSync(join(dataDir, 'lance', 'passages.lance'))) {
  throw new Error(
    `${dataDir} holds no index: build one with node --import tsx bench/load.ts --embedder hashing --data-dir ${dataDir} --seconds 1`,
  );
}
const connections = Math.max(1, Math.min(64, Number(values.connections)));
const seconds = Math.max(1, Math.min(60, Number(values.seconds)));
const claims = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()].map((q) => q.slice(0, 300));

interface Replica {
  readonly child: ChildProcess;
  readonly url: string;
  readonly key: string;
}

function startReplica(databaseUrl: string | undefined, key: string | undefined): Promise<Replica> {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', '--data-dir', dataDir];
  if (databaseUrl) args.push('--database-url', databaseUrl);
  if (key) args.push('--key', key);
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'ignore', 'pipe'] });
  return new Promise((res, rej) => {
    child.once('exit', (code) => rej(new Error(`replica exited (${code})`)));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (!line.startsWith('{"tag":"svc-bench-ready"')) return void process.stderr.write(`[replica] ${line}\n`);
      const m = JSON.parse(line) as { url: string; key: string };
      res({ child, url: m.url, key: m.key });
    });
  });
}

async function stopReplica(r: Replica): Promise<void> {
  const exited = new Promise((res) => r.child.once('exit', res));
  r.child.stdin!.write('stop\n');
  await exited;
}

/** `connections` closed loops for `seconds`, connection i talking to replica i mod n. */
async function drive(
  replicas: readonly Replica[],
  next: (i: number) => string,
  expect = 200,
): Promise<{ rate: number; p50: number; p99: number; errors: number; requests: number }> {
  const pools = replicas.map((r) => new Pool(r.url, { connections: Math.ceil(connections / replicas.length), pipelining: 1 }));
  const lat: number[] = [];
  let errors = 0;
  let issued = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const worker = async (w: number) => {
    const pool = pools[w % pools.length]!;
    const key = replicas[w % replicas.length]!.key;
    while (performance.now() < until && issued < 5_000_000) {
      const path = next(issued++);
      const s = performance.now();
      try {
        const r = await pool.request({ path, method: 'GET', headers: { authorization: `Bearer ${key}` } });
        await r.body.text();
        lat.push(performance.now() - s);
        if (r.statusCode !== expect) errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, w) => worker(w)));
  const elapsed = (performance.now() - t0) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  return { rate: lat.length / elapsed, p50: pct(lat, 50), p99: pct(lat, 99), errors, requests: lat.length };
}

const searchPath = (i: number) => `/api/v1/search?q=${encodeURIComponent(claims[i % claims.length]!)}&limit=10`;
const pg = await startPostgres();
const rows: string[] = [];
try {
  const configs: [string, string | undefined, number][] = [
    ['SQLite (embedded), 1 process', undefined, 1],
    ['PostgreSQL, 1 api replica', pg.url, 1],
    ['PostgreSQL, 2 api replicas, one key', pg.url, 2],
  ];
  for (const [label, url, n] of configs) {
    const first = await startReplica(url, undefined);
    const replicas = [first];
    for (let i = 1; i < n; i++) replicas.push(await startReplica(url, first.key));
    try {
      await drive(replicas, searchPath); // warm-up: caches, connections, JIT
      const health = await drive(replicas, () => '/healthz');
      // Authenticated and counted, then one state read: the per-request cost of the shared state alone (404).
      const state = await drive(replicas, () => `/api/v1/requests/00000000-0000-4000-8000-000000000000`, 404);
      const search = await drive(replicas, searchPath);
      rows.push(
        `| ${label} | ${health.rate.toFixed(0)} | ${state.rate.toFixed(0)} | ${state.p50.toFixed(1)} | ${search.rate.toFixed(1)} | ${((search.rate / health.rate) * 100).toFixed(2)}% | ${search.p50.toFixed(1)} | ${search.p99.toFixed(1)} | ${health.errors + state.errors + search.errors} |`,
      );
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    } finally {
      for (const r of replicas) await stopReplica(r);
    }
  }
} finally {
  await pg.stop();
}
console.log(
  `\nSciFact index in ${dataDir} (hashing embedder), ${connections} connections, ${seconds} s per phase, node ${process.version}; shared 2-core machine\n`,
);
console.log(
  '| configuration | /healthz req/s | key check + quota + state read req/s | its p50 ms | searches/s | share of /healthz | search p50 ms | search p99 ms | errors |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(r);
