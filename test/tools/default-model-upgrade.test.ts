/**
 * multilingual-e5-small is the default model (issue 45 item 1), and an upgrade must not re-embed an index by surprise:
 * with SVC_MODEL unset, an index whose vectors came from another model the model folder holds keeps that model, and
 * the log and /readyz say a newer default exists and how to switch; an explicit SVC_MODEL that differs re-embeds as
 * ever. First the choice itself (model folders with stub weights, an index whose metadata names a model), then the
 * service with the real models on a tiny corpus.
 */
import t from 'tap';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config.js';
import { indexLocation } from '../../index/engines/lance/location.js';
import { checkWeights, createHashingEmbedder, type Embedder } from '../../index/serving/embedder.js';
import { DEFAULT_MODEL } from '../../index/serving/model-profiles.js';
import { openIndex } from '../../index/shards/sharded-index.js';
import { chooseModel } from '../../main.js';
import { callTool } from '../../tools/call-tool.js';
import { searchTool } from '../../tools/search.js';
import { makePage } from '../helpers/page-input.js';
import { startTestService, type TestService } from '../helpers/service.js';

const MINILM = 'all-MiniLM-L6-v2';
const E5 = 'multilingual-e5-small';
const MODELS = fileURLToPath(new URL('../../../shared/data/models/', import.meta.url));
const caller = { keyId: 'test', digest: '0'.repeat(64) };

/** An index at `dataDir` whose metadata says its vectors came from `modelId` (no model is loaded). */
async function indexWithVectorsOf(dataDir: string, modelId: string): Promise<void> {
  const stand: Embedder = { ...createHashingEmbedder(384), modelId };
  const index = await openIndex({ location: indexLocation(loadConfig({ env: {}, flags: { dataDir } })), embedder: stand });
  await index.upsertPage(makePage(1, 'example.org', ['A passage about harbour ferries.']));
  await index.close();
}

t.test('SVC_MODEL unset: the default, unless the index holds vectors of another model the folder has', async (t) => {
  t.equal(DEFAULT_MODEL, E5);
  const root = t.testdir();
  const modelDir = join(root, 'models');
  for (const [name, file] of [
    [MINILM, 'model_quantized.onnx'],
    [MINILM, 'model.onnx'],
    [E5, 'model_q4.onnx'],
    [`${E5}-int8`, 'model_quantized.onnx'],
  ] as const) {
    mkdirSync(join(modelDir, name, 'onnx'), { recursive: true });
    writeFileSync(join(modelDir, name, 'onnx', file), 'stub');
  }
  const config = (dataDir: string, env: Record<string, string> = {}) => ({
    ...loadConfig({ env: { SVC_DATA_DIR: dataDir, SVC_MODEL_DIR: modelDir, ...env } }),
    modelDir,
  });

  t.equal(loadConfig({ env: {} }).modelName, undefined, 'unset stays unset: the choice needs the index');
  const fresh = join(root, 'fresh');
  t.same(await chooseModel(config(fresh)), { name: E5 }, 'a new index: the default');

  const old = join(root, 'old');
  await indexWithVectorsOf(old, `${MINILM}/fp32`);
  const kept = await chooseModel(config(old));
  t.equal(kept.name, MINILM, "the index's model is kept");
  t.equal(kept.dtype, 'fp32', 'with its weights, though the folder also holds the int8 file');
  t.match(
    kept.notice,
    /vectors came from all-MiniLM-L6-v2\/fp32.*default model is now multilingual-e5-small: set SVC_MODEL=multilingual-e5-small to re-embed/,
  );
  t.same(
    await chooseModel(config(old, { SVC_EMBED_DTYPE: 'q8' })),
    { name: MINILM, dtype: 'q8', notice: kept.notice },
    'SVC_EMBED_DTYPE still applies',
  );
  t.same(await chooseModel(config(old, { SVC_MODEL: E5 })), { name: E5 }, 'an explicit SVC_MODEL is obeyed');
  t.same(await chooseModel(config(old, { SVC_MODEL: MINILM })), { name: MINILM }, 'explicitly the old one: no notice');

  const variant = join(root, 'variant');
  await indexWithVectorsOf(variant, `${E5}-int8/q8`);
  t.same(await chooseModel(config(variant)), { name: `${E5}-int8`, dtype: 'q8' }, "the default's own variant: kept, nothing to say");

  rmSync(join(modelDir, MINILM), { recursive: true });
  t.same(await chooseModel(config(old)), { name: E5 }, 'the old model is gone from the folder: the default (and a re-embedding)');
});

