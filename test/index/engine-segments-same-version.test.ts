/**
 * Images published at one table version (a new image format or analysis republishes at the version the table is
 * at): the latest written is the newest, kept by the clean-up and loaded by a reader, whatever its random id.
 */
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
