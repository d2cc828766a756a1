/**
 * Images published at one table version (a new image format or analysis republishes at the version the table is
 * at): the latest written is the newest, kept by the clean-up and loaded by a reader, whatever its random id.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { EngineSegments } from '../../index/engines/lance/engine-segments.js';
import { ANALYSIS_VERSION, FTS_OPTIONS } from '../../index/engines/lance/maintenance.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { makePage } from '../helpers/page-input.js';

t.test('of manifests at one version, the latest written ranks first, is kept and is loaded', async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({
    dir,
    embedder: createHashingEmbedder(32),
    refreshAfterMs: 0,
    engineSegments: { graceMs: 0 },
  });
  const store = new EngineSegments(dir);
  try {
    await writer.upsertPages([makePage(1, 'www.canada.ca', ['bone density and vitamin d'])]);
    await writer.textEngineReady();
    const version = writer.textPostingsStats()!.version;
    for (let i = 0; i < 6; i++) {
      await writer.engineImageNow();
      const id = writer.textPostingsStats()!.image!.id;
      t.equal(writer.textPostingsStats()!.version, version, 'no write in between: one table version');
      const [newest] = await store.manifests();
      t.match(newest, new RegExp(`-${id}\\.json$`), `image ${i}: the latest written ranks first`);
      const loaded = await store.loadNewest({ analysis: ANALYSIS_VERSION, maxTermLength: FTS_OPTIONS.maxTokenLength });
      t.equal(loaded?.image.header.id, id, `image ${i}: a reader loads it`);
    }
  } finally {
    await writer.close();
  }
});

t.test('a segment of another format is not reported as the newest (a restart would scan, not load it)', async (t) => {
  const dir = t.testdir();
  const writer = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), refreshAfterMs: 0, engineSegments: { graceMs: 0 } });
  try {
    await writer.upsertPages([makePage(1, 'www.canada.ca', ['bone density and vitamin d'])]);
    await writer.engineImageNow();
    const st = await writer.engineSegmentsStatus();
    t.equal(st?.version, st?.tableVersion, 'the published segment is at the table version');
    // The same manifests as an older format would have written them.
    for (const name of await new EngineSegments(dir).manifests()) {
      const path = join(dir, 'engine-segments', name);
      writeFileSync(path, readFileSync(path, 'utf8').replace(/"format":\d+/, '"format":1'));
    }
    t.equal(await writer.engineSegmentsStatus(), null, 'svc status: no segment a reader can load');
  } finally {
    await writer.close();
  }
});
