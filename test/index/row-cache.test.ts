import t from 'tap';
import fc from 'fast-check';
import { defaultRowCacheBytes, RowCache } from '../../index/engines/memory/row-cache.js';
import { defaultSnippetBytes } from '../../index/engines/memory/snippet-store.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { compileQuery, parseQuery } from '../../index/retrieval/query.js';
import { makePage } from '../helpers/page-input.js';
import { loadConfig } from '../../config.js';
import { startTestService } from '../helpers/service.js';

t.test('issue 14: the default bound is 1/32 of the machine, between 64 MiB and 1 GiB; SVC_ROW_CACHE_MB sets it', async (t) => {
  const MiB = 2 ** 20;
  t.equal(defaultRowCacheBytes(24 * 1024 * MiB), 768 * MiB, '24 GiB machine');
  t.equal(defaultRowCacheBytes(1024 * MiB), 64 * MiB, 'small machine: the floor');
  t.equal(defaultRowCacheBytes(256 * 1024 * MiB), 1024 * MiB, 'large machine: the ceiling');
  t.equal(loadConfig({ env: { SVC_ROW_CACHE_MB: '3' } }).rowCacheMb, 3);
  t.equal(loadConfig({ env: {} }).rowCacheMb, undefined, 'unset: the machine-sized default');
  t.throws(() => loadConfig({ env: { SVC_ROW_CACHE_MB: '-1' } }), /SVC_ROW_CACHE_MB/);
  const s = await startTestService({ config: { rowCacheMb: 2 } });
  t.teardown(s.close);
  t.equal(s.services.deps.index.rowCacheStats().maxBytes, 2 * MiB, 'the served index gets the configured bound');
  const d = await startTestService();
  t.teardown(d.close);
  t.equal(d.services.deps.index.rowCacheStats().maxBytes, defaultRowCacheBytes(), 'and the default without it');
});

t.test('issue 14: SVC_SNIPPET_MB sets the snippet store’s bound (per reader with postings); 0 turns it off', async (t) => {
  const MiB = 2 ** 20;
  t.equal(loadConfig({ env: { SVC_SNIPPET_MB: '5' } }).snippetMb, 5);
  t.equal(loadConfig({ env: {} }).snippetMb, undefined, 'unset: the machine-sized default');
  t.throws(() => loadConfig({ env: { SVC_SNIPPET_MB: 'lots' } }), /SVC_SNIPPET_MB/);
  for (const [mb, want] of [
    [5, 5 * MiB],
    [0, 0],
    [undefined, defaultSnippetBytes()],
  ] as const) {
    const s = await startTestService(mb === undefined ? {} : { config: { snippetMb: mb } });
    t.teardown(s.close);
    await s.services.deps.index.upsertPage(makePage(1, 'a.example', ['zebra crossing', 'striped zebras']));
    await s.services.deps.index.textEngineReady();
    const st = s.services.deps.index.textPostingsStats()!;
    t.equal(st.snippets.maxBytes, want, `SVC_SNIPPET_MB=${mb}: the served index's bound`);
    t.equal(st.snippets.docs, want > 0 ? 2 : 0, `SVC_SNIPPET_MB=${mb}: ${want > 0 ? 'both passages held' : 'none held'}`);
  }
});

t.test('issue 14: the row cache is bounded in bytes and drops the least recently used first', async (t) => {
  const c = new RowCache<{ text: string }>(1000);
  c.set(1n, { text: 'a'.repeat(200) }); // ≈ 480 bytes
  c.set(2n, { text: 'b'.repeat(200) });
  t.equal(c.size.rows, 2);
  t.ok(c.get(1n), 'row 1 used: row 2 is now the least recently used');
  c.set(3n, { text: 'c'.repeat(200) });
  t.equal(c.get(2n), undefined, 'row 2 dropped');
  t.equal(c.get(1n)?.text[0], 'a');
  t.equal(c.get(3n)?.text[0], 'c');
  t.ok(c.size.bytes <= 1000);
  c.set(4n, { text: 'x'.repeat(5000) });
  t.equal(c.get(4n), undefined, 'a row larger than the whole bound is not kept');
  const off = new RowCache<{ text: string }>(0);
  off.set(1n, { text: 'a' });
  t.equal(off.get(1n), undefined, '0 disables');
});

