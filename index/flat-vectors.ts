/**
 * Exact nearest neighbours of a small index's vectors, in process: the vector arm of an index whose vectors fit a
 * memory bound (`FLAT_VECTOR_BYTES`).
 *
 * Below the size at which an IVF-PQ index is trained (maintenance.ts), LanceDB answers a vector query with a flat
 * scan: on the SciFact index (5,556 passages × 256 dimensions) that took ≈ 11 ms of wall time and ≈ 13.6 ms of CPU on
 * its threads per query (reading and decoding the vector column each time), plus the Arrow decode of 300 result rows
 * on the main thread — the largest single cost of a hybrid search under load (docs/benchmarks.md, session 11). Here
 * the vectors are kept once, in a WebAssembly memory, and one SIMD pass (f32x4) computes every dot product: ≈ 0.3 ms
 * for the same scan. The answer is the same kind LanceDB's flat scan gives: exact cosine distance, the k nearest.
 *
 * Rows are indexed by the postings' document ids (dense, in order of addition); a tombstoned document is skipped by
 * the caller's `live` test. Not thread-safe (one query at a time on the main thread, like the postings).
 */
import { orderByScore } from './score-sort.js';
import { kthLargest } from './top-k.js';

/**
 * `dots(q, m, n, dim, out)`: out[d] = Σ q[i] · m[d·dim + i] for d < n (f32, SIMD f32x4; dim a multiple of 4; byte
 * offsets 16-aligned). Four accumulators over 16 floats per step, then a tail of 4 at a time: one accumulator made
 * each step wait for the previous add (`bench/flat-vectors.ts`, the scan with the selection left out: 0.235 → 0.142 ms
 * at 5,556 × 256; the kernel alone, timed apart while writing this, 0.21 → 0.115 ms).
 * Assembled from this text (wabt 1.0.39, `parseWat(…, { simd: true }).toBinary({})`):
 *
 * (module
 *   (memory (export "memory") 1)
 *   (func (export "dots") (param $q i32) (param $m i32) (param $n i32) (param $dim i32) (param $out i32)
 *     (local $d i32) (local $i i32) (local $row i32) (local $bytes i32) (local $main i32)
 *     (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
 *     (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
 *     (local.set $main (i32.and (local.get $bytes) (i32.const -64)))
 *     (local.set $row (local.get $m))
 *     (block $done
 *       (loop $rows
 *         (br_if $done (i32.ge_u (local.get $d) (local.get $n)))
 *         (local.set $a0 (v128.const f32x4 0 0 0 0))
 *         (local.set $a1 (v128.const f32x4 0 0 0 0))
 *         (local.set $a2 (v128.const f32x4 0 0 0 0))
 *         (local.set $a3 (v128.const f32x4 0 0 0 0))
 *         (local.set $i (i32.const 0))
 *         (block $maindone
 *           (loop $cols
 *             (br_if $maindone (i32.ge_u (local.get $i) (local.get $main)))
 *             (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
 *               (v128.load (i32.add (local.get $row) (local.get $i)))
 *               (v128.load (i32.add (local.get $q) (local.get $i))))))
 *             (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul
 *               (v128.load offset=16 (i32.add (local.get $row) (local.get $i)))
 *               (v128.load offset=16 (i32.add (local.get $q) (local.get $i))))))
 *             (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul
 *               (v128.load offset=32 (i32.add (local.get $row) (local.get $i)))
 *               (v128.load offset=32 (i32.add (local.get $q) (local.get $i))))))
 *             (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul
 *               (v128.load offset=48 (i32.add (local.get $row) (local.get $i)))
 *               (v128.load offset=48 (i32.add (local.get $q) (local.get $i))))))
 *             (local.set $i (i32.add (local.get $i) (i32.const 64)))
 *             (br $cols)))
 *         (block $taildone
 *           (loop $tail
 *             (br_if $taildone (i32.ge_u (local.get $i) (local.get $bytes)))
 *             (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
 *               (v128.load (i32.add (local.get $row) (local.get $i)))
 *               (v128.load (i32.add (local.get $q) (local.get $i))))))
 *             (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *             (br $tail)))
 *         (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
 *         (f32.store (i32.add (local.get $out) (i32.shl (local.get $d) (i32.const 2)))
 *           (f32.add
 *             (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
 *             (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
 *         (local.set $row (i32.add (local.get $row) (local.get $bytes)))
 *         (local.set $d (i32.add (local.get $d) (i32.const 1)))
 *         (br $rows)))))
 */
