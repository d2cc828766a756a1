/**
 * The in-process vector arm (index/flat-vectors.ts): milliseconds per `nearestDocs` query over n vectors of `dim`
 * dimensions, k = 300 (retrieval's ARM_DEPTH), every document live, and the share of it spent in the SIMD scan alone.
 * Vectors are seeded pseudo-random (unit length is not needed: cosine normalises). No I/O; bounded in count.
 *
 *   node --import tsx bench/flat-vectors.ts [--queries 500]
 */
import { parseArgs } from 'node:util';
import { FlatVectors } from '../index/flat-vectors.js';

const { values } = parseArgs({ options: { queries: { type: 'string', default: '500' } } });
const queries = Math.min(Math.max(Number(values.queries), 10), 100_000);

/** xorshift32 in [-1, 1). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 31 - 1;
  };
}

const rows: string[] = [];
for (const [n, dim] of [
  [5_556, 256], // the SciFact index with the hashing stand-in (bench/load.ts)
  [5_556, 384], // the same with all-MiniLM-L6-v2
  [21_000, 384], // near FLAT_VECTOR_BYTES (32 MiB)
] as const) {
  const next = rng(n * 31 + dim);
  const fv = FlatVectors.create(dim, n)!;
  for (let d = 0; d < n; d++) fv.set(d, Float32Array.from({ length: dim }, next));
  const qs = Array.from({ length: 16 }, () => Float32Array.from({ length: dim }, next));
  const live = () => true;
  for (let i = 0; i < 50; i++) fv.nearestDocs(qs[i % qs.length]!, 300, live);
  let t = performance.now();
  for (let i = 0; i < queries; i++) fv.nearestDocs(qs[i % qs.length]!, 300, live);
  const nearestMs = (performance.now() - t) / queries;
  // The scan alone: a similarity floor above every cosine leaves nothing to select.
  t = performance.now();
  for (let i = 0; i < queries; i++) fv.nearestDocs(qs[i % qs.length]!, 300, live, 2);
  const scanMs = (performance.now() - t) / queries;
  rows.push(`| ${n} | ${dim} | ${((n * dim * 4) / 2 ** 20).toFixed(1)} | ${nearestMs.toFixed(3)} | ${scanMs.toFixed(3)} |`);
}
console.log(`FlatVectors.nearestDocs, k = 300, ${queries} queries per row; node ${process.version}\n`);
console.log('| vectors | dim | MiB | ms per query | of which scan + norms ms |\n|---:|---:|---:|---:|---:|');
console.log(rows.join('\n'));
