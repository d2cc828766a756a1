/**
 * Issue 45 item 1: SVC_MODEL names a model folder of SVC_MODEL_DIR; each model svc knows has one profile (weights,
 * prefixes, pooling, window, dimension, vector-arm floor), a `<model>-<variant>` folder shares its model's, and any
 * other name is refused at start with the folders that would work.
 */
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../config.js';
import { createEmbedder, weightsPath } from '../../index/serving/embedder.js';
import {
  availableModels,
  DEFAULT_MIN_SIMILARITY,
  DEFAULT_MODEL,
  MODEL_PROFILES,
  minSimilarityFor,
  profileFor,
  resolveModel,
} from '../../index/serving/model-profiles.js';

const SHARED_MODELS = fileURLToPath(new URL('../../../shared/data/models/', import.meta.url));

t.test('SVC_MODEL selects the model; SVC_MODEL_NAME, its earlier name, still works', async (t) => {
  t.equal(loadConfig({ env: {} }).modelName, undefined, "unset: multilingual-e5-small or the index's model (main.ts chooseModel)");
  t.equal(DEFAULT_MODEL, 'multilingual-e5-small');
  t.equal(loadConfig({ env: { SVC_MODEL: 'multilingual-e5-small' } }).modelName, 'multilingual-e5-small');
  t.equal(loadConfig({ env: { SVC_MODEL_NAME: 'multilingual-e5-small' } }).modelName, 'multilingual-e5-small');
  t.equal(loadConfig({ env: { SVC_MODEL: 'multilingual-e5-small', SVC_MODEL_NAME: 'x' } }).modelName, 'multilingual-e5-small');
  t.equal(loadConfig({ env: {} }).embedDtype, undefined, "no dtype asked: the model's profile decides");
  t.equal(loadConfig({ env: { SVC_EMBED_DTYPE: 'q4' } }).embedDtype, 'q4');
});

t.test('a model folder resolves to its profile and default weights', async (t) => {
  const dir = t.testdir();
  for (const m of ['all-MiniLM-L6-v2', 'multilingual-e5-small', 'some-other-model']) mkdirSync(join(dir, m));
  t.same(availableModels(dir), ['all-MiniLM-L6-v2', 'multilingual-e5-small'], 'only folders with a profile');
  const e5 = resolveModel(dir, 'multilingual-e5-small');
  t.equal(e5.dtype, 'q4');
  t.same(
    [e5.profile.queryPrefix, e5.profile.passagePrefix, e5.profile.pooling, e5.profile.maxTokens, e5.profile.dim],
    ['query: ', 'passage: ', 'mean', 512, 384],
  );
  const mini = resolveModel(dir, 'all-MiniLM-L6-v2');
  t.equal(mini.dtype, 'q8');
  t.same([mini.profile.queryPrefix, mini.profile.passagePrefix, mini.profile.maxTokens], ['', '', 256]);
  t.equal(resolveModel(dir, 'all-MiniLM-L6-v2', 'fp32').dtype, 'fp32');
  t.equal(weightsPath(dir, 'multilingual-e5-small'), join(dir, 'multilingual-e5-small', 'onnx', 'model_q4.onnx'));
  t.equal(weightsPath(dir, 'all-MiniLM-L6-v2'), join(dir, 'all-MiniLM-L6-v2', 'onnx', 'model_quantized.onnx'));
});

