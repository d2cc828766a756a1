import t from 'tap';
import fc from 'fast-check';
import { LoopBudget, yieldToLoop } from '../../event-loop.js';
import { Postings, type TextHit, type TextQuery } from '../../index/engines/memory/postings.js';

/** BM25 the slow, obvious way (k1 1.2, b 0.75, Lucene idf), over every live document, statistics over the live ones. */
function naive(
  docs: readonly { rowId: number; terms: string[]; dead: boolean; attr?: number }[],
  q: TextQuery,
  k: number,
  allowed: readonly number[] | null = null,
) {
  const live = docs.filter((d) => !d.dead);
  const n = live.length;
  const avgdl = live.reduce((s, d) => s + d.terms.length, 0) / n || 1;
  const df = (term: string) => live.filter((d) => d.terms.includes(term)).length;
  const bm25 = (d: (typeof docs)[number], term: string) => {
    const tf = d.terms.filter((x) => x === term).length;
    if (tf === 0) return 0;
    const idf = Math.log(1 + (n - df(term) + 0.5) / (df(term) + 0.5));
    return (idf * tf * 2.2) / (tf + 1.2 * (1 - 0.75 + (0.75 * d.terms.length) / avgdl));
  };
  const out: { rowId: number; score: number }[] = [];
  for (const d of docs) {
    if (d.dead) continue;
    if (allowed !== null && !allowed.includes(d.attr ?? -1)) continue;
    if (!q.must.every((g) => g.some((term) => d.terms.includes(term)))) continue;
    const any = q.must.length > 0 || q.should.some(({ term }) => d.terms.includes(term));
    if (!any) continue;
    let s = 0;
    for (const g of q.must) for (const term of new Set(g)) s += bm25(d, term);
    for (const { term, weight } of q.should) s += weight * bm25(d, term);
    out.push({ rowId: d.rowId, score: s });
  }
  return out.sort((a, b) => b.score - a.score || a.rowId - b.rowId).slice(0, k);
}

/** The probe terms a hit holds, by name, from `probePresence` (bits up to 31 probe terms, bytes beyond). */
function probeHeld(p: Postings, h: TextHit, probe: readonly string[]): string[] {
  const present = p.probePresence(h, probe);
  return probe.filter((_, i) => (typeof present === 'number' ? (present >>> i) & 1 : present[i]) === 1);
}

/** Throws unless a search's hits are the naive top k: the same length, scores up to rounding, rows unless truly tied. */
function sameTop(got: readonly { rowId: number; score: number }[], want: readonly { rowId: number; score: number }[]): void {
  if (got.length !== want.length) throw new Error(`length ${got.length} vs ${want.length}`);
  got.forEach((h, i) => {
    if (Math.abs(h.score - want[i]!.score) > 1e-9 * Math.max(1, want[i]!.score))
      throw new Error(`score ${i}: ${h.score} vs ${want[i]!.score}`);
    // Equal scores (up to rounding) may come in either order only if truly tied.
    if (h.rowId !== want[i]!.rowId && Math.abs(h.score - want[i]!.score) > 1e-12) throw new Error(`row ${i}`);
  });
}

const vocab = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
const docArb = fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 12 });

