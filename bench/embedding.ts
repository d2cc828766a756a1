/**
 * Embedding throughput (passages/s): our embedder (transformers.js in a worker thread, batched) beside bare
 * onnxruntime-node running the same ONNX file with the same thread count, same tokenizer, same batch size.
 *
 *   node --import tsx bench/embedding.ts [--model-dir ../shared/data/models] [--threads 2] [--passages 512] [--batch 32] [--rounds 2]
 *
 * Skips with a printed reason (exit 0) when the weights file is absent or does not match SHA256SUMS.
 * Passages: the first N SciFact abstracts (title + text), the same texts for both paths. Both paths use the model's
 * 256-token window and the same batches: the texts in length order (the order the service embeds in, which wastes
 * little on padding), so the comparison measures the service's overhead, not its batching. Rounds alternate the two
 * paths; the best round of each is reported.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readCorpus } from '../cli/ingest.js';
import { checkWeights, createEmbedder, weightsPath } from '../index/embedder.js';

const { values } = parseArgs({
  options: {
    'model-dir': { type: 'string', default: fileURLToPath(new URL('../../shared/data/models/', import.meta.url)) },
    model: { type: 'string', default: 'all-MiniLM-L6-v2' },
    threads: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '2' },
    // Internal: time the bare path once in this process and print passages/s (onnxruntime's addon cannot be loaded in
    // the main thread and in the service's embedding worker of one process, so the bare path runs in a child).
    'bare-once': { type: 'boolean', default: false },
    passages: { type: 'string', default: '512' },
    batch: { type: 'string', default: '32' },
  },
});
const modelDir = values['model-dir']!;
const model = values.model!;
const threads = Number(values.threads);
const n = Number(values.passages);
const batch = Number(values.batch);

const problem = checkWeights(modelDir, model);
if (problem) {
  console.log(`SKIPPED embedding benchmark: ${problem}`);
  console.log('(the all-MiniLM-L6-v2 ONNX weights are not in ../shared yet; rerun this command when they are)');
  process.exit(0);
}

const texts: string[] = [];
for await (const d of readCorpus(fileURLToPath(new URL('../../shared/data/beir/scifact/corpus.jsonl.gz', import.meta.url)))) {
  texts.push(`${d.title}\n${d.text}`);
  if (texts.length >= n) break;
}

const rounds = Math.max(1, Number(values.rounds));
const byLength = [...texts].sort((a, b) => a.length - b.length);

async function ours(): Promise<() => Promise<number>> {
  const e = await createEmbedder({ modelDir, modelName: model, threads, batchSize: batch });
  if (!e) throw new Error('embedder failed to load');
  await e.embed(texts.slice(0, batch)); // warm-up
  return async () => {
    const t0 = performance.now();
    await e.embed(texts); // sorts by length itself
    return texts.length / ((performance.now() - t0) / 1000);
  };
}

async function bare(): Promise<() => Promise<number>> {
  const ort = await import('onnxruntime-node');
  const { AutoTokenizer, env } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.localModelPath = modelDir.endsWith('/') ? modelDir : `${modelDir}/`;
  const tokenizer = await AutoTokenizer.from_pretrained(model);
  const session = await ort.InferenceSession.create(weightsPath(modelDir, model), { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const run = async (chunk: string[]) => {
    const enc = tokenizer(chunk, { padding: true, truncation: true, max_length: 256 });
    const toOrt = (x: { data: BigInt64Array; dims: number[] }) => new ort.Tensor('int64', x.data, x.dims);
    const feeds: Record<string, unknown> = { input_ids: toOrt(enc.input_ids), attention_mask: toOrt(enc.attention_mask) };
    if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = toOrt(enc.token_type_ids);
    const out = await session.run(feeds as never);
    const hidden = out[session.outputNames[0]!]!;
    // Mean pooling + L2 normalisation, like the pipeline, so both paths do the same work.
    const [b, len, dim] = hidden.dims as [number, number, number];
    const data = hidden.data as Float32Array;
    const mask = enc.attention_mask.data as BigInt64Array;
    const vectors: Float32Array[] = [];
    for (let i = 0; i < b; i++) {
      const v = new Float32Array(dim);
      for (let j = 0; j < len; j++) {
        if (mask[i * len + j] === 0n) continue;
        for (let k = 0; k < dim; k++) v[k]! += data[(i * len + j) * dim + k]!;
      }
      let norm = 0;
      for (let k = 0; k < dim; k++) norm += v[k]! ** 2;
      norm = Math.sqrt(norm) || 1;
      for (let k = 0; k < dim; k++) v[k]! /= norm;
      vectors.push(v);
    }
    return vectors;
  };
  await run(texts.slice(0, batch));
  return async () => {
    const t0 = performance.now();
    for (let i = 0; i < byLength.length; i += batch) await run(byLength.slice(i, i + batch));
    return texts.length / ((performance.now() - t0) / 1000);
  };
}

if (values['bare-once']) {
  console.log(JSON.stringify({ rate: await (await bare())() }));
  process.exit(0);
}

const { execFileSync } = await import('node:child_process');
const bareInChild = (): number => {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--bare-once', '--model-dir', modelDir, '--model', model, '--threads', String(threads), '--passages', String(n), '--batch', String(batch)];
  const out = execFileSync(process.execPath, args, { encoding: 'utf8' });
  return (JSON.parse(out.trim().split('\n').pop()!) as { rate: number }).rate;
};
const runOurs = await ours();
let a = 0;
let b = 0;
for (let r = 0; r < rounds; r++) {
  a = Math.max(a, await runOurs());
  b = Math.max(b, bareInChild());
}
console.log(`\nmodel ${model} (q8), ${texts.length} passages, batch ${batch}, ${threads} ONNX thread(s), 256-token window, best of ${rounds} rounds\n`);
console.log('| path | passages/s | share of bare |');
console.log('|---|---|---|');
console.log(`| svc embedder (transformers.js, worker thread) | ${a.toFixed(1)} | ${((a / b) * 100).toFixed(0)}% |`);
console.log(`| bare onnxruntime-node | ${b.toFixed(1)} | 100% |`);
