/**
 * An engine image carries its pages' title statistics: a reader that loads one takes them from it instead of
 * analysing every stored title at open, and follows the writes after the image exactly (titles replaced, pages
 * removed), so it holds what a reader that scanned the table counts; a reader that finds no usable image counts the
 * titles of the pages it scans.
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

t.test('a reader loading an image takes its title statistics and follows the writes after it exactly', async (t) => {
  const dir = t.testdir();
  const embedder = createHashingEmbedder(32);
  const writer = await PassageIndex.open({ dir, embedder, refreshAfterMs: 0, engineSegments: true });
  await writer.upsertPages(titles(10));
  await writer.engineImageNow();
  const atImage = plain(writer.titleCorpus(TERMS));
  await writer.close();
  t.same(atImage, { titles: 10, terms: 20, df: { vitamin: 5, river: 10, permit: 5 } });

  // Written after the image by a process that publishes none: 6 pages more, one title replaced, one page removed; the
  // table now holds 15 titles, the image 10.
  const late = await PassageIndex.open({ dir, embedder, textEngine: false, refreshAfterMs: 0 });
  await late.upsertPages(titles(6, 100));
  await late.upsertPage(makePage(1, 'www.canada.ca', ['passage 0 about bone density'], { title: 'Permit permit' }));
  await late.removePage(2);
  await late.close();
  const now = { titles: 15, terms: 30, df: { vitamin: 7, river: 14, permit: 8 } };

  const fromImage = await PassageIndex.open({ dir, embedder, writes: false, engineSegments: true });
  const counted = await PassageIndex.open({ dir, embedder, writes: false });
  try {
    await fromImage.textEngineReady();
    await counted.textEngineReady();
    t.equal(fromImage.textPostingsStats()!.syncs.loads, 1, 'started from the image');
    t.ok(fromImage.textPostingsStats()!.syncs.scans + fromImage.textPostingsStats()!.syncs.pages > 0, 'caught up from the table');
    t.same(plain(counted.titleCorpus(TERMS)), now, 'the scanning reader counts the titles of the pages it holds');
    t.same(plain(fromImage.titleCorpus(TERMS)), now, "the image's statistics, followed to the table's version");
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
