/**
 * Re-embedding an index in a bucket (SeaweedFS on loopback): vectors of another model with an ANN index on them are
 * replaced (index and column dropped, the column added at the new dimension), the progress is kept in the bucket's
 * metadata, and after the pass the vector index is built again over the new vectors.
 */
import t from 'tap';
import { loadConfig } from '../../config.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { indexLocation } from '../../index/engines/lance/location.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';
import { seaweedfsUnavailable, startSeaweedfs, type SeaweedfsServer } from '../helpers/seaweedfs-server.js';

const skip = seaweedfsUnavailable();
if (skip) t.plan(0, skip);
else {
  const s3: SeaweedfsServer = await startSeaweedfs();
  t.teardown(() => s3.stop());
  const pages = Array.from({ length: 150 }, (_, i) =>
    makePage(i + 1, `h${i % 4}.example.ca`, [`passage about topic ${i + 1} and renewals`, `fees and forms for case ${i + 1}`]),
  );

  t.test('another model with an ANN index, in a bucket: replaced, resumed from the bucket, indexed again', async (t) => {
    const location = indexLocation(loadConfig({ env: { ...s3.env('reembed'), SVC_DATA_DIR: t.testdir() } }));
    const opts = { location, vectorIndexThreshold: 200, refreshAfterMs: 0, optimizeEvery: 1_000_000 };
    const a = await PassageIndex.open({ ...opts, embedder: createHashingEmbedder(32) });
    await a.upsertPages(pages);
    await a.optimize();
    t.equal((await a.stats()).vectorIndex, true, 'an ANN index over the old vectors');
    await a.close();

    const model = createHashingEmbedder(48);
    const b = await PassageIndex.open({ ...opts, embedder: model, reembed: true });
    t.equal((await b.stats()).vectorIndex, false, 'the old ANN index went with its column');
    const stop = new AbortController();
    t.equal(await b.reembed({ batchPassages: 40, signal: stop.signal, onProgress: (p) => p.done >= 80 && stop.abort() }), 'stopped');
    await b.close();

    const reader = await PassageIndex.open({ location, embedder: model, writes: false });
    t.match(
      await reader.reembedProgress(),
      { modelId: 'hashing-stand-in-48', done: 80, total: 300, state: 'pending' },
      'the bucket holds the progress',
    );
    t.equal(reader.rankingMode(), 'bm25');
    await reader.close();

    const c = await PassageIndex.open({ ...opts, embedder: model, reembed: true });
    t.teardown(() => c.close());
    t.equal(await c.reembed({ batchPassages: 40 }), 'done');
    await c.optimize();
    const s = await c.stats();
    t.match(
      s,
      { passages: 300, vectors: 300, rankingMode: 'hybrid-rrf-hashing', vectorIndex: true },
      'ANN index built over the new vectors',
    );
    const [q] = await model.embed(['Page 7\npassage about topic 7 and renewals']);
    const near = await c.vectorCandidates(q!, {}, 3);
    t.ok(
      near.some((h) => h.page_ref === 7 && h.ordinal === 0),
      'the vector arm finds the passage by its new vector',
    );
  });
}
