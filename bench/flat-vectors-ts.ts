/**
 * Issue 42: is the WebAssembly kernel of index/engines/memory/flat-vectors.ts worth keeping over plain TypeScript? The exact k-NN
 * scan where it is used (`nearestDocs`, k = 300, every document live, no floor), over n vectors of `dim` dimensions:
 * FlatVectors as it is, against the same scan written in TypeScript (dot products over a Float32Array with four
 * accumulators, the same cosine score, the same selection: `kthLargest` then the score order). Milliseconds per query,
 * and the ratio. The TS answer is checked against the WASM one (the same documents). No I/O.
 *
 *   node --import tsx bench/flat-vectors-ts.ts [--rows 100000] [--dim 384] [--queries 50]
 */
import { parseArgs } from 'node:util';
import { FlatVectors } from '../index/engines/memory/flat-vectors.js';
import { orderByScore } from '../index/retrieval/score-sort.js';
import { kthLargest } from '../index/engines/memory/top-k.js';
import { mulberry32 } from './synthetic.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    dim: { type: 'string', default: '384' },
    queries: { type: 'string', default: '50' },
  },
});
const n = Math.min(Math.max(Number(values.rows), 1000), 200_000);
const dim = Number(values.dim);
const queries = Math.min(Math.max(Number(values.queries), 5), 1000);
const K = 300;

/** Uniform in [-1, 1), seeded (synthetic.ts' generator). */
function rng(seed: number): () => number {
  const u = mulberry32(seed);
  return () => 2 * u() - 1;
}

const next = rng(n * 31 + dim);
const base = Float32Array.from({ length: dim }, next);
const around = () => {
  const c = 0.3 + 0.2 * next();
  return Float32Array.from(base, (x) => c * x + 0.75 * next());
};
const fv = FlatVectors.create(dim, n)!;
const rows = new Float32Array(n * dim);
const norms = new Float32Array(n);
for (let d = 0; d < n; d++) {
  const v = around();
  fv.set(d, v);
  rows.set(v, d * dim);
  let s = 0;
  for (let i = 0; i < dim; i++) s += v[i]! * v[i]!;
  norms[d] = Math.sqrt(s);
}
const qs = Array.from({ length: 16 }, around);

const cand = new Float64Array(n);
const docs = new Uint32Array(n);
const sel = new Float64Array(n);
/** The plain TypeScript scan: every row's cosine score, then the k best (nearest first), as nearestDocs does. */
function nearestTs(q: Float32Array, k: number): Uint32Array {
  let qq = 0;
  for (let i = 0; i < dim; i++) qq += q[i]! * q[i]!;
  const qNorm = Math.sqrt(qq);
  for (let d = 0, at = 0; d < n; d++, at += dim) {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    for (let i = 0; i < dim; i += 4) {
      a0 += q[i]! * rows[at + i]!;
      a1 += q[i + 1]! * rows[at + i + 1]!;
      a2 += q[i + 2]! * rows[at + i + 2]!;
      a3 += q[i + 3]! * rows[at + i + 3]!;
    }
    cand[d] = Math.fround(a0 + a1 + a2 + a3) / (norms[d]! * qNorm) - 1;
    docs[d] = d;
  }
  sel.set(cand);
  const kth = kthLargest(sel, n, k);
  let kept = 0;
  for (let i = 0; i < n && kept < k; i++) {
    if (cand[i]! < kth) continue;
    cand[kept] = cand[i]!;
    docs[kept++] = i;
  }
  const order = orderByScore(cand, kept);
  return Uint32Array.from(order.subarray(0, kept), (i) => docs[i]!);
}

const live = () => true;
const time = (f: (q: Float32Array) => unknown) => {
  for (let i = 0; i < 5; i++) f(qs[i % qs.length]!);
  const t = performance.now();
  for (let i = 0; i < queries; i++) f(qs[i % qs.length]!);
  return (performance.now() - t) / queries;
};
let same = 0;
for (const q of qs) {
  const w = fv.nearestDocs(q, K, live);
  const wasmDocs = new Set(w.docs.subarray(0, w.n));
  const ts = nearestTs(q, K);
  same += ts.filter((d) => wasmDocs.has(d)).length / K;
}
const wasmMs = time((q) => fv.nearestDocs(q, K, live));
const tsMs = time((q) => nearestTs(q, K));
process.stdout.write(
  [
    `| rows | dim | WASM ms/query | TypeScript ms/query | TS / WASM | same top-${K} |`,
    '|---:|---:|---:|---:|---:|---:|',
    `| ${n} | ${dim} | ${wasmMs.toFixed(2)} | ${tsMs.toFixed(2)} | ${(tsMs / wasmMs).toFixed(2)}× | ${((100 * same) / qs.length).toFixed(1)} % |`,
    '',
  ].join('\n'),
);
