/** flat-vectors-shared.test.ts's worker thread: the nearest rows of the posted query, read from the posted shared block. */
import { parentPort, workerData } from 'node:worker_threads';
import { FlatVectors, type SharedVectorBlock } from '../../index/engines/memory/flat-vectors.js';

const { block, q } = workerData as { block: SharedVectorBlock; q: Float32Array };
const v = FlatVectors.fromShared(block, 1000)!;
const r = v.nearestDocs(q, 10, () => true);
parentPort!.postMessage({ shared: v.block !== null, docs: [...r.docs.subarray(0, r.n)], distances: [...r.distances.subarray(0, r.n)] });
