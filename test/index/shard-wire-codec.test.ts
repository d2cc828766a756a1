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

t.test('lists of rows cross as columns: each field named once, repeated strings once, numbers exact', async (t) => {
  const rows = Array.from({ length: 40 }, (_, i) => ({
    page_ref: 1000 + Math.floor(i / 4),
    ordinal: i % 4,
    title: `A page title ${Math.floor(i / 4)} about rivers and memory`,
    host: `host${i % 3}.example`,
    lang: i % 5 === 0 ? null : 'en',
    content_hash: `c0ffee${Math.floor(i / 4)}`.padEnd(16, '0'),
    _rowid: i === 7 ? 2n ** 63n + 5n : BigInt(i * 4096),
    _score: i === 3 ? -0 : i === 9 ? Infinity : 12.5 / (i + 1) + 1e-13,
    ...(i % 2 === 0 ? { near_print: 'a1b2c3d4e5f60718' } : {}),
    ...(i === 11 ? { _present: new Uint8Array([1, 0, 1]) } : {}),
  }));
  const sent = { text: rows, rows: new Map(rows.map((r) => [`${r.page_ref}:${r.ordinal}`, r])), one: [rows[0]] };
  const wire = encodeWire(sent);
  const got = decodeWire(wire) as typeof sent;
  t.same(got.text, rows, 'every row, every field');
  t.ok(Object.is(got.text[3]!._score, -0), 'a negative zero stays one');
  t.equal(got.text[9]!._score, Infinity);
  t.equal(got.text[7]!._rowid, 2n ** 63n + 5n, 'a row id past 2^53');
  t.equal(got.text[5]!._score, rows[5]!._score, 'a score is the same double');
  t.notOk('near_print' in got.text[1]!, 'a field a row lacks stays absent');
  t.ok(got.text[11]!._present instanceof Uint8Array);
  t.ok(got.rows instanceof Map);
  t.same([...got.rows.keys()], [...sent.rows.keys()]);
  t.same([...got.rows.values()], rows);
  t.same(got.one, [rows[0]], 'a list of one row');
  // Named once per list, not once per row (the plain JSON of the same rows repeats every name and title).
  t.equal(wire.split('"content_hash"').length - 1, 3, 'a field name once per list (twice, and in the row of the list of one)');
  t.equal(wire.split('about rivers and memory').length - 1, 2 * 10 + 1, 'each of 10 titles once per list');
  const plain = JSON.stringify(sent.text, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v instanceof Uint8Array ? [...v] : v));
  t.ok(
    encodeWire(rows).length < plain.length * 0.6,
    `columns take less than 60 % of plain JSON (${encodeWire(rows).length} / ${plain.length} bytes)`,
  );
});

t.test('a malformed list of rows is refused, not read wrong', async (t) => {
  t.throws(() => decodeWire(JSON.stringify({ $rows: { n: 3, k: ['page_ref'], c: [{ t: 'i', v: [1, 2] }] } })), /wrong length/);
});