const problem = checkWeights(MODELS, MINILM) ?? checkWeights(MODELS, E5);
t.test(
  'the service on an all-MiniLM-L6-v2 index: kept with SVC_MODEL unset (log, /readyz), re-embedded with SVC_MODEL set',
  { skip: problem && !process.env.CI ? `SKIPPED real-model test: ${problem}` : false },
  async (t) => {
    t.equal(problem, null, 'the shared weights are present and match SHA256SUMS');
    const dataDir = t.testdir();
    const base = { dataDir, modelDir: MODELS, embedThreads: 1 };
    const pages = [
      makePage(1, 'ferries.example.org', ['The harbour ferry leaves every twenty minutes from the north pier.'], {
        title: 'Ferry timetable',
      }),
      makePage(2, 'library.example.org', ['The public library lends books, films and museum passes.'], { title: 'Library' }),
    ];
    let open: TestService | null = null;
    t.teardown(() => open?.close());

    const first = (open = await startTestService({ config: { ...base, modelName: MINILM } }));
    await first.services.deps.index.upsertPages(pages);
    await first.close();

    // An upgrade: the same index, SVC_MODEL unset.
    const kept = (open = await startTestService({ config: base }));
    t.equal(kept.services.deps.index.vectorsUnused, null, 'the stored vectors are used');
    t.equal(await kept.services.deps.index.reembedProgress(), null, 'no re-embedding');
    const line = kept.logLines.map((l) => JSON.parse(l) as { msg: string; model?: string }).find((l) => /default model is now/.test(l.msg));
    t.match(line, { model: MINILM, msg: /set SVC_MODEL=multilingual-e5-small to re-embed/ }, 'the log says how to switch');
    const ready = await fetch(`${kept.url}/readyz`);
    t.equal(ready.status, 200);
    const checks = ((await ready.json()) as { checks: Record<string, string> }).checks;
    t.equal(checks.embedder, `model:${MINILM}/q8`);
    t.match(checks.embedder_default, /vectors came from all-MiniLM-L6-v2\/q8.*SVC_MODEL=multilingual-e5-small/);
    const r = await callTool(
      searchTool,
      { q: 'when does the boat to the pier leave' },
      { deps: { ...kept.services.deps, config: { ...kept.config, ranking: 'vector' } }, caller },
    );
    t.equal(r.ranking, 'vector', 'the vector arm answers with the kept model');
    t.equal(r.results[0]?.url, pages[0]!.url);
    await kept.close();

    // The operator switches: an explicit SVC_MODEL re-embeds in the background.
    const switched = (open = await startTestService({ config: { ...base, modelName: E5 } }));
    t.same(switched.services.deps.index.vectorsUnused, { stored: `${MINILM}/q8`, configured: `${E5}/q4`, reembedding: true });
    const ready2 = (await (await fetch(`${switched.url}/readyz`)).json()) as { checks: Record<string, string> };
    t.equal(ready2.checks.embedder_default, undefined, 'an explicit choice: nothing to say');
    const done = new Promise<string>((resolve) => switched.services.deps.index.onVectorsReady((e) => resolve(e.modelId)));
    switched.services.start();
    t.equal(await done, `${E5}/q4`, 'every passage re-embedded with E5');
    await switched.close();

    // From then on, SVC_MODEL unset is the default and the index's model alike.
    const after = (open = await startTestService({ config: base }));
    t.equal(after.services.deps.index.vectorsUnused, null);
    const ready3 = (await (await fetch(`${after.url}/readyz`)).json()) as { checks: Record<string, string> };
    t.equal(ready3.checks.embedder, `model:${E5}/q4`);
    t.equal(ready3.checks.embedder_default, undefined);
    const fr = await callTool(
      searchTool,
      { q: 'à quelle heure part le traversier du port' },
      { deps: { ...after.services.deps, config: { ...after.config, ranking: 'vector' } }, caller },
    );
    t.equal(fr.results[0]?.url, pages[0]!.url, 'a French question finds the English ferry page with E5');
  },
);
