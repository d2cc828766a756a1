import t from 'tap';
import fc from 'fast-check';
import { orderByScore, sortByScore } from '../../index/retrieval/score-sort.js';

interface Item {
  readonly s: number;
  readonly k: number;
  readonly id: number;
}

const reference = (items: readonly Item[]) => items.slice().sort((a, b) => b.s - a.s || a.k - b.k);

t.test('sortByScore orders as the stable comparator sort: score descending, tie key ascending, then as given', async (t) => {
  // Few distinct scores and keys (many ties, equal pairs too), infinities and both zeros; lists across the insertion
  // sort's threshold and past the scratch arrays' first size.
  const score = fc.oneof(
    fc.integer({ min: -4, max: 4 }),
    fc.constantFrom(Infinity, -Infinity, 0, -0, 0.1 + 0.2, 0.3),
    fc.double({ noNaN: true }),
  );
  const key = fc.oneof(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 2 ** 52 }));
  fc.assert(
    fc.property(fc.array(fc.tuple(score, key), { maxLength: 3000, size: 'max' }), (pairs) => {
      const items = pairs.map(([s, k], id) => ({ s, k, id }));
      const want = reference(items).map((x) => x.id);
      const got = sortByScore(
        items,
        (x) => x.s,
        (x) => x.k,
      ).map((x) => x.id);
      return JSON.stringify(got) === JSON.stringify(want);
    }),
    { numRuns: 400 },
  );
  t.pass('400 random lists');
  const ids = (items: readonly Item[]) =>
    sortByScore(
      items.slice(),
      (x) => x.s,
      (x) => x.k,
    ).map((x) => x.id);
  const sorted = Array.from({ length: 500 }, (_, i) => ({ s: 500 - i, k: i, id: i }));
  const same = Array.from({ length: 300 }, (_, i) => ({ s: 1, k: 7, id: i }));
  for (const [label, list, want] of [
    ['a sorted list stays', sorted, sorted],
    ['a reversed list is turned', sorted.slice().reverse(), sorted],
    ['all equal: the order given', same, same],
  ] as const)
    t.same(
      ids(list),
      want.map((x) => x.id),
      label,
    );
});

t.test('orderByScore: indexes by score descending, equal scores by lower index (property)', async (t) => {
  const score = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(Infinity, -Infinity, 0, -0), fc.double({ noNaN: true }));
  fc.assert(
    fc.property(fc.array(score, { maxLength: 3000, size: 'max' }), fc.nat(50), (scores, extra) => {
      // Only the first n of a longer array count.
      const arr = Float64Array.from([...scores, ...Array.from({ length: extra }, () => 1e300)]);
      const want = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
      const got = [...orderByScore(arr, scores.length).subarray(0, scores.length)];
      return JSON.stringify(got) === JSON.stringify(want);
    }),
    { numRuns: 300 },
  );
  t.same([...orderByScore(Float64Array.from([0.5, 2, 0.5, 3]), 4).subarray(0, 4)], [3, 1, 0, 2]);
});