// Optional terms are scored term at a time on an index this small (`accumulateUpTo`, default 64 × k); 0 forces
// MaxScore, so both ways are held to the naive BM25. No term is frequent enough here for a bitset by default (`dense`):
// the other rows give bitsets to every term or to the frequent ones (some groups then mix terms with and without one),
// with required groups matched on the bitsets whenever they can be (walkRatio Infinity) or by the lead's walk with bit
// tests (walkRatio 0).
for (const [way, accumulateUpTo, dense] of [
  ['term at a time', undefined, undefined],
  ['MaxScore', 0, undefined],
  ['bitsets for every term, matched on bitsets', undefined, { share: 0, minDf: 1, walkRatio: Infinity }],
  ['bitsets for terms in a quarter of the documents, matched on bitsets', undefined, { share: 0.25, minDf: 1, walkRatio: Infinity }],
  ['bitsets for terms in a quarter of the documents, the lead walked', 0, { share: 0.25, minDf: 1, walkRatio: 0 }],
] as const)
  t.test(`search equals exhaustive BM25: optional terms (${way}), required groups, tombstones, several segments, filters`, async (t) => {
    fc.assert(
      fc.property(
        // Each document with an attribute 0–3 (a page's language, host, …: doc-attributes.ts) a filter may restrict.
        fc.array(fc.tuple(docArb, fc.boolean(), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 6 }), // flush every n documents: several segments, merged as they grow
        fc.array(fc.array(fc.constantFrom(...vocab, 'zz'), { minLength: 1, maxLength: 2 }), { maxLength: 2 }),
        fc.array(fc.tuple(fc.constantFrom(...vocab, 'zz'), fc.integer({ min: 1, max: 3 })), { maxLength: 5 }),
        fc.integer({ min: 1, max: 10 }),
        fc.boolean(),
        // The terms code checks read (any order; some the query neither requires nor ranks, like excluded words).
        fc.uniqueArray(fc.constantFrom(...vocab, 'zz'), { maxLength: 9 }),
        // The attribute values a filter lets through (null: no filter; empty: none).
        fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { maxLength: 4 })),
        (docs, every, must, shouldList, k, shuffled, probe, allowed) => {
          const p = new Postings({ accumulateUpTo, ...(dense ? { dense } : {}) });
          // Row ids need not ascend (a compacted fragment's rows come back under new ids, in any order).
          const model = docs.map(([terms, dead, attr], i) => ({ rowId: shuffled ? 100_000 - i * 7 : 10 + i * 3, terms, dead, attr }));
          const docIds = model.map((d, i) => {
            const doc = p.add(d.rowId, ` ${d.terms.join('  ')} `);
            if ((i + 1) % every === 0) p.flush();
            return doc;
          });
          p.flush();
          model.forEach((d, i) => {
            const held = p.holds(docIds[i]!, [...vocab, 'zz']).join(' ');
            const want = vocab.filter((v) => d.terms.includes(v)).join(' ');
            if (held !== want) throw new Error(`holds ${i}: ${held} vs ${want}`);
          });
          p.remove(model.filter((d) => d.dead).map((d) => d.rowId));
          const should = [...new Map(shouldList).entries()].map(([term, weight]) => ({ term, weight }));
          const q: TextQuery = { must, should, probe };
          if (must.length === 0 && should.length === 0) return;
          // A query before it (every term, every probe bit): what one search leaves behind must not reach the next.
          p.search({ must: [], should: vocab.map((term) => ({ term, weight: 1 })), probe: [...vocab, 'zz'] }, 10);
          const attrOf = new Map(docIds.map((doc, i) => [doc, model[i]!.attr]));
          const accept = allowed === null ? null : (doc: number) => allowed.includes(attrOf.get(doc)!);
          const got = p.search(q, k, true, accept);
          // Unordered (retrieval's BM25 arm ranks the hits itself): the same hits, only their order free.
          const key = (h: TextHit) => `${h.rowId} ${h.doc} ${h.score} ${h.held} ${h.known}`;
          const loose = p.search(q, k, false, accept).map(key).sort();
          if (loose.join('|') !== got.map(key).sort().join('|')) throw new Error(`unordered search: ${loose} vs ${got.map(key)}`);
          // Which probe terms a hit holds: what the search found out while scoring it, looked up for the rest.
          for (const h of got) {
            const d = model.find((m) => m.rowId === h.rowId)!;
            const want = probe.filter((term) => d.terms.includes(term)).join(' ');
            if (probeHeld(p, h, probe).join(' ') !== want)
              throw new Error(`probePresence ${h.rowId}: ${probeHeld(p, h, probe).join(' ')} vs ${want}`);
          }
          const want = naive(model, q, k, allowed);
          sameTop(got, want);
          const gotSet = new Set(got.map((h) => h.rowId));
          const boundary = want.at(-1)?.score ?? 0;
          for (const w of want) if (w.score > boundary + 1e-9 && !gotSet.has(w.rowId)) throw new Error(`missing ${w.rowId}`);
        },
      ),
      { numRuns: 400 },
    );
    t.pass('400 random corpora and queries agree');
  });

