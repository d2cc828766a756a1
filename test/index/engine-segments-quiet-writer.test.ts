/**
 * A writer never leaves its last changes unpublished: once writes go quiet (a debounce after the last write, no
 * sooner than the time rule after its previous publication) and on a clean close, it publishes what it holds, so a
 * reader that opens then (a restarted replica) loads the newest segments and catches nothing up from the table.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SEGMENTS_FOLDER } from '../../index/engines/lance/engine-segments.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { captureLog } from '../helpers/service.js';
import { createLogger } from '../../logger.js';
import { makePage } from '../helpers/page-input.js';
import { waitFor } from '../helpers/wait-for.js';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'river', 'permit', 'zinc', 'bone', 'sleep', 'memory'];
const text = (n: number, k: number) => Array.from({ length: 10 }, (_, i) => WORDS[(n * 7 + k * 3 + i) % WORDS.length]).join(' ');
const page = (ref: number, v = 0) =>
  makePage(
    ref,
    `h${ref % 5}.example.ca`,
    Array.from({ length: 3 }, (_, k) => `${text(ref + v, k)} page${ref} v${v}`),
    { title: `Page ${ref} v${v}` },
  );
const keys = async (idx: PassageIndex) => (await idx.scanCandidates({}, 1_000_000)).map((h) => `${h.page_ref}:${h.ordinal}`).sort();

/** A new reader of `dir`: what its postings' open did, and whether it holds the passages a scanning reader holds. */
async function openReader(t: Test, dir: string, tableVersion: number): Promise<void> {
  const reader = await PassageIndex.open({ dir, embedder: null, writes: false, engineSegments: true });
  const scanned = await PassageIndex.open({ dir, embedder: null, writes: false });
  try {
    await reader.textEngineReady();
    const st = reader.textPostingsStats()!;
    t.same(
      { loads: st.syncs.loads, builds: st.syncs.builds, scans: st.syncs.scans, pages: st.syncs.pages, rekeys: st.syncs.rekeys },
      { loads: 1, builds: 0, scans: 0, pages: 0, rekeys: 0 },
      'the reader loaded segments and caught nothing up from the table',
    );
    t.equal(st.version, tableVersion, "the segments it loaded are at the table's version");
    t.equal(st.publication, null, 'a reader publishes nothing');
    t.same(await keys(reader), await keys(scanned), 'the same passages as a reader that scanned the table');
  } finally {
    await reader.close();
    await scanned.close();
  }
}

t.test('writes gone quiet: the writer publishes what it holds, once per burst, and a new reader loads it', async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({
    dir,
    embedder: null,
    refreshAfterMs: 0,
    optimizeEvery: 1_000_000,
    engineSegments: { deltaDocs: Infinity, deltaAfterMs: 5_000, quietMs: 300, maxDeltas: 100, maxDeltaShare: Infinity, graceMs: 0 },
  });
  t.teardown(() => writer.close());
  await writer.upsertPages(Array.from({ length: 200 }, (_, i) => page(i + 1)));
  await writer.textEngineReady();
  await waitFor('the base', () => writer.textPostingsStats()!.images.written === 1);

  // A burst of writes, then nothing: no engineDeltaNow, no further write.
  const burst = 10;
  for (let i = 0; i < burst - 1; i++) await writer.upsertPages([page(1 + i * 7, 1), page(500 + i)]);
  await writer.removePage(3);
  const version = await writer.version();
  await waitFor(
    'the quiet publication',
    () => {
      const p = writer.textPostingsStats()!.publication!;
      return p.version === version && p.unpublishedSince === null;
    },
    60_000,
  );
  const st = writer.textPostingsStats()!;
  t.equal(st.images.written, 1, 'no new base: the burst is in deltas');
  t.ok(st.images.deltas >= 1 && st.images.deltas < burst, `${st.images.deltas} deltas for ${burst} writes: not one per write`);

  await openReader(t, dir, version);
});

