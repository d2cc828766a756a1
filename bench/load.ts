/**
 * Throughput under load on the served path (its targets: docs/benchmarks.md). A separate svc server process (so its CPU
 * profile, RSS and event-loop delay are its own) serves a SciFact index, or any index folder; this process drives it
 * with an undici Pool of `--connections` keep-alive connections:
 *   1. `GET /healthz` for `--seconds` (the reference rate: Koa, request log, headers, Node's HTTP stack),
 *   2. `GET /api/v1/search?q=<claim>` for `--seconds`, the SciFact claims in turn (varied natural-language queries),
 * and prints searches/s, p50/p99, errors, the share of non-empty answers, the server's RSS and event-loop delay, and
 * the search rate as a share of the /healthz rate measured with the same client in the same run.
 * Each phase also gives the server's CPU time per request (the whole process: HTTP thread, search threads, GC and
 * LanceDB threads): what a search costs the machine, steadier than the rate on a machine shared with other work;
 * and this client's own CPU time per request, which shares the same two cores (the share of /healthz is a ratio of
 * two rates each bounded by server and client together).
 *
 *   node --import tsx bench/load.ts [--embedder hashing|none|model] [--data-dir D] [--connections 20] [--seconds 15]
 *        [--lance DIR] [--soak-seconds 0] [--sample-every 10] [--crawl-hosts 0] [--cpu-prof DIR] [--model-dir M]
 *        [--compiled] [--trace-turns MS] [--queries claims|all-required] [--search-threads N] [--index-thread-nice N] [--snippet-mb N] [--row-cache-mb N] [--warm-up 15] [--server-log FILE]
 *        [--rounds 1]
 *
 * - Without `--data-dir` the SciFact corpus is ingested into a temp dir with `svc ingest`'s own code and the chosen
 *   embedder (hashing: the deterministic stand-in, so the served ranking is hybrid-rrf-hashing; model: the real
 *   all-MiniLM-L6-v2 q8, about 12 minutes; none: BM25 only). With `--data-dir D` an index built earlier is reused
 *   (and built there first when D has none); the server gets the same embedder, so queries are embedded like at
 *   ingest.
 * - `--lance DIR` serves an existing LanceDB index folder (e.g. a synthetic 1M index of bench/index-query.ts)
 *   without writing to it: it is opened through a symlink from a temp data dir, the server's crawler is off and
 *   nothing is ingested. `--embedder hashing` matches the index's vectors; `--embedder model` embeds the queries with
 *   the real model and compares them with those synthetic vectors (same dimension: the real query-embedding cost);
 *   `--embedder none` serves BM25 only.
 * - `--soak-seconds N` (≤ 1800) then keeps the search load on for N more seconds and samples the server's RSS, JS heap
 *   and the live heap right after each major collection every `--sample-every` seconds (the no-growth check of item 6),
 *   the HTTP thread's and each search thread's (its own isolate's heap, through the pool's stats).
 * - `--crawl-hosts H` (item 5) starts the fixture web (loopback) in the server process with H generated hosts and
 *   lets the server's own crawler index it while the searches run; the event-loop delay table then shows what the
 *   indexing path costs the serving loop. With `--lance`, the crawl writes into a copy of that index.
 * - `--server-log FILE` writes the server's own log (pino JSON lines, `--log-level`, default info) to FILE.
 * - `--cpu-prof DIR` runs the server under `node --cpu-prof` (profile written when the server exits).
 * - `--trace-turns MS` logs every turn of the server's loop later than MS, with the main thread's time on a CPU and
 *   waiting for one in that interval (Linux schedstat) and the process CPU: which of the histogram's maxima were our
 *   code and which the machine.
 * - `--queries all-required` sends three content words of each claim, each required (`+a +b +c`), instead of the claim:
 *   bench/index-query.ts' all-required kind as a REST caller receives it (with `--connections 1`: its latency).
 * - `--search-threads N` sets the server's search threads (SVC_SEARCH_THREADS; default: the server's, one per core up
 *   to 4 on a machine with 2 or more); 0 runs the searches on the HTTP thread.
 * - `--snippet-mb N` sets the server's snippet store per search thread (SVC_SNIPPET_MB; default the server's, 1/32 of
 *   memory; 0: result rows come from the row cache or the table). `--row-cache-mb N` sets its row cache (SVC_ROW_CACHE_MB;
 *   0: none): the 1,109 queries come round again, so with a cache every result page after the first round is read from
 *   memory, where a stream of new queries at 1M passages reads the table.
 * - `--index-thread-nice N` sets the nice value of LanceDB's threads in the server (SVC_INDEX_THREAD_NICE; default
 *   the server's, 10; 0 leaves them at the server's own priority).
 * - `--warm-up S` (default 15; 3 with `--crawl-hosts`, whose crawl must outlast the phases) seconds of searches
 *   before the measured phases: what is measured is a running server's steady state. V8 settles its optimised code
 *   over a search thread's first thousands of searches, its compiler threads on the same cores; with the 3 s this
 *   bench used before (`--warm-up 3`), the measured phase held much of that (docs/bench-history.md).
 * - `--rounds R` (≤ 20) alternates the /healthz and the search phase R times, each `--seconds` long, and reports each
 *   kind over all its rounds (requests, rate, percentiles of every latency, CPU) with each round's share on a line of
 *   its own: the share is then a ratio of two rates measured in interleaved stretches of time, not in two consecutive
 *   ones a shared host may run at different speeds (this host's speed drifts by ±30 % over minutes).
 * - `--compiled` runs the server from dist/ (`npm run build` first), as `npm start` does; without it through tsx,
 *   which measured about twice the main-thread time per search on a small index (esbuild's transform output).
 * Every loop is bounded in time and count; everything talks to loopback only.
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { constants as perfConstants, createHistogram, PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { connect } from '@lancedb/lancedb';
import { ingestCommand } from '../cli/ingest.js';
import type { TestWeb } from '../fixtures/test-web/index.js';
import { loadConfig } from '../config.js';
import { createEmbedder, createHashingEmbedder, type Embedder } from '../index/serving/embedder.js';
import { createLogger } from '../logger.js';
import { createServices, startServer } from '../main.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { openStateDb } from '../state/db.js';
import { LoopDelayMonitor } from './loop-delay.js';
import { requireEach, shortQuery } from './synthetic.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const { values } = parseArgs({
  options: {
    embedder: { type: 'string', default: 'hashing' },
    'data-dir': { type: 'string' },
    lance: { type: 'string' },
    connections: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '15' },
    'soak-seconds': { type: 'string', default: '0' },
    'sample-every': { type: 'string', default: '10' },
    'crawl-hosts': { type: 'string', default: '0' },
    'cpu-prof': { type: 'string' },
    // Log every turn of the server's event loop later than this many ms, with the main thread's time on a CPU and
    // waiting for one in the late interval, and the process CPU (0: off).
    'trace-turns': { type: 'string', default: '0' },
    // Serve from the compiled code in dist/ (what `npm start` runs) instead of through tsx; `npm run build` first.
    compiled: { type: 'boolean', default: false },
    'model-dir': { type: 'string', default: fileURLToPath(new URL('../../shared/data/models/', import.meta.url)) },
    'log-level': { type: 'string', default: 'info' },
    'server-log': { type: 'string' },
    // What the searches send: `claims` (the SciFact claims as written), `all-required` (+a +b +c of each claim) or
    // `no-match` (`site:` of a host the index does not have: the fixed cost of an authenticated search, no retrieval).
    queries: { type: 'string', default: 'claims' },
    // The server's search threads (SVC_SEARCH_THREADS; tools/search-pool.ts); unset: the server's default.
    'search-threads': { type: 'string' },
    // The nice value of LanceDB's native threads in the server (SVC_INDEX_THREAD_NICE; index/serving/thread-priority.ts).
    'index-thread-nice': { type: 'string' },
    // The server's snippet store per search thread in MiB (SVC_SNIPPET_MB; index/engines/memory/snippet-store.ts); 0: result rows from
    // the table or the row cache.
    'snippet-mb': { type: 'string' },
    // The server's row cache in MiB (SVC_ROW_CACHE_MB; index/engines/memory/row-cache.ts), shared out among the search threads; 0: none
    // (with 1,109 queries in turn every result page is cached after the first round otherwise).
    'row-cache-mb': { type: 'string' },
    'warm-up': { type: 'string' },
    // The /healthz and search phases alternate this many times (each `--seconds` long); each kind is reported over all
    // its rounds, so a slow or fast stretch of a shared host weighs on both rates alike.
    rounds: { type: 'string', default: '1' },
    // Internal: this process is the server (started by the driver below).
    serve: { type: 'boolean', default: false },
    // Internal: the real model answers for the hashing stand-in a foreign (`--lance`) index was built with (same
    // dimension), so the query embedding is real while the index vectors are synthetic, as in bench/index-query.ts.
    'stand-in': { type: 'boolean', default: false },
  },
});
const embedderKind = values.embedder!;
if (!['hashing', 'none', 'model'].includes(embedderKind)) throw new Error('--embedder must be hashing, none or model');
if (!['claims', 'all-required', 'no-match'].includes(values.queries!))
  throw new Error('--queries must be claims, all-required or no-match');
const modelDir = resolve(values['model-dir']!);
const SCIFACT = fileURLToPath(new URL('../../shared/data/beir/scifact/', import.meta.url));

async function benchEmbedder(): Promise<Embedder | null> {
  if (embedderKind === 'none') return null;
  // The dimension ingest's `--embedder hashing` uses (createHashingEmbedder's default), so index and queries agree.
  if (embedderKind === 'hashing') return createHashingEmbedder();
  const e = await createEmbedder({ modelDir, modelName: 'all-MiniLM-L6-v2', threads: 2 });
  if (!e) throw new Error(`model weights absent under ${modelDir}`);
  if (!values['stand-in']) return e;
  // The stand-in of the model's dimension (bench/index-query.ts builds its synthetic indexes with 384, the model's);
  // an index of another dimension refuses it at open.
  const stand = createHashingEmbedder(e.dim);
  return { ...stand, kind: 'hashing-stand-in', embed: (texts, o) => e.embed(texts, o), close: () => e.close() };
}

// ---------------------------------------------------------------------------------------------------------------
// Server side: one svc process with an in-process event-loop monitor; answers "stats" lines on stdin.
// ---------------------------------------------------------------------------------------------------------------
if (values.serve) {
  const dataDir = values['data-dir']!;
  const crawlHosts = Number(values['crawl-hosts']);
  let web: TestWeb | null = null;
  if (crawlHosts > 0) {
    const { startTestWeb } = await import('../fixtures/test-web/index.js');
    web = await startTestWeb({ generatedHosts: crawlHosts, generatedPages: 400 });
  }
  const config = loadConfig({
    env: {},
    flags: {
      dataDir,
      port: 0,
      crawl: crawlHosts > 0,
      ...(values['search-threads'] !== undefined ? { searchThreads: values['search-threads'] } : {}),
      ...(values['index-thread-nice'] !== undefined ? { indexThreadNice: values['index-thread-nice'] } : {}),
      ...(values['snippet-mb'] !== undefined ? { snippetMb: values['snippet-mb'] } : {}),
      ...(values['row-cache-mb'] !== undefined ? { rowCacheMb: values['row-cache-mb'] } : {}),
      ...(web ? { resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 100, crawlConcurrency: crawlHosts } : {}),
    },
  });
  const log = createLogger({ level: values['log-level'] as 'info' });
  const services = await createServices(config, { log, embedder: await benchEmbedder() });
  const { key } = await services.keys.create({ name: 'bench-load', perMinute: 100_000_000, perDay: 1_000_000_000 });
  const running = await startServer(services);
  // Timed as a replica serves once started: the in-process postings built (until then queries wait for that build).
  const t0 = performance.now();
  await services.deps.index.textEngineReady();
  await services.searchPool?.textEngineReady(services.deps.index);
  process.stderr.write(
    `server: ${services.searchPool?.size ?? 0} search threads; postings ready in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  );
  // Event-loop delay, measured twice: Node's monitor (perf_hooks.monitorEventLoopDelay) and a plain 10 ms timer
  // whose lateness is recorded, because the monitor was seen to record no sample at all over whole 10 s windows of
  // heavy load (count 0) — the timer's lateness is the delay a request arriving then would wait. The monitor is read
  // less its resolution (bench/loop-delay.ts); older runs in docs/bench-history.md read raw samples, one resolution high.
  const eld = new LoopDelayMonitor(10);
  eld.enable();
  const lag = createHistogram();
  let expected = performance.now() + 10;
  const tick = () => {
    const now = performance.now();
    lag.record(Math.max(1, Math.round((now - expected) * 1e6)));
    expected = now + 10;
    setTimeout(tick, 10).unref();
  };
  setTimeout(tick, 10).unref();
  // The live JS heap: what is left right after each major (mark-compact) collection, read as the collection's entry
  // is delivered. The heap between collections rises and falls with V8's collection rhythm (it can step up and
  // stay there for minutes); the heap after a major collection is what the process holds.
  let majorGcs = 0;
  let heapAfterGcMin = Infinity;
  let heapAfterGcMax = 0;
  let heapAfterGcLast = 0;
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if ((e as { detail?: { kind?: number } }).detail?.kind !== perfConstants.NODE_PERFORMANCE_GC_MAJOR) continue;
      const h = process.memoryUsage().heapUsed;
      majorGcs++;
      heapAfterGcLast = h;
      heapAfterGcMin = Math.min(heapAfterGcMin, h);
      heapAfterGcMax = Math.max(heapAfterGcMax, h);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const traceMs = Number(values['trace-turns']);
  if (traceMs > 0) {
    // The main thread's own time on a CPU and waiting for one (Linux schedstat, ns): a late turn with little CPU of its
    // own and a long wait was the machine's, one with its whole length on the CPU was this process's code.
    const sched = (): [number, number] => {
      try {
        const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
        return [run ?? 0, wait ?? 0];
      } catch {
        return [0, 0];
      }
    };
    let last = performance.now();
    let cpu = process.cpuUsage();
    let mine = sched();
    setInterval(() => {
      const now = performance.now();
      const late = now - last - 5;
      const used = process.cpuUsage(cpu);
      const mine2 = sched();
      if (late > traceMs) {
        const ms = (used.user + used.system) / 1000;
        const run = (mine2[0] - mine[0]) / 1e6;
        const wait = (mine2[1] - mine[1]) / 1e6;
        process.stderr.write(
          `late turn: ${late.toFixed(1)} ms at ${(now / 1000).toFixed(2)} s; main thread on a CPU ${run.toFixed(1)} ms, waiting for one ${wait.toFixed(1)} ms; process CPU ${ms.toFixed(1)} ms\n`,
        );
      }
      [last, cpu, mine] = [now, process.cpuUsage(), mine2];
    }, 5).unref();
  }
  if (web && services.crawler) {
    for (let i = 0; i < crawlHosts; i++)
      await services.crawler.enqueue(web.url(`gen-${i}.test`, '/'), { priority: 'submitted', reason: 'seed' });
  }
  services.start(); // as `svc serve` does: the crawler when on, and the index threads' priority (SVC_INDEX_THREAD_NICE)
  // Stats go to stderr as one tagged line: stdout carries the request log.
  let cpuSince = process.cpuUsage();
  const stats = async () => {
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage(cpuSince);
    cpuSince = process.cpuUsage();
    const pages = web ? web.accessLog.filter((x) => x.path.startsWith('/p/') || x.path === '/').length : 0;
    const s = {
      tag: 'svc-bench-stats',
      rss: mem.rss,
      heap: mem.heapUsed,
      external: mem.external,
      eldMax: Math.max(lag.max, eld.maxNs) / 1e6,
      eldP99: Math.max(lag.percentile(99), eld.percentileNs(99)) / 1e6,
      eldMean: lag.mean / 1e6,
      eldMonitorSamples: eld.count,
      eldTimerMax: lag.max / 1e6,
      eldMonitorMax: eld.maxNs / 1e6,
      crawled: pages,
      passages: (await services.deps.index.stats()).passages,
      majorGcs,
      heapAfterGcMin: majorGcs > 0 ? heapAfterGcMin : 0,
      heapAfterGcMax,
      heapAfterGcLast,
      cpuMs: (cpu.user + cpu.system) / 1000,
      sysMs: cpu.system / 1000,
      threads: ((await services.searchPool?.stats()) ?? []).map((t) => ({ heap: t.heapUsedBytes, heapAfterGc: t.heapAfterMajorGcBytes })),
    };
    majorGcs = 0;
    heapAfterGcMin = Infinity;
    heapAfterGcMax = 0;
    eld.reset();
    lag.reset();
    process.stderr.write(`${JSON.stringify(s)}\n`);
  };
  process.stderr.write(`${JSON.stringify({ tag: 'svc-bench-ready', url: running.url, key })}\n`);
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line === 'stats') await stats();
    if (line === 'stop') break;
  }
  await running.close();
  await services.close();
  await web?.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// Driver.
// ---------------------------------------------------------------------------------------------------------------
const connections = Math.max(1, Math.min(64, Number(values.connections)));
const seconds = Math.max(1, Math.min(120, Number(values.seconds)));
const soakSeconds = Math.max(0, Math.min(1800, Number(values['soak-seconds'])));
const sampleEvery = Math.max(1, Number(values['sample-every']));
const crawlHosts = Math.max(0, Math.min(32, Number(values['crawl-hosts'])));
/** Seconds of searches before the measured phases (`--warm-up`); 3 beside a crawl, which must outlast the phases. */
const warmUp = Math.max(0, Math.min(600, Number(values['warm-up'] ?? (crawlHosts > 0 ? 3 : 15))));
const rounds = Math.max(1, Math.min(20, Math.trunc(Number(values.rounds)) || 1));
// The crawl's progress is reported per phase (what it got done beside /healthz and beside the searches): one of each.
if (rounds > 1 && crawlHosts > 0) throw new Error('--rounds and --crawl-hosts: one phase of each kind beside a crawl');
const tempDirs: string[] = [];