// Larger corpora than above (65–300 documents: many words of a bitset, several segments), words repeated in some
// documents (tf up to 6), frequent words with bitsets and rare ones without among the required and optional terms.
const rare = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];
for (const walkRatio of [Infinity, 0])
  t.test(
    `search equals exhaustive BM25 on corpora of hundreds of documents, frequent and rare words, filters (${walkRatio ? 'matched on bitsets' : 'the lead walked'})`,
    async (t) => {
      const term = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...vocab) }, { weight: 1, arbitrary: fc.constantFrom(...rare) });
      const word = fc.oneof(
        term,
        fc.tuple(term, fc.integer({ min: 2, max: 6 })).map(([w, n]) => Array<string>(n).fill(w).join(' ')),
      );
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.array(word, { minLength: 1, maxLength: 10 }), fc.boolean()), { minLength: 65, maxLength: 300 }),
          fc.integer({ min: 5, max: 80 }),
          fc.array(fc.array(fc.constantFrom(...vocab, ...rare), { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 }),
          fc.array(fc.tuple(fc.constantFrom(...vocab, ...rare), fc.integer({ min: 1, max: 3 })), { maxLength: 3 }),
          fc.integer({ min: 1, max: 20 }),
          // A filter over an attribute 0–3 of each document (null: none), as the text engine's per-document test.
          fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 })),
          (docs, every, must, shouldList, k, allowed) => {
            const p = new Postings({ dense: { share: 0.2, minDf: 1, walkRatio } });
            const model = docs.map(([words, dead], i) => ({
              rowId: 7 + i * 2,
              terms: words.join(' ').split(' '),
              dead,
              attr: (i * 7) % 4,
            }));
            const attrOf: number[] = [];
            model.forEach((d, i) => {
              attrOf[p.add(d.rowId, d.terms.join(' '))] = d.attr;
              if ((i + 1) % every === 0) p.flush();
            });
            p.flush();
            p.remove(model.filter((d) => d.dead).map((d) => d.rowId));
            const should = [...new Map(shouldList).entries()].map(([term, weight]) => ({ term, weight }));
            const q: TextQuery = { must, should, probe: [] };
            const got = p.search(q, k, true, allowed === null ? null : (doc) => allowed.includes(attrOf[doc]!));
            sameTop(got, naive(model, q, k, allowed));
          },
        ),
        { numRuns: 150 },
      );
      t.pass('150 random corpora agree');
    },
  );

t.test('flushInSlices builds the segments flush() builds, and queries between its slices see every document', async (t) => {
  // 3,000 distinct terms: a merge spans several ranges of terms (MERGE_TERMS_PER_CHECK), and a zero budget pauses
  // after every range, so queries run while merges are half done.
  const words = Array.from({ length: 3000 }, (_, i) => `w${i}`);
  const text = (i: number) => ` ${words[i % 3000]} ${words[(i * 7) % 3000]} ${words[(i * 13 + 5) % 3000]} common `;
  const sync = new Postings();
  const sliced = new Postings();
  const queries: TextQuery[] = [
    {
      must: [],
      should: [
        { term: 'common', weight: 1 },
        { term: 'w7', weight: 1 },
        { term: 'w2999', weight: 2 },
      ],
      probe: [],
    },
    { must: [['w14']], should: [{ term: 'w98', weight: 1 }], probe: [] },
    { must: [['w1', 'w2']], should: [], probe: [] },
  ];
  const seen: string[] = [];
  let doc = 0;
  let midMerge = 0;
  for (const batch of [700, 300, 200, 100, 50, 900]) {
    for (let i = 0; i < batch; i++, doc++) {
      sync.add(1000 + doc, text(doc));
      sliced.add(1000 + doc, text(doc));
    }
    sync.flush();
    const want = queries.map((q) => JSON.stringify(sync.search(q, 10)));
    let done = false;
    const flushing = sliced.flushInSlices(new LoopBudget(0)).then(() => (done = true));
    while (!done) {
      midMerge++;
      queries.forEach((q, i) => t.equal(JSON.stringify(sliced.search(q, 10)), want[i], `mid-merge query ${i}`));
      await yieldToLoop();
    }
    await flushing;
    t.same(sliced.size, sync.size, `after ${doc} documents`);
    queries.forEach((q, i) => seen.push(`${i}:${JSON.parse(want[i]!).length}`));
    queries.forEach((q, i) => t.equal(JSON.stringify(sliced.search(q, 10)), want[i], `query ${i} after the flush`));
  }
  t.ok(
    seen.some((s) => !s.endsWith(':0')),
    'the queries find documents',
  );
  t.ok(midMerge >= 12, `queries ran between slices (${midMerge} times)`);
});

