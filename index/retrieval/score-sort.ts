/**
 * Ranking order for a query's candidates: score descending, then tie key ascending. Typed arrays and a plain
 * quicksort avoid thousands of comparator calls per search, and give exactly the stable comparator sort's order.
 */

/** Scratch arrays shared by the sorts of one thread (synchronous use: one sort at a time). */
let order = new Uint32Array(1024);
let keys = new Float64Array(1024);
let ties = new Float64Array(1024);

/**
 * Sorts `items` in place by `score(item)` descending, then `tie(item)` ascending, then as they were; what
 * `items.sort((a, b) => score(b) - score(a) || tie(a) - tie(b))` gives for scores and tie keys that are not NaN.
 */
export function sortByScore<T>(items: T[], score: (item: T) => number, tie: (item: T) => number): T[] {
  const n = items.length;
  if (n < 2) return items;
  reserve(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const it = items[i]!;
    order[i] = i;
    keys[i] = score(it);
    ties[i] = tie(it);
    if (sorted && i > 0 && before(i, i - 1)) sorted = false;
  }
  // A list already in order (the vector arm's, nearest first from the flat vectors) is left as it is.
  if (sorted) return items;
  sortOrder(0, n - 1);
  const copy = items.slice();
  for (let i = 0; i < n; i++) items[i] = copy[order[i]!]!;
  return items;
}

/**
 * The order of `scores[0..n)` from highest to lowest, equal scores by lower index first: indexes into `scores`, in a
 * scratch array of this thread's sorts (read it before the next sort). For lists kept in typed arrays (the flat
 * vectors' nearest documents), without an object per entry.
 */
export function orderByScore(scores: Float64Array, n: number): Uint32Array {
  reserve(n);
  for (let i = 0; i < n; i++) {
    order[i] = i;
    keys[i] = scores[i]!;
    ties[i] = i;
  }
  if (n > 1) sortOrder(0, n - 1);
  return order;
}

function reserve(n: number): void {
  if (order.length < n) {
    let size = order.length;
    while (size < n) size *= 2;
    order = new Uint32Array(size);
    keys = new Float64Array(size);
    ties = new Float64Array(size);
  }
}

/** Whether element a ranks before element b (equal scores and tie keys: the earlier first, as a stable sort). */
function before(a: number, b: number): boolean {
  const ka = keys[a]!;
  const kb = keys[b]!;
  if (ka !== kb) return ka > kb;
  const ta = ties[a]!;
  const tb = ties[b]!;
  return ta < tb || (ta === tb && a < b);
}

/** Quicksort of order[lo..hi] (median of three; the smaller side recursed, the larger looped). */
function sortOrder(lo: number, hi: number): void {
  while (hi - lo >= 16) {
    const mid = (lo + hi) >>> 1;
    // Median of three into order[mid], with order[lo] ≤ order[mid] ≤ order[hi] in rank.
    if (before(order[mid]!, order[lo]!)) swap(lo, mid);
    if (before(order[hi]!, order[mid]!)) {
      swap(mid, hi);
      if (before(order[mid]!, order[lo]!)) swap(lo, mid);
    }
    const pivot = order[mid]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (before(order[i]!, pivot)) i++;
      while (before(pivot, order[j]!)) j--;
      if (i <= j) {
        swap(i, j);
        i++;
        j--;
      }
    }
    if (j - lo < hi - i) {
      sortOrder(lo, j);
      lo = i;
    } else {
      sortOrder(i, hi);
      hi = j;
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    const x = order[i]!;
    let j = i - 1;
    while (j >= lo && before(x, order[j]!)) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = x;
  }
}

function swap(i: number, j: number): void {
  const t = order[i]!;
  order[i] = order[j]!;
  order[j] = t;
}
