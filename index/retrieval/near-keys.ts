/**
 * The near-duplicate check of a query's page results (retrieval.ts `groupPages`): an open-addressed table of
 * precomputed 32-bit hashes in typed arrays, cleared by a generation stamp, instead of a per-query `Set` of strings.
 * Strings are compared only on equal hashes, so the answer is exactly the `Set`'s.
 */

/** FNV-1a over the string's UTF-16 code units (32 bits). Any fixed function would do: equal strings, equal hashes. */
export function nearKeyHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * A set of strings with their `nearKeyHash`, each with a number (the kept page a key belongs to), for one use at a time
 * (one instance per use site and thread; a use ends when the next `begin`s). Holds up to the count given to `begin`.
 */
export class NearKeySet {
  #stamp = new Uint32Array(0);
  #hash = new Int32Array(0);
  #value = new Int32Array(0);
  #keys: (string | undefined)[] = [];
  #mask = 0;
  #gen = 0;

  /** Starts a new use, empty, for up to `max` keys (the table stays at most half full). */
  begin(max: number): void {
    let size = 16;
    while (size < 2 * max) size *= 2;
    if (size > this.#stamp.length) {
      this.#stamp = new Uint32Array(size);
      this.#hash = new Int32Array(size);
      this.#value = new Int32Array(size);
      this.#keys = new Array<string | undefined>(size).fill(undefined);
      this.#gen = 0;
    }
    this.#mask = this.#stamp.length - 1;
    if (++this.#gen === 0xffffffff) {
      this.#stamp.fill(0);
      this.#gen = 1;
    }
  }

  /** Whether `key` (whose `nearKeyHash` is `hash`) is in the set. */
  has(key: string, hash: number): boolean {
    return this.get(key, hash) !== -1;
  }

  /** The number added with `key` (whose `nearKeyHash` is `hash`), or -1 when it is not in the set. */
  get(key: string, hash: number): number {
    const stamp = this.#stamp;
    const gen = this.#gen;
    for (let i = hash & this.#mask; stamp[i] === gen; i = (i + 1) & this.#mask)
      if (this.#hash[i] === hash && this.#keys[i] === key) return this.#value[i]!;
    return -1;
  }

  /** Adds `key` (whose `nearKeyHash` is `hash`) with `value` (≥ 0); the caller has checked it is not in the set. */
  add(key: string, hash: number, value = 0): void {
    const stamp = this.#stamp;
    const gen = this.#gen;
    let i = hash & this.#mask;
    while (stamp[i] === gen) i = (i + 1) & this.#mask;
    stamp[i] = gen;
    this.#hash[i] = hash;
    this.#value[i] = value;
    this.#keys[i] = key;
  }
}
