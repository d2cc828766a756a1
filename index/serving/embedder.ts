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
import { basename, dirname, join } from 'node:path';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { LoopBudget } from '../../event-loop.js';
import { startModuleWorker } from '../../worker-thread.js';
import { DEFAULT_MODEL, WEIGHTS_FILE, defaultDtype, profileFor, resolveModel, type EmbedderDtype } from './model-profiles.js';

export { EMBEDDER_DTYPES, type EmbedderDtype } from './model-profiles.js';

/** What produces vectors. */
export interface Embedder {
  /** Vector length. */
  readonly dim: number;
  /** Identifies the vector space (vectors of different ids are never compared). */
  readonly modelId: string;
  /** `model`: a real sentence-embedding model; `hashing-stand-in`: deterministic token hashing, no semantics. */
  readonly kind: 'model' | 'hashing-stand-in';
  /** L2-normalised vectors, one per text, in order. */
  embed(texts: readonly string[], opts?: EmbedOptions): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** How one `embed` call is scheduled. */
export interface EmbedOptions {
  /**
   * A caller is waiting on it (a query's embedding): it goes ahead of the bulk batches queued for the embedding
   * worker, so it waits at most for the batch being inferred. @default false (bulk: indexing)
   */
  readonly interactive?: boolean;
  /**
   * What the texts are, for models that mark queries and passages differently (model-profiles.ts prefixes).
   * @default 'query' when `interactive` (a caller waiting is a search), else 'passage'
   */
  readonly input?: 'query' | 'passage';
}

/**
 * Batches of one `embed` call sent to the embedding worker before the first answer is back: the worker always has
 * the next batch queued, so its ONNX threads never wait for this thread to turn its event loop (an ingest's
 * analysis and Arrow building run here).
 */
export const EMBED_PIPELINE_DEPTH = 2;

/** Options of the real embedder. */
export interface EmbedderOptions {
  /** Folder holding model folders in transformers.js layout (e.g. `<modelDir>/all-MiniLM-L6-v2/onnx/...`). */
  readonly modelDir: string;
  /** Model folder name; it must have a profile in model-profiles.ts. @default "multilingual-e5-small" (DEFAULT_MODEL) */
  readonly modelName?: string;
  /** ONNX intra-op threads. @default the machine's cores */
  readonly threads?: number;
  /** Texts per inference call. @default 32 */
  readonly batchSize?: number;
  /** Weights: `q8` (int8, `model_quantized.onnx`), `fp32` (`model.onnx`) or `q4` (`model_q4.onnx`). @default the profile's first the folder holds */
  readonly dtype?: EmbedderDtype;
  /** Token window. @default the profile's (the model's own window) */
  readonly maxTokens?: number;
  readonly log?: Pick<Logger, 'info' | 'warn'>;
}

/** The dtype loaded when none is asked for: the profile's choice (resolveModel), else int8. */
function dtypeOf(modelDir: string, modelName: string): EmbedderDtype {
  const known = profileFor(modelName);
  return known ? defaultDtype(modelDir, modelName, known.profile) : 'q8';
}

/** The weights file the real embedder loads for `dtype`. */
export function weightsPath(modelDir: string, modelName = DEFAULT_MODEL, dtype: EmbedderDtype = dtypeOf(modelDir, modelName)): string {
  return join(modelDir, modelName, 'onnx', WEIGHTS_FILE[dtype]);
}

/**
 * Checks the weights file: present, and equal to its line in `onnx/SHA256SUMS` (sha256sum format) when that file
 * exists. Returns null when the file is usable, or the reason it is not.
 */
export function checkWeights(
  modelDir: string,
  modelName = DEFAULT_MODEL,
  opts: { verifyHash?: boolean; dtype?: EmbedderDtype } = {},
): string | null {
  const file = weightsPath(modelDir, modelName, opts.dtype);
  if (!existsSync(file)) return `weights file absent: ${file}`;
  if (statSync(file).size === 0) return `weights file is empty: ${file}`;
  const sums = join(dirname(file), 'SHA256SUMS');
  if (!existsSync(sums) || opts.verifyHash === false) return null;
  const name = basename(file);
  const line = readFileSync(sums, 'utf8')
    .split(/\r?\n/)
    .map((l) => /^([0-9a-f]{64})\s+\*?(.+)$/.exec(l.trim()))
    .find((m) => m?.[2] === name);
  if (!line) return `${name} is not listed in ${sums}`;
  const h = createHash('sha256').update(readFileSync(file)).digest('hex');
  if (h !== line[1]) return `weights sha256 ${h} does not match SHA256SUMS (${line[1]})`;
  return null;
}

type HostReply = { id: number; ok: true; vectors?: Float32Array[]; dim?: number } | { id: number; ok: false; error: string };

/**
 * The process's embedding host: ONE worker thread that loads models, embeds and unloads them, and lives as long as
 * the process (unref'd while idle, so it never keeps the process alive). One worker rather than one per embedder
 * because onnxruntime's native addon registers itself only when its shared library is first opened: after the
 * worker that opened it exits, another worker in the same process finds it loaded but unregistered ("Module did not
 * self-register"), and tearing a worker down while the library is held elsewhere was seen to abort the process.
 */
class EmbeddingHost {
  static #instance: EmbeddingHost | null = null;
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (m: HostReply & { ok: true }) => void; reject: (e: Error) => void }>();
  #nextId = 1;

