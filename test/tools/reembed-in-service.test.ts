/**
 * Models never silently off, in the service: an index built without vectors, served with a model, is re-embedded in
 * the background by its writer; /readyz (a field, still ready), /metrics (gauges) and the search warning report it
 * meanwhile; once every passage has its vector, the search threads are replaced and the vector arm answers.
 */
import t from 'tap';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { makePage } from '../helpers/page-input.js';
import { restSearch, TOPICS } from '../helpers/search-pool-service.js';
import { startTestService } from '../helpers/service.js';
import { waitFor } from '../helpers/wait-for.js';

t.test('built without vectors, served with a model: BM25 and progress, then hybrid from the search threads', async (t) => {
  const dataDir = t.testdir();
  const first = await startTestService({ config: { dataDir }, embedder: null });
  let ref = 1;
  for (const [host, title, text] of TOPICS) await first.services.deps.index.upsertPage(makePage(ref++, host, [text], { title }));
  await first.close();

  const s = await startTestService({ config: { dataDir, searchThreads: 2 }, embedder: createHashingEmbedder(64), perMinute: 10_000 });
  t.teardown(() => s.close());
  t.ok(await s.services.searchPool!.whenReady(60_000), 'the search threads opened the index');

  // Prepared at open, not started yet (services.start() runs it).
  const ready = await fetch(s.url + '/readyz');
  t.equal(ready.status, 200, 'a re-embedding never fails readiness');
  const body = (await ready.json()) as { checks: Record<string, string> };
  t.equal(body.checks.ranking, 'bm25');
  t.match(
    body.checks.reembedding,
    /^pending with hashing-stand-in-64: 0\/5 passages \(0%\); BM25 serves until every passage has its vector$/,
  );
  const metrics = await (await fetch(s.url + '/metrics')).text();
  t.match(metrics, /^svc_reembed_pending 1$/m);
  t.match(metrics, /^svc_reembed_passages_done 0$/m);
  t.match(metrics, /^svc_reembed_passages_total 5$/m);
  t.match(metrics, /^svc_reembed_eta_seconds -1$/m);
  const before = await restSearch(s, 'passport fees');
  t.equal(before.status, 200);
  t.equal(before.body.ranking, 'bm25', 'the search threads answer with BM25 meanwhile');
  t.match(before.body.warnings, [
    { code: 'vector_model_mismatch', message: /being embedded with the configured model hashing-stand-in-64 in the background/ },
  ]);

  const switched = new Promise<string>((resolve) => s.services.deps.index.onVectorsReady((e) => resolve(e.modelId)));
  s.services.start();
  t.equal(await switched, 'hashing-stand-in-64', 'the writer switched the vector arm on');
  // The search threads are replaced (one at a time) so they read the new vectors: the log says when all are.
  await waitFor('the search threads replaced', () => s.logLines.some((l) => l.includes('search threads replaced')));
  const after = await restSearch(s, 'passport fees');
  t.equal(after.status, 200);
  t.equal(after.body.ranking, 'hybrid-rrf-hashing', 'the vector arm answers through the search threads');
  t.same(
    after.body.warnings.map((w) => w.code),
    [],
  );
  t.equal(after.body.results[0]?.host, 'www.canada.ca');
  const done = (await (await fetch(s.url + '/readyz')).json()) as { checks: Record<string, string> };
  t.equal(done.checks.ranking, 'hybrid-rrf-hashing');
  t.equal(done.checks.reembedding, undefined, 'no re-embedding to report');
  t.match(await (await fetch(s.url + '/metrics')).text(), /^svc_reembed_pending 0$/m);
  t.match(await (await fetch(s.url + '/metrics')).text(), /^svc_index_vectors 5$/m);
});