t.test('segments merged in any sizes answer as one segment built at once (long and short runs of postings)', async (t) => {
  // 600 terms of skewed frequency: common terms have long runs in every segment, rare ones none in most; batches of very
  // different sizes make merges of a small segment into a large one (a patch after one write) and of equal ones.
  const term = (i: number, j: number) => `t${Math.floor(600 * (((i * 7919 + j * 104_729) % 1000) / 1000) ** 3)}`;
  const text = (i: number) => Array.from({ length: 3 + (i % 17) }, (_, j) => term(i, j)).join(' ');
  const once = new Postings();
  const merged = new Postings();
  const sliced = new Postings();
  let doc = 0;
  for (const batch of [1500, 1, 2, 3, 700, 40, 1, 900, 5, 1, 1, 300]) {
    for (let i = 0; i < batch; i++, doc++) {
      once.add(doc * 3 + 1, text(doc));
      merged.add(doc * 3 + 1, text(doc));
      sliced.add(doc * 3 + 1, text(doc));
    }
    merged.flush();
    await sliced.flushInSlices(new LoopBudget(0));
  }
  once.flush();
  t.equal(once.size.segments, 1, 'built at once: one segment');
  t.ok(merged.size.segments > 1, `merged as they came: ${merged.size.segments} segments`);
  const terms = Array.from({ length: 600 }, (_, i) => `t${i}`);
  let found = 0;
  for (let q = 0; q < 300; q++) {
    const a = terms[(q * 37) % 600]!;
    const b = terms[(q * q + 11) % 600]!;
    const c = terms[(q * 101 + 3) % 40]!;
    const query: TextQuery =
      q % 3 === 0
        ? { must: [[c]], should: [{ term: a, weight: 1 }], probe: [] }
        : { must: [], should: [a, b, c].map((x) => ({ term: x, weight: 1 })), probe: [] };
    const want = JSON.stringify(once.search(query, 50));
    found += JSON.parse(want).length;
    if (JSON.stringify(merged.search(query, 50)) !== want) t.fail(`query ${q} (flush)`);
    if (JSON.stringify(sliced.search(query, 50)) !== want) t.fail(`query ${q} (flushInSlices)`);
  }
  for (let d = 0; d < doc; d += 7) if (merged.holds(d, terms).join() !== once.holds(d, terms).join()) t.fail(`holds ${d}`);
  t.ok(found > 3000, `the queries find documents (${found})`);
});

t.test('basic facts: unknown required word, unknown optional word, a row id live once, live row ids', async (t) => {
  const p = new Postings({ maxTermLength: 6 });
  p.add(1, 'apple banana');
  p.add(2, 'banana cherry cherry');
  p.add(5, 'toolongterm cherry dates figs');
  p.flush();
  t.same(p.search({ must: [['nothere']], should: [{ term: 'banana', weight: 1 }] }, 10), [], 'a required word the index never saw');
  t.same(
    p
      .search(
        {
          must: [],
          should: [
            { term: 'nothere', weight: 1 },
            { term: 'apple', weight: 1 },
          ],
        },
        10,
      )
      .map((h) => h.rowId),
    [1],
  );
  t.same(p.search({ must: [], should: [{ term: 'toolongterm', weight: 1 }] }, 10), [], 'terms over the length cap are not indexed');
  t.same(
    p.search({ must: [], should: [{ term: 'cherry', weight: 1 }] }, 10).map((h) => h.rowId),
    [2, 5],
    'tf 2 first',
  );
  t.throws(() => p.add(5, 'x'), /already live/);
  t.equal(p.remove([2, 99]), 1);
  t.same([...p.liveRowIds()], [1, 5]);
  t.same(
    p.search({ must: [], should: [{ term: 'cherry', weight: 1 }] }, 10).map((h) => h.rowId),
    [5],
    'tombstoned row gone',
  );
  p.add(2, 'cherry');
  p.flush();
  t.same(
    p.search({ must: [], should: [{ term: 'cherry', weight: 1 }] }, 10).map((h) => h.rowId),
    [2, 5],
    'a removed row id may come back (a rewritten fragment)',
  );
  t.equal(p.remove([2]), 1);
  t.equal(p.size.live, 2);
  t.equal(p.size.docs, 4, 'tombstones stay counted until a rebuild');
});

