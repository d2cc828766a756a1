import t from 'tap';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkWeights, createEmbedder, createHashingEmbedder, weightsPath } from '../../index/embedder.js';

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

t.test('weights check: absent file, size mismatch against the LFS pointer', async (t) => {
  const dir = t.testdir();
  t.match(checkWeights(dir, MODEL), /weights file absent/);
  mkdirSync(join(dir, MODEL, 'onnx'), { recursive: true });
  writeFileSync(weightsPath(dir, MODEL), Buffer.alloc(10));
  copyFileSync(join(SHARED_MODELS, MODEL, 'onnx', 'model_quantized.onnx.lfs-pointer.txt'), `${weightsPath(dir, MODEL)}.lfs-pointer.txt`);
  t.match(checkWeights(dir, MODEL), /has 10 bytes, pointer says 22972370/);
});

t.test('createEmbedder: null with a logged reason when weights are absent', async (t) => {
  const warnings: unknown[] = [];
  const log = { info: () => {}, warn: (o: unknown) => warnings.push(o) };
  t.equal(await createEmbedder({ modelDir: t.testdir(), modelName: MODEL, log }), null);
  t.match(warnings, [{ reason: /weights file absent/ }]);
});

t.test('createEmbedder: a corrupt model fails inside the worker and yields null, never a crash', async (t) => {
  const dir = t.testdir();
  mkdirSync(join(dir, MODEL, 'onnx'), { recursive: true });
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']) copyFileSync(join(SHARED_MODELS, MODEL, f), join(dir, MODEL, f));
  writeFileSync(weightsPath(dir, MODEL), Buffer.from('not an onnx model'));
  const warnings: unknown[] = [];
  const e = await createEmbedder({ modelDir: dir, modelName: MODEL, log: { info: () => {}, warn: (o: unknown) => warnings.push(o) } });
  t.equal(e, null);
  t.match(warnings, [{ reason: /Load model .*model_quantized\.onnx failed/ }], 'the worker reached onnxruntime (transformers.js loaded in the worker) and reported its error');
});

const realProblem = checkWeights(SHARED_MODELS, MODEL);
t.test('real all-MiniLM-L6-v2 embedder (runs when the weights are present)', { skip: realProblem ? `SKIPPED real-model test: ${realProblem}` : false }, async (t) => {
  const e = await createEmbedder({ modelDir: SHARED_MODELS, modelName: MODEL, threads: 1, batchSize: 8 });
  t.ok(e, 'loads');
  if (!e) return;
  t.teardown(() => e.close());
  t.equal(e.dim, 384);
  t.equal(e.kind, 'model');
  const texts = ['How do I renew my passport?', 'Passport renewal application for adults', 'The recipe needs two eggs and flour', ...Array.from({ length: 20 }, (_, i) => `filler sentence ${i}`)];
  const v = await e.embed(texts);
  t.equal(v.length, texts.length, 'batched across several calls');
  t.ok(Math.abs(dot(v[0]!, v[0]!) - 1) < 1e-3);
  t.ok(dot(v[0]!, v[1]!) > dot(v[0]!, v[2]!) + 0.2, 'semantically close texts are closer');
  const again = await e.embed([texts[0]!]);
  t.ok(Math.abs(dot(again[0]!, v[0]!) - 1) < 1e-4, 'deterministic');
});
