/**
 * Issue 14 item 5: an optimize holds the write queue for its whole length (14–32 s at 1M passages), so a crawl that
 * optimized after every 200 pages indexed ≈ 3 pages/s there. Forced optimizes now keep to about a tenth of the time,
 * up to a limit of pages waiting (index/engines/lance/maintenance.ts `optimizeDue`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { OPTIMIZE_DEFER_LIMIT, optimizeDue, optimizeWaitMs } from '../../index/engines/lance/maintenance.js';
import { searchPages } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PassageCommit } from '../../index/engines/lance/passage-changes.js';
import { makePage } from '../helpers/page-input.js';

t.test('optimizeDue: every N pages, at most a tenth of the time, never more than the limit waiting', async (t) => {
  const every = 200;
  t.notOk(optimizeDue({ writes: 199, every, lastMs: 0, sinceLastMs: Infinity }), 'below every: never');
  t.ok(optimizeDue({ writes: 200, every, lastMs: 0, sinceLastMs: Infinity }), 'first optimize: at every');
  t.ok(optimizeDue({ writes: 200, every, lastMs: 30, sinceLastMs: 270 }), 'small index: 9 × 30 ms since the last');
  t.notOk(optimizeDue({ writes: 200, every, lastMs: 30_000, sinceLastMs: 10_000 }), '1M: 30 s optimize, 10 s ago: held');
  t.notOk(optimizeDue({ writes: every * OPTIMIZE_DEFER_LIMIT - 1, every, lastMs: 30_000, sinceLastMs: 10_000 }), 'just below the limit');
  t.ok(optimizeDue({ writes: every * OPTIMIZE_DEFER_LIMIT, every, lastMs: 30_000, sinceLastMs: 10_000 }), 'at the limit: due');
  t.ok(optimizeDue({ writes: 200, every, lastMs: 30_000, sinceLastMs: 270_000 }), '1M: 9 × 30 s since the last: due');
  // The debounced refresh waits by the same rule.
  t.equal(optimizeWaitMs(30_000, 10_000), 260_000, '1M: 9 × 30 s after the end, 10 s of it gone');
  t.equal(optimizeWaitMs(30, 1_000), 0, 'small index: nothing to wait');
  t.equal(optimizeWaitMs(0, Infinity), 0, 'no optimize yet (ended at -Infinity): nothing to wait');
});

t.test('a writer optimizes after the limit of pages even when its optimizes are long beside its writes', async (t) => {
  const dir = t.testdir();
  const every = 2;
  const idx = await PassageIndex.open({ dir, embedder: null, optimizeEvery: every, refreshAfterMs: 0 });
  t.teardown(() => idx.close());
  // A write's maintenance is told as a begin and an end mark; an optimize commits between them.
  let begin = 0;
  const optimizedAfter: number[] = [];
  let writing = 0;
  idx.onPassageCommit((c: PassageCommit) => {
    if (c.maintenance === 'begin') begin = c.version;
    if (c.maintenance === 'end' && c.version > begin) optimizedAfter.push(writing);
  });
  const total = 2 + every * OPTIMIZE_DEFER_LIMIT;
  for (let ref = 1; ref <= total; ref++) {
    writing = ref;
    await idx.upsertPage(makePage(ref, `h${ref % 3}.example`, [`passage ${ref} about duty cycles and optimize`]));
  }
  // Write 1 builds the key indexes; write 2 is the first optimize (none before it to wait on).
  t.ok(optimizedAfter.includes(2), `the first optimize ran at \`every\` (after: ${optimizedAfter.join(', ')})`);
  const later = optimizedAfter.filter((n) => n > 2);
  t.ok(later.length >= 1, 'and another by the limit');
  t.ok(later[0]! <= 2 + every * OPTIMIZE_DEFER_LIMIT, `no later than the limit (${later[0]})`);
  // The old rule optimized after every `every` pages: 20 times here. Writes of a few ms beside optimizes of tens
  // of ms are held to far fewer.
  t.ok(later.length < OPTIMIZE_DEFER_LIMIT / 2, `held back between (${later.length} optimizes for ${total - 2} pages)`);
  // Nothing lost: every page and passage is there, and a query finds them.
  const stats = await idx.stats();
  t.equal(stats.pages, total, 'every page written');
  t.equal(stats.passages, total, 'every passage written');
  const res = await searchPages(idx, { query: 'passage 7 duty cycles', mode: 'bm25', limit: 5, offset: 0 });
  t.ok(res.pages.length > 0, 'a query answers');
});

t.test('a reopened writer remembers how long its optimizes take', async (t) => {
  const dir = t.testdir();
  const every = 2;
  const first = await PassageIndex.open({ dir, embedder: null, optimizeEvery: every, refreshAfterMs: 0 });
  await first.upsertPage(makePage(1, 'a.example', ['a first page about remembered maintenance']));
  await first.close();
  // As if its last optimize had taken a minute (a large index): the meta file is where the writer keeps it.
  const metaFile = join(dir, 'svc-index-meta.json');
  writeFileSync(metaFile, JSON.stringify({ ...JSON.parse(readFileSync(metaFile, 'utf8')), optimizeMs: 60_000 }));

  const idx = await PassageIndex.open({ dir, embedder: null, optimizeEvery: every, refreshAfterMs: 0 });
  t.teardown(() => idx.close());
  let begin = 0;
  let writing = 0;
  const optimizedAfter: number[] = [];
  idx.onPassageCommit((c: PassageCommit) => {
    if (c.maintenance === 'begin') begin = c.version;
    if (c.maintenance === 'end' && c.version > begin) optimizedAfter.push(writing);
  });
  const limit = every * OPTIMIZE_DEFER_LIMIT;
  for (let n = 1; n <= limit; n++) {
    writing = n;
    await idx.upsertPage(makePage(n + 1, 'a.example', [`page ${n} written after the reopen`]));
  }
  t.same(optimizedAfter, [limit], 'no optimize at `every` pages (a minute-long one was remembered), one at the limit');
  // That one was short: a short optimize replaces the remembered long one.
  t.equal(JSON.parse(readFileSync(metaFile, 'utf8')).optimizeMs, undefined, 'the short optimize is recorded as such');
  t.equal((await idx.stats()).passages, limit + 1, 'every passage written');
});
