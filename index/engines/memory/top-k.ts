/**
 * The k best (doc, score) pairs seen, each with a 32-bit tag: a min-heap whose root is the worst kept.
 * Used where scores arrive one document at a time (the postings' BM25); whole-array scorers use quickselect instead.
 */
export class TopK {
  readonly #docs: Uint32Array;
  readonly #scores: Float64Array;
  /** The tag of each kept document (the postings: its probe-term bits, `TextHit.held`). */
  readonly #tags: Uint32Array;
  #size = 0;

  constructor(k: number) {
    this.#docs = new Uint32Array(k);
    this.#scores = new Float64Array(k);
    this.#tags = new Uint32Array(k);
  }

  get full(): boolean {
    return this.#size === this.#docs.length;
  }

  /** The worst kept score (valid when full). */
  get min(): number {
    return this.#scores[0]!;
  }

  #worse(i: number, j: number): boolean {
    const a = this.#scores[i]!;
    const b = this.#scores[j]!;
    return a < b || (a === b && this.#docs[i]! > this.#docs[j]!);
  }

  #swap(i: number, j: number): void {
    const d = this.#docs[i]!;
    this.#docs[i] = this.#docs[j]!;
    this.#docs[j] = d;
    const s = this.#scores[i]!;
    this.#scores[i] = this.#scores[j]!;
    this.#scores[j] = s;
    const h = this.#tags[i]!;
    this.#tags[i] = this.#tags[j]!;
    this.#tags[j] = h;
  }

  /** Keeps (doc, score) if it is among the k best so far; returns whether it was kept. */
  offer(doc: number, score: number, held = 0): boolean {
    const k = this.#docs.length;
    if (k === 0) return false;
    if (this.#size < k) {
      let i = this.#size++;
      this.#docs[i] = doc;
      this.#scores[i] = score;
      this.#tags[i] = held;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.#worse(i, p)) break;
        this.#swap(i, p);
        i = p;
      }
      return true;
    }
    const s0 = this.#scores[0]!;
    if (!(score > s0 || (score === s0 && doc < this.#docs[0]!))) return false;
    this.#docs[0] = doc;
    this.#scores[0] = score;
    this.#tags[0] = held;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < this.#size && this.#worse(l, w)) w = l;
      if (r < this.#size && this.#worse(r, w)) w = r;
      if (w === i) break;
      this.#swap(i, w);
      i = w;
    }
    return true;
  }

  /** How many are kept (≤ k). */
  get size(): number {
    return this.#size;
  }

  /** The i-th kept document, score and tag, in heap order (i < size; callers sort what they read). */
  docAt(i: number): number {
    return this.#docs[i]!;
  }

  scoreAt(i: number): number {
    return this.#scores[i]!;
  }

  tagAt(i: number): number {
    return this.#tags[i]!;
  }
}

/**
 * The k-th largest of `a[0..n)` (1 ≤ k ≤ n; no NaN), by Hoare quickselect with the middle element as pivot; `a` is
 * reordered.
 */
export function kthLargest(a: Float64Array, n: number, k: number): number {
  const target = k - 1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! > pivot) i++;
      while (a[j]! < pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    // Now a[lo..j] ≥ pivot, a[i..hi] ≤ pivot, and anything between equals it.
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return a[target]!;
  }
  return a[target]!;
}
