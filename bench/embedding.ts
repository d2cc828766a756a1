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
 * `--ingest` adds the whole ingest path: `svc ingest`'s own code (cli/ingest.ts: corpus reading, passage split, text
 * analysis, embedding in the worker, LanceDB writes, state rows, the final optimize) on a slice of SciFact holding
 * `--passages` passages, cut into `--rounds` parts. Each round ingests one part into the same index, then the bare
 * child embeds exactly that part's passage texts (length-sorted batches of `--batch`), the order swapped every round,
 * so a load that comes and goes hits both alike. The command's set-up (model load, state and index open: until it
 * prints `ingesting …`) is timed apart and left out of passages/s; reported per round and in total: the share of
 * bare, CPU seconds per passage and cores busy of both, and the set-up and session-load times.
 *
 *   node --import tsx bench/embedding.ts --ingest --model multilingual-e5-small --passages 64 --rounds 4 --batch 16
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
    // Internal: the bare path, serving batches on stdin (onnxruntime's addon cannot be loaded in the main thread and in
    // the service's embedding worker of one process, so the bare path runs in a child).
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
/** With --ingest: where each document's passage texts start in `texts`. */
const docStart: number[] = [];
for await (const d of readCorpus(CORPUS)) {
  if (values.ingest) {
    // The texts the index embeds for this document's passages (index/engines/lance/rows.ts pageRows), and whole documents
    // for the ingest slice, until the slice holds n passages.
    docStart.push(texts.length);
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

/** The bare path as a function of a batch number (batches of `batch` texts in length order). */
let runSlice: ((part: string[]) => Promise<Float32Array[]>) | undefined;
async function bareBatches(): Promise<(i: number) => Promise<unknown>> {
  const run = await bareSession();
  runSlice = run;
  return (i) => run(byLength.slice(i * batch, (i + 1) * batch));
}

if (values['bare-serve']) {
  // Internal: answers each stdin line (a batch number; `slice A B`, the passage texts A..B-1 in length-sorted batches;
  // or `ready` once the session is made, with its load time) with its wall and CPU ms.
  const { createInterface } = await import('node:readline');
  const load0 = performance.now();
  const runBatch = await bareBatches();
  const loadMs = performance.now() - load0;
  for await (const line of createInterface({ input: process.stdin })) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const [op, a, b] = line.split(' ');
    if (op === 'slice') {
      const part = texts.slice(Number(a), Number(b)).sort((x, y) => x.length - y.length);
      for (let i = 0; i < part.length; i += batch) await runSlice!(part.slice(i, i + batch));
    } else if (op !== 'ready') await runBatch(Number(line));
    const cpu = process.cpuUsage(cpu0);
    const rss = process.memoryUsage().rss;
    console.log(JSON.stringify({ ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, loadMs, rss }));
  }
  process.exit(0);
}

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

if (values.ingest) {
  // The slice cut into `rounds` parts of whole documents, each part about n / rounds passages.
  const parts: { docs: CorpusDoc[]; from: number; to: number }[] = [];
  for (let r = 0, d = 0; r < rounds && d < docs.length; r++) {
    const from = docStart[d]!;
    const goal = Math.round(((r + 1) * texts.length) / rounds);
    const start = d;
    while (d < docs.length && (d === start || docStart[d]! < goal || r === rounds - 1)) d++;
    parts.push({ docs: docs.slice(start, d), from, to: d < docs.length ? docStart[d]! : texts.length });
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-ingest-bench-'));
  const { spawn } = await import('node:child_process');
  const { createInterface } = await import('node:readline');
  const { Writable } = await import('node:stream');
  const child = spawn(process.execPath, [...bareArgs(), '--bare-serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  type Reply = { ms: number; cpuMs: number; loadMs: number; rss: number };
  const ask = async (line: string): Promise<Reply> => {
    child.stdin.write(`${line}\n`);
    const next = await lines.next();
    if (next.done) throw new Error('the bare child exited');
    return JSON.parse(next.value) as Reply;
  };
  const bareLoadMs = (await ask('ready')).loadMs;
  let bareRssPeak = 0;
  // One round of svc ingest: its set-up ends when it prints `ingesting …` (after the model load and index open).
  const svcRound = async (r: number) => {
    const file = join(dir, `part${r}.jsonl`);
    writeFileSync(file, parts[r]!.docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
    let setup: { ms: number; cpuMs: number } | undefined;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const stderr = new Writable({
      write(chunk: Buffer, _enc, done) {
        if (!setup && chunk.toString().startsWith('ingesting ')) {
          const cpu = process.cpuUsage(cpu0);
          setup = { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
        }
        process.stderr.write(chunk);
        done();
      },
    });
    const io = {
      stdout: process.stdout,
      stderr,
      env: { SVC_MODEL_DIR: modelDir, SVC_MODEL: model, SVC_EMBED_THREADS: String(threads), SVC_EMBED_DTYPE: dtype },
    } as never;
    const { value: code, peakRss } = await withPeakRss(() =>
      ingestCommand(['--jsonl', file, '--data-dir', join(dir, 'data'), '--name', 'scifact', '--embedder', 'model'], io),
    );
    const cpu = process.cpuUsage(cpu0);
    if (code !== 0) throw new Error(`ingest failed (${code})`);
    if (!setup) throw new Error('ingest printed no `ingesting` line');
    const all = { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
    return { setup, ms: all.ms - setup.ms, cpuMs: all.cpuMs - setup.cpuMs, peakRss };
  };
  const rows: string[] = [];
  const sum = { svcMs: 0, svcCpu: 0, setupMs: 0, setupCpu: 0, bareMs: 0, bareCpu: 0, svcRss: 0 };
  const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
  for (let r = 0; r < parts.length; r++) {
    const p = parts[r]!;
    const count = p.to - p.from;
    let svc!: Awaited<ReturnType<typeof svcRound>>;
    let b!: Reply;
    if (r % 2 === 0) {
      svc = await svcRound(r);
      b = await ask(`slice ${p.from} ${p.to}`);
    } else {
      b = await ask(`slice ${p.from} ${p.to}`);
      svc = await svcRound(r);
    }
    sum.svcMs += svc.ms;
    sum.svcCpu += svc.cpuMs;
    sum.setupMs += svc.setup.ms;
    sum.setupCpu += svc.setup.cpuMs;
    sum.bareMs += b.ms;
    sum.bareCpu += b.cpuMs;
    sum.svcRss = Math.max(sum.svcRss, svc.peakRss);
    bareRssPeak = Math.max(bareRssPeak, b.rss);
    const row = `| ${r + 1} (${r % 2 === 0 ? 'svc first' : 'bare first'}) | ${count} | ${pct(b.ms / svc.ms)} | ${(count / (svc.ms / 1000)).toFixed(2)} / ${(count / (b.ms / 1000)).toFixed(2)} | ${(svc.cpuMs / 1000 / count).toFixed(3)} / ${(b.cpuMs / 1000 / count).toFixed(3)} | ${(svc.cpuMs / svc.ms).toFixed(2)} / ${(b.cpuMs / b.ms).toFixed(2)} | ${(svc.setup.ms / 1000).toFixed(1)} s (${(svc.setup.cpuMs / 1000).toFixed(1)} CPU s) |`;
    rows.push(row);
    console.log(`round done: ${row}`); // as it goes, in case a timeout stops the run
  }
  child.stdin.end();
  rmSync(dir, { recursive: true, force: true });
  const total = texts.length;
  const mib = (x: number) => (x / 2 ** 20).toFixed(0);
  console.log(
    `\nmodel ${model} (${dtype}), ${docs.length} SciFact documents = ${total} passages in ${parts.length} rounds (svc ingest of a part, bare on the same passage texts, order swapped each round), ONNX threads ${threads}, bare batch ${batch}, ${profile.maxTokens}-token window\n`,
  );
  console.log(
    '| round | passages | share of bare (wall) | passages/s svc / bare | CPU s per passage svc / bare | cores busy svc / bare | svc set-up (model load, index open) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
  console.log(
    `| all | ${total} | **${pct(sum.bareMs / sum.svcMs)}** (CPU: ${pct(sum.bareCpu / sum.svcCpu)}) | ${(total / (sum.svcMs / 1000)).toFixed(2)} / ${(total / (sum.bareMs / 1000)).toFixed(2)} | ${(sum.svcCpu / 1000 / total).toFixed(3)} / ${(sum.bareCpu / 1000 / total).toFixed(3)} | ${(sum.svcCpu / sum.svcMs).toFixed(2)} / ${(sum.bareCpu / sum.bareMs).toFixed(2)} | ${(sum.setupMs / 1000 / parts.length).toFixed(1)} s a round (${(sum.setupCpu / 1000 / parts.length).toFixed(1)} CPU s) |`,
  );
  console.log(
    `\nsvc passages/s and CPU leave out each round's set-up (the model loaded again by every \`svc ingest\`); with it, svc ingest's CPU per passage is ${((sum.svcCpu + sum.setupCpu) / 1000 / total).toFixed(3)} s. Bare session load (once, with a warm-up batch): ${(bareLoadMs / 1000).toFixed(1)} s. Peak RSS: svc ${mib(sum.svcRss)} MiB, bare ${mib(bareRssPeak)} MiB.`,
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
