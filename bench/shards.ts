/**
 * One shard against N shards served by N searcher processes (issue 43): the same synthetic corpus (SciFact sentences,
 * bench/synthetic.ts, hashing embedder) is built once as an index of 1 shard and once as an index of N shards, then in
 * one run
 *   (a) one `api` process over the 1-shard index (search threads as configured by default),
 *   (b) N `searcher` processes (`--shards i` each) and one `api` process (SVC_SHARD_SOURCE=searchers) over the
 *       N-shard index, the registry in the data folder's SQLite state (one machine, one shared folder),
 * each get the same query sets over HTTP on loopback (SciFact claims, 3-word, all-required), with BM25 and with hybrid
 * ranking (the api process restarted with SVC_RANKING; the searchers stay), sequential and with `--connections`
 * connections. Prints p50/p95 per query set per setup, the total RSS of the setup's processes (sum of VmRSS, the
 * largest of the samples taken after each phase), the memory the setup holds (`setupMemory`: file-backed pages
 * counted once, not once per process), and the ratios N shards / 1 shard.
 *
 *   nice -n 5 node --import tsx bench/shards.ts [--passages 200000] [--shards 4] [--data-dir /tmp/bench-shards]
 *       [--queries 150] [--seconds 20] [--connections 4] [--rankings bm25,hybrid] [--sets claims,3-word,all-required]
 *       [--setups one,many] [--sequential-only] [--cpu-prof DIR]
 *
 * `--rankings`, `--sets`, `--setups` (`one`: the 1-shard api, `many`: the N searchers and their api) and
 * `--sequential-only` (no `--connections` phases) narrow a run. `--cpu-prof DIR` writes a V8 CPU profile of every
 * process of a setup per phase (`<setup>-<ranking>-<set>-c<conns>-<role>[<shard>].cpuprofile`, main thread only: run
 * the 1-shard api with SVC_SEARCH_THREADS=0 to see its query work there), started after the warm-up and stopped at
 * the phase's end, so it holds the queries' work and not the index's opening.
 *
 * The indexes are built on the first run into `<data-dir>/one` and `<data-dir>/n<N>` and reused after (`--data-dir`
 * keyed by the passage count it was built with). Every phase is bounded by `--queries` requests and `--seconds`.
 * Processes are children of this one (this file in `--serve` mode), so the hashing embedder serves hybrid queries;
 * run as `node dist/bench/shards.js …` after `npx tsc -p .`, they run compiled, as deployed (each process under tsx
 * holds its transform too).
 */
import '../fixtures/loopback-only.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { readQueries } from '../cli/eval.js';
import { processCpuMs, processMemory } from './proc.js';
import { pct, requireEach, SCIFACT, sentencePool, shortQuery, writeSyntheticPages } from './synthetic.js';

const { values } = parseArgs({
  options: {
    passages: { type: 'string', default: '200000' },
    shards: { type: 'string', default: '4' },
    'data-dir': { type: 'string', default: '/tmp/bench-shards' },
    queries: { type: 'string', default: '150' },
    seconds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '4' },
    rankings: { type: 'string', default: 'bm25,hybrid' },
    sets: { type: 'string', default: 'claims,3-word,all-required' },
    setups: { type: 'string', default: 'one,many' },
    'sequential-only': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    // Internal: this process is one server of a setup.
    serve: { type: 'string' },
    'serve-dir': { type: 'string' },
    'serve-shard': { type: 'string' },
    ranking: { type: 'string' },
  },
});
const SECRET = 'bench-shards-fleet-secret-0123456789';

