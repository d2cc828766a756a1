/**
 * Child process entry for test/index/engine-segments-crash.test.ts: writes batches of pages (replacing earlier ones)
 * into the index in `dir` and publishes an engine segment after each, forever, printing "S <n>" after each publication
 * so the parent can kill -9 it mid-write. Mode `images`: each a new image of everything; mode `deltas`: each a delta
 * segment of what the batch changed, every fourth one a merge into a new base (the merge policy's bound of three
 * deltas). Not a test file.
 */
import { writeSync } from 'node:fs';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const [dir, seed, mode = 'images'] = process.argv.slice(2) as [string, string, string?];
const deltas = mode === 'deltas';
const idx = await PassageIndex.open({
  dir,
  embedder: null,
  refreshAfterMs: 0,
  engineSegments: deltas
    ? { deltaDocs: Infinity, deltaAfterMs: Infinity, maxDeltas: 3, maxDeltaShare: Infinity, graceMs: 0 }
    : { minChangedDocs: Infinity, afterMs: Infinity, graceMs: 0 },
});
writeSync(1, 'ready\n');
for (let n = Number(seed); ; n++) {
  const pages = Array.from({ length: deltas ? 12 : 40 }, (_, i) => {
    const ref = 1 + ((n * 13 + i) % 120);
    const count = 1 + ((n + i) % 6);
    return makePage(
      ref,
      `h${ref % 6}.example.ca`,
      Array.from({ length: count }, (_, k) => `passage ${k} of page ${ref} version v${n} words alpha beta ${'gamma '.repeat(k * 20)}`),
      { title: `Page ${ref} v${n}` },
    );
  });
  await idx.upsertPages(pages);
  if (deltas) await idx.engineDeltaNow();
  else await idx.engineImageNow();
  writeSync(1, `S ${n}\n`);
}