const DOTS_WASM =
  'AGFzbQEAAAABCQFgBX9/f39/AAMCAQAFAwEAAQcRAgZtZW1vcnkCAARkb3RzAAAK+gIB9wICBX8EeyADQQJ0IQggCEFAcSEJIAEhBwJAA0AgBSACTw0B/QwAAAAAAAAAAAAAAAAAAAAAIQr9DAAAAAAAAAAAAAAAAAAAAAAhC/0MAAAAAAAAAAAAAAAAAAAAACEM/QwAAAAAAAAAAAAAAAAAAAAAIQ1BACEGAkADQCAGIAlPDQEgCiAHIAZq/QAEACAAIAZq/QAEAP3mAf3kASEKIAsgByAGav0ABBAgACAGav0ABBD95gH95AEhCyAMIAcgBmr9AAQgIAAgBmr9AAQg/eYB/eQBIQwgDSAHIAZq/QAEMCAAIAZq/QAEMP3mAf3kASENIAZBwABqIQYMAAsLAkADQCAGIAhPDQEgCiAHIAZq/QAEACAAIAZq/QAEAP3mAf3kASEKIAZBEGohBgwACwsgCiAL/eQBIAwgDf3kAf3kASEKIAQgBUECdGogCv0fACAK/R8BkiAK/R8CIAr9HwOSkjgCACAHIAhqIQcgBUEBaiEFDAALCws=';

/** The part of the WebAssembly API used here (the project's TypeScript libs declare no DOM or WebAssembly types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmModule {
  readonly __wasmModule?: never;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (mod: WasmModule) => { readonly exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let dotsModule: WasmModule | null | undefined;
/** The compiled module, or null where WebAssembly SIMD is unavailable (then LanceDB keeps answering). */
function dotsWasm(): WasmModule | null {
  if (dotsModule === undefined) {
    try {
      dotsModule = wasm ? new wasm.Module(Buffer.from(DOTS_WASM, 'base64')) : null;
    } catch {
      dotsModule = null;
    }
  }
  return dotsModule;
}

/**
 * Bytes of vectors (rows × dimensions × 4) an index may keep in process: 32 MiB is ≈ 21,800 passages of the
 * service's 384-dimension model, below the 50,000 vectors at which the IVF-PQ index takes over in LanceDB. Larger
 * indexes keep answering from LanceDB (its approximate index, or its flat scan while none is trained).
 */
export const FLAT_VECTOR_BYTES = 32 * 2 ** 20;

const PAGE = 65_536;
type DotsFn = (q: number, m: number, n: number, dim: number, out: number) => void;
const align16 = (n: number) => (n + 15) & ~15;

export class FlatVectors {
  readonly dim: number;
  readonly #maxRows: number;
  readonly #memory: WasmMemory;
  readonly #dots: DotsFn;
  /** Byte offsets: the query, the scores (one f32 per row, up to maxRows), the rows. */
  readonly #qAt: number;
  readonly #outAt: number;
  readonly #rowsAt: number;
  #f32: Float32Array;
  /** Euclidean norm of each row (0: no vector; never a neighbour). */
  #norms = new Float32Array(1024);
  /** Per-query scratch (grown to the row count): live documents' scores and ids, and a copy the selection reorders. */
  #scratch = new Float64Array(0);
  #scratchDocs = new Uint32Array(0);
  #select = new Float64Array(0);
  /** `nearestDocs`' answer (overwritten by each search). */
  #outDocs = new Uint32Array(0);
  #outDistances = new Float64Array(0);
  #rows = 0;

