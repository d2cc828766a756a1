/**
 * Embedding throughput (passages/s): our embedder (transformers.js in a worker thread, batched) beside bare
 * onnxruntime-node running the same ONNX file with the same thread count, same tokenizer, same batch size.
 *
 *   node --import tsx bench/embedding.ts [--model-dir ../shared/data/models] [--model all-MiniLM-L6-v2] [--dtype q8]
 *     [--max-tokens N] [--threads 2] [--passages 512] [--batch 32] [--rounds 2] [--bare-split]
 *
 * Skips with a printed reason (exit 0) when the weights file is absent or does not match SHA256SUMS.
 * Passages: the first N SciFact abstracts (title + text), the same texts for both paths. Both paths use the model's
 * window (its profile, index/serving/model-profiles.ts), its passage prefix and the same batches: the texts in length order (the order the service embeds in, which wastes
 * little on padding), so the comparison measures the service's overhead, not its batching. The two paths alternate
 * batch by batch (the bare path in a child process that keeps its session), so a load that comes and goes on a
 * shared machine hits both alike; reported: passages/s over all rounds, each round's share, CPU seconds per passage.
 * `--bare-split` gives the bare path svc's word split of a Metaspace tokenizer (index/serving/metaspace.ts), so the
 * two differ only by what svc adds around inference.
 *
 * `--ingest` adds the whole ingest path: `svc ingest`'s own code (cli/ingest.ts: corpus reading,
 * passage split, text analysis, embedding in the worker, LanceDB writes, state rows, the final optimize) on a slice
 * of SciFact holding `--passages` passages, timed from the command's start to its end (model load included), beside
 * bare onnxruntime-node embedding exactly those passage texts. Peak RSS of both processes is reported.
 *
 *   node --import tsx bench/embedding.ts --ingest --passages 1000 [--threads 2] [--batch 32]
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestCommand, readCorpus, splitPassages, type CorpusDoc } from '../cli/ingest.js';
import { meanPoolNormalize } from '../index/serving/pooling.js';
import { splitMetaspaceWords } from '../index/serving/metaspace.js';
import { checkWeights, createEmbedder, weightsPath, type Embedder } from '../index/serving/embedder.js';
import { EMBEDDER_DTYPES, resolveModel, type EmbedderDtype } from '../index/serving/model-profiles.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const { values } = parseArgs({
  options: {
    'model-dir': { type: 'string', default: fileURLToPath(new URL('../../shared/data/models/', import.meta.url)) },
    model: { type: 'string', default: 'all-MiniLM-L6-v2' },
    dtype: { type: 'string' },
    // The token window: the model's own by default; a shorter one shows what the window costs.
    'max-tokens': { type: 'string' },
    threads: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '2' },
    // Internal: time the bare path once in this process and print passages/s (onnxruntime's addon cannot be loaded in
    // the main thread and in the service's embedding worker of one process, so the bare path runs in a child).
    'bare-once': { type: 'boolean', default: false },
    'bare-serve': { type: 'boolean', default: false },
    passages: { type: 'string', default: '512' },
    batch: { type: 'string', default: '32' },
    ingest: { type: 'boolean', default: false },
    // The bare path's tokenizer with svc's word split too (index/serving/metaspace.ts): inference alone compared.
    'bare-split': { type: 'boolean', default: false },
  },
});
const modelDir = values['model-dir']!;
const model = values.model!;
const threads = Number(values.threads);
const n = Number(values.passages);
const batch = Number(values.batch);
if (values.dtype !== undefined && !(EMBEDDER_DTYPES as readonly string[]).includes(values.dtype))
  throw new Error(`--dtype: one of ${EMBEDDER_DTYPES.join(', ')}`);
const resolved = resolveModel(modelDir, model, values.dtype as EmbedderDtype | undefined);
const dtype = resolved.dtype;
const maxTokens = values['max-tokens'] !== undefined ? Number(values['max-tokens']) : resolved.profile.maxTokens;
const profile = { ...resolved.profile, maxTokens };

const problem = checkWeights(modelDir, model, { dtype });
if (problem) {
  console.log(`SKIPPED embedding benchmark: ${problem}`);
  console.log(`(the ${model} ONNX weights are not in ../shared yet; rerun this command when they are)`);
  process.exit(0);
}

const CORPUS = fileURLToPath(new URL('../../shared/data/beir/scifact/corpus.jsonl.gz', import.meta.url));
const texts: string[] = [];
const docs: CorpusDoc[] = [];
for await (const d of readCorpus(CORPUS)) {
  if (values.ingest) {
    // The texts the index embeds for this document's passages (index/engines/lance/rows.ts pageRows), and whole documents
    // for the ingest slice, until the slice holds n passages.
    const parts = splitPassages(d.text);
    for (const p of parts.length ? parts : ['']) texts.push(d.title ? `${d.title}\n${p}` : p);
    docs.push(d);
  } else texts.push(`${d.title}\n${d.text}`);
  if (texts.length >= n) break;
}

/**
 * Peak RSS of this process (worker threads included), sampled every 100 ms while `fn` runs, and the cores it kept
 * busy on average (CPU time of every thread over the wall time).
 */