t.test('issue 14: result rows read once come from the cache, equal, and a replaced page is read anew', async (t) => {
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(32) });
  t.teardown(() => idx.close());
  await idx.upsertPages([makePage(1, 'a.example', ['zebra crossing on a busy road', 'second passage about zebras'])]);
  await idx.textEngineReady();
  const c = compileQuery(parseQuery('zebra'));
  const hits = (await idx.textCandidates(c.text!, {}, 10, []))!;
  t.equal(hits.length, 2);
  const first = await idx.passageRows(hits);
  const again = await idx.passageRows(hits);
  t.same([...again.entries()], [...first.entries()], 'the same rows');
  t.notOk('_rowid' in first.get('1:0')!, 'rows go out without the row id');
  await idx.upsertPages([makePage(1, 'a.example', ['zebra crossing, rewritten'], { contentHash: 'v2' })]);
  await idx.textEngineReady();
  const now = (await idx.textCandidates(c.text!, {}, 10, []))!;
  const rows = await idx.passageRows(now);
  t.equal(rows.get('1:0')?.text, 'zebra crossing, rewritten', 'the new row, not the cached old one');
  t.equal(rows.get('1:0')?.content_hash, 'v2');
});

t.test("issue 14: a small index's result rows are in memory once its postings are built, equal to the table's rows", async (t) => {
  const dir = t.testdir();
  const pages = Array.from({ length: 30 }, (_, i) =>
    makePage(i + 1, `h${i % 4}.example`, [`zebra number ${i} crossing the road. `.repeat(20), `second passage ${i} about striped horses`]),
  );
  const writer = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32) });
  await writer.upsertPages(pages.slice(0, 20));
  await writer.textEngineReady();
  t.equal(writer.rowCacheStats().rows, 40, 'rows of a built index');
  await writer.upsertPages(pages.slice(20));
  await writer.textEngineReady();
  t.equal(writer.rowCacheStats().rows, 60, 'and the rows each later write added (the postings patch hands them over)');
  await writer.close();

  const idx = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32) });
  t.teardown(() => idx.close());
  await idx.textEngineReady();
  t.equal(idx.rowCacheStats().rows, 60, 'reopened: the build scan fills the cache with every passage');
  const plain = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), textEngine: false, rowCacheBytes: 0 });
  t.teardown(() => plain.close());
  const c = compileQuery(parseQuery('zebra horses'));
  const hits = (await idx.textCandidates(c.text!, {}, 100, c.hitColumns))!;
  t.equal(hits.length, 60);
  const fromMemory = await idx.passageRows(hits);
  const fromTable = await plain.passageRows(hits);
  t.equal(plain.rowCacheStats().rows, 0, 'the comparison index reads the table');
  t.equal(fromMemory.size, 60);
  for (const [k, row] of fromTable) t.same(fromMemory.get(k), row, `${k}: the same row, field by field`);
  t.same(Object.keys(fromMemory.get('1:0')!).sort(), Object.keys(fromTable.get('1:0')!).sort(), 'the same columns');

  const small = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), rowCacheBytes: 20 * 1024 });
  t.teardown(() => small.close());
  await small.textEngineReady();
  t.equal(small.rowCacheStats().rows, 0, 'a scan that cannot fit (60 rows of ≥ 1 KiB in 20 KiB) reads no row columns');
  const tight = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), rowCacheBytes: 60 * 1024 });
  t.teardown(() => tight.close());
  await tight.textEngineReady();
  const st = tight.rowCacheStats();
  t.ok(st.rows > 0 && st.rows < 60 && st.bytes <= 60 * 1024, `filled up to its bound and no further (${st.rows} rows, ${st.bytes} B)`);
  const rows = await tight.passageRows(hits);
  t.equal(rows.size, 60, 'the rest is read from the table');
  for (const [k, row] of fromTable) t.same(rows.get(k), row, `${k}: equal either way`);
});

