import t from 'tap';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmbedder, weightsPath } from '../../index/serving/embedder.js';

// Its own file (its own process): after onnxruntime failed to parse a model, a later load in the same process was
// seen to fail too, so a corrupt model is tried where nothing else loads one.
const SHARED_MODELS = fileURLToPath(new URL('../../../shared/data/models/', import.meta.url));
const MODEL = 'all-MiniLM-L6-v2';

t.test('createEmbedder: a corrupt model fails inside the worker and yields null, never a crash', async (t) => {
  const dir = t.testdir();
  mkdirSync(join(dir, MODEL, 'onnx'), { recursive: true });
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'])
    copyFileSync(join(SHARED_MODELS, MODEL, f), join(dir, MODEL, f));
  writeFileSync(weightsPath(dir, MODEL), Buffer.from('not an onnx model'));
  const warnings: unknown[] = [];
  const e = await createEmbedder({ modelDir: dir, modelName: MODEL, log: { info: () => {}, warn: (o: unknown) => warnings.push(o) } });
  t.equal(e, null);
  t.match(
    warnings,
    [{ reason: /protobuf parsing failed|Load model .*model_quantized\.onnx failed/ }],
    'the worker reached onnxruntime (transformers.js loaded in the worker) and reported its error',
  );
});