async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ value: T; peakRss: number; cores: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    const value = await fn();
    const cpu = process.cpuUsage(cpu0);
    const cores = (cpu.user + cpu.system) / 1000 / Math.max(1, performance.now() - t0);
    return { value, peakRss: Math.max(peak, process.memoryUsage().rss), cores };
  } finally {
    clearInterval(timer);
  }
}

const rounds = Math.max(1, Number(values.rounds));
const byLength = [...texts].sort((a, b) => a.length - b.length);

/** The service's embedder on this model, warmed up. */
async function ours(): Promise<Embedder> {
  const e = await createEmbedder({ modelDir, modelName: model, dtype, threads, batchSize: batch, maxTokens });
  if (!e) throw new Error('embedder failed to load');
  await e.embed(texts.slice(0, batch)); // warm-up
  return e;
}

async function bareSession(): Promise<(part: string[]) => Promise<Float32Array[]>> {
  const ort = await import('onnxruntime-node');
  const { AutoTokenizer, env } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.localModelPath = modelDir.endsWith('/') ? modelDir : `${modelDir}/`;
  const tokenizer = await AutoTokenizer.from_pretrained(model);
  if (values['bare-split']) splitMetaspaceWords(tokenizer, join(modelDir, model, 'tokenizer.json'));
  const session = await ort.InferenceSession.create(weightsPath(modelDir, model, dtype), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  });
  const run = async (part: string[]) => {
    const chunk = part.map((t) => profile.passagePrefix + t);
    const enc = tokenizer(chunk, { padding: true, truncation: true, max_length: profile.maxTokens });
    const toOrt = (x: { data: BigInt64Array; dims: number[] }) => new ort.Tensor('int64', x.data, x.dims);
    const feeds: Record<string, unknown> = { input_ids: toOrt(enc.input_ids), attention_mask: toOrt(enc.attention_mask) };
    // XLM-R's tokenizer (E5) gives no token types: all zeros, as transformers.js feeds them.
    if (session.inputNames.includes('token_type_ids'))
      feeds.token_type_ids = enc.token_type_ids
        ? toOrt(enc.token_type_ids)
        : new ort.Tensor('int64', new BigInt64Array(enc.input_ids.data.length), enc.input_ids.dims);
    const out = await session.run(feeds as never);
    const hidden = out[session.outputNames[0]!]!;
    // Mean pooling + L2 normalisation with the embedding worker's own function (index/serving/pooling.ts), so both paths do
    // the same work after inference.
    return meanPoolNormalize(hidden.data as Float32Array, hidden.dims, enc.attention_mask.data as BigInt64Array);
  };
  await run(texts.slice(0, batch));
  return run;
}

async function bare(): Promise<() => Promise<number>> {
  const run = await bareSession();
  return async () => {
    const t0 = performance.now();
    for (let i = 0; i < byLength.length; i += batch) await run(byLength.slice(i, i + batch));
    return texts.length / ((performance.now() - t0) / 1000);
  };
}

/** The bare path as a function of a batch number (batches of `batch` texts in length order). */
async function bareBatches(): Promise<(i: number) => Promise<unknown>> {
  const run = await bareSession();
  return (i) => run(byLength.slice(i * batch, (i + 1) * batch));
}

if (values['bare-serve']) {
  // Internal: answers each stdin line (a batch number, or \`ready\` once the session is made) with its wall and CPU ms.
  const { createInterface } = await import('node:readline');
  const runBatch = await bareBatches();
  for await (const line of createInterface({ input: process.stdin })) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    if (line !== 'ready') await runBatch(Number(line));
    const cpu = process.cpuUsage(cpu0);
    console.log(JSON.stringify({ ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 }));
  }
  process.exit(0);
}

if (values['bare-once']) {
  // Cores busy while the passages are embedded (the session is created before the timed run starts).
  const run = await bare();
  const { value: rate, peakRss, cores } = await withPeakRss(run);
  console.log(JSON.stringify({ rate, peakRss, cores }));
  process.exit(0);
}

