/**
 * A restarted `svc serve` over HTTP (docs/architecture.md#persisted-engine-segments): the compiled service is started
 * on an index that has a persisted engine segment, with 0 and then 2 search threads, and probed from the moment it
 * is spawned with short runs of SciFact claims (GET /api/v1/search, one at a time, loopback). It prints, per thread
 * count: the time from spawn to the first answer, to the first probe at steady speed (a probe's p50 within 1.5× of
 * the steady p50: the median of the last probes' p50s), and the process's RSS once idle after them, with the
 * engine's builds, loads and load work from /metrics, and the CPU time the process used until its first answer and until
 * steady speed (its start's work, which the machine's load does not change as it does the times). A start that scanned the table instead of loading a segment
 * (a new image format) is not measured: it waits for the segment to be published and starts again.
 *
 *   npm run build && npx tsx bench/restart-http.ts --data-dir /tmp/idx [--root .] [--threads 0,2] [--probes 40] [--cpu-prof DIR]
 *
 * `--data-dir`: a service data folder whose `lance/` holds the passages (bench/engine-segments.ts builds synthetic
 * ones); `--root`: the checkout whose `bin/svc.js` and `dist/` run (another branch's build, for a before/after).
 */
import '../fixtures/loopback-only.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import { processCpuMs, processMemory } from './proc.js';
import { pct, SCIFACT } from './synthetic.js';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    root: { type: 'string', default: resolve(import.meta.dirname, '..') },
    threads: { type: 'string', default: '0,2' },
    probes: { type: 'string', default: '40' },
    'probe-size': { type: 'string', default: '8' },
    'max-seconds': { type: 'string', default: '900' },
    'cpu-prof': { type: 'string' },
  },
});
if (!values['data-dir']) throw new Error('--data-dir is required');
const dataDir = resolve(values['data-dir']);
const root = resolve(values.root);
const svc = join(root, 'bin', 'svc.js');
const probes = Number(values.probes);
const probeSize = Number(values['probe-size']);
const maxMs = Number(values['max-seconds']) * 1000;
const claims = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()].slice(0, 200);

const made = spawnSync(
  process.execPath,
  [svc, 'keys', 'create', '--name', 'bench-restart', '--per-minute', '1000000', '--per-day', '100000000', '--json', '--data-dir', dataDir],
  { encoding: 'utf8' },
);
if (made.status !== 0) throw new Error(`svc keys create: ${made.stderr}`);
const key = (JSON.parse(made.stdout.trim().split('\n').at(-1)!) as { key: string }).key;

// BM25 only (no model) and quiet: what is timed is the text engine's start.
const serveEnv: NodeJS.ProcessEnv = { ...process.env, SVC_LOG_LEVEL: 'warn' };
delete serveEnv.SVC_MODEL_DIR;

