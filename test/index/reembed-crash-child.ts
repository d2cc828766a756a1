/**
 * Child process entry for test/index/reembed-resumes-after-kill.test.ts: re-embeds the index in `dir` with the hashing
 * stand-in in batches of 4 passages, printing "P <done>" after each batch; its third embedding call never returns, so
 * the parent can kill -9 it mid-pass at a known point. Not a test file itself.
 */
import { writeSync } from 'node:fs';
import { createHashingEmbedder, type Embedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';

const [dir] = process.argv.slice(2) as [string];
const base = createHashingEmbedder(32);
let calls = 0;
const stalling: Embedder = {
  ...base,
  modelId: base.modelId,
  embed: (texts, o) => (++calls >= 3 ? new Promise<never>(() => undefined) : base.embed(texts, o)),
};
const idx = await PassageIndex.open({ dir, embedder: stalling, reembed: true });
writeSync(1, 'ready\n');
await idx.reembed({ batchPassages: 4, onProgress: (p) => writeSync(1, `P ${p.done}\n`) });
