/**
 * Worker thread of the real embedder (see embedder.ts): loads the sentence-embedding model from a local folder
 * with remote downloads disabled, then answers `{ id, texts }` messages with mean-pooled, L2-normalised vectors.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { env, pipeline } from '@huggingface/transformers';

interface Init {
  modelDir: string;
  modelName: string;
  threads: number;
}

const init = workerData as Init;
const port = parentPort;
if (!port) throw new Error('embedder-worker must run in a worker thread');

env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = init.modelDir.endsWith('/') ? init.modelDir : `${init.modelDir}/`;

try {
  const extractor = await pipeline('feature-extraction', init.modelName, {
    dtype: 'q8',
    device: 'cpu',
    session_options: { intraOpNumThreads: init.threads, interOpNumThreads: 1 },
  });
  const probe = await extractor(['probe'], { pooling: 'mean', normalize: true });
  const dim = probe.dims[probe.dims.length - 1] ?? 0;
  port.postMessage({ ready: true, dim });
  port.on('message', (m: { id: number; texts: string[] }) => {
    void (async () => {
      try {
        const out = await extractor(m.texts, { pooling: 'mean', normalize: true });
        const data = out.data as Float32Array;
        const vectors: Float32Array[] = [];
        for (let i = 0; i < m.texts.length; i++) vectors.push(data.slice(i * dim, (i + 1) * dim));
        port.postMessage({ id: m.id, ok: true, vectors });
      } catch (e) {
        port.postMessage({ id: m.id, ok: false, error: e instanceof Error ? e.message : String(e) });
      }
    })();
  });
} catch (e) {
  port.postMessage({ ready: false, error: e instanceof Error ? e.message : String(e) });
}