t.test(
  'issue 14: result rows are whole rows without text, headings and tokens, read each way; a whole read is never served one',
  async (t) => {
    const dir = t.testdir();
    // Every third page paged, as a PDF's passages are (page_no set): the postings keep a passage's page number.
    const pages = Array.from({ length: 12 }, (_, i) => {
      const page = makePage(i + 1, `h${i % 3}.example`, [
        `zebra number ${i} crossing the road`,
        `second passage ${i} about striped zebras`,
      ]);
      return i % 3 === 0 ? { ...page, passages: page.passages.map((p) => ({ ...p, page: p.ordinal + 2 })) } : page;
    });
    const writer = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32) });
    await writer.upsertPages(pages);
    await writer.textEngineReady();
    await writer.close();
    const c = compileQuery(parseQuery('zebra'));
    // Four readers: rows from the cache (prefilled), from the postings with their snippet store (no cache), from the
    // table with the key and page fields from the postings (no cache, no store), and from the table alone (no postings).
    const cached = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32) });
    const stored = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), rowCacheBytes: 0 });
    const own = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), rowCacheBytes: 0, snippetBytes: 0 });
    const plain = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), textEngine: false, rowCacheBytes: 0 });
    t.teardown(() => Promise.all([cached, stored, own, plain].map((i) => i.close())));
    await cached.textEngineReady();
    await stored.textEngineReady();
    await own.textEngineReady();
    t.equal(stored.textPostingsStats()!.snippets.docs, 24, 'the store holds every passage');
    t.equal(own.textPostingsStats()!.snippets.docs, 0, 'none without one');
    const hits = (await cached.textCandidates(c.text!, {}, 100, []))!;
    t.equal(hits.length, 24);
    const whole = await plain.passageRows(hits);
    t.equal(whole.size, 24);
    t.same(
      [whole.get('1:0')?.page_no, whole.get('1:1')?.page_no, whole.get('2:0')?.page_no],
      [2, 3, null],
      'page numbers where the page is paged',
    );
    for (const [label, idx] of [
      ['cache', cached],
      ['snippet store + postings', stored],
      ['own columns + postings', own],
      ['table', plain],
    ] as const) {
      const before = idx.rowReads();
      const rows = await idx.resultRows(hits);
      const reads = idx.rowReads();
      t.same(
        { memory: reads.memory - before.memory, table: reads.table - before.table },
        label === 'cache' || label === 'snippet store + postings' ? { memory: 24, table: 0 } : { memory: 0, table: 24 },
        `${label}: where the rows came from`,
      );
      t.equal(rows.size, 24, `${label}: every row`);
      for (const [k, w] of whole) {
        const { text: _t, heading_path: _h, tokens: _n, ...expected } = w;
        const r = rows.get(k)!;
        // A cached whole row serves a result read as it is; the others hold exactly the result columns.
        t.same(label === 'cache' ? r : { ...r }, label === 'cache' ? w : expected, `${label} ${k}: equal to the table's row`);
        if (label !== 'cache') t.notOk('text' in r || 'tokens' in r || 'heading_path' in r, `${label} ${k}: no whole-row columns`);
        t.equal(`${r.page_ref}:${r.ordinal}`, k, `${label} ${k}: its own key`);
      }
    }

    // One cache, both kinds: a result read caches result rows; a whole read after it reads whole rows and keeps them;
    // a result read after that is served the whole rows, and does not put result rows back in their place.
    // (24 rows of ≥ 1 KiB do not fit 20 KiB: nothing is prefilled.)
    const mixed = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), rowCacheBytes: 20 * 1024, snippetBytes: 0 });
    t.teardown(() => mixed.close());
    await mixed.textEngineReady();
    t.equal(mixed.rowCacheStats().rows, 0, 'an empty cache');
    const some = hits.slice(0, 4);
    const first = await mixed.resultRows(some);
    t.notOk(
      [...first.values()].some((r) => 'text' in r),
      'result rows read',
    );
    t.equal(mixed.cachedRows(some.map((h) => h._rowid!)), 4, 'and cached');
    const full = await mixed.passageRows(some);
    t.ok(
      [...full.values()].every((r) => typeof r.text === 'string' && typeof r.tokens === 'number'),
      'a whole read is whole',
    );
    for (const [k, r] of full) t.same(r, whole.get(k), `${k}: the table's whole row`);
    const again = await mixed.resultRows(some);
    t.ok(
      [...again.values()].every((r) => 'text' in r),
      'the whole rows now serve result reads',
    );
    const fullAgain = await mixed.passageRows(some);
    for (const [k, r] of fullAgain) t.same(r, whole.get(k), `${k}: still whole`);
  },
);

