/**
 * Exact nearest neighbours of a small index's vectors, in process (the vector arm below `FLAT_VECTOR_BYTES`).
 * One SIMD pass over vectors kept in WebAssembly memory avoids LanceDB's per-query flat scan and Arrow decode, with
 * the same exact cosine answer. Rows are postings document ids. An instance is one thread's; the rows of a loaded
 * engine image may be one shared memory that every thread's instance reads in place (`share`, `fromShared`).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { orderByScore } from '../../retrieval/score-sort.js';
import { kthLargest } from './top-k.js';

/**
 * The WebAssembly kernels: `dots` (f32x4 dot products, four accumulators so adds do not wait on each other), `dotsAt`
 * (bit-identical sums for listed rows) and `screen16` (int16 screen for `FlatVectors.#screenedDocs`). Source is
 * `flat-vectors.wat`, assembled into flat-vectors.wasm beside this module by `npm run build` (scripts/build-wasm.ts).
 */
export const KERNEL_URL = new URL('./flat-vectors.wasm', import.meta.url);

/** The part of the WebAssembly API used here (the project's TypeScript libs declare no DOM or WebAssembly types). */
export interface WasmMemory {
  readonly buffer: SharedArrayBuffer;
  grow(pages: number): number;
}
interface WasmModule {
  readonly __wasmModule?: never;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (mod: WasmModule, imports: { env: { memory: WasmMemory } }) => { readonly exports: Record<string, unknown> };
  Memory: new (d: { initial: number; maximum: number; shared: true }) => WasmMemory;
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let dotsModule: WasmModule | null | undefined;
/** The compiled module, or null where WebAssembly SIMD is unavailable (then LanceDB keeps answering). */
function dotsWasm(): WasmModule | null {
  if (dotsModule === undefined) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(KERNEL_URL);
    } catch (err) {
      // A missing kernel is a build defect, not a reason to answer from another path: say so.
      throw new Error(`${fileURLToPath(KERNEL_URL)} is missing: \`npm run build\` assembles it from flat-vectors.wat`, {
        cause: err,
      });
    }
    try {
      dotsModule = wasm ? new wasm.Module(bytes) : null;
    } catch {
      dotsModule = null;
    }
  }
  return dotsModule;
}

/**
 * Bytes of vectors (rows × dimensions × 4) an index may keep in process: 32 MiB holds some 21,800 passages of the
 * service's 384-dimension model, below the 50,000 vectors at which the IVF-PQ index takes over in LanceDB. Larger
 * indexes keep answering from LanceDB (its approximate index, or its flat scan while none is trained).
 */
export const FLAT_VECTOR_BYTES = 32 * 2 ** 20;

const PAGE = 65_536;
/** The kernel's memory is shared and at most 2 GiB (flat-vectors.wat declares the same maximum). */
const MAX_PAGES = 32_768;

/**
 * Rows made once per process and read in place by every thread's instance (a loaded engine image's vectors): the
 * shared memory and where in it the f32 rows, their 16-bit copies, screening constants and norms are. Posted to search
 * threads with the image (a shared WebAssembly memory crosses threads as itself, not a copy).
 */
export interface SharedVectorBlock {
  readonly memory: WasmMemory;
  readonly dim: number;
  readonly rows: number;
  readonly rowsAt: number;
  readonly rows16At: number;
  readonly aAt: number;
  readonly rAt: number;
  readonly normsAt: number;
  readonly minNorm: number;
  readonly maxNorm: number;
}
type DotsFn = (q: number, m: number, n: number, dim: number, out: number) => void;
type DotsAtFn = (q: number, m: number, ids: number, n: number, dim: number, out: number) => void;
type ScreenFn = (
  q: number,
  m: number,
  n: number,
  dim: number,
  a: number,
  r: number,
  bq: number,
  t: number,
  ids: number,
  abs: number,
) => number;
const align16 = (n: number) => (n + 15) & ~15;
/** A 16-bit row's length: the dimension rounded up to the kernel's 8 lanes (zeros after the dimension). */
const dim16Of = (dim: number) => (dim + 7) & ~7;
/** The screen's bound enlarged a little (10⁻⁵): the rounding of the values' quantisation and of the constants. */
const SCREEN_SLACK = 1 + 1e-5;

