import fc from 'fast-check';
import t from 'tap';
import { Utf8, vectorFromArray } from 'apache-arrow';
import { PAGE_FIELD_ROW_COLUMNS } from '../../index/engines/lance/columns.js';
import { pageRows } from '../../index/engines/lance/rows.js';
import { TextSnapshot } from '../../index/engines/lance/text-engine.js';
import { makePage } from '../helpers/page-input.js';
import { defaultSnippetBytes, SnippetStore } from '../../index/engines/memory/snippet-store.js';

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

t.test('issue 14: a scan batch’s snippet column reaches the store as its bytes (chunked, with nulls) or as its values', async (t) => {
  // A plain Utf8 column in two chunks (the store copies the bytes, finding each row's chunk), with a null; and a column
  // of another kind (here one that only answers get): the values it reads as.
  // The page fields as a real passage row holds them.
  const row = pageRows(makePage(1, 'a.example', ['one passage']), () => 1).passages[0]! as unknown as Record<string, unknown>;
  const field = (c: string) => row[c] ?? null;
  const texts = ['first ASCII', null, 'Québec 東京', '', '😀 emoji', 'last one'];
  const utf8 = vectorFromArray(texts.slice(0, 3), new Utf8()).concat(vectorFromArray(texts.slice(3), new Utf8()));
  t.equal(utf8.data.length, 2, 'two chunks');
  const plain = { get: (i: number) => texts[i] ?? null };
  for (const [label, snippetCol] of [
    ['Utf8 bytes', utf8],
    ['values', plain],
  ] as const) {
    const snap = new TextSnapshot(40, undefined, MiB);
    const ids = texts.map((_, i) => 1000 + i);
    const cols: Record<string, { get(i: number): unknown }> = {
      search_text: { get: (i) => `word${i}` },
      page_ref: { get: (i) => i + 1 },
      ordinal: { get: () => 0 },
      page_no: { get: () => null },
      snippet_text: snippetCol,
    };
    for (const c of PAGE_FIELD_ROW_COLUMNS) cols[c] ??= { get: () => field(c) };
    const add = snap.rowAdder({ numRows: texts.length, getChild: (name) => cols[name] ?? null }, ids);
    add(0, 2);
    add(2, texts.length); // in slices, as addInSlices calls it
    t.same(
      ids.map((id) => snap.snippetOfRow(id)),
      texts,
      `${label}: every row's text, null kept as null`,
    );
    t.equal(snap.snippetOfRow(999), undefined, `${label}: a row the postings do not hold`);
    t.equal(snap.snippets!.size.docs, texts.length);
  }
  // Without the column in the batch (a read that did not bring it), nothing is kept and nothing fails.
  const snap = new TextSnapshot(40, undefined, MiB);
  const bare: Record<string, { get(i: number): unknown }> = {
    search_text: { get: () => 'w' },
    page_ref: { get: () => 1 },
    ordinal: { get: () => 0 },
    page_no: { get: () => null },
  };
  for (const c of PAGE_FIELD_ROW_COLUMNS) bare[c] ??= { get: () => field(c) };
  snap.rowAdder({ numRows: 1, getChild: (name) => bare[name] ?? null }, [7])(0, 1);
  t.equal(snap.snippetOfRow(7), undefined, 'no snippet column: not held (its result row comes from the table)');
});