t.test('issue 14: a result row read with its page fields from memory never mixes two versions of a page', async (t) => {
  // No cache and no prefill: every row is read, its own columns from the table and its page's fields from the postings.
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(32), rowCacheBytes: 0 });
  t.teardown(() => idx.close());
  const v1 = makePage(1, 'a.example', ['zebra crossing, first version', 'zebra second passage, first version'], {
    title: 'Old title',
    contentHash: 'v1',
  });
  await idx.upsertPages([v1, makePage(2, 'b.example', ['zebra elsewhere'], { title: 'Other' })]);
  await idx.textEngineReady();
  const c = compileQuery(parseQuery('zebra'));
  const oldHits = (await idx.textCandidates(c.text!, {}, 10, []))!;
  const first = await idx.passageRows(oldHits);
  t.equal(first.size, 3);
  t.equal(first.get('1:0')?.title, 'Old title');
  t.equal(first.get('1:1')?.url, 'https://a.example/page-1', 'page fields filled in');
  t.equal(first.get('2:0')?.title, 'Other');
  await idx.upsertPages([
    makePage(1, 'a.example', ['zebra crossing, second version', 'zebra second passage, second version'], {
      title: 'New title',
      contentHash: 'v2',
    }),
  ]);
  await idx.textEngineReady();
  const stale = await idx.passageRows(oldHits);
  // The old rows are gone from the table: whatever is returned for their keys, text and page fields are one version.
  t.equal(stale.get('2:0')?.content_hash, 'hash-2');
  for (const [k, row] of stale) {
    if (row.page_ref !== 1) continue;
    const v = row.text.endsWith('second version') ? 'v2' : 'v1';
    t.equal(row.content_hash, v, `${k}: the page fields are those of the row's own version (${v})`);
    t.equal(row.title, v === 'v2' ? 'New title' : 'Old title');
  }
  const now = await idx.passageRows((await idx.textCandidates(c.text!, {}, 10, []))!);
  t.equal(now.get('1:0')?.text, 'zebra crossing, second version');
  t.equal(now.get('1:0')?.title, 'New title');
  t.equal(now.get('1:0')?.content_hash, 'v2');
  t.equal(now.get('2:0')?.title, 'Other', 'the other page untouched');
});

