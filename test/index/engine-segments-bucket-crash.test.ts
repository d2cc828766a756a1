/**
 * Persisted engine segments of an index in a bucket (SeaweedFS on loopback) survive their writer's death: a child
 * writing batches and publishing delta segments and merges into the bucket is killed -9 at random points, several
 * rounds; after each, every manifest in the bucket loads whole, a restarted writer starts from the newest one and
 * holds every passage of the table exactly once, and its answers are those of a reader that scanned the table.
 */
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as lancedb from '@lancedb/lancedb';
import t, { type Test } from 'tap';
import { loadConfig } from '../../config.js';
import { SegmentTable } from '../../index/engines/lance/engine-segment-table.js';
import { EngineSegments, type SegmentManifest } from '../../index/engines/lance/engine-segments.js';
import { indexLocation, type IndexLocation } from '../../index/engines/lance/location.js';
import { ANALYSIS_VERSION, FTS_OPTIONS } from '../../index/engines/lance/maintenance.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { runUntilKilled } from '../helpers/kill-child.js';
import { seaweedfsUnavailable, startSeaweedfs } from '../helpers/seaweedfs-server.js';

const CHILD = fileURLToPath(new URL('./engine-segments-bucket-crash-child.ts', import.meta.url));
const WANT = { analysis: ANALYSIS_VERSION, maxTermLength: FTS_OPTIONS.maxTokenLength };
/**
 * Words of the passages, and title words ('page', 'v3'): answered to the score, the title boost included (a segment's
 * title statistics are exactly those of its pages, as a scanning reader counts them).
 */
const QUERIES = ['alpha beta', 'gamma', '+passage -gamma', 'words alpha gamma', 'page v3', '+page gamma'];
const NOW = new Date('2026-11-28T00:00:00Z');
/** The restarted writer's segments: only what it must publish (a close after a rolled-back write). */
const SEGMENTS = { deltaDocs: Infinity, deltaAfterMs: Infinity, quietMs: Infinity, maxDeltas: 3, maxDeltaShare: Infinity, graceMs: 0 };
/** The writer as it restarts after a kill: rolls back an interrupted write, starts from the newest chain. */
const openWriter = (location: IndexLocation) =>
  PassageIndex.open({ location, embedder: null, refreshAfterMs: 0, optimizeEvery: 1_000_000, engineSegments: SEGMENTS });