let dataDir: string;
if (values.lance) {
  // A foreign index is only ever read: the server's data dir is a temp dir whose `lance` is a symlink to it. A crawl
  // writes into the index, so with `--crawl-hosts` the server works on a copy (5.6 GB at 1M: about a minute), and its
  // fresh state file allocates page refs and host ids after the index's own, as a deployment's state and index agree.
  dataDir = mkdtempSync(join(tmpdir(), 'svc-load-'));
  tempDirs.push(dataDir);
  if (crawlHosts > 0) {
    const t0 = performance.now();
    cpSync(resolve(values.lance), join(dataDir, 'lance'), { recursive: true });
    await seedStateAfter(join(dataDir, 'lance'), dataDir);
    console.log(`copied ${values.lance} for the crawl in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  } else symlinkSync(resolve(values.lance), join(dataDir, 'lance'));
} else {
  dataDir = values['data-dir'] ? resolve(values['data-dir']) : mkdtempSync(join(tmpdir(), 'svc-load-'));
  if (!values['data-dir']) tempDirs.push(dataDir);
  if (crawlHosts > 0 && existsSync(join(dataDir, 'lance', 'passages.lance'))) {
    // The crawl writes into the index: it works on a copy, so the reused index stays SciFact only.
    const copy = mkdtempSync(join(tmpdir(), 'svc-load-crawl-'));
    tempDirs.push(copy);
    cpSync(dataDir, copy, { recursive: true });
    dataDir = copy;
  }
  if (!existsSync(join(dataDir, 'lance', 'passages.lance'))) {
    mkdirSync(dataDir, { recursive: true });
    const t0 = performance.now();
    const io = { stdout: process.stdout, stderr: process.stderr, env: { SVC_MODEL_DIR: modelDir } } as never;
    const code = await ingestCommand(
      ['--jsonl', join(SCIFACT, 'corpus.jsonl.gz'), '--data-dir', dataDir, '--embedder', embedderKind === 'model' ? 'model' : embedderKind],
      io,
    );
    if (code !== 0) throw new Error(`ingest failed (${code})`);
    console.log(`ingested SciFact (${embedderKind} embedder) in ${((performance.now() - t0) / 1000).toFixed(0)} s into ${dataDir}`);
  }
}

/** Creates `dir`'s state file with its page refs and host ids allocated after the largest in the index at `lance`. */
async function seedStateAfter(lance: string, dir: string): Promise<void> {
  const db = await connect(lance);
  const table = await db.openTable('passages');
  let maxRef = 0;
  let maxHost = 0;
  for await (const batch of table.query().select(['page_ref', 'host_id'])) {
    for (const v of batch.getChild('page_ref')!.toArray() as Int32Array) if (v > maxRef) maxRef = v;
    for (const v of batch.getChild('host_id')!.toArray() as Int32Array) if (v > maxHost) maxHost = v;
  }
  table.close();
  db.close();
  const state = openStateDb(join(dir, 'state.sqlite'));
  const seq = state.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)');
  seq.run('documents', maxRef);
  seq.run('host_ids', maxHost);
  state.close();
}

const claimTexts = readFileSync(join(SCIFACT, 'queries.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => (JSON.parse(l) as { text: string }).text.slice(0, 300));
// The queries sent: the claims as written, or (`--queries all-required`) three content words of each claim, each
// required (`+a +b +c`, bench/index-query.ts' all-required kind), as a REST caller sends them.
const allRequired = values.queries === 'all-required';
const noMatch = values.queries === 'no-match';
const claims = allRequired
  ? claimTexts
      .map(shortQuery)
      .filter((q) => q.split(' ').length >= 2)
      .map(requireEach)
  : noMatch
    ? claimTexts.map((_, i) => `site:nothing-${i}.example`)
    : claimTexts;
const queryLabel = allRequired ? '3 SciFact words, all required' : noMatch ? 'site: of absent hosts' : 'SciFact claims';

interface ServerStats {
  rss: number;
  heap: number;
  external: number;
  eldMax: number;
  eldP99: number;
  eldMean: number;
  eldMonitorSamples: number;
  /** The two measures' maxima apart: the 10 ms timer's lateness, the monitor's samples less its resolution. */
  eldTimerMax: number;
  eldMonitorMax: number;
  crawled: number;
  passages: number;
  /** Major collections since the previous stats line, and the JS heap right after them (min, max, last). */
  majorGcs: number;
  heapAfterGcMin: number;
  heapAfterGcMax: number;
  heapAfterGcLast: number;
  /** CPU time of the whole server process (every thread: HTTP, search threads, GC, LanceDB) since the previous stats line. */
  cpuMs: number;
  /** Of `cpuMs`, the time in the kernel (sockets, files, scheduling). */
  sysMs: number;
  /** Per search thread: its JS heap now and right after its latest major collection (0: none yet). */
  threads: { heap: number; heapAfterGc: number }[];
}

const compiledSelf = fileURLToPath(new URL('../dist/bench/load.js', import.meta.url));
if (values.compiled && !existsSync(compiledSelf)) throw new Error('--compiled: dist/bench/load.js is missing; run `npm run build`');
const nodeArgs = values.compiled ? [] : ['--import', 'tsx'];
if (values['cpu-prof']) nodeArgs.unshift('--cpu-prof', '--cpu-prof-dir', resolve(values['cpu-prof']));
const childArgs = [
  ...nodeArgs,
  values.compiled ? compiledSelf : fileURLToPath(import.meta.url),
  '--serve',
  '--data-dir',
  dataDir,
  '--embedder',
  embedderKind,
  // A foreign index holds the hashing stand-in's vectors: the real model's query embeddings are compared with them.
  ...(values.lance && embedderKind === 'model' ? ['--stand-in'] : []),
  '--model-dir',
  modelDir,
  '--crawl-hosts',
  String(crawlHosts),
  '--trace-turns',
  values['trace-turns']!,
  '--log-level',
  values['log-level']!,
  ...(values['search-threads'] !== undefined ? ['--search-threads', values['search-threads']] : []),
  ...(values['index-thread-nice'] !== undefined ? ['--index-thread-nice', values['index-thread-nice']] : []),
  ...(values['snippet-mb'] !== undefined ? ['--snippet-mb', values['snippet-mb']] : []),
  ...(values['row-cache-mb'] !== undefined ? ['--row-cache-mb', values['row-cache-mb']] : []),
];
// The server's own log (pino, stdout) is dropped unless `--server-log FILE` asks for it.
const serverLog = values['server-log'] ? openSync(resolve(values['server-log']), 'w') : 'ignore';
const server: ChildProcess = spawn(process.execPath, childArgs, { stdio: ['pipe', serverLog, 'pipe'] });
const pendingStats: ((s: ServerStats) => void)[] = [];
const ready = new Promise<{ url: string; key: string }>((res, rej) => {
  server.once('exit', (code) => rej(new Error(`server exited (${code})`)));
  createInterface({ input: server.stderr! }).on('line', (line) => {
    if (!line.startsWith('{"tag":"svc-bench-')) {
      process.stderr.write(`[server] ${line}\n`);
      return;
    }
    const m = JSON.parse(line) as { tag: string } & Record<string, unknown>;
    if (m.tag === 'svc-bench-ready') res(m as unknown as { url: string; key: string });
    else pendingStats.shift()?.(m as unknown as ServerStats);
  });
});
const { url, key } = await ready;
const serverStats = () =>
  new Promise<ServerStats>((res) => {
    pendingStats.push(res);
    server.stdin!.write('stats\n');
  });

const pool = new Pool(url, { connections, pipelining: 1 });
const MAX_REQUESTS = 2_000_000;

interface PhaseResult {
  title: string;
  requests: number;
  seconds: number;
  rate: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  nonEmpty: number;
  answered: Set<number>;
  server: ServerStats;
  /** This process's CPU time over the phase (user + system), ms. */
  clientCpuMs: number;
  /** Every request's latency, ms, sorted. */
  latencies: number[];
}

/** Phases of one kind as one: totals, the rate over their summed time, percentiles over all their latencies. */
function combine(title: string, parts: readonly PhaseResult[]): PhaseResult {
  if (parts.length === 1) return parts[0]!;
  const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const requests = latencies.length;
  const secs = parts.reduce((s, p) => s + p.seconds, 0);
  const last = parts.at(-1)!.server;
  return {
    title,
    requests,
    seconds: secs,
    rate: requests / secs,
    p50: pct(latencies, 50),
    p95: pct(latencies, 95),
    p99: pct(latencies, 99),
    errors: parts.reduce((s, p) => s + p.errors, 0),
    nonEmpty: parts.reduce((s, p) => s + p.nonEmpty, 0),
    answered: new Set(parts.flatMap((p) => [...p.answered])),
    server: {
      ...last,
      eldMax: Math.max(...parts.map((p) => p.server.eldMax)),
      eldP99: Math.max(...parts.map((p) => p.server.eldP99)),
      eldTimerMax: Math.max(...parts.map((p) => p.server.eldTimerMax)),
      eldMonitorMax: Math.max(...parts.map((p) => p.server.eldMonitorMax)),
      rss: Math.max(...parts.map((p) => p.server.rss)),
      cpuMs: parts.reduce((s, p) => s + p.server.cpuMs, 0),
      sysMs: parts.reduce((s, p) => s + p.server.sysMs, 0),
    },
    clientCpuMs: parts.reduce((s, p) => s + p.clientCpuMs, 0),
    latencies,
  };
}

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;

/** Runs `connections` closed loops for `secs` seconds; `next(i)` gives request i's path. */
async function phase(
  title: string,
  secs: number,
  next: (i: number) => { path: string; claim?: number },
  onSample?: (t: number, stats: ServerStats) => void,
): Promise<PhaseResult> {
  await serverStats(); // resets the server's event-loop histogram
  const lat: number[] = [];
  let errors = 0;
  let nonEmpty = 0;
  let issued = 0;
  const answered = new Set<number>();
  const t0 = performance.now();
  const clientCpu = process.cpuUsage();
  const until = t0 + secs * 1000;
  const worker = async () => {
    while (performance.now() < until && issued < MAX_REQUESTS) {
      const { path, claim } = next(issued++);
      const s = performance.now();
      try {
        const r = await pool.request({ path, method: 'GET', headers: { authorization: `Bearer ${key}` } });
        const text = await r.body.text();
        lat.push(performance.now() - s);
        if (r.statusCode !== 200) {
          errors++;
          continue;
        }
        if (claim !== undefined) {
          const results = (JSON.parse(text) as { results?: unknown[] }).results ?? [];
          if (results.length > 0) {
            nonEmpty++;
            answered.add(claim);
          }
        }
      } catch {
        errors++;
      }
    }
  };
  let sampler: Promise<void> = Promise.resolve();
  let sampledCpuMs = 0;
  let sampledSysMs = 0;
  if (onSample) {
    sampler = (async () => {
      for (let t = sampleEvery; t <= secs; t += sampleEvery) {
        await new Promise((r) => setTimeout(r, Math.max(0, t0 + t * 1000 - performance.now())));
        const st = await serverStats();
        sampledCpuMs += st.cpuMs; // each sample restarts the server's counters
        sampledSysMs += st.sysMs;
        onSample(t, st);
      }
    })();
  }
  await Promise.all(Array.from({ length: connections }, worker));
  await sampler;
  const elapsed = (performance.now() - t0) / 1000;
  const { user, system } = process.cpuUsage(clientCpu);
  lat.sort((a, b) => a - b);
  return {
    title,
    requests: lat.length,
    seconds: elapsed,
    rate: lat.length / elapsed,
    p50: pct(lat, 50),
    p95: pct(lat, 95),
    p99: pct(lat, 99),
    errors,
    nonEmpty,
    answered,
    server: await serverStats().then((st) => ({ ...st, cpuMs: st.cpuMs + sampledCpuMs, sysMs: st.sysMs + sampledSysMs })),
    clientCpuMs: (user + system) / 1000,
    latencies: lat,
  };
}

const searchPath = (i: number) => ({
  path: `/api/v1/search?q=${encodeURIComponent(claims[i % claims.length]!)}&limit=10`,
  claim: i % claims.length,
});
const mib = (b: number) => (b / 2 ** 20).toFixed(0);

const idle = await serverStats();
const warm = await phase('warm-up (search)', warmUp, searchPath);
const healthRounds: PhaseResult[] = [];
const searchRounds: PhaseResult[] = [];
const searchTitle = `GET /api/v1/search (${queryLabel})`;
let searched = 0; // the claims go on in turn from round to round (about: a round's last requests may fail)
for (let r = 0; r < rounds; r++) {
  healthRounds.push(await phase('GET /healthz', seconds, () => ({ path: '/healthz' })));
  const from = searched;
  const part = await phase(searchTitle, seconds, (i) => searchPath(from + i));
  searched += part.requests;
  searchRounds.push(part);
}
const health = combine(`GET /healthz${rounds > 1 ? ` (${rounds} rounds)` : ''}`, healthRounds);
const search = combine(`${searchTitle}${rounds > 1 ? ` (${rounds} rounds)` : ''}`, searchRounds);
const rssSamples: (ServerStats & { t: number })[] = [];
let soak: PhaseResult | null = null;
if (soakSeconds > 0) {
  soak = await phase(`soak: search for ${soakSeconds} s`, soakSeconds, searchPath, (t, s) => rssSamples.push({ ...s, t }));
}

server.stdin!.write('stop\n');
await new Promise((r) => server.once('exit', r));
await pool.close();
for (const d of tempDirs) rmSync(d, { recursive: true, force: true });

console.log(
  `\nserver: ${values.lance ? `index ${values.lance} (${crawlHosts > 0 ? 'a copy, crawled into' : 'read through a symlink'})` : `SciFact in ${dataDir}`}, embedder ${embedderKind}, passages ${idle.passages}; crawl hosts ${crawlHosts}`,
);
console.log(
  `client: undici Pool, ${connections} connections, ${seconds} s per phase${rounds > 1 ? `, ${rounds} rounds of /healthz then search` : ''} after ${warmUp} s of searches, ${claims.length} distinct queries (${queryLabel}) in turn; node ${process.version}; shared 2-core machine\n`,
);
console.log(
  '| phase | requests | req/s | share of /healthz | p50 ms | p95 ms | p99 ms | errors | non-empty answers | claims answered | server RSS MiB | loop delay p99 / max ms | server CPU ms per request | of which kernel | client CPU ms per request |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of [health, search, ...(soak ? [soak] : [])]) {
  const isSearch = r !== health;
  console.log(
    `| ${r.title} | ${r.requests} | ${r.rate.toFixed(1)} | ${((r.rate / health.rate) * 100).toFixed(1)}% | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} | ` +
      `${isSearch ? `${((r.nonEmpty / Math.max(1, r.requests)) * 100).toFixed(1)}%` : '-'} | ${isSearch ? `${r.answered.size} of ${Math.min(claims.length, r.requests)}` : '-'} | ${mib(r.server.rss)} | ${r.server.eldP99.toFixed(1)} / ${r.server.eldMax.toFixed(1)} | ${(r.server.cpuMs / Math.max(1, r.requests)).toFixed(3)} | ${(r.server.sysMs / Math.max(1, r.requests)).toFixed(3)} | ${(r.clientCpuMs / Math.max(1, r.requests)).toFixed(3)} |`,
  );
}
if (rounds > 1)
  console.log(
    `\nby round: share of /healthz ${searchRounds.map((r, i) => `${((r.rate / healthRounds[i]!.rate) * 100).toFixed(1)}%`).join(' / ')}; /healthz req/s ${healthRounds.map((r) => r.rate.toFixed(0)).join(' / ')}; searches/s ${searchRounds.map((r) => r.rate.toFixed(1)).join(' / ')}`,
  );
console.log(`\nserver RSS idle after open: ${mib(idle.rss)} MiB (heap ${mib(idle.heap)} MiB)`);
if (crawlHosts > 0) {
  // What the crawl got done beside each phase: the indexing path's own progress, which the serving threads' priority
  // over it (SVC_INDEX_THREAD_NICE) may slow.
  const during = (r: PhaseResult, before: ServerStats) =>
    `${r === health ? '/healthz' : 'search'} ${r.server.crawled - before.crawled} pages fetched, ${r.server.passages - before.passages} passages indexed (${((r.server.passages - before.passages) / r.seconds).toFixed(1)}/s)`;
  console.log(
    `crawl: at open ${idle.passages} passages; during ${during(health, warm.server)}; during ${during(search, health.server)}; at the end ${search.server.crawled} pages fetched, ${search.server.passages} passages`,
  );
}
console.log(
  `loop delay max by measure (10 ms timer's lateness / Node's monitor less its resolution, ms): ${[health, search, ...(soak ? [soak] : [])]
    .map((r) => `${r === health ? '/healthz' : 'search'} ${r.server.eldTimerMax.toFixed(1)} / ${r.server.eldMonitorMax.toFixed(1)}`)
    .join('; ')}`,
);
if (rssSamples.length) {
  console.log(
    '\n| t s | server RSS MiB | JS heap MiB | major GCs | heap after major GC min / max / last MiB | search threads’ heap / after their latest major GC MiB | loop delay p99 / max ms | pages fetched | passages |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of rssSamples)
    console.log(
      `| ${s.t} | ${mib(s.rss)} | ${mib(s.heap)} | ${s.majorGcs} | ${s.majorGcs > 0 ? `${mib(s.heapAfterGcMin)} / ${mib(s.heapAfterGcMax)} / ${mib(s.heapAfterGcLast)}` : '-'} | ${s.threads.map((x) => `${mib(x.heap)} / ${x.heapAfterGc > 0 ? mib(x.heapAfterGc) : '-'}`).join(', ') || '-'} | ${s.eldP99.toFixed(1)} / ${s.eldMax.toFixed(1)} | ${s.crawled} | ${s.passages} |`,
    );
}
