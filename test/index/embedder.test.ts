import t from 'tap';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkWeights, createEmbedder, createHashingEmbedder, weightsPath } from '../../index/serving/embedder.js';

const SHARED_MODELS = fileURLToPath(new URL('../../../shared/data/models/', import.meta.url));
const MODEL = 'all-MiniLM-L6-v2';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

t.test('hashing stand-in: deterministic, normalised, honest about what it is', async (t) => {
  const e = createHashingEmbedder(128);
  t.equal(e.kind, 'hashing-stand-in');
  t.equal(e.modelId, 'hashing-stand-in-128');
  const [a, b, c, d] = await e.embed(['passport renewal fees', 'Passport renewal fees', 'passport renewal deadline', 'zebra migration']);
  t.equal(a!.length, 128);
  t.ok(Math.abs(dot(a!, a!) - 1) < 1e-5, 'unit length');
  t.same(Array.from(a!), Array.from(b!), 'case-insensitive and deterministic');
  t.ok(dot(a!, c!) > dot(a!, d!), 'shared words bring vectors closer');
  const [empty] = await e.embed(['']);
  t.ok(Math.abs(dot(empty!, empty!) - 1) < 1e-5, 'empty text still gets a valid unit vector');
});

t.test('weights check: absent file, checksum against SHA256SUMS', async (t) => {
  const dir = t.testdir();
  t.match(checkWeights(dir, MODEL), /weights file absent/);
  mkdirSync(join(dir, MODEL, 'onnx'), { recursive: true });
  writeFileSync(weightsPath(dir, MODEL), Buffer.from('not the weights'));
  t.equal(checkWeights(dir, MODEL), null, 'no SHA256SUMS beside it: usable as it is');
  copyFileSync(join(SHARED_MODELS, MODEL, 'onnx', 'SHA256SUMS'), join(dir, MODEL, 'onnx', 'SHA256SUMS'));
  t.match(checkWeights(dir, MODEL), /does not match SHA256SUMS/);
  t.match(checkWeights(dir, MODEL, { dtype: 'fp32' }), /weights file absent: .*model\.onnx/);
  t.equal(weightsPath(dir, MODEL, 'fp32'), join(dir, MODEL, 'onnx', 'model.onnx'));
});

t.test('createEmbedder: null with a logged reason when weights are absent', async (t) => {
  const warnings: unknown[] = [];
  const log = { info: () => {}, warn: (o: unknown) => warnings.push(o) };
  const dir = t.testdir();
  // Issue 45: no folder of that name at all is a configuration error, refused (test/index/model-profiles.test.ts).
  await t.rejects(createEmbedder({ modelDir: dir, modelName: MODEL, log }), { name: 'ConfigError' });
  mkdirSync(join(dir, MODEL));
  t.equal(await createEmbedder({ modelDir: dir, modelName: MODEL, log }), null);
  t.match(warnings, [{ reason: /weights file absent/ }]);
});

const realProblem = checkWeights(SHARED_MODELS, MODEL);
t.test(
  'real all-MiniLM-L6-v2 embedder (the shared weights; CI has them)',
  { skip: realProblem && !process.env.CI ? `SKIPPED real-model test: ${realProblem}` : false },
  async (t) => {
    t.equal(realProblem, null, 'the shared q8 weights are present and match SHA256SUMS');
    const reasons: unknown[] = [];
    const e = await createEmbedder({
      modelDir: SHARED_MODELS,
      modelName: MODEL,
      threads: 1,
      batchSize: 8,
      log: { info: () => {}, warn: (o: unknown) => reasons.push(o) },
    });
    t.same(reasons, [], 'no load problem reported');
    t.ok(e, 'loads');
    if (!e) return;
    t.teardown(() => e.close());
    t.equal(e.dim, 384);
    t.equal(e.kind, 'model');
    t.equal(e.modelId, `${MODEL}/q8`);
    const texts = [
      'How do I renew my passport?',
      'Passport renewal application for adults',
      'The recipe needs two eggs and flour',
      ...Array.from({ length: 20 }, (_, i) => `filler sentence ${i}`),
    ];
    const v = await e.embed(texts);
    t.equal(v.length, texts.length, 'batched across several calls, answered in input order');
    t.ok(Math.abs(dot(v[0]!, v[0]!) - 1) < 1e-3);
    t.ok(dot(v[0]!, v[1]!) > dot(v[0]!, v[2]!) + 0.2, 'semantically close texts are closer');
    const again = await e.embed([texts[0]!]);
    t.ok(
      dot(again[0]!, v[0]!) > 0.97,
      'the same text alone or in a padded batch: nearly the same vector (int8 activations are quantised per batch; PROVENANCE.md: ≥ 0.976)',
    );

    // issue 15: the model's 256-token window, closed by [SEP] (sentence-transformers' encoding). Words of one WordPiece
    // token each: the first 254 words fill the window between [CLS] and [SEP]; what follows must change nothing.
    const words = Array.from({ length: 400 }, (_, i) => ['river', 'bank', 'water', 'stone', 'tree', 'cloud', 'light', 'road'][i % 8]!);
    const [long, window, shorter] = await e.embed([words.join(' '), words.slice(0, 254).join(' '), words.slice(0, 200).join(' ')]);
    t.ok(dot(long!, window!) > 0.999, `a 400-word text embeds as its first 254 words (cosine ${dot(long!, window!).toFixed(5)})`);
    t.ok(dot(long!, shorter!) < dot(long!, window!), 'and not as a shorter prefix');

    // Lanes (issue 14 item 5): indexing sends EMBED_PIPELINE_DEPTH batches ahead, so the worker's queue holds many
    // bulk batches while a crawl is indexed; a query's embedding must not wait behind them. A blocker call of four
    // batches of full-window texts (each batch tens of ms on one thread) is posted first, then four bulk calls of two
    // batches each (batch 8), then the query, all in this one synchronous turn: the worker is still inferring the
    // blocker's first batches when the rest arrive, so its queue holds them all. First in, first out, the query would be
    // answered last; with the interactive lane, right after the batch being inferred, before any call is complete
    // (each needs all of its batches). (CI: short bulk batches alone let the worker finish bulk 0 before this thread,
    // descheduled on a loaded machine, had posted the query; a blocker of two batches was once finished first too.)
    const longText = words.slice(0, 254).join(' ');
    const bulkTexts = Array.from({ length: 16 }, (_, i) => `indexing passage number ${i} about rivers and stones`);
    const finished: string[] = [];
    const blocker = e.embed(Array.from({ length: 32 }, () => longText)).then((r) => (finished.push('blocker'), r));
    const bulk = [0, 1, 2, 3].map((k) => e.embed(bulkTexts).then((r) => (finished.push(`bulk ${k}`), r)));
    const query = e.embed([texts[0]!], { interactive: true }).then((r) => (finished.push('query'), r));
    const [queried, , ...bulked] = await Promise.all([query, blocker, ...bulk]);
    t.equal(finished[0], 'query', `the query's embedding goes ahead of queued indexing batches (order: ${finished.join(', ')})`);
    t.same(finished.slice(1).sort(), ['blocker', 'bulk 0', 'bulk 1', 'bulk 2', 'bulk 3'], 'every bulk call is answered too');
    t.ok(dot(queried[0]!, again[0]!) > 0.999, 'the interactive lane embeds the same way');
    for (const b of bulked) t.equal(b.length, 16, 'pipelined batches answer every text, in input order');
    const alone = await e.embed([bulkTexts[5]!]);
    t.ok(dot(bulked[2]![5]!, alone[0]!) > 0.97, 'a pipelined batch answers each text with its own vector');
  },
);