t.test('probePresence past the 31 bits a hit carries: later probe terms are looked up', async (t) => {
  const p = new Postings();
  const words = Array.from({ length: 40 }, (_, i) => `w${i}`);
  p.add(1, words.filter((_, i) => i % 2 === 0).join(' '));
  p.add(2, words.filter((_, i) => i % 3 === 0).join(' '));
  p.flush();
  const probe = [...words, 'nowhere'];
  for (const q of [
    { must: [], should: words.map((term) => ({ term, weight: 1 })), probe },
    { must: [['w0'], ['w36', 'w39']], should: [{ term: 'w38', weight: 1 }], probe },
    { must: [['w0'], ['w30']], should: [{ term: 'w32', weight: 2 }], probe },
  ]) {
    const hits = p.search(q, 10);
    t.ok(hits.length > 0);
    for (const h of hits) t.same(probeHeld(p, h, probe), p.holds(h.doc, probe), `row ${h.rowId}`);
  }
});

t.test('probePresence: an optional term of weight 0 is not scored, so whether a hit holds it is looked up', async (t) => {
  const p = new Postings();
  p.add(1, 'alpha beta');
  p.add(2, 'alpha gamma');
  p.flush();
  const probe = ['alpha', 'beta', 'gamma'];
  const hits = p.search(
    {
      must: [],
      should: [
        { term: 'alpha', weight: 1 },
        { term: 'beta', weight: 0 },
      ],
      probe,
    },
    10,
  );
  t.equal(hits.length, 2);
  for (const h of hits) t.same(probeHeld(p, h, probe), p.holds(h.doc, probe), `row ${h.rowId}`);
  t.same(probeHeld(p, hits.find((h) => h.rowId === 1)!, probe), ['alpha', 'beta'], 'beta held though not scored');
});

t.test('rekey: documents take new row ids (also each other’s), unchanged in every other way; a conflict changes nothing', async (t) => {
  const p = new Postings();
  const a = p.add(10, 'apple banana');
  const b = p.add(11, 'banana cherry');
  const c = p.add(12, 'cherry dates');
  p.flush();
  const cherry = { must: [], should: [{ term: 'cherry', weight: 1 }] };
  const before = p.search(cherry, 10).map((h) => [h.rowId, h.score]);
  // a and b swap ids (as rows of one page may within a rewritten fragment); c moves to a new one.
  t.same(p.rekey([a, 11, b, 10, c, 100]), [
    [10, 11],
    [11, 10],
    [12, 100],
  ]);
  t.same(
    p.search(cherry, 10).map((h) => [h.rowId, h.score]),
    before.map(([id, score]) => [id === 11 ? 10 : 100, score]),
    'same documents and scores, under their new ids',
  );
  t.equal(p.docOf(100), c);
  t.equal(p.docOf(12), undefined, 'the old id is let go');
  t.equal(p.rowIdOf(a), 11);
  t.same([...p.liveRowIds()], [11, 10, 100]);
  t.same(p.rekey([c, 100]), [], 'a document kept under its id: nothing to report');
  // Taking an id a document that does not move holds: refused, nothing changed.
  t.throws(() => p.rekey([a, 200, b, 100]), /held by a document not moved/);
  t.same([...p.liveRowIds()], [11, 10, 100], 'every id as it was');
  t.equal(p.docOf(11), a);
  t.equal(p.remove([10]), 1);
  t.throws(() => p.rekey([b, 300]), /not live/, 'a tombstone is not re-keyed');
  t.equal(p.docOf(300), undefined);
});

