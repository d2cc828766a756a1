import t from 'tap';
import { DENSE_KEY_LIMIT, DenseSlots } from '../../index/engines/memory/dense-slots.js';

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