t.test(
  "issue 14: when the postings are rebuilt, the prefill replaces the cache's rows of the old row ids (never read again)",
  async (t) => {
    const dir = t.testdir();
    const pages = Array.from({ length: 30 }, (_, i) =>
      makePage(i + 1, `h${i % 4}.example`, [
        `zebra number ${i} crossing the road. `.repeat(20),
        `second passage ${i} about striped horses`,
      ]),
    );
    // Room for the table's rows once, not twice.
    const idx = await PassageIndex.open({ dir, embedder: createHashingEmbedder(32), rowCacheBytes: 200 * 1024, optimizeEvery: 1_000_000 });
    t.teardown(() => idx.close());
    for (const slice of [pages.slice(0, 10), pages.slice(10, 20), pages.slice(20)]) await idx.upsertPages(slice);
    await idx.textEngineReady();
    const before = idx.rowCacheStats();
    t.equal(before.rows, 60, 'every row prefilled');
    t.ok(before.bytes > 100 * 1024, `the rows take more than half the bound (${before.bytes} B)`);
    const c = compileQuery(parseQuery('zebra horses'));
    const oldIds = new Set((await idx.textCandidates(c.text!, {}, 100, c.hitColumns))!.map((h) => h._rowid));
    // Every page written again (a recrawl of the whole site): every row has a new id, and the postings are rebuilt.
    await idx.upsertPages(pages.map((p) => ({ ...p, contentHash: `${p.contentHash}-v2` })));
    await idx.textEngineReady();
    const hits = (await idx.textCandidates(c.text!, {}, 100, c.hitColumns))!;
    t.equal(hits.length, 60);
    t.ok(
      hits.every((h) => !oldIds.has(h._rowid)),
      'every row has a new id',
    );
    t.equal(idx.cachedRows(hits.map((h) => h._rowid!)), 60, 'every row of the new ids is in memory');
    t.ok(idx.cachedRows([...oldIds].map((id) => id!)) < 30, 'old rows were pushed out to make room');
    t.ok(idx.rowCacheStats().bytes <= 200 * 1024);
  },
);

t.test('issue 14: a prefill pass never pushes out its own rows; only a whole-table pass pushes out older ones', async (t) => {
  const row = (c: string) => ({ text: c.repeat(200) }); // ≈ 480 bytes each
  const c = new RowCache<{ text: string }>(1500);
  c.set(1n, row('a'));
  c.set(2n, row('b'));
  const added = c.fillPass(false);
  t.equal(added(3n, row('c')), true, 'free room is taken');
  t.equal(added(4n, row('d')), false, 'a pass for added rows pushes nothing out');
  t.same(
    [1n, 2n, 3n, 4n].map((id) => c.has(id)),
    [true, true, true, false],
  );
  const whole = c.fillPass(true);
  t.equal(whole(5n, row('e')), true);
  t.equal(whole(6n, row('f')), true);
  t.equal(whole(7n, row('g')), true, 'older rows make room, least recently used first');
  t.equal(whole(8n, row('h')), false, 'but never its own');
  t.same(
    [1n, 2n, 3n, 5n, 6n, 7n].map((id) => c.has(id)),
    [false, false, false, true, true, true],
  );
  t.ok(c.size.bytes <= 1500);
});

t.test('issue 14: rekey keeps cached rows under the ids a compaction gave them', async (t) => {
  const cache = new RowCache<{ text: string }>(1 << 20);
  cache.set(1n, { text: 'one' });
  cache.set(2n, { text: 'two' });
  cache.set(5n, { text: 'five, read under its new id already' });
  const bytes = cache.size.bytes;
  cache.rekey([
    [1n, 4n],
    [2n, 5n],
    [3n, 6n], // not cached: nothing to move
  ]);
  t.same(cache.get(4n), { text: 'one' });
  t.same(cache.get(5n), { text: 'five, read under its new id already' }, 'a row kept under the new id stays');
  t.equal(cache.get(1n), undefined);
  t.equal(cache.get(2n), undefined);
  t.equal(cache.has(6n), false);
  t.equal(cache.size.rows, 2);
  t.ok(cache.size.bytes < bytes, 'the dropped duplicate’s bytes are let go');
});

