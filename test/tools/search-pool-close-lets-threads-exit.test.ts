/**
 * Closing a service with search threads (tools/search-pool.ts `close`): each thread closes its index and exits by
 * itself. A thread whose first sync was reading the table's version when the close came used to wait for an engine
 * image that no one would offer any more, until the pool terminated it (the bound meant for a hung thread), which every
 * `svc eval`, every shutdown and many tests sat through.
 */
import t from 'tap';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ingestCommand } from '../../cli/ingest.js';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { createServices } from '../../main.js';
import { callTool } from '../../tools/call-tool.js';
import { searchTool } from '../../tools/search.js';
import { writeFileSync } from 'node:fs';
import { loopbackFlags } from '../helpers/service.js';

const quiet = () => {
  const out = new PassThrough().resume();
  const err = new PassThrough().resume();
  return { stdout: out, stderr: err, env: {} };
};

t.test('a closed pool: its threads exit by themselves, none terminated, after searches ran on them', async (t) => {
  const dataDir = t.testdir();
  const corpus = join(dataDir, 'corpus.jsonl');
  const docs = [
    { _id: 'd1', title: 'Vitamin D and bone density', text: 'Vitamin D supplements improved bone density in older adults.' },
    { _id: 'd2', title: 'Sleep and memory', text: 'Sleep deprivation impairs memory consolidation in students.' },
  ];
  writeFileSync(corpus, docs.map((d) => JSON.stringify(d)).join('\n'));
  t.equal(await ingestCommand(['--jsonl', corpus, '--data-dir', dataDir, '--embedder', 'none'], quiet()), 0);
  // Two rounds: the race between a thread's first sync and the close is not the same in each.
  for (let round = 0; round < 2; round++) {
    const config = loadConfig({ env: {}, flags: { ...loopbackFlags(dataDir), searchThreads: 2 } });
    const services = await createServices({ ...config, crawl: false, modelDir: undefined }, { log: createLogger({ level: 'warn' }) });
    const pool = services.searchPool!;
    t.ok(await pool.whenReady(60_000), 'both threads opened the index');
    await pool.textEngineReady(services.deps.index);
    const ctx = { deps: services.deps, caller: { keyId: 'test', digest: '0'.repeat(64) } };
    const out = await callTool(searchTool, { q: 'vitamin bone density' }, ctx);
    t.equal(out.results[0]?.title, 'Vitamin D and bone density');
    await services.close();
    t.equal(pool.terminated, 0, `round ${round}: every thread closed its index and exited; none was terminated`);
  }
});
