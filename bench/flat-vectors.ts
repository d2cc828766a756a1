/**
 * The in-process vector arm (index/engines/memory/flat-vectors.ts): milliseconds per `nearestDocs` query over n vectors of `dim`
 * dimensions, k = 300 (retrieval's ARM_DEPTH), every document live: without a floor (the f32 scan of every row, then
 * the selection), with retrieval's similarity floor of 0.2 (the 16-bit screen, the exact scores of what it keeps, the
 * selection), and the screen alone (a floor above every cosine). Vectors are seeded pseudo-random around a shared
 * direction, so that about a quarter of them pass the floor, as on the SciFact index (unit length is not needed:
 * cosine normalises). No I/O; bounded in count.
 *
 *   node --import tsx bench/flat-vectors.ts [--queries 500]
 */
import { parseArgs } from 'node:util';
import { FlatVectors } from '../index/engines/memory/flat-vectors.js';

const { values } = parseArgs({ options: { queries: { type: 'string', default: '500' } } });
const queries = Math.min(Math.max(Number(values.queries), 10), 100_000);
/** retrieval.ts' VECTOR_MIN_SIMILARITY. */
const FLOOR = 0.2;

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
  const base = Float32Array.from({ length: dim }, next);
  const around = () => {
    const c = 0.3 + 0.2 * next();
    return Float32Array.from(base, (x) => c * x + 0.75 * next());
  };
  for (let d = 0; d < n; d++) fv.set(d, around());
  const qs = Array.from({ length: 16 }, around);
  const live = () => true;
  const time = (min: number | undefined) => {
    for (let i = 0; i < 50; i++) fv.nearestDocs(qs[i % qs.length]!, 300, live, min);
    const t = performance.now();
    for (let i = 0; i < queries; i++) fv.nearestDocs(qs[i % qs.length]!, 300, live, min);
    return (performance.now() - t) / queries;
  };
  let passing = 0;
  for (const q of qs) passing += fv.nearestDocs(q, n, live, FLOOR).n;
  const all = time(undefined);
  const floored = time(FLOOR);
  const screen = time(2);
  rows.push(
    `| ${n} | ${dim} | ${((n * dim * 4) / 2 ** 20).toFixed(1)} | ${((100 * passing) / qs.length / n).toFixed(0)} % | ${all.toFixed(3)} | ${floored.toFixed(3)} | ${screen.toFixed(3)} |`,
  );
}
console.log(`FlatVectors.nearestDocs, k = 300, ${queries} queries per row; node ${process.version}\n`);
console.log(
  `| vectors | dim | MiB | pass the floor ${FLOOR} | ms, no floor | ms, floor ${FLOOR} | ms, the 16-bit screen alone |\n|---:|---:|---:|---:|---:|---:|---:|`,
);
console.log(rows.join('\n'));
