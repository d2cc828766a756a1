/**
 * Child process entry for test/index/engine-segments-bucket-crash.test.ts: the writer of an index in a bucket
 * (SVC_INDEX_URI and SVC_S3_* in its environment) writes batches of pages, replacing and removing earlier ones, and
 * publishes a delta segment after each, every fourth publication a merge into a new base (a bound of three deltas),
 * forever, printing "S <n>" after each publication so the parent can kill -9 it mid-write. Not a test file.
 */
import { writeSync } from 'node:fs';
import { loadConfig } from '../../config.js';
import { indexLocation } from '../../index/engines/lance/location.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const [seed] = process.argv.slice(2) as [string];
const idx = await PassageIndex.open({
  location: indexLocation(loadConfig()),
  embedder: null,
  refreshAfterMs: 0,
  optimizeEvery: 1_000_000,
  engineSegments: { deltaDocs: Infinity, deltaAfterMs: Infinity, quietMs: Infinity, maxDeltas: 3, maxDeltaShare: Infinity, graceMs: 0 },
});
writeSync(1, 'ready\n');
for (let n = Number(seed); ; n++) {
  const pages = Array.from({ length: 10 }, (_, i) => {
    const ref = 1 + ((n * 13 + i) % 80);
    const count = 1 + ((n + i) % 4);
    return makePage(
      ref,
      `h${ref % 6}.example.ca`,
      Array.from({ length: count }, (_, k) => `passage ${k} of page ${ref} version v${n} words alpha beta ${'gamma '.repeat(k * 10)}`),
      { title: `Page ${ref} v${n}` },
    );
  });
  await idx.upsertPages(pages);
  if (n % 3 === 0) await idx.removePage(1 + ((n * 7) % 80));
  await idx.engineDeltaNow();
  writeSync(1, `S ${n}\n`);
}
