/**
 * The embedding worker (see embedder.ts `EmbeddingHost`): loads sentence-embedding models from local folders with
 * remote downloads disabled, answers `embed` messages with mean-pooled, L2-normalised vectors, and unloads models.
 *
 * Tokenisation is done here rather than by transformers.js' feature-extraction pipeline because the pipeline
 * truncates at the tokenizer's `model_max_length` (512 in the shipped config) and, when it truncates, drops the
 * closing `[SEP]` (`</s>` for E5). sentence-transformers encodes all-MiniLM-L6-v2 with a 256-token window that ends
 * in `[SEP]`; so do we (`maxTokens`, each model's own: model-profiles.ts), which keeps long passages within 1e-3 of the reference embedding
 * (shared/data/models/PROVENANCE.md: cosine 0.781 with the pipeline's default on a 756-token text).
 */
import { join } from 'node:path';
import { parentPort, type MessagePort } from 'node:worker_threads';
import { AutoModel, AutoTokenizer, env, type Tensor } from '@huggingface/transformers';
import type { EmbedderDtype } from './model-profiles.js';
import { splitMetaspaceWords } from './metaspace.js';
import { meanPoolNormalize } from './pooling.js';

interface Load {
  op: 'load';
  id: number;
  handle: number;
  modelDir: string;
  modelName: string;
  threads: number;
  dtype: EmbedderDtype;
  maxTokens: number;
}
type Message =
  | Load
  | { op: 'embed'; id: number; handle: number; interactive?: boolean; texts: string[] }
  | { op: 'unload'; id: number; handle: number };

if (!parentPort) throw new Error('embedder-worker must run in a worker thread');
const port: MessagePort = parentPort;

env.allowRemoteModels = false;
env.allowLocalModels = true;
// No file cache: transformers.js keys it by "<model name>/<file>", so two model folders with the same model name
// would be served each other's weights (seen: a corrupt test copy answered for the real model).
env.useFSCache = false;
env.useBrowserCache = false;

type Embed = (texts: string[]) => Promise<Float32Array[]>;

const models = new Map<number, { embed: Embed; dispose: () => Promise<unknown> }>();

async function load(m: Load): Promise<number> {
  env.localModelPath = m.modelDir.endsWith('/') ? m.modelDir : `${m.modelDir}/`;
  const tokenizer = await AutoTokenizer.from_pretrained(m.modelName);
  splitMetaspaceWords(tokenizer, join(m.modelDir, m.modelName, 'tokenizer.json'));
  const model = await AutoModel.from_pretrained(m.modelName, {
    dtype: m.dtype,
    device: 'cpu',
    session_options: { intraOpNumThreads: m.threads, interOpNumThreads: 1 },
  });
  // The closing token of this vocabulary ([SEP] in BERT's, </s> in XLM-R's).
  const sepToken = tokenizer.sep_token_id;
  if (sepToken === undefined || sepToken === null) throw new Error(`${m.modelName}: the tokenizer names no separator token`);
  const sepId = BigInt(sepToken);
  const embed: Embed = async (texts) => {
    const enc = tokenizer(texts, { padding: true, truncation: true, max_length: m.maxTokens }) as Record<string, Tensor>;
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
    const hidden = out.last_hidden_state;
    const vectors = meanPoolNormalize(hidden.data as Float32Array, hidden.dims, maskData);
    hidden.dispose();
    return vectors;
  };
  const probe = await embed(['probe']);
  models.set(m.handle, { embed, dispose: () => model.dispose() });
  return probe[0]?.length ?? 0;
}

async function handle(m: Message): Promise<void> {
  try {
    if (m.op === 'load') port.postMessage({ id: m.id, ok: true, dim: await load(m) });
    else if (m.op === 'embed') {
      const model = models.get(m.handle);
      if (!model) throw new Error('model not loaded');
      port.postMessage({ id: m.id, ok: true, vectors: await model.embed(m.texts) });
    } else {
      const model = models.get(m.handle);
      models.delete(m.handle);
      await model?.dispose();
      port.postMessage({ id: m.id, ok: true });
    }
  } catch (e) {
    port.postMessage({ id: m.id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
}

// Messages are handled one at a time (inference already uses the model's threads), in order within each lane:
// interactive embeds (a query's) first, then everything else (indexing batches, loads, unloads). A query thus waits
// at most for the batch being inferred, however many indexing batches are queued.
const interactive: Message[] = [];
const bulk: Message[] = [];
let pumping = false;
async function pump(): Promise<void> {
  if (pumping) return;
  pumping = true;
  try {
    for (let m = interactive.shift() ?? bulk.shift(); m; m = interactive.shift() ?? bulk.shift()) await handle(m);
  } finally {
    pumping = false;
  }
}
port.on('message', (m: Message) => {
  (m.op === 'embed' && m.interactive === true ? interactive : bulk).push(m);
  void pump();
});