if (values.serve) {
  const role = values.serve as 'api' | 'searcher';
  const { loadConfig } = await import('../config.js');
  const { createHashingEmbedder } = await import('../index/serving/embedder.js');
  const { setLanceCpuThreads } = await import('../index/engines/lance/lance-threads.js');
  const { createLogger } = await import('../logger.js');
  const { createServices, listen } = await import('../main.js');
  setLanceCpuThreads();
  // The api's calls to the searchers (the internal shard route), counted with their answers' bytes (Content-Length)
  // and time to the last byte, reported when it stops: what the fan-out costs per query. Read from undici's diagnostics
  // channels, which both `fetch` and an undici dispatcher publish to, so the count holds whichever client the api uses.
  const wire = new Map<string, { calls: number; bytes: number; ms: number }>();
  const { subscribe } = await import('node:diagnostics_channel');
  const started = new WeakMap<object, { call: string; t0: number; bytes: number }>();
  subscribe('undici:request:create', (m) => {
    const req = (m as { request: { origin?: unknown; path?: unknown } }).request;
    const call = /\/internal\/v1\/shard\/\d+\/(\w+)/.exec(String(req.path))?.[1];
    if (call) started.set(req, { call, t0: performance.now(), bytes: 0 });
  });
  subscribe('undici:request:headers', (m) => {
    const { request, response } = m as { request: object; response: { headers: (Buffer | string)[] } };
    const s = started.get(request);
    const h = response.headers;
    for (let i = 0; s && i + 1 < h.length; i += 2) if (String(h[i]).toLowerCase() === 'content-length') s.bytes = Number(String(h[i + 1]));
  });
  subscribe('undici:request:trailers', (m) => {
    const s = started.get((m as { request: object }).request);
    if (!s) return;
    const w = wire.get(s.call) ?? { calls: 0, bytes: 0, ms: 0 };
    wire.set(s.call, { calls: w.calls + 1, bytes: w.bytes + s.bytes, ms: w.ms + performance.now() - s.t0 });
  });
  const config = loadConfig({
    env: {
      SVC_FLEET_SECRET: SECRET,
      SVC_SHARD_SOURCE: 'searchers',
      SVC_SEARCHER_HEARTBEAT_MS: '1000',
      ...(values.ranking ? { SVC_RANKING: values.ranking } : {}),
      ...(process.env.SVC_SEARCH_THREADS ? { SVC_SEARCH_THREADS: process.env.SVC_SEARCH_THREADS } : {}),
    },
    flags: { dataDir: resolve(values['serve-dir']!), port: 0, crawl: false, logLevel: 'warn' },
  });
  const listening = await listen(config, { role, waitingFor: () => 'stores' });
  const services = await createServices(config, {
    log: createLogger({ level: 'warn' }),
    embedder: createHashingEmbedder(),
    role,
    advertiseUrl: listening.url,
    ...(values['serve-shard'] !== undefined ? { shards: [Number(values['serve-shard'])] } : {}),
  });
  listening.serve(services);
  services.start();
  const key =
    role === 'api' ? (await services.keys.create({ name: 'bench-shards', perMinute: 100_000_000, perDay: 1_000_000_000 })).key : '';
  process.stderr.write(`${JSON.stringify({ tag: 'svc-bench-ready', url: listening.url, key })}\n`);
  // `prof <file>` starts a CPU profile of this process's main thread, `prof-end` writes it (`--cpu-prof`).
  const { Session } = await import('node:inspector/promises');
  let profiling: { session: InstanceType<typeof Session>; file: string } | null = null;
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'stop') break;
    if (line.startsWith('prof ') && !profiling) {
      const session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 500 });
      await session.post('Profiler.start');
      profiling = { session, file: line.slice('prof '.length) };
    } else if (line === 'prof-end' && profiling) {
      const { profile } = await profiling.session.post('Profiler.stop');
      writeFileSync(profiling.file, JSON.stringify(profile));
      profiling.session.disconnect();
      profiling = null;
      process.stderr.write(`${JSON.stringify({ tag: 'svc-bench-profiled' })}\n`);
    }
  }
  // Where the process's memory is (MiB), for the RSS each process adds: JS heap, buffers, the rest native (LanceDB).
  const mem = Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, Math.round(v / 2 ** 20)]));
  process.stderr.write(`${JSON.stringify({ tag: 'svc-bench-wire', wire: Object.fromEntries(wire), mem })}\n`);
  await listening.close();
  await services.close();
  process.exit(0);
}

