/**
 * Mean pooling over the tokens a sentence really has, then L2 normalisation: a sentence-transformers embedding from
 * the model's last hidden state.
 *
 * transformers.js' `mean_pooling` walks the hidden state dimension-first and converts the int64 mask per element, a
 * visible share of the embedding worker's time; this walks each token's row in memory order, reads the mask once per
 * token and skips padding. The sums are in float64 like theirs.
 */

/**
 * One unit vector per row of `hidden` (`[rows, cols, dim]`, row-major), averaged over the positions whose
 * `mask` (`[rows, cols]`) is non-zero. A row with no unmasked position gets a zero vector.
 */
export function meanPoolNormalize(hidden: Float32Array, dims: readonly number[], mask: BigInt64Array): Float32Array[] {
  const [rows, cols, dim] = dims as [number, number, number];
  if (hidden.length !== rows * cols * dim || mask.length !== rows * cols) throw new Error('meanPoolNormalize: shape mismatch');
  const sum = new Float64Array(dim);
  const out: Float32Array[] = [];
  for (let r = 0; r < rows; r++) {
    sum.fill(0);
    let count = 0;
    for (let j = 0; j < cols; j++) {
      if (mask[r * cols + j] === 0n) continue;
      count++;
      const base = (r * cols + j) * dim;
      for (let k = 0; k < dim; k++) sum[k]! += hidden[base + k]!;
    }
    const v = new Float32Array(dim);
    if (count > 0) {
      // The mean in float32 (what the model's pipeline hands to its normaliser), then divided by its norm.
      for (let k = 0; k < dim; k++) v[k] = sum[k]! / count;
      let norm = 0;
      for (let k = 0; k < dim; k++) norm += v[k]! * v[k]!;
      norm = Math.sqrt(norm);
      if (norm > 0) for (let k = 0; k < dim; k++) v[k] = v[k]! / norm;
    }
    out.push(v);
  }
  return out;
}