// `--cpu-prof DIR`: each measured start writes a V8 CPU profile there at exit (where the start's time goes).
const nodeArgs = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof'])}`] : [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** Metric samples by name (label sets summed, `thread="owner"` and per-thread ones alike). */
async function metrics(base: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const r = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${key}` } });
  for (const line of (await r.text()).split('\n')) {
    const m = /^(svc_text_engine_[a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m) out.set(m[1]! + (m[2]?.includes('kind="published"') ? ':published' : ''), (out.get(m[1]!) ?? 0) + Number(m[3]));
  }
  return out;
}

interface Run {
  firstAnswerMs: number;
  steadyMs: number;
  steadyP50: number;
  /** CPU time the process used from spawn to its first answer, and to the first probe at steady speed. */
  firstAnswerCpuMs: number;
  steadyCpuMs: number;
  rssIdleMiB: number;
  engine: Map<string, number>;
}

/** One start: probes from spawn until `probes` probes answered in full, then idle RSS and metrics; then stopped. */
async function start(threads: number): Promise<Run> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, svc, 'serve', '--port', String(port), '--data-dir', dataDir, '--no-crawl'],
    {
      env: { ...serveEnv, SVC_SEARCH_THREADS: String(threads) },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  try {
    const done: { end: number; p50: number; cpu: number }[] = [];
    let firstAnswerMs = NaN;
    let firstAnswerCpuMs = NaN;
    let q = 0;
    while (done.length < probes) {
      if (performance.now() - t0 > maxMs) throw new Error(`no ${probes} probes within ${maxMs} ms`);
      if (child.exitCode !== null) throw new Error(`svc serve exited (${child.exitCode})`);
      const lat: number[] = [];
      for (let i = 0; i < probeSize; i++) {
        const claim = claims[q++ % claims.length]!;
        const s = performance.now();
        try {
          const r = await fetch(`${base}/api/v1/search?q=${encodeURIComponent(claim)}`, { headers: { authorization: `Bearer ${key}` } });
          await r.arrayBuffer();
          if (r.status !== 200) break;
        } catch {
          break; // not listening yet
        }
        lat.push(performance.now() - s);
        if (Number.isNaN(firstAnswerMs)) {
          firstAnswerMs = performance.now() - t0;
          firstAnswerCpuMs = processCpuMs(child.pid!);
        }
      }
      if (lat.length === probeSize) done.push({ end: performance.now() - t0, p50: pct(lat, 50), cpu: processCpuMs(child.pid!) });
      else await sleep(50);
    }
    const steadyP50 = pct(
      done.slice(-10).map((d) => d.p50),
      50,
    );
    const first = done.find((d) => d.p50 <= 1.5 * steadyP50)!;
    await sleep(3000);
    const rssIdleMiB = Math.round(processMemory(child.pid!).rss);
    return {
      firstAnswerMs,
      steadyMs: first.end,
      steadyP50,
      firstAnswerCpuMs,
      steadyCpuMs: first.cpu,
      rssIdleMiB,
      engine: await metrics(base),
    };
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(60_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

console.log(`root ${root}, data ${dataDir}`);
for (const threads of values.threads.split(',').map(Number)) {
  let run = await start(threads);
  // The measured start must load a segment: a start that scanned (no segment of this build's format yet) waits for
  // its image to be published, and the service is started again.
  for (let tries = 0; (run.engine.get('svc_text_engine_loads') ?? 0) === 0 && tries < 3; tries++) {
    console.log(`threads ${threads}: scanned (${Math.round(run.steadyMs)} ms to steady); waiting for its segment`);
    const port = await freePort();
    const child = spawn(process.execPath, [svc, 'serve', '--port', String(port), '--data-dir', dataDir, '--no-crawl'], {
      env: { ...serveEnv, SVC_SEARCH_THREADS: '0' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const t0 = performance.now();
    for (;;) {
      await sleep(2000);
      const m = await metrics(`http://127.0.0.1:${port}`).catch(() => new Map<string, number>());
      if ((m.get('svc_text_engine_images:published') ?? 0) > 0 || (m.get('svc_text_engine_loads') ?? 0) > 0) break;
      if (performance.now() - t0 > maxMs) throw new Error('no segment published');
    }
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    run = await start(threads);
  }
  const e = run.engine;
  console.log(
    JSON.stringify({
      threads,
      firstAnswerMs: Math.round(run.firstAnswerMs),
      steadyMs: Math.round(run.steadyMs),
      steadyP50Ms: Number(run.steadyP50.toFixed(1)),
      firstAnswerCpuMs: Math.round(run.firstAnswerCpuMs),
      steadyCpuMs: Math.round(run.steadyCpuMs),
      rssIdleMiB: run.rssIdleMiB,
      builds: e.get('svc_text_engine_builds') ?? 0,
      loads: e.get('svc_text_engine_loads') ?? 0,
      loadWork: e.get('svc_text_engine_load_work') ?? null,
      sharedBytes: e.get('svc_text_engine_shared_bytes') ?? 0,
    }),
  );
}
// fetch's idle keep-alive sockets would hold the process open.
process.exit(0);