t.test('a clean close publishes what the writer holds: a delta, or the merge once the chain is at its bound', async (t) => {
  const dir = t.testdir();
  // Neither the time rule nor the quiet one publishes: only the close does.
  const seg = { deltaDocs: Infinity, deltaAfterMs: Infinity, quietMs: Infinity, maxDeltas: 1, maxDeltaShare: Infinity, graceMs: 0 };
  const writer = await PassageIndex.open({ dir, embedder: null, refreshAfterMs: 0, optimizeEvery: 1_000_000, engineSegments: seg });
  await writer.upsertPages(Array.from({ length: 100 }, (_, i) => page(i + 1)));
  await writer.engineImageNow();
  await writer.upsertPages([page(2, 1)]);
  await writer.engineDeltaNow();
  t.equal(writer.textPostingsStats()!.images.deltas, 1, 'a base and one delta: the chain at its bound');
  await writer.upsertPages([page(4, 2), page(300)]);
  await writer.removePage(9);
  const version = await writer.version();
  t.ok(writer.textPostingsStats()!.publication!.unpublishedSince !== null, 'the last writes are not published yet');
  const before = writer.textPostingsStats()!.images;
  await writer.close();
  const after = writer.textPostingsStats()!.images;
  t.same(
    { written: after.written - before.written, deltas: after.deltas - before.deltas },
    { written: 1, deltas: 0 },
    'the close published the merge: a second delta would pass the bound',
  );
  await openReader(t, dir, version);

  // Below the bound, the close publishes a delta; the restarted writer loads it and goes on from it.
  const again = await PassageIndex.open({ dir, embedder: null, refreshAfterMs: 0, optimizeEvery: 1_000_000, engineSegments: seg });
  await again.textEngineReady();
  t.same(again.textPostingsStats()!.syncs.deltas, 0, 'the restarted writer loaded the base the close wrote');
  await again.upsertPages([page(5, 3)]);
  const last = await again.version();
  await again.close();
  t.same(again.textPostingsStats()!.images, { made: 0, written: 0, deltas: 1 }, 'the close published one delta');
  await openReader(t, dir, last);
});

t.test('a failed publication is tried again while no write comes: the writer publishes a base once it can', async (t) => {
  const dir = t.testdir();
  const { lines, destination } = captureLog();
  const logged = () => lines.map((l) => JSON.parse(l) as { msg: string });
  const writer = await PassageIndex.open({
    dir,
    embedder: null,
    log: createLogger({ level: 'info', destination }),
    refreshAfterMs: 0,
    optimizeEvery: 1_000_000,
    engineSegments: { deltaDocs: Infinity, deltaAfterMs: 300, quietMs: 100, maxDeltas: 100, maxDeltaShare: Infinity, graceMs: 0 },
  });
  t.teardown(() => writer.close());
  await writer.upsertPages(Array.from({ length: 20 }, (_, i) => page(i + 1)));
  await writer.textEngineReady();
  await waitFor('the first publication', () => writer.textPostingsStats()!.publication!.unpublishedSince === null);
  const before = writer.textPostingsStats()!.images;

  // The segments folder becomes a file: every publication fails until it is a folder again.
  const folder = join(dir, SEGMENTS_FOLDER);
  rmSync(folder, { recursive: true });
  writeFileSync(folder, 'not a folder');
  await writer.upsertPages([page(3, 1), page(50)]);
  const version = await writer.version();
  await waitFor('a failed publication', () => logged().some((l) => l.msg === 'text postings: publishing an engine segment failed'));
  t.ok(writer.textPostingsStats()!.publication!.unpublishedSince !== null, 'the changes wait unpublished');
  rmSync(folder);
  // No write from here on: only the retry can publish.
  await waitFor(
    'the retry',
    () => {
      const p = writer.textPostingsStats()!.publication!;
      return p.version === version && p.unpublishedSince === null;
    },
    60_000,
  );
  t.ok(writer.textPostingsStats()!.images.written > before.written, 'a base, the chain being lost with the failure');
  await openReader(t, dir, version);
});
