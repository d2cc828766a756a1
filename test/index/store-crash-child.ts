/**
 * Child process entry for test/index/store-crash-rollback.test.ts: writes batches of pages into the index in `dir`
 * forever (each round rewrites the same page_refs with a new version tag and a different passage count), printing
 * "B <n>" after each acknowledged batch, so the parent can kill -9 it mid-write. Not a test file itself.
 */
import { writeSync } from 'node:fs';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const [dir, seed] = process.argv.slice(2) as [string, string];
const idx = await PassageIndex.open({ dir, embedder: null });
writeSync(1, 'ready\n');
for (let n = Number(seed); ; n++) {
  const pages = Array.from({ length: 24 }, (_, i) => {
    const ref = 1 + ((n * 7 + i) % 40);
    const count = 1 + ((n + i) % 5);
    return makePage(
      ref,
      `h${ref % 6}.example.ca`,
      Array.from({ length: count }, (_, k) => `passage ${k} of page ${ref} version v${n} words alpha beta`),
      { title: `Page ${ref} v${n}` },
    );
  });
  await idx.upsertPages(pages);
  writeSync(1, `B ${n}\n`);
}
