/**
 * Per-query structures for the steps that see every candidate of a query (hundreds), kept from one query to the next
 * and emptied by a generation stamp, so a query neither builds nor grows a hash table of its own (growing them was
 * most of the memory such a step allocated: a set of ≈ 1,000 keys per query was ≈ 7 % of a hybrid search's).
 */

/**
 * A per-query map from page refs to small integers, for the steps that see every candidate of a query (hundreds):
 * two typed arrays indexed by the key, emptied in O(1) by a generation stamp, instead of a Map built, grown and hashed
 * per query. Page refs are small non-negative integers in practice (the state store numbers pages from 1); a key
 * outside [0, DENSE_KEY_LIMIT) goes to an ordinary Map, so any number still works, only slower.
 *
 * One instance per use site and thread, used by synchronous code only (a use begins and ends without an await).
 */
export const DENSE_KEY_LIMIT = 2 ** 22;

export class DenseSlots {
  #stamp = new Uint32Array(0);
  #value = new Int32Array(0);
  #gen = 0;
  readonly #other = new Map<number, number>();

  /** Starts a new use: every key unset. */
  begin(): void {
    if (this.#other.size > 0) this.#other.clear();
    if (++this.#gen === 0xffffffff) {
      this.#stamp.fill(0);
      this.#gen = 1;
    }
  }

  /** The value set for `key` in this use, or -1. */
  get(key: number): number {
    if (isDense(key)) return key < this.#stamp.length && this.#stamp[key] === this.#gen ? this.#value[key]! : -1;
    return this.#other.get(key) ?? -1;
  }

  /** Sets `key` to `value` (≥ 0) for this use. */
  set(key: number, value: number): void {
    if (!isDense(key)) {
      this.#other.set(key, value);
      return;
    }
    if (key >= this.#stamp.length) {
      const n = Math.min(DENSE_KEY_LIMIT, Math.max(key + 1, this.#stamp.length * 2, 1024));
      const s = new Uint32Array(n);
      s.set(this.#stamp);
      this.#stamp = s;
      const v = new Int32Array(n);
      v.set(this.#value);
      this.#value = v;
    }
    this.#stamp[key] = this.#gen;
    this.#value[key] = value;
  }
}

function isDense(key: number): boolean {
  return key >= 0 && key < DENSE_KEY_LIMIT && (key | 0) === key;
}

/**
 * A per-query set of strings (group keys, content hashes), kept between queries as a map from key to the generation
 * that added it. Bounded: past `maxKeys` keys it is cleared when a use begins (clearing only forgets keys of earlier
 * uses), so it holds at most `maxKeys` plus one query's keys, and at most that many strings stay referenced.
 */
export class SeenStrings {
  readonly #gen = new Map<string, number>();
  #current = 0;
  readonly #maxKeys: number;

  constructor(maxKeys = 65_536) {
    this.#maxKeys = maxKeys;
  }

  /** Starts a new use: every key unseen. */
  begin(): this {
    if (this.#gen.size > this.#maxKeys || this.#current >= 2 ** 30) {
      this.#gen.clear();
      this.#current = 0;
    }
    this.#current++;
    return this;
  }

  /** Adds `key` to this use; false when it was there already. */
  add(key: string): boolean {
    if (this.#gen.get(key) === this.#current) return false;
    this.#gen.set(key, this.#current);
    return true;
  }

  /** Removes `key` from this use. */
  forget(key: string): void {
    this.#gen.delete(key);
  }

  /** Keys held (this use's and earlier ones' not yet cleared). */
  get size(): number {
    return this.#gen.size;
  }
}
