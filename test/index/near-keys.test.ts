import t from 'tap';
import fc from 'fast-check';
import { nearKeyHash, NearKeySet } from '../../index/retrieval/near-keys.js';

t.test('nearKeyHash: FNV-1a of the UTF-16 code units, 32 bits signed', async (t) => {
  t.equal(nearKeyHash(''), 0x811c9dc5 | 0);
  t.equal(nearKeyHash('a'), 0xe40c292c | 0, 'the published FNV-1a 32 value of "a"');
  t.equal(nearKeyHash('foobar'), 0xbf9cf968 | 0, 'and of "foobar"');
  t.not(nearKeyHash('https://a.example/x'), nearKeyHash('https://a.example/y'));
});

t.test('NearKeySet answers as a Set of strings, whatever the hashes collide, across uses of every size', async (t) => {
  const set = new NearKeySet();
  // Hash functions from exact to every key colliding: the strings decide.
  const hashes: ((s: string) => number)[] = [nearKeyHash, (s) => s.length % 3, () => 0, (s) => nearKeyHash(s) & 0x7];
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.boolean(), fc.string({ maxLength: 4 })), { maxLength: 300, size: 'max' }),
      fc.integer({ min: 0, max: hashes.length - 1 }),
      (ops, which) => {
        const hash = hashes[which]!;
        set.begin(ops.length);
        const ref = new Set<string>();
        for (const [add, key] of ops) {
          const h = hash(key);
          if (set.has(key, h) !== ref.has(key)) return false;
          if (add && !ref.has(key)) {
            set.add(key, h);
            ref.add(key);
          }
        }
        // Strings built apart from the ones added (not the same objects) are found by their content.
        for (const key of ref) if (!set.has(`${key}!`.slice(0, -1), hash(key))) return false;
        return true;
      },
    ),
    { numRuns: 1000 },
  );
  t.pass('1,000 random uses');
  set.begin(5000);
  for (let i = 0; i < 5000; i++) set.add(`k${i}`, nearKeyHash(`k${i}`));
  t.ok(set.has('k4999', nearKeyHash('k4999')) && !set.has('k5000', nearKeyHash('k5000')), 'a use larger than any before grows the table');
  set.begin(1);
  t.notOk(set.has('k1', nearKeyHash('k1')), 'a new use starts empty');
});
