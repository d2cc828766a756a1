/**
 * Worker thread of the real embedder (see embedder.ts): loads the sentence-embedding model from a local folder
 * with remote downloads disabled, then answers `{ id, texts }` messages with mean-pooled, L2-normalised vectors.
 *
 * Tokenisation is done here rather than by transformers.js' feature-extraction pipeline because the pipeline
 * truncates at the tokenizer's `model_max_length` (512 in the shipped config) and, when it truncates, drops the
 * closing `[SEP]`. sentence-transformers encodes all-MiniLM-L6-v2 with a 256-token window that ends in `[SEP]`;
 * so do we (`maxTokens`), which keeps long passages within 1e-3 of the reference embedding
 * (shared/data/models/PROVENANCE.md: cosine 0.781 with the pipeline's default on a 756-token text).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AutoModel, AutoTokenizer, env, mean_pooling, type Tensor } from '@huggingface/transformers';

interface Init {
  modelDir: string;
  modelName: string;
  threads: number;
  dtype: 'q8' | 'fp32';
  maxTokens: number;
}

const init = workerData as Init;
const port = parentPort;
if (!port) throw new Error('embedder-worker must run in a worker thread');

env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = init.modelDir.endsWith('/') ? init.modelDir : `${init.modelDir}/`;

try {
  const tokenizer = await AutoTokenizer.from_pretrained(init.modelName);
  const model = await AutoModel.from_pretrained(init.modelName, {
    dtype: init.dtype,
    device: 'cpu',
    session_options: { intraOpNumThreads: init.threads, interOpNumThreads: 1 },
  });
  const sepId = BigInt(tokenizer.sep_token_id ?? 102);
  const embed = async (texts: string[]): Promise<Float32Array[]> => {
    const enc = tokenizer(texts, { padding: true, truncation: true, max_length: init.maxTokens }) as Record<string, Tensor>;
    const ids = enc.input_ids!;
    const mask = enc.attention_mask!;
    const [rows, cols] = ids.dims as [number, number];
    // A truncated row is exactly `cols` long and lost its [SEP]: put it back in the last position.
    const idData = ids.data as BigInt64Array;
    const maskData = mask.data as BigInt64Array;
    for (let r = 0; r < rows; r++) {
      const last = r * cols + cols - 1;
      if (maskData[last] === 1n && idData[last] !== sepId) idData[last] = sepId;
    }
    const out = (await model(enc)) as { last_hidden_state: Tensor };
    const pooled = mean_pooling(out.last_hidden_state, mask).normalize(2, -1);
    const dim = pooled.dims[1] ?? 0;
    const data = pooled.data as Float32Array;
    const vectors: Float32Array[] = [];
    for (let i = 0; i < rows; i++) vectors.push(data.slice(i * dim, (i + 1) * dim));
    return vectors;
  };
  const probe = await embed(['probe']);
  port.postMessage({ ready: true, dim: probe[0]?.length ?? 0 });
  port.on('message', (m: { id: number; texts: string[] }) => {
    void (async () => {
      try {
        port.postMessage({ id: m.id, ok: true, vectors: await embed(m.texts) });
      } catch (e) {
        port.postMessage({ id: m.id, ok: false, error: e instanceof Error ? e.message : String(e) });
      }
    })();
  });
} catch (e) {
  port.postMessage({ ready: false, error: e instanceof Error ? e.message : String(e) });
}
