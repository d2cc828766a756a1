/**
 * The shard wire's codec (index/shards/shard-wire.ts): what JSON has no form for comes back as it was sent, so an api
 * replica reads a searcher's candidates exactly as a shard in its own process would give them.
 */
import t from 'tap';
import { decodeWire, encodeWire } from '../../index/shards/shard-wire.js';

t.test('bigints, non-finite numbers, vectors, maps and term-presence bytes cross unchanged', async (t) => {
  const present = new Uint8Array([1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1]);
  // A view into a larger buffer, as a slice of a scratch array would be.
  const backing = new Uint8Array(50).fill(7);
  const view = backing.subarray(5, 9).fill(1);
  view[2] = 0;
  const sent = {
    rows: [
      { _rowid: 12345678901234567890n, _score: 1.25, _present: present },
      { _rowid: 3n, _score: -Infinity, _present: 0b1011, _view: view },
    ],
    vector: new Float32Array([0.5, -1.5, 3.25]),
    stats: new Map([['passport', 4]]),
    nan: NaN,
  };
  const got = decodeWire(encodeWire(sent)) as typeof sent & { rows: { _view?: Uint8Array }[] };
  t.equal(got.rows[0]!._rowid, 12345678901234567890n);
  t.ok(got.rows[0]!._present instanceof Uint8Array, 'term presence of a long query stays bytes');
  t.same([...(got.rows[0]!._present as Uint8Array)], [...present]);
  t.equal((got.rows[0]!._present as Uint8Array).length, present.length);
  t.equal(got.rows[1]!._present, 0b1011, 'a bit mask stays a number');
  t.same([...got.rows[1]!._view!], [1, 1, 0, 1], 'only the view’s bytes, not its backing buffer');
  t.equal(got.rows[1]!._score, -Infinity);
  t.ok(got.vector instanceof Float32Array);
  t.same([...got.vector], [0.5, -1.5, 3.25]);
  t.same([...got.stats.entries()], [['passport', 4]]);
  t.ok(Number.isNaN(got.nan));
});
