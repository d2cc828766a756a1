import t from 'tap';
import { DENSE_KEY_LIMIT, DenseSlots, SeenStrings } from '../../index/dense-slots.js';

t.test('DenseSlots: per-use values for any number, dense or not; a new use forgets every key', async (t) => {
  const s = new DenseSlots();
  s.begin();
  const keys = [0, 1, 5000, DENSE_KEY_LIMIT - 1, DENSE_KEY_LIMIT, 2 ** 40, -1, 1.5, Number.NaN];
  keys.forEach((k, i) => {
    t.equal(s.get(k), -1, `${k} unset`);
    s.set(k, i);
  });
  keys.forEach((k, i) => t.equal(s.get(k), i, `${k} set`));
  s.set(5000, 77);
  t.equal(s.get(5000), 77, 'set again');
  s.begin();
  for (const k of keys) t.equal(s.get(k), -1, `${k} unset in the next use`);
  s.set(3, 1);
  s.set(2000, 2); // grows past the first use's size
  t.equal(s.get(3), 1);
  t.equal(s.get(2000), 2);
  t.equal(s.get(1), -1);
});

t.test('SeenStrings: add says whether a key is new in this use; forget; bounded across uses', async (t) => {
  const s = new SeenStrings(4);
  s.begin();
  t.equal(s.add('a'), true);
  t.equal(s.add('a'), false, 'already there');
  t.equal(s.add('b'), true);
  s.forget('a');
  t.equal(s.add('a'), true, 'forgotten, new again');
  s.begin();
  t.equal(s.add('a'), true, 'a new use: every key unseen');
  t.equal(s.add('a'), false);
  for (const k of ['c', 'd', 'e', 'f']) s.add(k);
  t.equal(s.size, 6);
  s.begin();
  t.equal(s.size, 0, 'past its bound, cleared when the next use begins');
  t.equal(s.add('c'), true);
  t.equal(s.add('c'), false);
});