const n = Math.max(1000, Number(values.passages) || 200_000);
const shardCount = Math.max(2, Math.min(16, Number(values.shards) || 4));
const dataDir = resolve(values['data-dir']);
const maxQueries = Math.max(10, Number(values.queries) || 150);
const seconds = Math.max(1, Math.min(120, Number(values.seconds) || 20));
const connections = Math.max(2, Math.min(16, Number(values.connections) || 4));
const self = fileURLToPath(import.meta.url);
const list = (v: string | undefined): string[] => (v ?? '').split(',').filter((x) => x !== '');
const rankings = list(values.rankings).filter((r): r is 'bm25' | 'hybrid' => r === 'bm25' || r === 'hybrid');
const setups = new Set(list(values.setups));
const profDir = values['cpu-prof'] ? resolve(values['cpu-prof']) : null;
if (profDir) mkdirSync(profDir, { recursive: true });

/** Builds the index of `shards` shards in `dir/lance` unless it is there with the same passage count. */
async function build(dir: string, shards: number): Promise<void> {
  const marker = join(dir, 'bench-shards.json');
  if (existsSync(marker)) {
    const built = JSON.parse(readFileSync(marker, 'utf8')) as { n: number; shards?: number };
    if (built.n === n && (built.shards ?? 1) === shards) return publishSegments(dir, shards);
  }
  if (existsSync(join(dir, 'lance'))) throw new Error(`${dir} holds another index: remove it or choose another --data-dir`);
  mkdirSync(dir, { recursive: true });
  const { openIndex } = await import('../index/shards/sharded-index.js');
  const { createHashingEmbedder } = await import('../index/serving/embedder.js');
  const t0 = performance.now();
  const pool = await sentencePool();
  const idx = await openIndex({ dir: join(dir, 'lance'), shards, embedder: createHashingEmbedder(), textEngine: false, refreshAfterMs: 0 });
  await writeSyntheticPages(idx, n, pool);
  await idx.close();
  writeFileSync(marker, JSON.stringify({ n, shards }));
  console.log(`built ${n} passages as ${shards} shard(s) in ${Math.round((performance.now() - t0) / 1000)} s`);
  await publishSegments(dir, shards);
}

/**
 * Publishes each shard's engine segment at its table's version unless one is there, as a fleet's indexer does: a
 * served process (an api over one shard, a searcher) then loads it in place instead of building its postings in its
 * own heap from a scan, and both setups are measured as they run in a fleet.
 */
async function publishSegments(dir: string, shards: number): Promise<void> {
  const { PassageIndex } = await import('../index/engines/lance/store.js');
  const { localIndexLocation } = await import('../index/engines/lance/location.js');
  const { shardLocation } = await import('../index/engines/lance/shard-layout.js');
  const { createHashingEmbedder } = await import('../index/serving/embedder.js');
  const root = localIndexLocation(join(dir, 'lance'));
  for (let i = 0; i < shards; i++) {
    const location = shards > 1 ? shardLocation(root, i, shards) : root;
    const idx = await PassageIndex.open({ location, embedder: createHashingEmbedder(), refreshAfterMs: 0, engineSegments: true });
    const status = await idx.engineSegmentsStatus();
    if (!status || status.version !== status.tableVersion) {
      const t0 = performance.now();
      await idx.engineImageNow();
      console.log(`published the engine segment of ${location.label} in ${Math.round((performance.now() - t0) / 1000)} s`);
    }
    await idx.close();
  }
}

type Wire = Record<string, { calls: number; bytes: number; ms: number }>;

interface Proc {
  readonly child: ChildProcess;
  readonly url: string;
  readonly key: string;
  /** Requests this bench sent it (warm-up included) and, once stopped, its calls to the searchers. */
  sent: number;
  wire?: Wire;
  /** Its name in profile files (`api`, `searcher2`). */
  readonly name: string;
  /** Resolves the pending `prof-end` once the profile is written. */
  profiled?: () => void;
}

/** How long a process may take to open its index and say it is ready: a shard of millions of passages takes minutes. */
const READY_MS = Math.max(120_000, Math.min(1_800_000, (n / 2_000_000) * 1_200_000));