const { execFileSync } = await import('node:child_process');
let bareRss = 0;
let bareCores = 0;
function bareArgs(): string[] {
  const args = [
    '--import',
    'tsx',
    fileURLToPath(import.meta.url),
    '--model-dir',
    modelDir,
    '--model',
    model,
    '--dtype',
    dtype,
    '--max-tokens',
    String(maxTokens),
    '--threads',
    String(threads),
    '--passages',
    String(n),
    '--batch',
    String(batch),
  ];
  if (values.ingest) args.push('--ingest');
  if (values['bare-split']) args.push('--bare-split');
  return args;
}
const bareInChild = (): number => {
  const out = execFileSync(process.execPath, [...bareArgs(), '--bare-once'], { encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').pop()!) as { rate: number; peakRss: number; cores: number };
  bareRss = Math.max(bareRss, r.peakRss);
  bareCores = r.cores;
  return r.rate;
};

if (values.ingest) {
  // The slice as a corpus file, ingested into a fresh data dir with the real model, `threads` ONNX threads.
  const dir = mkdtempSync(join(tmpdir(), 'svc-ingest-bench-'));
  const file = join(dir, 'slice.jsonl');
  writeFileSync(file, docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  const io = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: { SVC_MODEL_DIR: modelDir, SVC_MODEL: model, SVC_EMBED_THREADS: String(threads), SVC_EMBED_DTYPE: dtype },
  } as never;
  const t0 = performance.now();
  const {
    value: code,
    peakRss,
    cores,
  } = await withPeakRss(() => ingestCommand(['--jsonl', file, '--data-dir', join(dir, 'data'), '--embedder', 'model'], io));
  const secs = (performance.now() - t0) / 1000;
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`ingest failed (${code})`);
  const ingestRate = texts.length / secs;
  const bareRate = bareInChild();
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  console.log(
    `\nmodel ${model} (${dtype}), ${docs.length} SciFact documents = ${texts.length} passages, ONNX threads ${threads}, bare batch ${batch}, ${profile.maxTokens}-token window\n`,
  );
  console.log('| path | passages/s | share of bare | wall s | cores busy | peak RSS MiB |');
  console.log('|---|---:|---:|---:|---:|---:|');
  console.log(
    `| svc ingest (whole command: read, split, analyse, embed, write, optimize) | ${ingestRate.toFixed(1)} | ${((ingestRate / bareRate) * 100).toFixed(0)}% | ${secs.toFixed(1)} | ${cores.toFixed(2)} | ${mib(peakRss)} |`,
  );
  console.log(
    `| bare onnxruntime-node (same passage texts, length-sorted batches) | ${bareRate.toFixed(1)} | 100% | ${(texts.length / bareRate).toFixed(1)} | ${bareCores.toFixed(2)} | ${mib(bareRss)} |`,
  );
  process.exit(0);
}
// Batch by batch, alternating which path goes first, so a load that comes and goes on a shared machine hits both paths
// alike; the bare path is a child process that keeps its session and runs the batch it is told.
const e = await ours();
const { spawn } = await import('node:child_process');
const { createInterface } = await import('node:readline');
const child = spawn(process.execPath, [...bareArgs(), '--bare-serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
const ask = async (line: string): Promise<{ ms: number; cpuMs: number }> => {
  child.stdin.write(`${line}\n`);
  const next = await lines.next();
  if (next.done) throw new Error('the bare child exited');
  return JSON.parse(next.value) as { ms: number; cpuMs: number };
};
await ask('ready');
const batches: string[][] = [];
for (let i = 0; i < byLength.length; i += batch) batches.push(byLength.slice(i, i + batch));
const sum = { svcMs: 0, svcCpu: 0, bareMs: 0, bareCpu: 0 };
const perRound: string[] = [];
for (let r = 0; r < rounds; r++) {
  let svcMs = 0;
  let bareMs = 0;
  for (let i = 0; i < batches.length; i++) {
    const runSvc = async () => {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await e.embed(batches[i]!);
      const cpu = process.cpuUsage(cpu0);
      svcMs += performance.now() - t0;
      sum.svcCpu += (cpu.user + cpu.system) / 1000;
    };
    const runBare = async () => {
      const b = await ask(String(i));
      bareMs += b.ms;
      sum.bareCpu += b.cpuMs;
    };
    if ((r + i) % 2 === 0) await runSvc().then(runBare);
    else await runBare().then(runSvc);
  }
  sum.svcMs += svcMs;
  sum.bareMs += bareMs;
  perRound.push(`${((bareMs / svcMs) * 100).toFixed(0)}%`);
}
child.stdin.end();
await e.close();
const total = texts.length * rounds;
const rate = (ms: number) => total / (ms / 1000);
console.log(
  `\nmodel ${model} (${dtype}), ${texts.length} passages, batch ${batch}, ${threads} ONNX thread(s), ${profile.maxTokens}-token window, ${rounds} round(s), batches alternating\n`,
);
console.log('| path | passages/s | share of bare | CPU s per passage |');
console.log('|---|---|---|---|');
console.log(
  `| svc embedder (transformers.js, worker thread) | ${rate(sum.svcMs).toFixed(2)} | ${((sum.bareMs / sum.svcMs) * 100).toFixed(0)}% (rounds: ${perRound.join(', ')}) | ${(sum.svcCpu / 1000 / total).toFixed(3)} |`,
);
console.log(`| bare onnxruntime-node | ${rate(sum.bareMs).toFixed(2)} | 100% | ${(sum.bareCpu / 1000 / total).toFixed(3)} |`);
process.exit(0);
