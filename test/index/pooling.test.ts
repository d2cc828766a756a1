import t from 'tap';
import { Tensor, mean_pooling } from '@huggingface/transformers';
import { meanPoolNormalize } from '../../index/serving/pooling.js';

// A deterministic pseudo-random hidden state (no Math.random: a failure must reproduce).
function hiddenState(rows: number, cols: number, dim: number): Float32Array {
  const a = new Float32Array(rows * cols * dim);
  let x = 12345;
  for (let i = 0; i < a.length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    a[i] = (x / 2 ** 32 - 0.5) * 4;
  }
  return a;
}

t.test('meanPoolNormalize equals transformers.js mean_pooling + normalize on padded batches', async (t) => {
  const [rows, cols, dim] = [4, 7, 384];
  const hidden = hiddenState(rows, cols, dim);
  const lengths = [7, 3, 1, 5]; // padded rows, as a length-sorted tokenizer batch has
  const mask = new BigInt64Array(rows * cols);
  lengths.forEach((n, r) => mask.fill(1n, r * cols, r * cols + n));
  const ours = meanPoolNormalize(hidden, [rows, cols, dim], mask);
  const ref = mean_pooling(new Tensor('float32', hidden, [rows, cols, dim]), new Tensor('int64', mask, [rows, cols])).normalize(2, -1);
  const refData = ref.data as Float32Array;
  t.equal(ours.length, rows);
  let worst = 0;
  for (let r = 0; r < rows; r++) {
    t.equal(ours[r]!.length, dim);
    for (let k = 0; k < dim; k++) worst = Math.max(worst, Math.abs(ours[r]![k]! - refData[r * dim + k]!));
  }
  t.ok(worst < 1e-6, `largest difference from the library's pooling ${worst.toExponential(2)}`);
  // Padding is ignored: the row of length 1 is its first token's vector, normalised.
  const first = hidden.subarray(2 * cols * dim, 2 * cols * dim + dim);
  const n = Math.hypot(...first);
  t.ok(Math.abs(ours[2]![0]! - first[0]! / n) < 1e-6, 'a one-token row is that token, normalised');
  t.ok(Math.abs(ours[0]!.reduce((s, v) => s + v * v, 0) - 1) < 1e-5, 'unit length');
});

t.test('meanPoolNormalize: a fully masked row is a zero vector; a wrong shape is refused', async (t) => {
  const hidden = hiddenState(2, 3, 4);
  const mask = new BigInt64Array([1n, 1n, 0n, 0n, 0n, 0n]);
  const [a, b] = meanPoolNormalize(hidden, [2, 3, 4], mask);
  t.ok(a!.some((v) => v !== 0));
  t.same(Array.from(b!), [0, 0, 0, 0]);
  t.throws(() => meanPoolNormalize(hidden, [2, 3, 5], mask), /shape mismatch/);
  t.throws(() => meanPoolNormalize(hidden, [2, 3, 4], new BigInt64Array(5)), /shape mismatch/);
});