t.test(
  'bitsets: a term in enough of the documents keeps one, grown as documents come, let go when it falls below half the share',
  async (t) => {
    const p = new Postings({ dense: { share: 0.5, minDf: 2, walkRatio: Infinity } });
    // "a" in every document, "b" in half, "c" in one.
    for (let i = 0; i < 8; i++) p.add(i, `a ${i % 2 === 0 ? 'b' : ''} ${i === 0 ? 'c' : ''}`);
    p.flush();
    t.equal(p.bitsets.terms, 2, 'a and b (c is in 1 of 8: below the share and minDf)');
    t.equal(p.bitsets.bytes, 2 * 4 * Math.ceil(1024 / 32), 'one bit per document room (1,024 row slots)');
    t.same(
      p
        .search({ must: [['a'], ['b']], should: [], probe: [] }, 10)
        .map((h) => h.rowId)
        .sort((x, y) => x - y),
      [0, 2, 4, 6],
    );
    // 24 more documents holding only "a": b is in 4 of 32 (1/8, below half of 1/2) and is let go; a stays and grows.
    for (let i = 8; i < 32; i++) p.add(i, 'a');
    p.flush();
    t.equal(p.bitsets.terms, 1, 'b let go');
    t.same(
      p
        .search({ must: [['a'], ['b']], should: [], probe: [] }, 10)
        .map((h) => h.rowId)
        .sort((x, y) => x - y),
      [0, 2, 4, 6],
      'the same matches without its bitset',
    );
    t.equal(p.search({ must: [['a']], should: [], probe: [] }, 100).length, 32, 'every document holds a');
    // Past the 1,024 row slots the bitsets were sized for: they grow with the documents.
    for (let i = 32; i < 2100; i++) p.add(i, i % 3 === 0 ? 'a b' : 'a');
    p.flush();
    t.equal(p.bitsets.terms, 1, 'b: in 693 of 2,100, below the share of 1/2: no bitset again');
    t.equal(p.bitsets.bytes, 4 * Math.ceil(4096 / 32), 'a: room for 4,096 row slots');
    const both = p.search({ must: [['a'], ['b']], should: [], probe: [] }, 5000);
    t.equal(both.length, 4 + Math.floor((2099 - 33) / 3) + 1, 'every document holding both');
    t.ok(
      both.every((h) => (h.rowId < 8 ? h.rowId % 2 === 0 : h.rowId >= 32 && h.rowId % 3 === 0)),
      'and no other',
    );
  },
);

// Removals one at a time or in batches, the statistics read between them: a term's tombstoned holders are brought up
// to date by looking up the documents removed since (a frequent term, a few removals) or by walking its postings again
// (a rare term, or many removals), and every way must give the live documents' counts.
t.test('corpusStats after each of many removals: the live documents, their length, each term’s live holders', async (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.subarray(['a', 'b', 'c', 'd']), { minLength: 40, maxLength: 200 }),
      fc.integer({ min: 3, max: 50 }),
      fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 30 }),
      fc.boolean(),
      (docs, every, batches, readFirst) => {
        const p = new Postings();
        // Every document holds 'a': a term whose holders outnumber a few removals many times over.
        const model = docs.map((terms, i) => ({ rowId: 5 + i, terms: ['a', ...terms], dead: false }));
        model.forEach((d, i) => {
          p.add(d.rowId, d.terms.join(' '));
          if ((i + 1) % every === 0) p.flush();
        });
        p.flush();
        const terms = ['a', 'b', 'c', 'd', 'zz'];
        if (readFirst) p.corpusStats(terms);
        let next = 0;
        for (const size of batches) {
          const batch = model.slice(next, next + size).filter((_, j) => j % 3 !== 1);
          next += size;
          for (const d of batch) d.dead = true;
          p.remove(batch.map((d) => d.rowId));
          const live = model.filter((d) => !d.dead);
          const got = p.corpusStats(terms);
          const want = {
            docs: live.length,
            totalLength: live.reduce((n, d) => n + d.terms.length, 0),
            df: terms.map((term) => live.filter((d) => d.terms.includes(term)).length),
          };
          const seen = { docs: got.docs, totalLength: got.totalLength, df: terms.map((term) => got.df.get(term)) };
          if (JSON.stringify(seen) !== JSON.stringify(want)) throw new Error(`${JSON.stringify(seen)} vs ${JSON.stringify(want)}`);
        }
      },
    ),
    { numRuns: 200 },
  );
  t.pass('200 random removal sequences agree');
});