/** The hand-written LRU the cache was before lru-cache (issue 42): the model its behaviour is held to. */
class ModelCache {
  readonly rows = new Map<bigint, { bytes: number; pass: number }>();
  bytes = 0;
  passes = 0;
  constructor(readonly max: number) {}
  get(id: bigint): boolean {
    const e = this.rows.get(id);
    if (!e) return false;
    this.rows.delete(id);
    this.rows.set(id, e);
    return true;
  }
  set(id: bigint, bytes: number): void {
    if (this.max <= 0 || bytes > this.max) return;
    const old = this.rows.get(id);
    if (old) {
      this.bytes -= old.bytes;
      this.rows.delete(id);
    }
    this.rows.set(id, { bytes, pass: 0 });
    this.bytes += bytes;
    for (const [k, e] of this.rows) {
      if (this.bytes <= this.max) break;
      this.rows.delete(k);
      this.bytes -= e.bytes;
    }
  }
  fill(pass: number, evictOlder: boolean, id: bigint, bytes: number): boolean {
    if (this.rows.has(id)) return true;
    if (bytes > this.max) return false;
    while (this.bytes + bytes > this.max) {
      const first = this.rows.entries().next();
      if (!evictOlder || first.done || first.value[1].pass === pass) return false;
      this.rows.delete(first.value[0]);
      this.bytes -= first.value[1].bytes;
    }
    this.rows.set(id, { bytes, pass });
    this.bytes += bytes;
    return true;
  }
  rekey(from: bigint, to: bigint): void {
    const e = this.rows.get(from);
    if (!e) return;
    this.rows.delete(from);
    if (this.rows.has(to)) this.bytes -= e.bytes;
    else this.rows.set(to, e);
  }
}

t.test('issue 42: the lru-cache row cache keeps, drops and re-keys exactly the rows the hand-written LRU did', async (t) => {
  const bytesOf = (len: number) => 64 + 16 + 2 * len; // the cache's estimate of a one-field row
  const id = fc.bigInt({ min: 1n, max: 12n });
  const op = fc.oneof(
    fc.record({ op: fc.constant('set' as const), id, len: fc.integer({ min: 0, max: 700 }) }),
    fc.record({ op: fc.constant('get' as const), id }),
    fc.record({
      op: fc.constant('pass' as const),
      evictOlder: fc.boolean(),
      rows: fc.array(fc.tuple(id, fc.integer({ min: 0, max: 400 })), { maxLength: 6 }),
    }),
    fc.record({ op: fc.constant('rekey' as const), pairs: fc.array(fc.tuple(id, id), { maxLength: 4 }) }),
  );
  const run = fc.check(
    fc.property(fc.integer({ min: 0, max: 3000 }), fc.array(op, { maxLength: 60 }), (max, ops) => {
      const cache = new RowCache<{ text: string }>(max);
      const model = new ModelCache(max);
      for (const o of ops) {
        if (o.op === 'set') {
          cache.set(o.id, { text: 'x'.repeat(o.len) });
          model.set(o.id, bytesOf(o.len));
        } else if (o.op === 'get') {
          if ((cache.get(o.id) !== undefined) !== model.get(o.id)) return false;
        } else if (o.op === 'pass') {
          const keep = cache.fillPass(o.evictOlder);
          const pass = ++model.passes;
          for (const [rid, len] of o.rows)
            if (keep(rid, { text: 'y'.repeat(len) }) !== model.fill(pass, o.evictOlder, rid, bytesOf(len))) return false;
        } else {
          cache.rekey(o.pairs);
          for (const [from, to] of o.pairs) model.rekey(from, to);
        }
        const kept = [...model.rows.keys()].sort((a, b) => (a < b ? -1 : 1));
        const has = Array.from({ length: 12 }, (_, i) => BigInt(i + 1)).filter((i) => cache.has(i));
        if (has.join() !== kept.join() || cache.size.bytes !== model.bytes || cache.bound.room !== max - model.bytes) return false;
      }
      return true;
    }),
    { numRuns: 500 },
  );
  t.equal(
    run.failed,
    false,
    fc.defaultReportMessage(run) ?? '500 random sequences of sets, reads, prefill passes and re-keyings agree with the model',
  );
});
