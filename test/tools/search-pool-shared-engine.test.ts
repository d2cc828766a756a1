/**
 * A restarted process with search threads over an index with a persisted engine segment: the pool's owner loads the
 * segment once (no scan of the table), its threads start from that same shared image (no scan, no load of their
 * own from disk), and pages written after the segment are in their answers (caught up by row-id difference).
 */
import t from 'tap';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { createLogger } from '../../logger.js';
import { createServices } from '../../main.js';
import { callTool } from '../../tools/call-tool.js';
import { searchTool } from '../../tools/search.js';
import { makePage } from '../helpers/page-input.js';
import { captureLog, loopbackFlags } from '../helpers/service.js';

t.test('restarted with search threads: one load of the segment, shared by every thread, then caught up', async (t) => {
  const dataDir = t.testdir();
  const embedder = createHashingEmbedder();
  const writer = await PassageIndex.open({ dir: join(dataDir, 'lance'), embedder, refreshAfterMs: 0, engineSegments: true });
  await writer.upsertPages([
    makePage(1, 'www.canada.ca', ['Adult passport fees and payment options.'], { title: 'Passport fees' }),
    makePage(2, 'www.ontario.ca', ['Renew a driver licence online.'], { title: 'Driver licence' }),
  ]);
  await writer.engineImageNow();
  // After the segment, by a process that publishes none.
  await writer.upsertPages([makePage(3, 'www.gov.bc.ca', ['Wildfire evacuation orders in effect.'], { title: 'Wildfire status' })]);
  await writer.close();

  const config = loadConfig({ env: {}, flags: { ...loopbackFlags(dataDir), searchThreads: 2 } });
  const { destination } = captureLog();
  const services = await createServices(config, { embedder, log: createLogger({ level: 'info', destination }) });
  t.teardown(() => services.close());
  const pool = services.searchPool!;
  t.ok(await pool.whenReady(60_000), 'both threads opened the index');
  await pool.textEngineReady(services.deps.index);
  const own = services.deps.index.textPostingsStats()!;
  t.same([own.syncs.loads, own.syncs.builds], [1, 0], 'the owner loaded the segment, scanned nothing');
  t.ok(own.image?.shared, "the owner's image is shared memory");
  const threads = await pool.stats();
  t.equal(threads.length, 2);
  for (const s of threads) {
    t.equal(s.engineBuilds, 0, `thread ${s.slot}: no scan`);
    t.equal(s.engineLoads, 1, `thread ${s.slot}: started from the owner's image`);
    t.equal(s.engineSharedBytes, own.image!.bytes, `thread ${s.slot}: reads the owner's image in shared memory`);
    t.equal(s.postingsLive, 3, `thread ${s.slot}: every passage, the one written after the segment too`);
    t.equal(s.pageRowsAtOpen, 0, `thread ${s.slot}: read no page row for hosts and languages (given by the owner)`);
  }
  t.equal((services.deps.index as PassageIndex).pageRowsAtOpen, 3, "the owner read the pages' host rows once");
  const ctx = { deps: services.deps, caller: { keyId: 'test', digest: '0'.repeat(64) } };
  for (let i = 0; i < 4; i++) {
    const out = await callTool(searchTool, { q: 'wildfire evacuation' }, ctx);
    t.equal(out.results[0]?.url, 'https://www.gov.bc.ca/page-3', 'a page written after the segment is found on the threads');
    // site: compiles to the host ids the thread was given; a wrong or missing id would find nothing, or the other host.
    const site = await callTool(searchTool, { q: 'site:ontario.ca driver licence' }, ctx);
    t.same(
      site.results.map((r) => r.url),
      ['https://www.ontario.ca/page-2'],
      'site: on a thread knows the hosts',
    );
  }
  // A host first written after the threads started: learned from the rows after the owner's, when a request catches up.
  await (services.deps.index as PassageIndex).upsertPages([
    makePage(4, 'www.yukon.ca', ['Driver licence renewal in the Yukon.'], { title: 'Yukon licence' }),
  ]);
  for (let i = 0; i < 4; i++) {
    const site = await callTool(searchTool, { q: 'site:yukon.ca driver licence' }, ctx);
    t.same(
      site.results.map((r) => r.url),
      ['https://www.yukon.ca/page-4'],
      'a host written after the threads started is known to them',
    );
  }
});