  /** Null when `dim` is not a multiple of 4 or WebAssembly SIMD is unavailable. */
  static create(dim: number, maxRows: number): FlatVectors | null {
    const mod = dotsWasm();
    if (!mod || dim <= 0 || dim % 4 !== 0 || maxRows <= 0) return null;
    // A 32-bit memory: rows, scores and the query within 2 GiB whatever bound was configured.
    const rows = Math.min(maxRows, Math.floor((2 ** 31 - 2 * PAGE) / ((dim + 1) * 4)));
    return new FlatVectors(mod, dim, rows);
  }

  private constructor(mod: WasmModule, dim: number, maxRows: number) {
    this.dim = dim;
    this.#maxRows = maxRows;
    const instance = new wasm!.Instance(mod);
    this.#memory = instance.exports.memory as WasmMemory;
    this.#dots = instance.exports.dots as DotsFn;
    this.#qAt = 0;
    this.#outAt = align16(dim * 4);
    this.#rowsAt = align16(this.#outAt + maxRows * 4);
    this.#ensure(this.#rowsAt);
    this.#f32 = new Float32Array(this.#memory.buffer);
  }

  /** Rows held (the highest document id added + 1). */
  get rows(): number {
    return this.#rows;
  }

  #ensure(bytes: number): void {
    const have = this.#memory.buffer.byteLength;
    if (bytes <= have) return;
    this.#memory.grow(Math.ceil((bytes - have) / PAGE));
    this.#f32 = new Float32Array(this.#memory.buffer); // growing detaches the old view
  }

  /**
   * Sets document `doc`'s vector (null, or of another dimension: no vector). Returns false when `doc` is beyond the
   * bound: the caller drops this store and lets LanceDB answer.
   */
  set(doc: number, vector: ArrayLike<number> | null): boolean {
    if (doc >= this.#maxRows) return false;
    if (doc >= this.#rows) {
      try {
        this.#ensure(this.#rowsAt + (doc + 1) * this.dim * 4);
      } catch {
        return false; // the memory could not grow: the caller drops this store
      }
      if (doc >= this.#norms.length) {
        const n = new Float32Array(Math.max(doc + 1, this.#norms.length * 2));
        n.set(this.#norms);
        this.#norms = n;
      }
      this.#rows = doc + 1;
    }
    const at = this.#rowsAt / 4 + doc * this.dim;
    let sq = 0;
    if (vector && vector.length === this.dim) {
      for (let i = 0; i < this.dim; i++) {
        const x = vector[i]!;
        this.#f32[at + i] = x;
        sq += x * x;
      }
    } else this.#f32.fill(0, at, at + this.dim);
    this.#norms[doc] = Math.sqrt(sq);
    return true;
  }

  /**
   * The `k` documents nearest to `query` by cosine distance (1 − cosine similarity) among those `live` accepts and
   * that have a vector, nearest first (equal distances: lower document id first). With `minSimilarity`, documents whose
   * cosine similarity (1 − distance) is below it are left out before the selection: the result is then exactly the
   * unbounded one's documents at or above it (a caller that drops the rest anyway builds nothing for them). In typed
   * arrays, without an object per document: the first `n` of `docs` and `distances`, arrays of this instance's that the
   * next search overwrites (read them before).
   */
  nearestDocs(
    query: Float32Array,
    k: number,
    live: (doc: number) => boolean,
    minSimilarity = -Infinity,
  ): { docs: Uint32Array; distances: Float64Array; n: number } {
    const qNorm = this.#queryNorm(query);
    if (qNorm === 0 || k <= 0 || this.#rows === 0) return { docs: this.#outDocs, distances: this.#outDistances, n: 0 };
    this.#f32.set(query, this.#qAt / 4);
    this.#dots(this.#qAt, this.#rowsAt, this.#rows, this.dim, this.#outAt);
    const scores = this.#f32;
    const out0 = this.#outAt / 4;
    // Every live document's score (−distance), in document order; then the k best by one selection of the k-th best
    // score (O(n)) rather than a heap fed all n (≈ k·ln(n/k) sift-downs: at 5.6k vectors and k = 300 the heap was
    // most of the arm's JS time). The k best: nearest first, equal distances by lower document id.
    const n = this.#rows;
    if (this.#scratch.length < n) {
      this.#scratch = new Float64Array(Math.max(n, this.#scratch.length * 2));
      this.#scratchDocs = new Uint32Array(this.#scratch.length);
      this.#select = new Float64Array(this.#scratch.length);
    }
    const cand = this.#scratch;
    const docs = this.#scratchDocs;
    let m = 0;
    for (let doc = 0; doc < n; doc++) {
      const norm = this.#norms[doc]!;
      if (norm === 0) continue;
      const score = scores[out0 + doc]! / (norm * qNorm) - 1;
      // NaN: a vector of junk never ranks. The similarity as the caller computes it from the distance (1 − (−score)).
      if (score !== score || 1 - -score < minSimilarity || !live(doc)) continue;
      cand[m] = score;
      docs[m++] = doc;
    }
    // The k best, still in document order, packed at the front of cand and docs.
    let kept = m;
    if (m > k) {
      const sel = this.#select;
      sel.set(cand.subarray(0, m));
      const kth = kthLargest(sel, m, k);
      let greater = 0;
      for (let i = 0; i < m; i++) if (cand[i]! > kth) greater++;
      // Documents at exactly the k-th score fill the rest, lower document ids first (cand is in document order).
      let ties = k - greater;
      kept = 0;
      for (let i = 0; i < m; i++) {
        const s = cand[i]!;
        if (s > kth || (s === kth && ties-- > 0)) {
          cand[kept] = s;
          docs[kept++] = docs[i]!;
        }
      }
    }
    // Nearest first; equal scores keep document order (lower id first).
    const order = orderByScore(cand, kept);
    if (this.#outDocs.length < kept) {
      this.#outDocs = new Uint32Array(Math.max(kept, 2 * this.#outDocs.length));
      this.#outDistances = new Float64Array(this.#outDocs.length);
    }
    const outDocs = this.#outDocs;
    const outDistances = this.#outDistances;
    for (let i = 0; i < kept; i++) {
      const j = order[i]!;
      outDocs[i] = docs[j]!;
      outDistances[i] = -cand[j]!;
    }
    return { docs: outDocs, distances: outDistances, n: kept };
  }

  /** Exact cosine distance of `query` to each document of `docs` that has a vector (the others are absent). */
  distances(query: Float32Array, docs: Iterable<number>): Map<number, number> {
    const out = new Map<number, number>();
    const qNorm = this.#queryNorm(query);
    if (qNorm === 0) return out;
    for (const doc of docs) {
      const norm = doc < this.#rows ? this.#norms[doc]! : 0;
      if (norm === 0) continue;
      const at = this.#rowsAt / 4 + doc * this.dim;
      out.set(doc, 1 - dot(query, this.#f32, at) / (norm * qNorm));
    }
    return out;
  }

  /** The query's Euclidean norm (0: of another dimension, or zero: it has no neighbours). */
  #queryNorm(query: Float32Array): number {
    return query.length === this.dim ? Math.sqrt(dot(query, query, 0)) : 0;
  }
}

/** Σ a[i] · b[at + i] over a's length. */
function dot(a: Float32Array, b: Float32Array, at: number): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[at + i]!;
  return s;
}

/** Exact cosine distance of two vectors of one length; undefined when either is zero (no direction to compare). */
export function cosineDistance(a: Float32Array, b: Float32Array): number | undefined {
  const ab = dot(a, b, 0);
  const aa = dot(a, a, 0);
  const bb = dot(b, b, 0);
  return aa === 0 || bb === 0 ? undefined : 1 - ab / Math.sqrt(aa * bb);
}
