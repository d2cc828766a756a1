/**
 * Restart to full speed with and without persisted engine segments (index/engines/lance/engine-segments.ts): a process (role all,
 * as `svc serve`) starts on an index of `--passages` synthetic passages with 0 and 2 search threads, segments off
 * (every reader scans the table) and on (the owner loads the newest segment once into shared memory, its threads
 * read it). Each start runs in a fresh child process; it prints the time from start until every reader's postings are
 * at the table's version and one search answered (what a query would wait for), and the process RSS then.
 *
 *   npx tsx bench/engine-segments.ts [--passages 50000] [--data-dir /tmp/bench-engine-segments]
 *
 * `--publish`: the writer's publication cost instead, on an index of its own (`<data-dir>/publish`): a few rounds of a
 * small write (`--write` passages of new pages), each followed by a whole image (segments before deltas) or by a
 * delta segment, printing per mode the bytes written and the time of a publication (median), the write excluded.
 *
 * The index is built on the first run (SciFact sentences, hashing embedder) and a segment published by a writer.
 * Bounded: a few minutes at 50,000 passages; loopback only, nothing downloaded.
 */
import '../fixtures/loopback-only.js';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sentencePool, syntheticPages, writeSyntheticPages } from './synthetic.js';

const { values } = parseArgs({
  options: {
    passages: { type: 'string', default: '50000' },
    'data-dir': { type: 'string', default: '/tmp/bench-engine-segments' },
    child: { type: 'string' },
    publish: { type: 'boolean', default: false },
    write: { type: 'string', default: '100' },
  },
});
const dataDir = resolve(values['data-dir']);

if (values.child) {
  const [threads, segments] = values.child.split(',').map(Number) as [number, number];
  const { loadConfig } = await import('../config.js');
  const { createHashingEmbedder } = await import('../index/serving/embedder.js');
  const { createLogger } = await import('../logger.js');
  const { createServices } = await import('../main.js');
  const { callTool } = await import('../tools/call-tool.js');
  const { searchTool } = await import('../tools/search.js');
  const t0 = performance.now();
  const config = loadConfig({
    env: { SVC_ENGINE_SEGMENTS: segments ? '1' : '0' },
    flags: { dataDir, port: 0, crawl: false, logLevel: 'warn', searchThreads: threads },
  });
  const services = await createServices(config, { role: 'all', log: createLogger({ level: 'warn' }), embedder: createHashingEmbedder() });
  if (services.searchPool) await services.searchPool.textEngineReady(services.deps.index);
  else await services.deps.index.textEngineReady();
  const r = await callTool(searchTool, { q: 'protein expression in cells' }, {
    deps: services.deps,
    caller: { keyId: 'bench', digest: 'bench' },
  } as never);
  const ms = performance.now() - t0;
  const rss = process.memoryUsage().rss;
  const tp = services.deps.index.textPostingsStats();
  const threadStats = (await services.searchPool?.stats()) ?? [];
  process.stdout.write(
    JSON.stringify({
      ms: Math.round(ms),
      rssMiB: Math.round(rss / 2 ** 20),
      results: r.results.length,
      builds: (tp?.syncs.builds ?? 0) + threadStats.reduce((s, x) => s + x.engineBuilds, 0),
      loads: (tp?.syncs.loads ?? 0) + threadStats.reduce((s, x) => s + x.engineLoads, 0),
    }) + '\n',
  );
  await services.close();
  process.exit(0);
}

const n = Math.max(1000, Number(values.passages) || 50_000);
const { PassageIndex } = await import('../index/engines/lance/store.js');
const { createHashingEmbedder } = await import('../index/serving/embedder.js');
if (values.publish) {
  const dir = join(dataDir, 'publish');
  const rounds = 6;
  const per = Math.max(1, Number(values.write) || 100);
  const pool = await sentencePool();
  const all = [...syntheticPages(n + 2 * rounds * per, pool)];
  const base = all.filter((p) => p.pageRef <= all[all.length - 1]!.pageRef - 2 * rounds * per);
  const rest = all.slice(base.length);
  const idx = await PassageIndex.open({
    dir,
    embedder: createHashingEmbedder(),
    refreshAfterMs: 0,
    optimizeEvery: 1_000_000,
    engineSegments: {
      minChangedDocs: Infinity,
      afterMs: Infinity,
      deltaDocs: Infinity,
      deltaAfterMs: Infinity,
      maxDeltas: Infinity,
      maxDeltaShare: Infinity,
    },
  });
  for (let i = 0; i < base.length; i += 500) await idx.upsertPages(base.slice(i, i + 500));
  await idx.engineImageNow();
  const { EngineSegments } = await import('../index/engines/lance/engine-segments.js');
  const { readFile } = await import('node:fs/promises');
  const store = new EngineSegments(dir);
  let at = 0;
  for (const mode of ['image', 'delta'] as const) {
    const ms: number[] = [];
    const bytes: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // New pages of about `per` passages.
      const pages = [];
      for (let k = 0; at < rest.length && k < per; at++) {
        pages.push(rest[at]!);
        k += rest[at]!.passages.length;
      }
      await idx.upsertPages(pages);
      await idx.textEngineReady();
      const t0 = performance.now();
      if (mode === 'image') await idx.engineImageNow();
      else await idx.engineDeltaNow();
      ms.push(performance.now() - t0);
      const [newest] = await store.manifests();
      const m = JSON.parse(await readFile(join(store.dir, newest!), 'utf8')) as { files: { bytes: number }[] };
      bytes.push(m.files.at(-1)!.bytes);
    }
    const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    console.log(
      `${n} passages, ${per} written per round, ${mode}: median ${mid(ms).toFixed(1)} ms and ${(mid(bytes) / 1024).toFixed(1)} KiB per publication`,
    );
  }
  await idx.close();
  process.exit(0);
}
if (!existsSync(join(dataDir, 'lance'))) {
  const t0 = performance.now();
  const pool = await sentencePool();
  const idx = await PassageIndex.open({
    dir: join(dataDir, 'lance'),
    embedder: createHashingEmbedder(),
    textEngine: false,
    refreshAfterMs: 0,
  });
  await writeSyntheticPages(idx, n, pool);
  await idx.close();
  console.log(`built ${n} passages in ${Math.round((performance.now() - t0) / 1000)} s`);
}
// The writer's segment at the table's current version.
const writer = await PassageIndex.open({
  dir: join(dataDir, 'lance'),
  embedder: createHashingEmbedder(),
  refreshAfterMs: 0,
  engineSegments: true,
});
await writer.engineImageNow();
console.log(`segment: ${JSON.stringify(writer.textPostingsStats()?.image)}`);
await writer.close();

const self = fileURLToPath(import.meta.url);
for (const threads of [0, 2])
  for (const segments of [0, 1]) {
    const out = spawnSync(process.execPath, ['--import', 'tsx', self, '--data-dir', dataDir, '--child', `${threads},${segments}`], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    const line = out.stdout.trim().split('\n').at(-1) ?? '';
    console.log(`threads ${threads}, segments ${segments ? 'on ' : 'off'}: ${line || out.stderr.slice(-500)}`);
  }
