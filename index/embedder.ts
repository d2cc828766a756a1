/**
 * Passage and query embeddings.
 *
 * The real embedder runs @huggingface/transformers (onnxruntime-node) in a worker thread so inference never blocks
 * the event loop that serves requests; texts are batched and the ONNX thread count is explicit. Models are read
 * from a local folder only (no download). When the weights file is absent, `createEmbedder` returns null with a
 * logged reason and the service ranks with BM25 only.
 *
 * `createHashingEmbedder` is a deterministic stand-in (feature hashing of word tokens): no semantics, used by unit
 * tests and benchmarks. Rankings built on it are reported with a `-hashing` suffix, never as plain hybrid.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';

/** What produces vectors. */
export interface Embedder {
  /** Vector length. */
  readonly dim: number;
  /** Identifies the vector space (vectors of different ids are never compared). */
  readonly modelId: string;
  /** `model`: a real sentence-embedding model; `hashing-stand-in`: deterministic token hashing, no semantics. */
  readonly kind: 'model' | 'hashing-stand-in';
  /** L2-normalised vectors, one per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** Options of the real embedder. */
export interface EmbedderOptions {
  /** Folder holding model folders in transformers.js layout (e.g. `<modelDir>/all-MiniLM-L6-v2/onnx/...`). */
  readonly modelDir: string;
  /** Model folder name. @default "all-MiniLM-L6-v2" */
  readonly modelName?: string;
  /** ONNX intra-op threads. @default 1 */
  readonly threads?: number;
  /** Texts per inference call. @default 32 */
  readonly batchSize?: number;
  readonly log?: Pick<Logger, 'info' | 'warn'>;
}

/** The weights file the real embedder loads (quantised int8, `dtype: 'q8'` in transformers.js). */
export function weightsPath(modelDir: string, modelName = 'all-MiniLM-L6-v2'): string {
  return join(modelDir, modelName, 'onnx', 'model_quantized.onnx');
}

/**
 * Checks the weights file against the LFS pointer beside it (size and sha256), when the pointer exists.
 * Returns null when the file is usable, or the reason it is not.
 */
export function checkWeights(modelDir: string, modelName = 'all-MiniLM-L6-v2', opts: { verifyHash?: boolean } = {}): string | null {
  const file = weightsPath(modelDir, modelName);
  if (!existsSync(file)) return `weights file absent: ${file}`;
  const pointer = `${file}.lfs-pointer.txt`;
  if (!existsSync(pointer)) return null;
  const text = readFileSync(pointer, 'utf8');
  const size = /size (\d+)/.exec(text)?.[1];
  const oid = /sha256:([0-9a-f]{64})/.exec(text)?.[1];
  const st = statSync(file);
  if (size && st.size !== Number(size)) return `weights file has ${st.size} bytes, pointer says ${size}`;
  if (oid && opts.verifyHash !== false) {
    const h = createHash('sha256').update(readFileSync(file)).digest('hex');
    if (h !== oid) return `weights sha256 ${h} does not match pointer ${oid}`;
  }
  return null;
}

type WorkerReply = { id: number; ok: true; vectors: Float32Array[] } | { id: number; ok: false; error: string } | { ready: true; dim: number } | { ready: false; error: string };

/**
 * Starts the real embedder in a worker thread. Resolves to null (with a logged reason) when the weights are
 * absent or do not match their pointer, or when the model fails to load.
 */
export async function createEmbedder(opts: EmbedderOptions): Promise<Embedder | null> {
  const modelName = opts.modelName ?? 'all-MiniLM-L6-v2';
  const problem = checkWeights(opts.modelDir, modelName);
  if (problem) {
    opts.log?.warn({ reason: problem }, 'embedder unavailable: ranking falls back to BM25');
    return null;
  }
  const threads = opts.threads ?? 1;
  const batchSize = opts.batchSize ?? 32;
  // The worker is JavaScript once built; from source (tsx) it is TypeScript, and a worker does not inherit the
  // parent's tsx loader, so a one-line bootstrap registers tsx inside the worker before importing it.
  const here = new URL('.', import.meta.url);
  const jsUrl = new URL('embedder-worker.js', here);
  const tsUrl = new URL('embedder-worker.ts', here);
  const workerData = { modelDir: opts.modelDir, modelName, threads };
  let worker: Worker;
  if (!existsSync(jsUrl) && existsSync(tsUrl)) {
    const api = import.meta.resolve('tsx/esm/api');
    const code = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(tsUrl.href)}); })`;
    worker = new Worker(code, { eval: true, workerData });
  } else {
    worker = new Worker(jsUrl, { workerData });
  }
  worker.unref();
  const ready = await new Promise<{ dim: number } | string>((resolve) => {
    const onMsg = (m: WorkerReply) => {
      if ('ready' in m) {
        worker.off('message', onMsg);
        resolve(m.ready ? { dim: m.dim } : m.error);
      }
    };
    worker.on('message', onMsg);
    worker.once('error', (e) => resolve(String(e)));
  });
  if (typeof ready === 'string') {
    opts.log?.warn({ reason: ready }, 'embedder failed to load: ranking falls back to BM25');
    await worker.terminate();
    return null;
  }
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
  worker.on('message', (m: WorkerReply) => {
    if (!('id' in m)) return;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.vectors);
    else p.reject(new Error(`embedder: ${m.error}`));
  });
  worker.on('error', (e) => {
    for (const p of pending.values()) p.reject(e instanceof Error ? e : new Error(String(e)));
    pending.clear();
  });
  const call = (texts: string[]) =>
    new Promise<Float32Array[]>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, texts });
    }).finally(() => {
      if (pending.size === 0) worker.unref();
    });
  opts.log?.info({ model: modelName, threads, dim: ready.dim }, 'embedder ready');
  return {
    dim: ready.dim,
    modelId: `${modelName}/q8`,
    kind: 'model',
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) out.push(...(await call(texts.slice(i, i + batchSize).map((t) => t || ' '))));
      return out;
    },
    async close() {
      await worker.terminate();
    },
  };
}

function fnv1a(s: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Deterministic stand-in: folded word tokens and adjacent word pairs hashed into `dim` signed buckets, then
 * L2-normalised. Texts sharing words get close vectors; there is no semantics beyond that.
 */
export function createHashingEmbedder(dim = 256): Embedder {
  const embedOne = (text: string): Float32Array => {
    const v = new Float32Array(dim);
    const toks = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const add = (f: string, w: number) => {
      const h = fnv1a(f, 0);
      v[h % dim]! += (h & 0x80000000 ? -1 : 1) * w;
    };
    for (let i = 0; i < toks.length; i++) {
      add(toks[i]!, 1);
      if (i + 1 < toks.length) add(`${toks[i]} ${toks[i + 1]}`, 0.5);
    }
    let n = 0;
    for (const x of v) n += x * x;
    n = Math.sqrt(n);
    if (n === 0) v[0] = 1;
    else for (let i = 0; i < dim; i++) v[i]! /= n;
    return v;
  };
  return {
    dim,
    modelId: `hashing-stand-in-${dim}`,
    kind: 'hashing-stand-in',
    async embed(texts) {
      return texts.map(embedOne);
    },
    async close() {},
  };
}
