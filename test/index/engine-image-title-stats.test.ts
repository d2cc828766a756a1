/**
 * An engine image carries the index's title statistics: a reader that loads one takes them from it instead of
 * analysing every stored title at open; a reader that finds no usable image counts the titles itself.
 */
import t from 'tap';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const TERMS = ['vitamin', 'river', 'permit'];
const titles = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) =>
    makePage(from + i + 1, 'www.canada.ca', [`passage ${i} about bone density`], { title: i % 2 ? 'Vitamin river' : 'River permit' }),
  );
const plain = (c: { titles: number; terms: number; df: ReadonlyMap<string, number> }) => ({ ...c, df: Object.fromEntries(c.df) });

t.test('a reader loading an image adopts its title statistics; with no image it counts the stored titles', async (t) => {
  const dir = t.testdir();
  const embedder = createHashingEmbedder(32);
  const writer = await PassageIndex.open({ dir, embedder, refreshAfterMs: 0, engineSegments: true });
  await writer.upsertPages(titles(10));
  await writer.engineImageNow();
  const atImage = plain(writer.titleCorpus(TERMS));
  await writer.close();
  t.same(atImage, { titles: 10, terms: 20, df: { vitamin: 5, river: 10, permit: 5 } });

  // Written after the image by a process that publishes none: the table now holds 16 titles, the image 10.
  const late = await PassageIndex.open({ dir, embedder, textEngine: false, refreshAfterMs: 0 });
  await late.upsertPages(titles(6, 100));
  await late.close();

  const fromImage = await PassageIndex.open({ dir, embedder, writes: false, engineSegments: true });
  const counted = await PassageIndex.open({ dir, embedder, writes: false });
  try {
    await fromImage.textEngineReady();
    await counted.textEngineReady();
    t.equal(fromImage.textPostingsStats()!.syncs.loads, 1, 'started from the image');
    t.same(plain(fromImage.titleCorpus(TERMS)), atImage, "the image's statistics, not a count of the table's titles");
    t.same(plain(counted.titleCorpus(TERMS)), { titles: 16, terms: 32, df: { vitamin: 8, river: 16, permit: 8 } });
  } finally {
    await fromImage.close();
    await counted.close();
  }

  // No usable image (segments on, none published): the titles are counted once the postings are built.
  const bare = t.testdir();
  const w2 = await PassageIndex.open({ dir: bare, embedder, textEngine: false, refreshAfterMs: 0 });
  await w2.upsertPages(titles(4));
  await w2.close();
  const noImage = await PassageIndex.open({ dir: bare, embedder, writes: false, engineSegments: true });
  try {
    await noImage.textEngineReady();
    t.equal(noImage.textPostingsStats()!.syncs.loads, 0);
    for (let i = 0; i < 200 && noImage.titleCorpus(TERMS).titles === 0; i++) await new Promise((r) => setTimeout(r, 10));
    t.same(plain(noImage.titleCorpus(TERMS)), { titles: 4, terms: 8, df: { vitamin: 2, river: 4, permit: 2 } });
  } finally {
    await noImage.close();
  }

  // A writer that found no image counts the titles before the image it publishes after its first build, which then
  // carries them (closing waits for the publication).
  const first = await PassageIndex.open({ dir: bare, embedder, refreshAfterMs: 0, engineSegments: true });
  await first.textEngineReady();
  await first.close();
  const fromFirst = await PassageIndex.open({ dir: bare, embedder, writes: false, engineSegments: true });
  try {
    await fromFirst.textEngineReady();
    t.equal(fromFirst.textPostingsStats()!.syncs.loads, 1, "started from the first writer's image");
    t.same(plain(fromFirst.titleCorpus(TERMS)), { titles: 4, terms: 8, df: { vitamin: 2, river: 4, permit: 2 } });
  } finally {
    await fromFirst.close();
  }
});