function startProc(role: 'api' | 'searcher', dir: string, extra: string[]): Promise<Proc> {
  // Run compiled (`node dist/bench/shards.js`, after `npm run build`), the processes are compiled too: as deployed,
  // without tsx's transform in each one's memory.
  const args = [...(self.endsWith('.js') ? [] : ['--import', 'tsx']), self, '--serve', role, '--serve-dir', dir, ...extra];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'inherit', 'pipe'] });
  return new Promise((res, rej) => {
    const late = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`${role} not ready within ${READY_MS / 1000} s`));
    }, READY_MS);
    child.once('exit', (code) => {
      clearTimeout(late);
      rej(new Error(`${role} exited (${code})`));
    });
    let proc: Proc | undefined;
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (line.startsWith('{"tag":"svc-bench-profiled"') && proc) return void proc.profiled?.();
      if (line.startsWith('{"tag":"svc-bench-wire"') && proc) {
        const m = JSON.parse(line) as { wire: Wire; mem: Record<string, number> };
        process.stderr.write(`${role} ${extra.join(' ')} memory at stop (MiB): ${JSON.stringify(m.mem)}\n`);
        return void (proc.wire = m.wire);
      }
      if (!line.startsWith('{"tag":"svc-bench-ready"')) return void process.stderr.write(`[${role}] ${line.slice(0, 300)}\n`);
      const m = JSON.parse(line) as { url: string; key: string };
      clearTimeout(late);
      const name = role === 'api' ? 'api' : `searcher${extra[extra.indexOf('--serve-shard') + 1] ?? ''}`;
      res((proc = { child, url: m.url, key: m.key, sent: 0, name }));
    });
  });
}

async function stopProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null) return;
  // 'close': its stderr read to the end as well (the wire report is its last line).
  const exited = new Promise((res) => p.child.once('close', res));
  p.child.stdin!.write('stop\n');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(t);
}

/** Starts (`file` set) or writes (null) each process's CPU profile; written ones awaited. */
async function profile(procs: readonly Proc[], file: string | null): Promise<void> {
  if (!profDir) return;
  await Promise.all(
    procs.map((p) => {
      if (file !== null) return void p.child.stdin!.write(`prof ${join(profDir, `${file}-${p.name}.cpuprofile`)}\n`);
      return new Promise<void>((res) => {
        p.profiled = res;
        p.child.stdin!.write('prof-end\n');
      });
    }),
  );
}

/**
 * The memory a setup holds: each process's own pages, plus file-backed pages once. Every process maps the same node
 * binary and native libraries (LanceDB's among them), whose pages the kernel holds once however many map them, so a
 * sum of RSS counts them once per process; the largest process's file pages stand for them.
 */
const setupMemory = (sample: readonly { own: number; file: number }[]): number =>
  sample.reduce((a, m) => a + m.own, 0) + Math.max(0, ...sample.map((m) => m.file));

const claims = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()].map((q) => q.slice(0, 300));
const ALL_SETS: Record<string, string[]> = {
  claims,
  '3-word': claims.map(shortQuery).filter((q) => q.split(' ').length === 3),
  'all-required': claims
    .map(shortQuery)
    .filter((q) => q.split(' ').length === 3)
    .map(requireEach),
};
const QUERY_SETS = Object.fromEntries(list(values.sets).flatMap((k) => (ALL_SETS[k] ? [[k, ALL_SETS[k]]] : [])));

interface Phase {
  p50: number;
  p95: number;
  requests: number;
  errors: number;
  partial: number;
  /** CPU time of the setup's processes (user + system, all threads) per request: work done, whatever the load. */
  cpuMs?: number;
}

