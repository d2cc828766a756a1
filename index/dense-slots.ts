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