const skip = seaweedfsUnavailable();
if (skip) t.plan(0, skip);
else {
  const s3 = await startSeaweedfs();
  t.teardown(() => s3.stop());

  /** The table's passage keys, sorted. */
  const tableKeys = async (location: IndexLocation): Promise<string[]> => {
    const db = await lancedb.connect(location.uri, { storageOptions: { ...location.storageOptions } });
    try {
      const table = await db.openTable('passages');
      const rows = (await table.query().select(['page_ref', 'ordinal']).toArray()) as { page_ref: number; ordinal: number }[];
      table.close();
      return rows.map((r) => `${r.page_ref}:${r.ordinal}`).sort();
    } finally {
      db.close();
    }
  };
  /** The passages the postings hold (every live document, by a filter-only scan), sorted: duplicates stay. */
  const postingsKeys = async (idx: PassageIndex) =>
    (await idx.scanCandidates({}, 1_000_000)).map((h) => `${h.page_ref}:${h.ordinal}`).sort();

  /** Every manifest in the bucket loads whole; returns the segment files they name and the files present. */
  const checkManifests = async (t: Test, location: IndexLocation, round: string) => {
    const db = await lancedb.connect(location.uri, { storageOptions: { ...location.storageOptions } });
    try {
      const files = new SegmentTable(db, location.label, 0);
      const store = new EngineSegments(files);
      const named = new Set<string>();
      for (const name of await store.manifests()) {
        const m = JSON.parse(Buffer.from(await files.read(name)).toString('utf8')) as SegmentManifest;
        const loaded = await store.loadNewest(WANT, m.version);
        t.equal(loaded?.manifest.version, m.version, `${round}: ${name} loads`);
        t.equal(loaded?.deltas.length, m.files.length - 1, `${round}: ${name}: its base and every delta it names`);
        for (const f of m.files) named.add(f.name);
      }
      return { named, present: (await files.list()).map((f) => f.name) };
    } finally {
      db.close();
    }
  };

  t.test(
    'kill -9 during delta writes and merges into a bucket never leaves a chain that cannot be loaded, nor loses or duplicates a passage',
    async (t) => {
      const env = { ...s3.env('crash'), SVC_DATA_DIR: t.testdir(), SVC_INDEX_READ_CONSISTENCY_S: '0' };
      const location = indexLocation(loadConfig({ env }));
      t.equal(location.kind, 's3');
      // Random kill points, reproducible from the seed printed here.
      const seed = Number(process.env.SVC_TEST_SEED ?? randomInt(1_000_000));
      t.comment(`seed ${seed} (SVC_TEST_SEED)`);
      let state = seed;
      const rand = (n: number) => ((state = (state * 1_103_515_245 + 12_345) % 2_147_483_648), state % n);
      const rounds = 8;
      let published = 0;
      let deltasLoaded = 0;
      // Where the kills landed (random: reported, not asserted): after a batch's commits and before its publication (the
      // restart caught up from the table), or between a segment file and its manifest (a file no manifest names).
      let caughtUp = 0;
      let orphans = 0;
      for (let i = 0; i < rounds; i++) {
        const round = `round ${i}`;
        // After 1 to 4 publications (the fourth of a chain is the merge), a kill at a random point of the next cycle: a
        // batch's commits, then the delta or base and its manifest, each a commit to the bucket.
        const after = 1 + rand(4);
        const extraMs = rand(600);
        published += await runUntilKilled(CHILD, [String(i * 1000)], 'S ', after, extraMs, { PATH: process.env.PATH, ...env });
        const { named, present } = await checkManifests(t, location, round);
        t.ok(named.size > 0, `${round}: a manifest in the bucket`);
        if (present.some((n) => !n.startsWith('manifest-') && !named.has(n))) orphans++;

        // The writer restarts (rolling back a write the kill interrupted), from the newest chain.
        const idx = await openWriter(location);
        const scanned = await PassageIndex.open({ location, embedder: null, writes: false });
        try {
          await idx.textEngineReady();
          await scanned.textEngineReady();
          const st = idx.textPostingsStats()!;
          t.equal(st.syncs.loads, 1, `${round}: started from a segment`);
          deltasLoaded += st.syncs.deltas;
          if (st.syncs.scans + st.syncs.pages > 0) caughtUp++;
          t.same(await postingsKeys(idx), await tableKeys(location), `${round}: every passage of the table once, no other`);
          const answer = (on: PassageIndex, query: string) => retrieve(on, { query, mode: 'bm25', filters: {}, now: NOW });
          for (const query of QUERIES) {
            const [a, b] = [await answer(idx, query), await answer(scanned, query)];
            t.same(
              a.passages.map((p) => [`${p.row.page_ref}:${p.row.ordinal}`, p.score]),
              b.passages.map((p) => [`${p.row.page_ref}:${p.row.ordinal}`, p.score]),
              `${round}: "${query}" answered as by a reader that scanned the table`,
            );
          }
        } finally {
          await scanned.close();
          await idx.close();
        }
        // The restarted writer removed what the killed one left that no kept manifest names (the grace period is 0 here).
        const after2 = await checkManifests(t, location, `${round}, after the restart`);
        const stray = after2.present.filter((n) => !n.startsWith('manifest-') && !after2.named.has(n));
        t.same(stray, [], `${round}: no segment file no manifest names (${present.length} files before the restart)`);
      }
      t.comment(`${caughtUp} kills between a batch and its publication, ${orphans} between a segment file and its manifest`);
      t.ok(published >= rounds, `${published} publications across ${rounds} kills`);
      t.ok(deltasLoaded > 0, `the restarts applied ${deltasLoaded} delta segments after their base`);

      // What a kill between a segment file and its manifest leaves, made on purpose (that window is narrow for a random
      // kill): a delta and a base no manifest names. Readers never see them; the next writer removes them.
      const db = await lancedb.connect(location.uri, { storageOptions: { ...location.storageOptions } });
      t.teardown(() => db.close());
      const files = new SegmentTable(db, location.label, 0);
      const [newest] = await new EngineSegments(files).manifests();
      await files.write('delta-999999999999-abcdef.bin', new Uint8Array(64).fill(7));
      await files.write('segment-999999999999-abcdef.bin', new Uint8Array(64).fill(9));
      const { named } = await checkManifests(t, location, 'with unnamed files');
      t.notOk(named.has('delta-999999999999-abcdef.bin'), 'no manifest names them');
      t.equal((await new EngineSegments(files).manifests())[0], newest, 'the newest manifest is unchanged');
      const idx = await openWriter(location);
      try {
        await idx.textEngineReady();
        t.equal(idx.textPostingsStats()!.syncs.loads, 1, 'the writer started from the newest manifest');
        t.same(await postingsKeys(idx), await tableKeys(location), 'every passage of the table once, no other');
      } finally {
        await idx.close();
      }
      const left = (await files.list()).map((f) => f.name);
      t.notOk(
        left.includes('delta-999999999999-abcdef.bin') || left.includes('segment-999999999999-abcdef.bin'),
        'the writer removed them',
      );
    },
  );
}