t.test('an unknown model, a missing folder or weights the model does not ship: refused, naming what would work', async (t) => {
  const dir = t.testdir();
  mkdirSync(join(dir, 'multilingual-e5-small'));
  const refused = (name: string, dtype?: 'q8' | 'q4' | 'fp32') => {
    try {
      resolveModel(dir, name, dtype);
      return null;
    } catch (e) {
      t.type(e, ConfigError);
      return (e as Error).message;
    }
  };
  t.match(
    refused('e5-large'),
    /SVC_MODEL "e5-large": not a model svc knows; available in SVC_MODEL_DIR \(.*\): multilingual-e5-small \(known models: all-MiniLM-L6-v2, multilingual-e5-small, or <model>-<variant> folders of them\)/,
  );
  t.match(
    refused('all-MiniLM-L6-v2'),
    /SVC_MODEL "all-MiniLM-L6-v2": no folder .*all-MiniLM-L6-v2; available in SVC_MODEL_DIR \(.*\): multilingual-e5-small/,
  );
  t.match(refused('multilingual-e5-small', 'fp32'), /SVC_EMBED_DTYPE "fp32": multilingual-e5-small comes in q4, q8 only/);
  t.match(refused('multilingual-e5-small-int8'), /no folder .*multilingual-e5-small-int8; available/, 'a variant needs its folder too');
  t.match(refused('multilingual-e5'), /not a model svc knows/, 'a prefix of a known name is not a variant of it');
  t.match(refused('constructor'), /not a model svc knows/, 'an inherited property name is not a profile');
  await t.rejects(createEmbedder({ modelDir: dir, modelName: 'e5-large' }), ConfigError, 'createEmbedder refuses before loading anything');
  await t.rejects(createEmbedder({ modelDir: SHARED_MODELS, modelName: 'no-such-model' }), {
    message: /available in SVC_MODEL_DIR .*all-MiniLM-L6-v2, multilingual-e5-small/,
  });
});

t.test('a <model>-<variant> folder is its family: same profile, weights found by listing its onnx/', async (t) => {
  const dir = t.testdir();
  const variant = join(dir, 'multilingual-e5-small-int8', 'onnx');
  mkdirSync(variant, { recursive: true });
  mkdirSync(join(dir, 'multilingual-e5-small', 'onnx'), { recursive: true });
  writeFileSync(join(variant, 'model_quantized.onnx'), 'x');
  writeFileSync(join(dir, 'multilingual-e5-small', 'onnx', 'model_q4.onnx'), 'x');
  t.same(availableModels(dir), ['multilingual-e5-small', 'multilingual-e5-small-int8']);
  t.same(profileFor('multilingual-e5-small-int8'), { family: 'multilingual-e5-small', profile: MODEL_PROFILES['multilingual-e5-small'] });
  t.equal(profileFor('all-MiniLM-L6-v2-x')?.family, 'all-MiniLM-L6-v2');
  t.equal(profileFor('multilingual-e5-smallish'), undefined, 'the variant follows a hyphen');
  const int8 = resolveModel(dir, 'multilingual-e5-small-int8');
  t.equal(int8.dtype, 'q8', 'the int8 file it holds');
  t.equal(int8.profile.queryPrefix, 'query: ', "E5's prefixes");
  t.equal(resolveModel(dir, 'multilingual-e5-small').dtype, 'q4', 'the shared folder holds the 4-bit file only');
  t.equal(weightsPath(dir, 'multilingual-e5-small-int8'), join(variant, 'model_quantized.onnx'));
  t.equal(resolveModel(dir, 'multilingual-e5-small-int8', 'q4').dtype, 'q4', 'an explicit dtype is taken as asked');
  t.equal(minSimilarityFor('multilingual-e5-small-int8/q8'), MODEL_PROFILES['multilingual-e5-small']!.minSimilarity);
});

t.test("the vector arm's floor follows the model its vectors came from", async (t) => {
  t.equal(minSimilarityFor('multilingual-e5-small/q4'), MODEL_PROFILES['multilingual-e5-small']!.minSimilarity);
  t.equal(minSimilarityFor('all-MiniLM-L6-v2/q8'), MODEL_PROFILES['all-MiniLM-L6-v2']!.minSimilarity);
  t.ok(
    MODEL_PROFILES['multilingual-e5-small']!.minSimilarity > MODEL_PROFILES['all-MiniLM-L6-v2']!.minSimilarity,
    "E5's similarities sit higher",
  );
  t.equal(minSimilarityFor('hashing-stand-in-256'), DEFAULT_MIN_SIMILARITY);
  t.equal(minSimilarityFor(undefined), DEFAULT_MIN_SIMILARITY);
});