  static get(): EmbeddingHost {
    return (EmbeddingHost.#instance ??= new EmbeddingHost());
  }

  private constructor() {
    this.#worker = startModuleWorker(import.meta.url, 'embedder-worker');
    this.#worker.unref();
    this.#worker.on('message', (m: HostReply) => {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) this.#worker.unref();
      if (m.ok) p.resolve(m);
      else p.reject(new Error(m.error));
    });
    const fail = (e: unknown) => {
      for (const p of this.#pending.values()) p.reject(e instanceof Error ? e : new Error(String(e)));
      this.#pending.clear();
      EmbeddingHost.#instance = null; // a dead host is replaced at the next use
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', () => fail(new Error('embedding worker exited')));
  }

  call(msg: Record<string, unknown>): Promise<HostReply & { ok: true }> {
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#pending.set(id, { resolve, reject });
      this.#worker.ref();
      this.#worker.postMessage({ ...msg, id });
    });
  }
}

let nextModelHandle = 1;

/**
 * Loads the real embedder in the process's embedding worker. Resolves to null (with a logged reason) when the
 * weights are absent or do not match SHA256SUMS, or when the model fails to load. Throws a ConfigError (before
 * loading anything) when `modelName` is not a model folder svc knows, naming the ones `modelDir` holds.
 */
export async function createEmbedder(opts: EmbedderOptions): Promise<Embedder | null> {
  const modelName = opts.modelName ?? DEFAULT_MODEL;
  const { profile, dtype } = resolveModel(opts.modelDir, modelName, opts.dtype);
  const problem = checkWeights(opts.modelDir, modelName, { dtype });
  if (problem) {
    opts.log?.warn({ reason: problem }, 'embedder unavailable: ranking falls back to BM25');
    return null;
  }
  const threads = opts.threads ?? availableParallelism();
  const batchSize = opts.batchSize ?? 32;
  const maxTokens = opts.maxTokens ?? profile.maxTokens;
  const handle = nextModelHandle++;
  const host = EmbeddingHost.get();
  let dim: number;
  try {
    const r = await host.call({ op: 'load', handle, modelDir: opts.modelDir, modelName, threads, dtype, maxTokens });
    dim = r.dim ?? 0;
    if (dim !== profile.dim) throw new Error(`the model answers ${dim}-dimension vectors, its profile says ${profile.dim}`);
  } catch (e) {
    await host.call({ op: 'unload', handle }).catch(() => undefined);
    opts.log?.warn({ reason: e instanceof Error ? e.message : String(e) }, 'embedder failed to load: ranking falls back to BM25');
    return null;
  }
  opts.log?.info({ model: modelName, dtype, threads, maxTokens, dim, batchSize }, 'embedder ready');
  let closed = false;
  return {
    dim,
    // The vector space: model and precision (int8 and fp32 vectors agree closely, not exactly).
    modelId: `${modelName}/${dtype}`,
    kind: 'model',
    async embed(texts, eopts) {
      if (closed) throw new Error('embedder: closed');
      // Batches of similar length waste little on padding: embed in length order, answer in input order.
      const order = texts.map((t, i) => ({ i, n: t.length })).sort((a, b) => a.n - b.n);
      const out = new Array<Float32Array>(texts.length);
      const interactive = eopts?.interactive === true;
      const prefix = (eopts?.input ?? (interactive ? 'query' : 'passage')) === 'query' ? profile.queryPrefix : profile.passagePrefix;
      const send = async (part: typeof order) => {
        let r: HostReply & { ok: true };
        try {
          const batch = part.map((p) => prefix + (texts[p.i] || ' '));
          r = await EmbeddingHost.get().call({ op: 'embed', handle, interactive, texts: batch });
        } catch (e) {
          throw new Error(`embedder: ${e instanceof Error ? e.message : String(e)}`);
        }
        part.forEach((p, j) => (out[p.i] = r.vectors![j]!));
      };
      const window: Promise<void>[] = [];
      for (let s = 0; s < order.length; s += batchSize) {
        if (window.length >= EMBED_PIPELINE_DEPTH) await window.shift();
        const sent = send(order.slice(s, s + batchSize));
        sent.catch(() => undefined); // observed here; the error is thrown where it is awaited
        window.push(sent);
      }
      for (const sent of window) await sent;
      return out;
    },
    async close() {
      if (closed) return;
      closed = true;
      await EmbeddingHost.get()
        .call({ op: 'unload', handle })
        .catch(() => undefined);
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
  const e = hashingEmbedder(dim);
  HASHING.add(e);
  return e;
}

/** The embedders createHashingEmbedder made (not copies of them, whose `embed` may be anything). */
const HASHING = new WeakSet<Embedder>();

/**
 * Whether `e` is the hashing stand-in itself, a pure function of its dimension: another thread can rebuild it
 * (tools/search-worker.ts) instead of asking this one for each query vector.
 */
export const isHashingEmbedder = (e: Embedder): boolean => HASHING.has(e);

function hashingEmbedder(dim: number): Embedder {
  const embedOne = (text: string): Float32Array => {
    const v = new Float32Array(dim);
    const toks =
      text
        .normalize('NFKD')
        .replace(/\p{M}+/gu, '')
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu) ?? [];
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
      // Synchronous on the caller's thread: a long batch gives the event loop turns (event-loop.ts).
      const budget = new LoopBudget();
      const out: Float32Array[] = [];
      for (const t of texts) {
        out.push(embedOne(t));
        await budget.tick();
      }
      return out;
    },
    async close() {},
  };
}
