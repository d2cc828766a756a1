/**
 * Flat vectors read in place from one shared kernel memory (index/engines/memory/flat-vectors.ts `share`,
 * `fromShared`): instances over the block, on this thread and on a worker thread, answer exactly as an instance that
 * holds its own copy; a change on one copies the rows into its own memory first, so the block and the other readers
 * are untouched.
 */
import t from 'tap';
import { startModuleWorker } from '../../worker-thread.js';
import { FlatVectors, type SharedVectorBlock } from '../../index/engines/memory/flat-vectors.js';

const DIM = 16;
const ROWS = 300;

function rows(seed: number): Float32Array {
  let a = seed >>> 0;
  const out = new Float32Array(ROWS * DIM);
  for (let i = 0; i < out.length; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    out[i] = a / 2 ** 31 - 1;
  }
  out.fill(0, 7 * DIM, 8 * DIM); // a row without a vector
  return out;
}

const query = (i: number) => rows(1000 + i).subarray(0, DIM);
const answer = (v: FlatVectors, q: Float32Array, floor = -Infinity) => {
  const r = v.nearestDocs(q, 10, () => true, floor);
  return [...r.docs.subarray(0, r.n)].map((d, i) => `${d}:${r.distances[i]}`).join(' ');
};

t.test('instances over one shared block answer as an own copy, and a change copies first', async (t) => {
  const data = rows(7);
  const own = FlatVectors.create(DIM, 1000)!;
  t.ok(own.load(data));
  const block = FlatVectors.share(DIM, data)!;
  t.ok(block, 'the rows fit a shared block');
  t.equal(block.rows, ROWS);
  const a = FlatVectors.fromShared(block, 1000)!;
  const b = FlatVectors.fromShared(block, 1000)!;
  t.equal(a.block, block, 'a reads the block in place');
  t.same(a.exportRows(), data, "the block's rows are the loaded ones");
  for (let i = 0; i < 5; i++) {
    t.equal(answer(a, query(i)), answer(own, query(i)), `query ${i}: as the own copy`);
    t.equal(answer(b, query(i), 0.1), answer(own, query(i), 0.1), `query ${i} under a floor (the 16-bit screen): as the own copy`);
  }
  const before = new Float32Array(block.memory.buffer, block.rowsAt, ROWS * DIM).slice();
  // A change on a: its own memory from then on; b and the block keep the old rows.
  const moved = query(0);
  t.ok(a.set(3, moved));
  t.ok(own.set(3, moved));
  t.equal(a.block, null, 'a copied the rows before the change');
  t.same(new Float32Array(block.memory.buffer, block.rowsAt, ROWS * DIM), before, 'the shared rows are unchanged');
  t.equal(answer(a, moved), answer(own, moved), 'a answers with its change');
  t.match(answer(a, moved), /^3:/, 'the moved row is the nearest to itself');
  t.notMatch(answer(b, moved), /^3:/, 'b still reads the old row');
});

t.test('a worker thread reads the block posted to it in place', async (t) => {
  const data = rows(11);
  const block = FlatVectors.share(DIM, data)!;
  const own = FlatVectors.create(DIM, 1000)!;
  own.load(data);
  const q = query(3);
  const w = startModuleWorker(import.meta.url, 'flat-vectors-shared-worker', {
    workerData: { block: block satisfies SharedVectorBlock, q },
  });
  const got = await new Promise<{ shared: boolean; docs: number[]; distances: number[] }>((res, rej) => {
    w.once('message', res);
    w.once('error', rej);
  });
  await w.terminate();
  const want = own.nearestDocs(q, 10, () => true);
  t.equal(got.shared, true, 'the worker reads the shared memory');
  t.same(got.docs, [...want.docs.subarray(0, want.n)]);
  t.same(got.distances, [...want.distances.subarray(0, want.n)]);
});