export class FlatVectors {
  readonly dim: number;
  readonly #maxRows: number;
  #memory!: WasmMemory;
  #dots!: DotsFn;
  #dotsAt!: DotsAtFn;
  #screen!: ScreenFn;
  /** The 16-bit rows' dimension (`dim` rounded up to a multiple of 8, zeros after `dim`) and their largest |value|. */
  readonly #dim16: number;
  readonly #q16Max: number;
  /**
   * Byte offsets: the query (f32, then as 16-bit integers), the scores (one f32 per row, up to maxRows), the screen's
   * survivors (u32 per row), each row's two screening constants (f64 per row each), the 16-bit rows (their region
   * sized for maxRows at once: pages never written take no memory), then the f32 rows (grown as documents are added).
   */
  #qAt!: number;
  #q16At!: number;
  #outAt!: number;
  #idsAt!: number;
  #absAt!: number;
  #aAt!: number;
  #rAt!: number;
  #rows16At!: number;
  #rowsAt!: number;
  #f32!: Float32Array;
  #i16!: Int16Array;
  #f64!: Float64Array;
  #u32!: Uint32Array;
  #i32!: Int32Array;
  /** Euclidean norm of each row (0: no vector; never a neighbour). */
  #norms: Float32Array = new Float32Array(1024);
  /** Per-query scratch (grown to the row count): live documents' scores and ids, and a copy the selection reorders. */
  #scratch = new Float64Array(0);
  #scratchDocs = new Uint32Array(0);
  #select = new Float64Array(0);
  /** `nearestDocs`' answer (overwritten by each search). */
  #outDocs = new Uint32Array(0);
  #outDistances = new Float64Array(0);
  #rows = 0;
  /**
   * The smallest and largest finite non-zero row norms ever set (only ever widened): the screen's error bound holds
   * while no f32 product or sum of the exact kernel can underflow or overflow, which these bound (`#screenedDocs`).
   */
  #minNorm = Infinity;
  #maxNorm = 0;
  #screenedSearches = 0;
  /** The shared rows this instance reads in place (null: its own memory); copied into its own before a change. */
  #shared: SharedVectorBlock | null = null;

  /** Null when `dim` is not a multiple of 4 or WebAssembly SIMD is unavailable. */
  static create(dim: number, maxRows: number): FlatVectors | null {
    const mod = dotsWasm();
    if (!mod || dim <= 0 || dim % 4 !== 0 || maxRows <= 0) return null;
    // A 32-bit memory: rows, their 16-bit copies, scores and the queries within 2 GiB whatever bound was configured.
    const perRow = dim * 4 + dim16Of(dim) * 2 + 28;
    const rows = Math.min(maxRows, Math.floor((2 ** 31 - 4 * PAGE - dim * 8) / perRow));
    return new FlatVectors(mod, dim, rows);
  }

  /**
   * The rows of `exportRows`' output (a row of zeros: no vector) in a new shared memory, for instances on any thread
   * (`fromShared`); null when they cannot be kept (as `create`, or past the 2 GiB memory).
   */
  static share(dim: number, data: Float32Array): SharedVectorBlock | null {
    const rows = Math.floor(data.length / dim);
    const v = FlatVectors.create(dim, Math.max(1, rows));
    try {
      return v && v.load(data) ? v.#block() : null;
    } catch {
      return null; // no room for the norms within the memory's maximum
    }
  }

  /** An instance reading `block`'s rows in place (its own scratch in a region it grows the memory by). */
  static fromShared(block: SharedVectorBlock, maxRows: number): FlatVectors | null {
    const mod = dotsWasm();
    if (!mod || block.rows > maxRows) return null;
    try {
      return new FlatVectors(mod, block.dim, maxRows, block);
    } catch {
      return null; // the memory could not grow by this thread's scratch
    }
  }

  /** The shared memory, or its rows in place (`fromShared`). */
  get block(): SharedVectorBlock | null {
    return this.#shared;
  }

