/**
 * Issue 45: a model configured for an index whose vectors are not its own is never used silently off — svc_search and
 * svc_context answer with BM25 and a `vector_model_mismatch` warning. (Vectors of another real model:
 * test/tools/search-cross-lingual.test.ts.)
 */
import t from 'tap';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { callTool } from '../../tools/call-tool.js';
import { contextTool } from '../../tools/context.js';
import { searchTool } from '../../tools/search.js';
import { makePage } from '../helpers/page-input.js';
import { startTestService } from '../helpers/service.js';

const caller = { keyId: 'test', digest: '0'.repeat(64) };

t.test('an index built without vectors, then served with a model: BM25 answers and the warning says why', async (t) => {
  const dataDir = t.testdir();
  const before = await startTestService({ config: { dataDir }, embedder: null });
  await before.services.deps.index.upsertPages([
    makePage(1, 'www.ottawa.ca', ['Garbage and recycling collection schedules for every Ottawa neighbourhood.'], { title: 'Collection' }),
  ]);
  await before.close();

  // SVC_REEMBED=manual: the writer leaves the index as it is (re-embedding: test/tools/reembed-in-service.test.ts).
  const s = await startTestService({ config: { dataDir, reembed: 'manual' }, embedder: createHashingEmbedder(64) });
  t.teardown(() => s.close());
  t.same(s.services.deps.index.vectorsUnused, { stored: null, configured: 'hashing-stand-in-64' });
  const search = await callTool(searchTool, { q: 'recycling collection' }, { deps: s.services.deps, caller });
  t.equal(search.ranking, 'bm25');
  t.equal(search.results.length, 1);
  t.match(search.warnings, [
    {
      code: 'vector_model_mismatch',
      message:
        /was built without vectors, not of the configured model hashing-stand-in-64: ranking is BM25 only until the corpus is embedded again \(svc reindex --vectors\)/,
    },
  ]);
  const context = await callTool(contextTool, { query: 'recycling collection' }, { deps: s.services.deps, caller });
  t.equal(context.ranking, 'bm25');
  t.ok(context.warnings.some((w) => w.code === 'vector_model_mismatch'));

  // The operator chose BM25: nothing is missing, nothing to say.
  const deps = { ...s.services.deps, config: { ...s.services.deps.config, ranking: 'bm25' as const } };
  const bm25 = await callTool(searchTool, { q: 'recycling collection' }, { deps, caller });
  t.notOk(bm25.warnings.some((w) => w.code === 'vector_model_mismatch'));
});

t.test('an index with the configured model: no warning', async (t) => {
  const s = await startTestService({ embedder: createHashingEmbedder(64) });
  t.teardown(() => s.close());
  await s.services.deps.index.upsertPages([makePage(1, 'www.ottawa.ca', ['Recycling collection schedules.'])]);
  t.equal(s.services.deps.index.vectorsUnused, null);
  const r = await callTool(searchTool, { q: 'recycling' }, { deps: s.services.deps, caller });
  t.equal(r.ranking, 'hybrid-rrf-hashing');
  t.same(
    r.warnings.map((w) => w.code),
    [],
  );
});
