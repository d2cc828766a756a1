import { grow } from './typed-arrays.js';

/**
 * A small-integer map for one use at a time (a query's candidates or title terms): typed arrays cleared in O(1) by a
 * generation stamp, instead of a Map built per use; keys ≥ DENSE_KEY_LIMIT fall back to a Map. One instance per use
 * site and thread: a use spanning an await must not share its instance.
 */
export const DENSE_KEY_LIMIT = 2 ** 22;

export class DenseSlots {
  #stamp = new Uint32Array(0);
  #value = new Int32Array(0);
  #gen = 0;
  readonly #other = new Map<number, number>();

  /** The current use (it changes with every `begin`): a caller can tell whether the keys it set are still set. */
  get generation(): number {
    return this.#gen;
  }

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
    // Powers of two: never past DENSE_KEY_LIMIT, itself one.
    this.#stamp = grow(this.#stamp, key + 1);
    this.#value = grow(this.#value, key + 1);
    this.#stamp[key] = this.#gen;
    this.#value[key] = value;
  }
}

function isDense(key: number): boolean {
  return key >= 0 && key < DENSE_KEY_LIMIT && (key | 0) === key;
}