t.test('two threads read one image in place: no term or row map of their own, the answers of a full scan', async (t) => {
  const dataDir = t.testdir();
  const embedder = createHashingEmbedder();
  const words = ['passport', 'fees', 'licence', 'wildfire', 'permit', 'fishing', 'tax', 'benefit', 'housing', 'transit'];
  const writer = await PassageIndex.open({ dir: join(dataDir, 'lance'), embedder, refreshAfterMs: 0, engineSegments: true });
  await writer.upsertPages(
    Array.from({ length: 24 }, (_, i) =>
      makePage(i + 1, i % 2 ? 'www.canada.ca' : 'www.ontario.ca', [
        `${words[i % 10]} ${words[(i * 3) % 10]} rules for residents`,
        `apply for ${words[(i * 7) % 10]} online ${words[(i + 1) % 10]}`,
      ]),
    ),
  );
  await writer.engineImageNow();
  await writer.close();
  const queries = ['passport fees', 'wildfire permit', '+tax benefit', 'housing transit online', 'fishing licence rules'];
  const ctx = { caller: { keyId: 'test', digest: '0'.repeat(64) } };
  const answers = async (deps: Parameters<typeof callTool>[2]['deps']) => {
    const out: string[] = [];
    for (const q of queries) {
      const r = await callTool(searchTool, { q }, { ...ctx, deps });
      out.push(`${q}: ${r.results.map((x) => `${x.url}#${x.score}`).join(' ')}`);
    }
    return out;
  };

  // The full scan: segments off, no threads.
  const scanConfig = loadConfig({ env: { SVC_ENGINE_SEGMENTS: '0' }, flags: { ...loopbackFlags(dataDir), searchThreads: 0 } });
  const scanning = await createServices(scanConfig, { embedder, log: createLogger({ level: 'silent' }) });
  await scanning.deps.index.textEngineReady();
  t.equal(scanning.deps.index.textPostingsStats()!.syncs.builds, 1, 'the reference scanned the table');
  const want = await answers(scanning.deps);
  await scanning.close();
  t.ok(
    want.every((a) => a.includes('https://')),
    'every query finds pages',
  );

  const config = loadConfig({ env: {}, flags: { ...loopbackFlags(dataDir), searchThreads: 2 } });
  const services = await createServices(config, { embedder, log: createLogger({ level: 'silent' }) });
  t.teardown(() => services.close());
  const pool = services.searchPool!;
  t.ok(await pool.whenReady(60_000), 'both threads opened the index');
  await pool.textEngineReady(services.deps.index);
  const own = services.deps.index.textPostingsStats()!;
  t.same([own.syncs.loads, own.syncs.builds], [1, 0], 'the owner loaded the image');
  t.ok(own.vectors > 0, 'the owner keeps the vectors in memory');
  t.equal(own.loadWork, own.vectors * embedder.dim, 'the owner built no map: its one work, the vectors copied to shared memory');
  const threads = await pool.stats();
  t.same(
    threads.map((s) => [s.engineLoads, s.engineBuilds, s.engineLoadWork, s.engineSharedBytes, s.flatVectors]),
    [
      [1, 0, 0, own.image!.bytes, own.vectors],
      [1, 0, 0, own.image!.bytes, own.vectors],
    ],
    "each thread loaded the shared image and put no term, row or vector in memory of its own: it reads the owner's",
  );
  t.same(await answers(services.deps), want, 'the threads answer as the full scan does');
  t.same(
    (await pool.stats()).map((s) => s.engineLoadWork),
    [0, 0],
  );
});