/** `conns` closed loops sharing at most `maxQueries` requests and `seconds`, over the set's queries in order. */
async function drive(api: Proc, queries: readonly string[], conns: number): Promise<Phase> {
  const pool = new Pool(api.url, { connections: conns, pipelining: 1 });
  const lat: number[] = [];
  let errors = 0;
  let partial = 0;
  let issued = 0;
  const until = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < until && issued < maxQueries) {
      const q = queries[issued++ % queries.length]!;
      api.sent++;
      const s = performance.now();
      try {
        const r = await pool.request({
          path: `/api/v1/search?q=${encodeURIComponent(q)}&limit=10`,
          method: 'GET',
          headers: { authorization: `Bearer ${api.key}` },
        });
        const body = (await r.body.json()) as { coverage?: { shards?: { answered: number; total: number } } };
        lat.push(performance.now() - s);
        if (r.statusCode !== 200 && errors++ === 0) process.stderr.write(`HTTP ${r.statusCode}: ${JSON.stringify(body).slice(0, 300)}\n`);
        const cov = body.coverage?.shards;
        if (cov && cov.answered < cov.total) partial++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: conns }, () => worker()));
  await pool.close();
  return { p50: pct(lat, 50), p95: pct(lat, 95), requests: lat.length, errors, partial };
}

/** Until the api answers a search whole (postings built, every shard's searcher registered), bounded. */
async function warm(api: Proc): Promise<void> {
  const t0 = performance.now();
  for (;;) {
    const w = await drive(api, claims.slice(0, 10), 1);
    if (w.errors === 0 && w.partial === 0 && w.requests > 0) return;
    process.stderr.write(`warming: ${w.requests} answered, ${w.errors} errors, ${w.partial} partial\n`);
    if (performance.now() - t0 > 600_000) throw new Error('the api never answered whole within 10 minutes');
    await new Promise((r) => setTimeout(r, 1000));
  }
}

type Results = Map<string, Phase>; // `${ranking} ${set} ${1|c}`

interface Measured {
  results: Results;
  /** The largest total RSS sampled, and each process's RSS in that sample (api first, then the searchers). */
  rss: number;
  each: number[];
  /** The largest `setupMemory` sampled. */
  memory: number;
}

async function measure(label: string, dir: string, searchers: readonly Proc[]): Promise<Measured> {
  const results: Results = new Map();
  let rss = 0;
  let each: number[] = [];
  let memory = 0;
  for (const ranking of rankings) {
    const api = await startProc('api', dir, ['--ranking', ranking]);
    try {
      await warm(api);
      // What the setup's processes spend doing no query (heartbeats, registry reads, timers), per second: a phase's
      // CPU per query carries its share (more the slower its queries).
      const idle0 = [api, ...searchers].map((p) => processCpuMs(p.child.pid!));
      await new Promise((r) => setTimeout(r, 5000));
      const idle = [api, ...searchers].map((p) => processCpuMs(p.child.pid!)).map((c, i) => (c - idle0[i]!) / 5);
      process.stderr.write(`${label} ${ranking} idle CPU ms/s: ${idle.map((c) => c.toFixed(1)).join(' + ')}\n`);
      for (const [set, queries] of Object.entries(QUERY_SETS))
        for (const conns of values['sequential-only'] ? [1] : [1, connections]) {
          const procs = [api, ...searchers];
          await profile(procs, `${label.replace(/ /g, '')}-${ranking}-${set}-c${conns}`);
          const cpu0 = procs.map((p) => processCpuMs(p.child.pid!));
          const r = await drive(api, queries, conns);
          // Per process (api first, then the searchers), and summed.
          const perQuery = procs.map((p) => processCpuMs(p.child.pid!)).map((c, i) => (c - cpu0[i]!) / Math.max(1, r.requests));
          r.cpuMs = perQuery.reduce((a, b) => a + b, 0);
          await profile(procs, null);
          results.set(`${ranking} ${set} ${conns}`, r);
          const sample = [api, ...searchers].map((p) => processMemory(p.child.pid!));
          const total = sample.reduce((a, m) => a + m.rss, 0);
          if (total > rss) [rss, each] = [total, sample.map((m) => m.rss)];
          memory = Math.max(memory, setupMemory(sample));
          process.stderr.write(
            `${label} ${ranking} ${set} c=${conns}: p50 ${r.p50.toFixed(1)} p95 ${r.p95.toFixed(1)} ms, ${r.requests} req, ${r.errors} errors, ${r.partial} partial, CPU ${r.cpuMs.toFixed(1)} ms/req (${perQuery.map((c) => c.toFixed(1)).join(' + ')}), RSS ${rss.toFixed(0)} MiB\n`,
          );
        }
    } finally {
      await stopProc(api);
    }
    for (const [call, w] of Object.entries(api.wire ?? {}))
      process.stderr.write(
        `${label} ${ranking} wire ${call}: ${(w.calls / api.sent).toFixed(1)} calls, ${(w.bytes / api.sent / 1024).toFixed(1)} KiB, ${(w.ms / api.sent).toFixed(1)} ms (summed over shards) per query\n`,
      );
  }
  return { results, rss, each, memory };
}

