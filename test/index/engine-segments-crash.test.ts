/**
 * Persisted engine segments survive their writer's death: kill -9 at points spread over a cycle of a batch write and a
 * segment publication (the image of everything, which is also how segments are merged) never leaves a manifest naming
 * a segment that cannot be loaded, and a restart that starts from the newest segment holds every passage of the table
 * once and no other. A segment damaged on disk is skipped for an older one; files no manifest names are removed.
 */
import { readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as lancedb from '@lancedb/lancedb';
import t, { type Test } from 'tap';
import { EngineSegments, SEGMENTS_FOLDER, type SegmentManifest } from '../../index/engines/lance/engine-segments.js';
import { ANALYSIS_VERSION, FTS_OPTIONS } from '../../index/engines/lance/maintenance.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { runUntilKilled } from '../helpers/kill-child.js';
import { makePage } from '../helpers/page-input.js';

const CHILD = fileURLToPath(new URL('./engine-segments-crash-child.ts', import.meta.url));
const WANT = { analysis: ANALYSIS_VERSION, maxTermLength: FTS_OPTIONS.maxTokenLength };

/** The table's passage keys, sorted. */
async function tableKeys(dir: string): Promise<string[]> {
  const db = await lancedb.connect(dir);
  const table = await db.openTable('passages');
  const rows = (await table.query().select(['page_ref', 'ordinal']).toArray()) as { page_ref: number; ordinal: number }[];
  table.close();
  db.close();
  return rows.map((r) => `${r.page_ref}:${r.ordinal}`).sort();
}

/** The passages the postings hold (every live document, by a filter-only scan), sorted: duplicates stay. */
async function postingsKeys(idx: PassageIndex): Promise<string[]> {
  return (await idx.scanCandidates({}, 1_000_000)).map((h) => `${h.page_ref}:${h.ordinal}`).sort();
}

async function checkRestart(t: Test, dir: string, round: string): Promise<number> {
  // Every manifest left names a whole segment.
  const store = new EngineSegments(dir);
  for (const name of await store.manifests()) {
    const m = JSON.parse(readFileSync(join(store.dir, name), 'utf8')) as SegmentManifest;
    const loaded = await store.loadNewest(WANT, m.version);
    t.ok(loaded, `${round}: ${name} loads`);
    t.equal(loaded?.deltas.length, m.files.length - 1, `${round}: ${name}: its base and every delta it names`);
  }
  // The writer restarts (rolling back a write the kill interrupted), from the newest segment.
  const idx = await PassageIndex.open({ dir, embedder: null, refreshAfterMs: 0, engineSegments: { graceMs: 0 } });
  try {
    await idx.textEngineReady();
    const st = idx.textPostingsStats()!;
    t.equal(st.syncs.loads, 1, `${round}: started from a segment`);
    // (A batch committed after the segment may replace enough rows that the postings rebuild: not asserted here.)
    t.same(await postingsKeys(idx), await tableKeys(dir), `${round}: every passage of the table once, no other`);
    return st.syncs.deltas;
  } finally {
    await idx.close();
  }
}

t.test('kill -9 during segment writes never leaves a segment that cannot be loaded, nor loses or duplicates a passage', async (t) => {
  const dir = t.testdir();
  let published = 0;
  // Offsets spread over one cycle (a batch's commits, then the image written and renamed into place).
  const offsets = [0, 4, 9, 15, 22, 31, 45, 60];
  for (let i = 0; i < offsets.length; i++) {
    // Killed a little after a publication: somewhere inside the next cycle.
    published += await runUntilKilled(CHILD, [dir, String(i * 1000)], 'S ', 1, offsets[i]!);
    await checkRestart(t, dir, `round ${i}`);
  }
  t.ok(published >= offsets.length, `${published} segments published across ${offsets.length} kills`);
  const left = readdirSync(join(dir, SEGMENTS_FOLDER));
  t.notOk(
    left.some((n) => n.includes('.tmp-')),
    'the restarted writers removed the temporary files of interrupted writes',
  );
});

t.test(
  'kill -9 during delta segment writes and merges never leaves a chain that cannot be loaded, nor loses or duplicates a passage',
  async (t) => {
    const dir = t.testdir();
    let published = 0;
    let deltasLoaded = 0;
    // The kill lands after 1 to 4 publications of a chain of at most three deltas (the fourth is the merge), at
    // offsets spread over one cycle (a batch's commits, then the delta or the base written and renamed into place).
    const offsets = [0, 3, 7, 12, 18, 26, 35, 50];
    for (let i = 0; i < offsets.length; i++) {
      published += await runUntilKilled(CHILD, [dir, String(i * 1000), 'deltas'], 'S ', 1 + (i % 4), offsets[i]!);
      deltasLoaded += await checkRestart(t, dir, `round ${i}`);
    }
    t.ok(published >= offsets.length, `${published} segments published across ${offsets.length} kills`);
    t.ok(deltasLoaded > 0, `the restarts applied ${deltasLoaded} delta segments after their base`);
    const store = new EngineSegments(dir);
    const newest = JSON.parse(readFileSync(join(store.dir, (await store.manifests())[0]!), 'utf8')) as SegmentManifest;
    t.ok(newest.files.length <= 4, `the newest chain is a base and at most three deltas (${newest.files.length - 1})`);
  },
);

t.test('a damaged segment is skipped for an older whole one; files no manifest names are removed after the grace period', async (t) => {
  const dir = t.testdir();
  const idx = await PassageIndex.open({
    dir,
    embedder: null,
    refreshAfterMs: 0,
    engineSegments: { minChangedDocs: Infinity, afterMs: Infinity, graceMs: 60_000 },
  });
  await idx.upsertPages([makePage(1, 'a.example.ca', ['alpha one', 'alpha two'])]);
  await idx.engineImageNow();
  await idx.upsertPages([makePage(2, 'b.example.ca', ['alpha three'])]);
  await idx.engineImageNow();
  await idx.close();
  const store = new EngineSegments(dir);
  const [newest, older] = await store.manifests();
  t.ok(newest && older, 'two manifests kept');
  const m = JSON.parse(readFileSync(join(store.dir, newest!), 'utf8')) as SegmentManifest;
  const olderVersion = (JSON.parse(readFileSync(join(store.dir, older!), 'utf8')) as SegmentManifest).version;
  // A torn file (as a disk that lost the tail) under the newest manifest.
  truncateSync(join(store.dir, m.files[0]!.name), m.files[0]!.bytes - 7);
  const found = await store.loadNewest(WANT);
  t.equal(found?.manifest.version, olderVersion, 'the older whole segment is loaded instead');
  // Bytes changed without changing the length: the checksum refuses them.
  writeFileSync(join(store.dir, m.files[0]!.name), Buffer.alloc(m.files[0]!.bytes, 1));
  t.equal((await store.loadNewest(WANT))?.manifest.version, olderVersion, 'a segment whose checksum differs is skipped');
  // A reader started now still holds every passage once (the older segment, then the row-id difference).
  const reader = await PassageIndex.open({ dir, embedder: null, writes: false, engineSegments: true });
  await reader.textEngineReady();
  t.equal(reader.textPostingsStats()!.syncs.loads, 1);
  t.same(await postingsKeys(reader), await tableKeys(dir));
  await reader.close();
  // A stray temporary file and an unnamed segment: kept within the grace period, removed after it.
  writeFileSync(join(store.dir, '.segment-000000000001-aa.bin.tmp-1-ff'), 'partial');
  writeFileSync(join(store.dir, 'segment-000000000001-bb.bin'), 'orphan');
  await store.collect();
  t.ok(readdirSync(store.dir).includes('segment-000000000001-bb.bin'), 'within the grace period: kept');
  await new EngineSegments(dir, { graceMs: 0 }).collect();
  const left = readdirSync(store.dir);
  t.notOk(left.includes('segment-000000000001-bb.bin') || left.some((n) => n.includes('.tmp-')), 'after it: removed');
  t.ok(left.includes(m.files[0]!.name), 'a segment a kept manifest names stays (even damaged: the writer replaces it)');
});