  #block(): SharedVectorBlock {
    const rows = this.#rows;
    const normsAt = this.#memory.buffer.byteLength;
    this.#ensure(normsAt + rows * 4);
    this.#f32.set(this.#norms.subarray(0, rows), normsAt / 4);
    return {
      memory: this.#memory,
      dim: this.dim,
      rows,
      rowsAt: this.#rowsAt,
      rows16At: this.#rows16At,
      aAt: this.#aAt,
      rAt: this.#rAt,
      normsAt,
      minNorm: this.#minNorm,
      maxNorm: this.#maxNorm,
    };
  }

  private constructor(mod: WasmModule, dim: number, maxRows: number, shared?: SharedVectorBlock) {
    this.dim = dim;
    this.#maxRows = maxRows;
    this.#dim16 = dim16Of(dim);
    // Every product of a query's and a row's 16-bit values summed stays within a 32-bit integer.
    this.#q16Max = Math.min(32767, Math.floor(Math.sqrt((2 ** 31 - 1) / this.#dim16)));
    this.#mod = mod;
    if (shared) {
      // The rows are the block's; this thread's scratch (query, scores, survivors) is the region it grows the memory by.
      const memory = shared.memory;
      const scratch = align16(dim * 4) + align16(this.#dim16 * 2) + 3 * align16(shared.rows * 4);
      const at = memory.grow(Math.ceil(scratch / PAGE) || 1) * PAGE;
      this.#bind(memory);
      this.#scratchAt(at, shared.rows);
      this.#aAt = shared.aAt;
      this.#rAt = shared.rAt;
      this.#rows16At = shared.rows16At;
      this.#rowsAt = shared.rowsAt;
      this.#rows = shared.rows;
      this.#norms = new Float32Array(memory.buffer, shared.normsAt, shared.rows);
      this.#minNorm = shared.minNorm;
      this.#maxNorm = shared.maxNorm;
      this.#shared = shared;
      return;
    }
    this.#own();
  }

  /** Lays out the per-query scratch for `rows` rows from byte `at`: the query, then the scores and survivors. */
  #scratchAt(at: number, rows: number): number {
    this.#qAt = at;
    this.#q16At = align16(at + this.dim * 4);
    this.#outAt = align16(this.#q16At + this.#dim16 * 2);
    this.#idsAt = align16(this.#outAt + rows * 4);
    this.#absAt = align16(this.#idsAt + rows * 4);
    return align16(this.#absAt + rows * 4);
  }

  /** A new memory of this instance's own, laid out for `#maxRows` rows (the f32 rows grown as documents are added). */
  #own(): void {
    const maxRows = this.#maxRows;
    this.#bind(new wasm!.Memory({ initial: 1, maximum: MAX_PAGES, shared: true }));
    this.#aAt = this.#scratchAt(0, maxRows);
    this.#rAt = this.#aAt + maxRows * 8;
    this.#rows16At = align16(this.#rAt + maxRows * 8);
    this.#rowsAt = align16(this.#rows16At + maxRows * this.#dim16 * 2);
    this.#ensure(this.#rowsAt);
  }

  readonly #mod: WasmModule;

  /** An instance of the kernel over `memory`, and views of it. */
  #bind(memory: WasmMemory): void {
    const instance = new wasm!.Instance(this.#mod, { env: { memory } });
    this.#memory = memory;
    this.#dots = instance.exports.dots as DotsFn;
    this.#dotsAt = instance.exports.dotsAt as DotsAtFn;
    this.#screen = instance.exports.screen16 as ScreenFn;
    this.#views();
  }

  #views(): void {
    const b = this.#memory.buffer;
    this.#f32 = new Float32Array(b);
    this.#i16 = new Int16Array(b);
    this.#f64 = new Float64Array(b);
    this.#u32 = new Uint32Array(b);
    this.#i32 = new Int32Array(b);
  }

  /**
   * Before a change to shared rows: this instance's own memory, laid out as `create` lays it out, with the rows copied
   * in (other threads keep reading the block).
   */
  #unshare(): void {
    const shared = this.#shared;
    if (!shared) return;
    const rows = new Float32Array(shared.memory.buffer, shared.rowsAt, shared.rows * this.dim).slice();
    this.#own();
    this.#shared = null;
    this.#rows = 0;
    this.#norms = new Float32Array(1024);
    this.#minNorm = Infinity;
    this.#maxNorm = 0;
    if (!this.load(rows)) throw new Error('FlatVectors: shared rows past the bound');
  }

  /** Searches the 16-bit screen answered (the others scanned every row exactly): for tests and benchmarks. */
  get screenedSearches(): number {
    return this.#screenedSearches;
  }

  /** Rows held (the highest document id added + 1). */
  get rows(): number {
    return this.#rows;
  }

  #ensure(bytes: number): void {
    const have = this.#memory.buffer.byteLength;
    if (bytes <= have) return;
    this.#memory.grow(Math.ceil((bytes - have) / PAGE));
    // The old views do not reach the new pages.
    this.#views();
  }

  /**
   * Sets document `doc`'s vector (null, or of another dimension: no vector). Returns false when `doc` is beyond the
   * bound: the caller drops this store and lets LanceDB answer.
   */
  set(doc: number, vector: ArrayLike<number> | null): boolean {
    if (doc >= this.#maxRows) return false;
    if (this.#shared)
      try {
        this.#unshare();
      } catch {
        return false;
      }
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
    const norm = this.#norms[doc]!;
    if (norm > 0 && norm < Infinity) {
      if (norm < this.#minNorm) this.#minNorm = norm;
      if (norm > this.#maxNorm) this.#maxNorm = norm;
    }
    this.#quantise(doc, at);
    return true;
  }

  /**
   * The 16-bit copy of row `doc` and its screening constants A and R (`#screenedDocs`). A row without a vector is
   * never a neighbour (A = −∞); a non-finite one always goes to the exact check (A = +∞).
   */
  #quantise(doc: number, at: number): void {
    const f32 = this.#f32;
    const i16 = this.#i16;
    const at16 = this.#rows16At / 2 + doc * this.#dim16;
    const a = this.#aAt / 8 + doc;
    const r = this.#rAt / 8 + doc;
    const norm = this.#norms[doc]!;
    const maxAbs = largestAbs(f32, at, this.dim);
    i16.fill(0, at16, at16 + this.#dim16);
    if (!Number.isFinite(maxAbs) || !Number.isFinite(norm)) {
      this.#f64[a] = Infinity;
      this.#f64[r] = 1;
      return;
    }
    if (norm === 0 || maxAbs === 0) {
      this.#f64[a] = -Infinity;
      this.#f64[r] = 1;
      return;
    }
    const scale = maxAbs / this.#q16Max;
    const l1 = quantiseRow(f32, at, this.dim, scale, i16, at16);
    this.#f64[a] = SCREEN_SLACK * (0.5 * l1 + 0.25 * this.dim);
    this.#f64[r] = norm / scale;
  }

  /**
   * The `k` live documents with a vector nearest to `query` by cosine distance, nearest first (ties: lower id).
   * With `minSimilarity`, documents below it are dropped before selection (same result above it, less work).
   * Results are the first `n` of this instance's `docs`/`distances`, overwritten by the next search.
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
    // With a floor, the rows the 16-bit screen keeps (in document order), scored exactly; else every row, scored here.
    const screened = minSimilarity > -1 ? this.#screenedDocs(qNorm, minSimilarity, k, live) : -1;
    if (screened < 0) this.#dots(this.#qAt, this.#rowsAt, n, this.dim, this.#outAt);
    const ids = this.#u32;
    const ids0 = this.#idsAt / 4;
    for (let i = 0, end = screened < 0 ? n : screened; i < end; i++) {
      const doc = screened < 0 ? i : ids[ids0 + i]!;
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

  /**
   * The rows whose cosine similarity may reach `minSimilarity`, in document order, their exact f32 dots in the scores;
   * returns how many, or −1 when the error bound cannot hold (the caller then scores every row). The int16 screen's
   * error is bounded, so no row above the floor is dropped (proof: docs/architecture.md#vector-screen-error-bound).
   */
  #screenedDocs(qNorm: number, minSimilarity: number, k: number, live: (doc: number) => boolean): number {
    const f32 = this.#f32;
    const q0 = this.#qAt / 4;
    const maxAbs = largestAbs(f32, q0, this.dim);
    // Within [2⁻¹⁰⁰, 2¹⁰⁰] no product or partial sum of |vᵢ·xᵢ| (at most ‖v‖·‖x‖) overflows in f32, and underflow's
    // absolute error (≤ dim·2⁻¹⁴⁹ in all) is below 2⁻³⁹ of the dot product's scale, far inside γ.
    if (!Number.isFinite(maxAbs) || !(this.#minNorm * qNorm >= 2 ** -100 && this.#maxNorm * qNorm <= 2 ** 100)) return -1;
    this.#screenedSearches++;
    const i16 = this.#i16;
    const q16 = this.#q16At / 2;
    const scale = maxAbs / this.#q16Max;
    const l1 = quantiseRow(f32, q0, this.dim, scale, i16, q16);
    i16.fill(0, q16 + this.dim, q16 + this.#dim16);
    const gamma = (this.dim / 16 + 16) * 2 ** -23;
    const qs = qNorm / scale;
    const bq = SCREEN_SLACK * 0.5 * l1;
    const t = (minSimilarity - 1e-9 - gamma) * qs;
    let n = this.#screen(this.#q16At, this.#rows16At, this.#rows, this.#dim16, this.#aAt, this.#rAt, bq, t, this.#idsAt, this.#absAt);
    if (n > k) n = this.#refine(n, k, bq, qs, gamma, live);
    if (n > 0) this.#dotsAt(this.#qAt, this.#rowsAt, this.#idsAt, n, this.dim, this.#outAt);
    return n;
  }

  /**
   * Of the screen's `n` survivors (more than k), keeps the live ones that may be among the k nearest, in document
   * order: any whose similarity upper bound is below the k-th largest lower bound is surely out. Returns how many.
   */
  #refine(n: number, k: number, bq: number, qs: number, gamma: number, live: (doc: number) => boolean): number {
    const ids = this.#u32;
    const ids0 = this.#idsAt / 4;
    const abs = this.#i32;
    const abs0 = this.#absAt / 4;
    const f64 = this.#f64;
    const a0 = this.#aAt / 8;
    const r0 = this.#rAt / 8;
    let alive = 0;
    for (let i = 0; i < n; i++) {
      const doc = ids[ids0 + i]!;
      if (!live(doc)) continue;
      ids[ids0 + alive] = doc;
      abs[abs0 + alive++] = abs[abs0 + i]!;
    }
    if (alive <= k) return alive;
    const lower = this.#select;
    for (let i = 0; i < alive; i++) {
      const doc = ids[ids0 + i]!;
      const lb = (abs[abs0 + i]! - f64[a0 + doc]! - bq) / (f64[r0 + doc]! * qs) - gamma;
      lower[i] = lb === lb ? lb : -Infinity;
    }
    const bar = kthLargest(lower, alive, k) - 1e-9;
    let kept = 0;
    for (let i = 0; i < alive; i++) {
      const doc = ids[ids0 + i]!;
      const ub = (abs[abs0 + i]! + f64[a0 + doc]! + bq) / (f64[r0 + doc]! * qs) + gamma;
      if (ub < bar) continue;
      ids[ids0 + kept] = doc;
      abs[abs0 + kept++] = abs[abs0 + i]!;
    }
    return kept;
  }

  /** Every row's vector (zeros: none), rows × dim, copied out (engine-image.ts); `load` puts them back. */
  exportRows(): Float32Array {
    const at = this.#rowsAt / 4;
    return this.#f32.slice(at, at + this.#rows * this.dim);
  }

  /** Sets rows 0.. from `exportRows`' output (a row of zeros: no vector); false when they do not fit the bound. */
  load(data: Float32Array): boolean {
    const rows = Math.floor(data.length / this.dim);
    for (let doc = 0; doc < rows; doc++) {
      const row = data.subarray(doc * this.dim, (doc + 1) * this.dim);
      if (!this.set(doc, row.some((x) => x !== 0) ? row : null)) return false;
    }
    return true;
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

/** The largest |value| of f32[at, at + n) (NaN when one is NaN). */
function largestAbs(f32: Float32Array, at: number, n: number): number {
  let max = 0;
  for (let i = 0; i < n; i++) {
    const x = Math.abs(f32[at + i]!);
    if (!(x <= max)) max = x; // NaN too: the caller then finds it not finite
  }
  return max;
}

/** f32[at, at + n) divided by `scale` and rounded, into i16 from `at16`; returns the integers' L1 norm. */
function quantiseRow(f32: Float32Array, at: number, n: number, scale: number, i16: Int16Array, at16: number): number {
  let l1 = 0;
  for (let i = 0; i < n; i++) {
    const v = Math.round(f32[at + i]! / scale);
    i16[at16 + i] = v;
    l1 += Math.abs(v);
  }
  return l1;
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