t.test(
  'real embedder, fp32 weights selectable',
  { skip: checkWeights(SHARED_MODELS, MODEL, { dtype: 'fp32' }) && !process.env.CI ? 'fp32 weights absent' : false },
  async (t) => {
    const [q8, fp32] = await Promise.all([
      createEmbedder({ modelDir: SHARED_MODELS, modelName: MODEL, threads: 1 }),
      createEmbedder({ modelDir: SHARED_MODELS, modelName: MODEL, threads: 1, dtype: 'fp32' }),
    ]);
    t.ok(q8 && fp32);
    if (!q8 || !fp32) return;
    t.teardown(async () => {
      await q8.close();
      await fp32.close();
    });
    t.equal(fp32.modelId, `${MODEL}/fp32`, 'another vector space: an index never mixes the two');
    const text = 'Heat pump rebates for homeowners in Nova Scotia';
    const [[a], [b]] = await Promise.all([q8.embed([text]), fp32.embed([text])]);
    t.ok(dot(a!, b!) > 0.97, `int8 and fp32 agree (cosine ${dot(a!, b!).toFixed(4)}; PROVENANCE.md reports ≥ 0.976)`);
  },
);

const E5 = 'multilingual-e5-small';
const e5Problem = checkWeights(SHARED_MODELS, E5);
t.test(
  'issue 45: real multilingual-e5-small embedder: q4 weights, query/passage prefixes, French and English in one space',
  { skip: e5Problem && !process.env.CI ? `SKIPPED real-model test: ${e5Problem}` : false },
  async (t) => {
    t.equal(e5Problem, null, 'the shared q4 weights are present and match SHA256SUMS');
    const e = await createEmbedder({ modelDir: SHARED_MODELS, modelName: E5, threads: 1, batchSize: 8 });
    t.ok(e, 'loads');
    if (!e) return;
    t.teardown(() => e.close());
    t.equal(e.dim, 384);
    t.equal(e.modelId, `${E5}/q4`, 'another vector space than MiniLM: an index never mixes the two');
    const question = 'Where is the Gabrielle-Roy library in Quebec City?';
    const [asQuery] = await e.embed([question], { interactive: true });
    const [asPassage] = await e.embed([question]);
    const [explicit] = await e.embed([question], { input: 'query' });
    t.ok(dot(asQuery!, explicit!) > 0.999, "a caller waiting (a search) embeds a query: 'query: ' prefix");
    t.ok(dot(asQuery!, asPassage!) < 0.99, "indexing embeds a passage: 'passage: ' prefix, another vector");
    const [fr, en, other] = await e.embed([
      'La bibliothèque Gabrielle-Roy est située au 350, rue Saint-Joseph Est, à Québec.',
      'The Gabrielle-Roy library is at 350 Saint-Joseph Street East in Quebec City.',
      'The recipe needs two eggs and flour.',
    ]);
    t.ok(dot(fr!, en!) > dot(en!, other!), 'a French sentence and its English translation are closer than unrelated English');
    t.ok(dot(asQuery!, fr!) > dot(asQuery!, other!), 'an English question is closer to the French answer than to unrelated text');
    // The 512-token window closed by </s>: two texts longer than it, equal over their first 512 tokens, embed alike.
    const words = (n: number) => Array.from({ length: n }, () => 'river').join(' ');
    const [a, b, short] = await e.embed([words(900), words(1200), words(50)]);
    t.ok(dot(a!, b!) > 0.999, `texts beyond the window embed as the window (cosine ${dot(a!, b!).toFixed(5)})`);
    t.ok(dot(a!, short!) < dot(a!, b!), 'and not as a shorter text');
  },
);