const oneDir = join(dataDir, 'one');
const manyDir = join(dataDir, `n${shardCount}`);
if (setups.has('one')) await build(oneDir, 1);
if (setups.has('many')) await build(manyDir, shardCount);

const NONE: Measured = { results: new Map(), rss: NaN, each: [], memory: NaN };
const one = setups.has('one') ? await measure('1 shard', oneDir, []) : NONE;
const searchers: Proc[] = [];
let many = NONE;
if (setups.has('many'))
  try {
    for (let i = 0; i < shardCount; i++) searchers.push(await startProc('searcher', manyDir, ['--serve-shard', String(i)]));
    many = await measure(`${shardCount} shards`, manyDir, searchers);
  } finally {
    for (const s of searchers) await stopProc(s);
  }

console.log(
  `\n${n} synthetic passages, 1 shard (1 api process) vs ${shardCount} shards (${shardCount} searchers + 1 api), hashing embedder, ` +
    `≤ ${maxQueries} queries and ≤ ${seconds} s per phase, c = concurrent connections, node ${process.version}, ${new Date().toISOString()}\n`,
);
console.log(
  `| ranking | query set | c | 1 shard p50 / p95 ms | ${shardCount} shards p50 / p95 ms | p95 ratio | CPU ms per query (all processes) | requests | errors / partial |`,
);
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
const blank: Phase = { p50: NaN, p95: NaN, requests: 0, errors: 0, partial: 0 };
for (const key of new Set([...one.results.keys(), ...many.results.keys()])) {
  const [ranking, set, c] = key.split(' ');
  const a = one.results.get(key) ?? blank;
  const b = many.results.get(key) ?? blank;
  // A setup not run (`--setups`) shows a dash, not NaN.
  const ms = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '—' : x.toFixed(1));
  const ratio = Number.isNaN(b.p95 / a.p95) ? '—' : `${(b.p95 / a.p95).toFixed(2)}×`;
  console.log(
    `| ${ranking} | ${set} | ${c} | ${ms(a.p50)} / ${ms(a.p95)} | ${ms(b.p50)} / ${ms(b.p95)} | ` +
      `${ratio} | ${ms(a.cpuMs)} / ${ms(b.cpuMs)} | ${a.requests} / ${b.requests} | ${a.errors + b.errors} / ${b.partial} |`,
  );
}
if (Number.isNaN(one.rss) || Number.isNaN(many.rss)) {
  const [label, m] = Number.isNaN(many.rss) ? ['1 shard', one] : [`${shardCount} shards`, many];
  console.log(`\ntotal RSS (largest sample), ${label} only: ${m.rss.toFixed(0)} MiB; own and file pages once ${m.memory.toFixed(0)} MiB`);
} else {
  console.log(
    `\ntotal RSS (largest sample): 1 shard ${one.rss.toFixed(0)} MiB, ${shardCount} shards ${many.rss.toFixed(0)} MiB ` +
      `(api ${many.each[0]?.toFixed(0)}, searchers ${many.each
        .slice(1)
        .map((x) => x.toFixed(0))
        .join(' / ')}), ratio ${(many.rss / one.rss).toFixed(2)}×`,
  );
  console.log(
    `memory held (own pages of each process, file-backed pages once): 1 shard ${one.memory.toFixed(0)} MiB, ` +
      `${shardCount} shards ${many.memory.toFixed(0)} MiB, ratio ${(many.memory / one.memory).toFixed(2)}×`,
  );
}
process.exit(0);
