import fc from 'fast-check';
import t from 'tap';
import { defaultSnippetBytes, SnippetStore } from '../../index/snippet-store.js';

const MiB = 2 ** 20;

t.test('issue 14: the snippet store gives back every text it kept, null and empty apart from absent', async (t) => {
  const s = new SnippetStore(MiB);
  t.equal(s.get(0), undefined, 'nothing kept yet');
  t.ok(s.put(0, 'plain ASCII text'));
  t.ok(s.put(1, null));
  t.ok(s.put(2, ''));
  t.ok(s.put(5, 'Québec — 東京 — 😀 emoji and “quotes”'));
  t.equal(s.get(0), 'plain ASCII text');
  t.equal(s.get(1), null, 'a passage without text');
  t.equal(s.get(2), '', 'an empty text');
  t.equal(s.get(3), undefined, 'a document never put');
  t.equal(s.get(4), undefined);
  t.equal(s.get(5), 'Québec — 東京 — 😀 emoji and “quotes”');
  t.equal(s.get(-1), undefined, 'out of range');
  t.equal(s.get(1e9), undefined);
  t.same([s.has(1), s.has(2), s.has(3)], [true, true, false]);
  t.equal(s.size.docs, 4);
  t.equal(s.size.bytes, Buffer.byteLength('plain ASCII text') + Buffer.byteLength('Québec — 東京 — 😀 emoji and “quotes”'));
  t.throws(() => s.put(-1, 'x'), RangeError);
  t.throws(() => s.put(1.5, 'x'), RangeError);
});

t.test('issue 14: a text with a lone surrogate is left out (UTF-8 cannot hold it), not stored altered', async (t) => {
  const s = new SnippetStore(MiB);
  t.ok(s.put(0, 'a\uD800b'), 'not a failure of the bound');
  t.ok(s.put(1, 'x\uDC00'));
  t.ok(s.put(2, 'pair 😀 ok'));
  t.equal(s.get(0), undefined, 'a lone high surrogate: absent (its reads go to the table)');
  t.equal(s.get(1), undefined, 'a lone low surrogate: absent');
  t.equal(s.get(2), 'pair 😀 ok', 'a proper pair is kept');
  t.notOk(s.size.full);
});

t.test('issue 14: any well-formed strings round-trip, in any order of documents (property)', async (t) => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.nat(3000),
          fc.option(fc.string({ unit: fc.constantFrom('grapheme', 'binary-ascii', 'grapheme-composite'), maxLength: 300 }), { nil: null }),
        ),
        { maxLength: 200 },
      ),
      (entries) => {
        const s = new SnippetStore(4 * MiB);
        const want = new Map<number, string | null>();
        for (const [doc, text] of entries) {
          if (want.has(doc)) continue; // a document's text is written once
          if (!s.put(doc, text)) return false;
          want.set(doc, text);
        }
        for (const [doc, text] of want) if (s.get(doc) !== text) return false;
        for (let d = 0; d <= 3000; d++) if (!want.has(d) && s.get(d) !== undefined) return false;
        return s.size.docs === want.size;
      },
    ),
    { numRuns: 200 },
  );
  t.pass('200 runs');
});

t.test('issue 14: the store stops at its bound, keeps what it holds, and spans several chunks', async (t) => {
  // One chunk the size of a small bound: 10 texts of 100 bytes fit 1,000 bytes only while the worst case (3 bytes
  // per UTF-16 unit) fits what is left.
  const small = new SnippetStore(1000);
  const kept: number[] = [];
  for (let d = 0; d < 20; d++) if (small.put(d, String(d % 10).repeat(100))) kept.push(d);
  t.ok(kept.length >= 3 && kept.length < 10, `kept the first ${kept.length}, then full`);
  t.same(
    kept,
    Array.from({ length: kept.length }, (_, i) => i),
    'in order, none after the first refusal',
  );
  t.ok(small.size.full);
  t.ok(small.size.allocated <= 1000, 'within the bound');
  for (const d of kept) t.equal(small.get(d), String(d % 10).repeat(100));
  t.equal(small.get(kept.length), undefined, 'the refused one is absent');
  t.notOk(small.put(100, null), 'full: even a null is refused (the store is no longer complete)');
  t.equal(small.get(100), undefined);

  // A bound past one chunk (8 MiB): texts of 100 KiB cross from chunk to chunk.
  const big = new SnippetStore(20 * MiB);
  const text = (d: number) => `${d}:`.padEnd(100 * 1024, String.fromCharCode(97 + (d % 26)));
  let n = 0;
  while (big.put(n, text(n))) n++;
  t.ok(n > 150 && n < 205, `${n} texts of 100 KiB in 20 MiB (chunks of 8 MiB)`);
  t.ok(big.size.allocated <= 20 * MiB);
  for (let d = 0; d < n; d++) if (big.get(d) !== text(d)) t.fail(`text ${d} changed`);
  t.equal(big.get(n), undefined);
  t.notOk(new SnippetStore(MiB).put(0, 'x'.repeat(MiB)), 'a text longer than a chunk (here the bound) is refused');
  t.notOk(new SnippetStore(0).put(0, ''), 'a store of 0 bytes keeps nothing');
});

t.test('issue 14: the default bound is 1/32 of memory, 64 MiB to 1 GiB', async (t) => {
  t.equal(defaultSnippetBytes(24 * 2 ** 30), 768 * MiB);
  t.equal(defaultSnippetBytes(1 * 2 ** 30), 64 * MiB);
  t.equal(defaultSnippetBytes(256 * 2 ** 30), 1024 * MiB);
});

t.test('issue 14: bytes put as UTF-8 read back as the text they encode, beside texts put as strings (property)', async (t) => {
  const enc = new TextEncoder();
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.boolean(), fc.option(fc.string({ unit: 'grapheme', maxLength: 200 }), { nil: null })), { maxLength: 150 }),
      (entries) => {
        const s = new SnippetStore(2 * MiB);
        entries.forEach(([asBytes, text], doc) => {
          if (asBytes) s.putUtf8(doc, text === null ? null : enc.encode(text));
          else s.put(doc, text);
        });
        return entries.every(([, text], doc) => s.get(doc) === text) && s.size.docs === entries.length;
      },
    ),
    { numRuns: 200 },
  );
  // Bytes from a larger buffer (a batch's values): only the slice is kept, and later writes to the buffer do not reach it.
  const buf = enc.encode('xxhello worldyy');
  const s = new SnippetStore(MiB);
  t.ok(s.putUtf8(0, buf.subarray(2, 13)));
  buf.fill(0);
  t.equal(s.get(0), 'hello world');
  t.notOk(new SnippetStore(1000).putUtf8(0, new Uint8Array(1001)), 'past the bound: refused');
});
