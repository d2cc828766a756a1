/**
 * Crawl throughput against the politeness bound. H generated hosts on the local test web (loopback only), per-host
 * gap d: no polite crawler can exceed H/d requests per second. Both crawlers run in the same process, one after
 * the other, for the same time window, on the same hosts, with the same gap and robots.txt honoured:
 *  - SvcBot (crawler/crawler.ts: real fetcher, robots cache, SQLite frontier, extraction, LanceDB index, BM25 only);
 *  - Crawlee's CheerioCrawler (sameDomainDelaySecs = d, maxConcurrency = H, respectRobotsTxtFile).
 * Requests are counted from the test web's access log (robots.txt, sitemaps, llms.txt included: they use the same
 * politeness budget). Crawlee resolves names through the system resolver, so `*.test` is answered with 127.0.0.1
 * by a dns.lookup override in this process (SvcBot uses its pins and never calls it).
 *
 * Run: node --import tsx bench/crawl.ts [--hosts 8] [--gap-ms 200] [--seconds 15] [--sink lance|none] [--only svc|crawlee]
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import dns from 'node:dns';
import { isIP } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createCrawler } from '../crawler/crawler.js';
import { startTestWeb, type AccessEntry } from '../fixtures/test-web/index.js';
import { PassageIndex } from '../index/engines/lance/store.js';
import { openStateDb } from '../state/db.js';
import { EntityStore } from '../state/entities.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { sqliteRepositories } from '../state/repos/sqlite.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '8' },
    'gap-ms': { type: 'string', default: '200' },
    seconds: { type: 'string', default: '15' },
    sink: { type: 'string', default: 'lance' },
    only: { type: 'string' },
  },
});
const H = Number(values.hosts);
const D = Number(values['gap-ms']);
const SECONDS = Number(values.seconds);
const PAGES = Math.ceil(((SECONDS * 1000) / D) * 1.5) + 10; // more pages than a side can fetch in the window

// Loopback only: *.test → 127.0.0.1 for Crawlee's resolver; any other name is refused outright.
(dns as { lookup: unknown }).lookup = function lookup(host: string, opts: unknown, cb?: unknown) {
  const callback = (typeof opts === 'function' ? opts : cb) as (...a: unknown[]) => void;
  const all = typeof opts === 'object' && opts !== null && (opts as { all?: boolean }).all;
  const literal = isIP(host) !== 0 ? host : null;
  if (literal !== null && literal !== '127.0.0.1' && literal !== '::1') {
    process.nextTick(callback, Object.assign(new Error(`bench: refusing ${host}`), { code: 'ENOTFOUND' }));
    return;
  }
  if (literal !== null || host.endsWith('.test') || host === 'localhost') {
    const address = literal ?? '127.0.0.1';
    const family = isIP(address);
    if (all) process.nextTick(callback, null, [{ address, family }]);
    else process.nextTick(callback, null, address, family);
    return;
  }
  process.nextTick(callback, Object.assign(new Error(`bench: refusing to resolve ${host}`), { code: 'ENOTFOUND' }));
};

const web = await startTestWeb({ generatedHosts: H, generatedPages: PAGES });
const hosts = Array.from({ length: H }, (_, i) => `gen-${i}.test`);
const seeds = hosts.map((h) => web.url(h, '/'));

interface SideResult {
  name: string;
  requests: number;
  pages: number;
  seconds: number;
  minGapMs: number;
  meanGapMs: number;
  violations: number;
}

function measure(name: string, entries: AccessEntry[], seconds: number): SideResult {
  let minGap = Infinity;
  let violations = 0;
  let sum = 0;
  let n = 0;
  for (const h of hosts) {
    const e = entries.filter((x) => x.host === h);
    for (let i = 1; i < e.length; i++) {
      const g = e[i]!.at - e[i - 1]!.at;
      minGap = Math.min(minGap, g);
      sum += g;
      n++;
      if (g < D) violations++;
    }
  }
  return {
    name,
    requests: entries.length,
    pages: entries.filter((x) => x.path.startsWith('/p/') || x.path === '/').length,
    seconds,
    minGapMs: minGap,
    meanGapMs: n === 0 ? NaN : sum / n,
    violations,
  };
}

async function runSvcBot(): Promise<SideResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-crawl-'));
  const config = loadConfig({
    env: {},
    flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: D, crawlConcurrency: H },
  });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  // --sink none measures the crawler alone (pages are extracted, then dropped): the index's write cost is separate.
  const sink = values.sink === 'none' ? { upsertPage: async () => {}, removePage: async () => {} } : index;
  const crawler = createCrawler({
    config,
    repos: sqliteRepositories(db, { defaultGapMs: config.crawlGapMs }),
    sink,
    entities: new EntityStore(db),
    admit: (u) => new URL(u).hostname.endsWith('.test'),
  });
  for (const s of seeds) await crawler.enqueue(s, { priority: 'submitted', reason: 'seed' });
  const start = web.accessLog.length;
  const t0 = performance.now();
  await crawler.runUntilIdle({ timeoutMs: SECONDS * 1000 });
  const secs = (performance.now() - t0) / 1000;
  await crawler.stop();
  await index.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return measure('SvcBot (svc crawler)', web.accessLog.slice(start), secs);
}

async function runCrawlee(): Promise<SideResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-crawlee-'));
  process.env['CRAWLEE_STORAGE_DIR'] = dir;
  const { CheerioCrawler } = await import('@crawlee/cheerio');
  const { Configuration, log } = await import('@crawlee/core');
  log.setLevel(log.LEVELS.ERROR);
  const start = web.accessLog.length;
  const crawler = new CheerioCrawler(
    {
      maxConcurrency: H,
      sameDomainDelaySecs: D / 1000,
      respectRobotsTxtFile: true,
      maxRequestRetries: 1,
      async requestHandler({ enqueueLinks }) {
        await enqueueLinks({ strategy: 'same-hostname' });
      },
    },
    new Configuration({ persistStorage: false, purgeOnStart: true, storageClientOptions: { localDataDirectory: dir } }),
  );
  const t0 = performance.now();
  const timer = setTimeout(() => void crawler.stop(), SECONDS * 1000);
  await crawler.run(seeds);
  clearTimeout(timer);
  const secs = (performance.now() - t0) / 1000;
  rmSync(dir, { recursive: true, force: true });
  return measure('Crawlee CheerioCrawler 3.x', web.accessLog.slice(start), secs);
}

const sides: SideResult[] = [];
if (values.only !== 'crawlee') sides.push(await runSvcBot());
if (values.only !== 'svc') sides.push(await runCrawlee());
await web.close();

const bound = H / (D / 1000);
console.log(`hosts H=${H}, gap d=${D} ms, window ${SECONDS} s, politeness bound H/d = ${bound.toFixed(1)} requests/s`);
console.log(
  '| crawler | requests | pages | seconds | requests/s | requests/s ÷ H/d | pages/s | pages/s ÷ H/d | min / mean per-host gap (ms) | gaps < d |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of sides) {
  const rps = r.requests / r.seconds;
  const pps = r.pages / r.seconds;
  console.log(
    `| ${r.name} | ${r.requests} | ${r.pages} | ${r.seconds.toFixed(1)} | ${rps.toFixed(1)} | ${(rps / bound).toFixed(3)} | ${pps.toFixed(1)} | ${(pps / bound).toFixed(3)} | ${r.minGapMs === Infinity ? '-' : r.minGapMs} / ${r.meanGapMs.toFixed(0)} | ${r.violations} |`,
  );
}
process.exit(0);
