/**
 * Persisted engine segments on an index in a bucket (SeaweedFS on loopback, test/helpers/seaweedfs-server.ts): the
 * writer publishes a base and delta segments into the index's own object store, and a second process started on the
 * bucket loads them (engine stats: a load and the deltas, no build) and holds exactly the passages a reader that
 * scanned the table holds.
 */
import t, { type Test } from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../../config.js';
import { indexLocation } from '../../index/engines/lance/location.js';
import { SegmentTable } from '../../index/engines/lance/engine-segment-table.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';
import { seaweedfsUnavailable, startSeaweedfs, type SeaweedfsServer } from '../helpers/seaweedfs-server.js';

const REPO = join(import.meta.dirname, '..', '..');
const skip = seaweedfsUnavailable();
if (skip) t.plan(0, skip);
else {
  const s3: SeaweedfsServer = await startSeaweedfs();
  t.teardown(() => s3.stop());
  const page = (ref: number, v = 0) =>
    makePage(ref, `h${ref % 4}.example.ca`, [`passports renewal ${ref} v${v}`, `fees forms office ${ref} v${v}`], {
      title: `Page ${ref} v${v}`,
    });
  /** What a second process on the bucket loads (engine-segments-bucket-child.ts). */
  const readInChild = async (t: Test, env: Record<string, string>, dataDir: string) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'test/index/engine-segments-bucket-child.ts')], {
      cwd: REPO,
      env: { PATH: process.env.PATH, ...env, SVC_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const got = JSON.parse(String((await lines.next()).value)) as {
      syncs: { loads: number; deltas: number; builds: number };
      keys: string[];
    };
    await new Promise((r) => child.once('exit', r));
    t.equal(child.exitCode, 0);
    return got;
  };
  const keys = async (idx: PassageIndex) => (await idx.scanCandidates({}, 1_000_000)).map((h) => `${h.page_ref}:${h.ordinal}`).sort();

  t.test(
    'a second process loads the base and delta segments from the bucket instead of scanning, and holds the same passages',
    async (t) => {
      const dataDir = t.testdir();
      const env = { ...s3.env('segments'), SVC_DATA_DIR: dataDir, SVC_INDEX_READ_CONSISTENCY_S: '1' };
      const location = indexLocation(loadConfig({ env }));
      t.equal(location.kind, 's3');
      const writer = await PassageIndex.open({
        location,
        embedder: null,
        refreshAfterMs: 0,
        optimizeEvery: 1_000_000,
        engineSegments: { deltaDocs: Infinity, deltaAfterMs: Infinity, maxDeltas: 8, maxDeltaShare: Infinity, graceMs: 0 },
      });
      t.teardown(() => writer.close());
      await writer.upsertPages(Array.from({ length: 40 }, (_, i) => page(i + 1)));
      await writer.engineImageNow();
      await writer.upsertPages([page(3, 1), page(100)]);
      await writer.removePage(5);
      await writer.engineDeltaNow();
      await writer.upsertPages([page(4, 2)]);
      await writer.engineDeltaNow();
      const w = writer.textPostingsStats()!;
      t.ok(w.images.written >= 1, 'the writer published a base in the bucket');
      t.equal(w.images.deltas, 2, 'and two deltas');
      const want = await keys(writer);

      const got = await readInChild(t, env, join(dataDir, 'reader'));
      t.same(
        { loads: got.syncs.loads, deltas: got.syncs.deltas, builds: got.syncs.builds },
        { loads: 1, deltas: 2, builds: 0 },
        'the other process loaded a base and two deltas and built nothing',
      );
      t.same(got.keys, want, "the other process holds exactly the writer's passages");
      t.notOk(got.keys.includes('5:0'), 'the removed page is gone');
      t.ok(got.keys.includes('100:0'), 'the added page is there');

      // A reader that scans (segments off) holds the same.
      const scanned = await PassageIndex.open({ location: indexLocation(loadConfig({ env })), embedder: null, writes: false });
      t.teardown(() => scanned.close());
      t.same(await keys(scanned), want, 'the same passages as a reader that scanned the table');

      // Two merges: the first base and its deltas are no manifest's any more and are removed from the bucket (the
      // table's old versions cleaned up); a new reader loads the newest base.
      await writer.upsertPages([page(6, 3)]);
      await writer.engineImageNow();
      await writer.upsertPages([page(7, 4)]);
      await writer.engineImageNow();
      const again = await readInChild(t, env, join(dataDir, 'reader2'));
      t.same({ loads: again.syncs.loads, deltas: again.syncs.deltas, builds: again.syncs.builds }, { loads: 1, deltas: 0, builds: 0 });
      t.same(again.keys, await keys(writer), "after the merges: the writer's passages");
      const db = await lancedb.connect(location.uri, { storageOptions: { ...location.storageOptions } });
      t.teardown(() => db.close());
      const files = await new SegmentTable(db, location.label, 0).list();
      t.equal(files.filter((f) => f.name.startsWith('manifest-')).length, 2, 'two manifests kept in the bucket');
      t.equal(files.filter((f) => f.name.startsWith('segment-')).length, 2, 'and the two bases they name: the older ones removed');
      t.equal(files.filter((f) => f.name.startsWith('delta-')).length, 0, "the first base's deltas removed with it");
    },
  );
}
