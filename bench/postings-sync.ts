/**
 * How long the in-process postings take to follow one write (index/engines/lance/text-engine.ts), and how long the first search
 * after the write waits for them: the writer's own engine, one page per commit, as a crawl writes. A copy of an
 * existing index (the source is never written); the pages are synthetic (bench/synthetic.ts), their page refs those
 * of the index's first pages, so each write replaces a page (its old rows go, new ones come). Prints a row per
 * `--every` writes and the syncs by kind (pages named by the writer's commits, whole-table scans, builds).
 *
 *   node --import tsx bench/postings-sync.ts --lance DIR [--writes 40] [--every 5]
 *
 * e.g. `--lance /tmp/load-sf/lance` (bench/load.ts's SciFact index) or a bench/index-query.ts size folder. No network;
 * bounded in count; the copy is removed at the end.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createHashingEmbedder } from '../index/serving/embedder.js';
import { searchPages } from '../index/retrieval/retrieval.js';
import { PassageIndex } from '../index/engines/lance/store.js';
import { sentencePool, syntheticPages } from './synthetic.js';

const { values } = parseArgs({
  options: { lance: { type: 'string' }, writes: { type: 'string', default: '40' }, every: { type: 'string', default: '5' } },
});
if (!values.lance) throw new Error('--lance DIR: an index folder to copy');
const writes = Math.min(Math.max(1, Number(values.writes)), 1000);
const every = Math.max(1, Number(values.every));

const copy = mkdtempSync(join(tmpdir(), 'svc-postings-sync-'));
try {
  cpSync(resolve(values.lance), join(copy, 'lance'), { recursive: true });
  const idx = await PassageIndex.open({
    dir: join(copy, 'lance'),
    embedder: createHashingEmbedder(),
    textEngine: true,
    optimizeEvery: Number.MAX_SAFE_INTEGER, // no compaction in between: every sync is a patch
  });
  const t0 = performance.now();
  await idx.textEngineReady();
  console.log(`postings built in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(idx.textPostingsStats())}`);
  const gen = syntheticPages(writes * 8, await sentencePool());
  const q = 'mutation carriers ovarian cancer risk';
  const rows: string[] = [];
  const sum = { write: 0, sync: 0, first: 0, next: 0 };
  for (let i = 1; i <= writes; i++) {
    const page = gen.next().value!;
    let t = performance.now();
    await idx.upsertPages([{ ...page, url: `https://sync-${i}.example.org/p` }]);
    const w = performance.now() - t;
    t = performance.now();
    await searchPages(idx, { query: q, limit: 10, offset: 0 });
    const first = performance.now() - t;
    t = performance.now();
    await searchPages(idx, { query: q, limit: 10, offset: 0 });
    const next = performance.now() - t;
    const sync = idx.textPostingsStats()?.lastSyncMs ?? NaN;
    sum.write += w;
    sum.sync += sync;
    sum.first += first;
    sum.next += next;
    if (i % every === 0) rows.push(`| ${i} | ${w.toFixed(0)} | ${sync.toFixed(1)} | ${first.toFixed(1)} | ${next.toFixed(1)} |`);
  }
  const s = idx.textPostingsStats()!;
  console.log(`\n| write | write ms | sync ms | first search after it ms | next search ms |\n|---:|---:|---:|---:|---:|`);
  console.log(rows.join('\n'));
  const m = (x: number) => (x / writes).toFixed(1);
  console.log(`| mean | ${m(sum.write)} | ${m(sum.sync)} | ${m(sum.first)} | ${m(sum.next)} |`);
  console.log(`\nsyncs: ${JSON.stringify(s.syncs)}; live passages ${s.live}, documents ${s.docs}`);
  await idx.close();
} finally {
  rmSync(copy, { recursive: true, force: true });
}
