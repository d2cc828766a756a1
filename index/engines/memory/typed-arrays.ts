/** Typed arrays that grow by amortised doubling (the postings, the text engine's per-document arrays, dense slots). */

type Growable = Uint32Array | Int32Array | Uint16Array | Float64Array | Float32Array | Uint8Array;

/** `a` when it holds `need` elements, else a copy of it in a new array of the next power-of-two length ≥ 16 that does. */
export function grow<T extends Growable>(a: T, need: number): T {
  if (need <= a.length) return a;
  let n = Math.max(16, a.length);
  while (n < need) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}
