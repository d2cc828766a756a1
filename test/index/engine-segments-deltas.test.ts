/**
 * Delta segments and the merge policy on a local index: a small write after a large base is published as a delta
 * of a small fraction of the base's bytes; a reader loads the base and applies the deltas without scanning the
 * table; the chain a base takes is bounded (the delta past the bound is a new base instead), and the files of
 * superseded chains are removed after the grace period.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { EngineSegments, type SegmentManifest } from '../../index/engines/lance/engine-segments.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'river', 'permit', 'zinc', 'bone', 'sleep', 'memory'];
const text = (n: number, k: number) => Array.from({ length: 12 }, (_, i) => WORDS[(n * 7 + k * 3 + i) % WORDS.length]).join(' ');
const page = (ref: number, v = 0) =>
  makePage(
    ref,
    `h${ref % 5}.example.ca`,
    Array.from({ length: 3 }, (_, k) => `${text(ref + v, k)} page${ref} v${v}`),
    { title: `Page ${ref} v${v}` },
  );

const newestManifest = async (dir: string): Promise<SegmentManifest> => {
  const store = new EngineSegments(dir);
  const [name] = await store.manifests();
  return JSON.parse(readFileSync(join(store.dir, name!), 'utf8')) as SegmentManifest;
};

t.test('small writes become small delta segments a reader applies; the merge policy bounds the chain', async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({
    dir,
    embedder: null,
    refreshAfterMs: 0,
    optimizeEvery: 1_000_000,
    engineSegments: { deltaDocs: Infinity, deltaAfterMs: Infinity, maxDeltas: 3, maxDeltaShare: Infinity, graceMs: 0 },
  });
  await writer.upsertPages(Array.from({ length: 300 }, (_, i) => page(i + 1)));
  await writer.engineImageNow();
  const base = await newestManifest(dir);
  t.equal(base.files.length, 1, 'the first publication is a base');

  // One page replaced, one removed, one added: a delta of what changed.
  await writer.upsertPages([page(5, 1), page(1000)]);
  await writer.removePage(7);
  await writer.engineDeltaNow();
  const one = await newestManifest(dir);
  t.equal(one.files.length, 2, 'base + one delta');
  t.equal(one.files[0]!.name, base.files[0]!.name, 'the delta extends the published base');
  t.ok(one.files[1]!.bytes * 20 < base.files[0]!.bytes, `delta ${one.files[1]!.bytes} B vs base ${base.files[0]!.bytes} B`);
  await writer.upsertPages([page(6, 2)]);
  await writer.engineDeltaNow();
  t.equal((await newestManifest(dir)).files.length, 3, 'base + two deltas');
  t.equal(writer.textPostingsStats()!.images.deltas, 2);

  // A reader loads the base and applies both deltas, reading no passage from the table.
  const reader = await PassageIndex.open({ dir, embedder: null, writes: false, engineSegments: true });
  const scanned = await PassageIndex.open({ dir, embedder: null, writes: false });
  try {
    await reader.textEngineReady();
    await scanned.textEngineReady();
    const st = reader.textPostingsStats()!;
    t.same(
      { loads: st.syncs.loads, deltas: st.syncs.deltas, builds: st.syncs.builds },
      { loads: 1, deltas: 2, builds: 0 },
      'a base and two deltas loaded, nothing built',
    );
    const keys = async (idx: PassageIndex) => (await idx.scanCandidates({}, 1_000_000)).map((h) => `${h.page_ref}:${h.ordinal}`).sort();
    const got = await keys(reader);
    t.same(got, await keys(scanned), 'the same passages as a reader that scanned the table');
    t.notOk(got.includes('7:0'), 'the removed page is gone');
    t.ok(got.includes('1000:0'), 'the added page is there');
  } finally {
    await reader.close();
    await scanned.close();
  }

  await writer.upsertPages([page(8, 3)]);
  await writer.engineDeltaNow();
  t.equal((await newestManifest(dir)).files.length, 4, 'base + three deltas: the bound');
  const basesBefore = writer.textPostingsStats()!.images.written;
  await writer.upsertPages([page(9, 4)]);
  await writer.engineDeltaNow();
  const merged = await newestManifest(dir);
  t.equal(merged.files.length, 1, 'a fourth delta would pass the bound: a new base instead (the merge)');
  t.not(merged.files[0]!.name, base.files[0]!.name);
  t.equal(writer.textPostingsStats()!.images.written, basesBefore + 1, 'one more base written');
  t.equal(writer.textPostingsStats()!.images.deltas, 3, 'three deltas written in all');
  await writer.upsertPages([page(10, 5)]);
  await writer.engineDeltaNow();
  await writer.close();
  // The two newest manifests are kept (the merged base, and it with one delta); the old chain's files are gone.
  const files = readdirSync(join(dir, 'engine-segments')).filter((n) => n.endsWith('.bin'));
  t.same(files.sort(), [...new Set([merged.files[0]!.name, ...(await newestManifest(dir)).files.map((f) => f.name)])].sort());
});
