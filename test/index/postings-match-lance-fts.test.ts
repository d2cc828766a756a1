/**
 * Issue 14: the BM25 arm answered from in-process postings (index/engines/memory/postings.ts, index/engines/lance/text-engine.ts) is exact BM25
 * over the table's analysed text (repeated words included), with or without filters; postings followed version by
 * version equal postings built from scratch. Issue 42: they are the one engine, so they answer for the table version
 * the query reads: after a write a query waits for them to catch up (a page just written is never missed).
 */
import t from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { fileURLToPath } from 'node:url';
import { corpusPage, readCorpus } from '../../cli/ingest.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { compileQuery, parseQuery } from '../../index/retrieval/query.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import type { PassageKey, ResultRow } from '../../index/engines/lance/columns.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { TextEngine } from '../../index/engines/lance/text-engine.js';
import type { PassageCommit } from '../../index/engines/lance/passage-changes.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';

const CORPUS = fileURLToPath(new URL('../../../shared/data/beir/scifact/corpus.jsonl.gz', import.meta.url));

async function pages(n: number): Promise<PageInput[]> {
  const out: PageInput[] = [];
  for await (const doc of readCorpus(CORPUS)) {
    out.push(corpusPage(doc, out.length + 1, 'scifact', '2026-11-20T00:00:00Z'));
    if (out.length >= n) break;
  }
  return out;
}

type Teardown = { teardown(fn: () => unknown): void; testdir(): string };

/** An index on `dir` with the 64-dimension hashing embedder, closed when the test ends. */
async function openIndex(
  t: Teardown,
  dir: string,
  opts: Omit<Parameters<typeof PassageIndex.open>[0], 'dir' | 'embedder'> = {},
): Promise<PassageIndex> {
  const idx = await PassageIndex.open({ dir, embedder: createHashingEmbedder(64), ...opts });
  t.teardown(() => idx.close());
  return idx;
}

/** A writer on a new folder holding the first `written` of `count` SciFact pages, its postings built. */
async function writtenIndex(t: Teardown, count: number, written: number) {
  const dir = t.testdir();
  const idx = await openIndex(t, dir);
  const all = await pages(count);
  await idx.upsertPages(all.slice(0, written));
  await idx.textEngineReady();
  return { dir, idx, all };
}

const QUERIES = [
  'cells protein',
  'What is the effect of insulin on gene expression in mice?',
  'Vitamin D deficiency increases the risk of cancer cancer',
  '+mice +gene expression',
  'stem cells differentiation blood blood blood',
  'antibiotic resistance bacteria',
  'zzzunknownword',
];

/** BM25 (k1 1.2, b 0.75, Lucene idf) over every row's `search_text` as the table holds it, keyed `page_ref:ordinal`. */
async function naiveBm25(dir: string) {
  const db = await lancedb.connect(dir);
  const table = await db.openTable('passages');
  const docs: { key: string; lang: string | null; tf: Map<string, number>; len: number }[] = [];
  for await (const batch of table.query().select(['page_ref', 'ordinal', 'lang', 'search_text'])) {
    for (let i = 0; i < batch.numRows; i++) {
      const terms = String(batch.getChild('search_text')!.get(i)).split(' ').filter(Boolean);
      const tf = new Map<string, number>();
      for (const x of terms) tf.set(x, (tf.get(x) ?? 0) + 1);
      const key = `${batch.getChild('page_ref')!.get(i)}:${batch.getChild('ordinal')!.get(i)}`;
      docs.push({ key, lang: batch.getChild('lang')!.get(i) as string | null, tf, len: terms.length });
    }
  }
  table.close();
  db.close();
  const df = new Map<string, number>();
  for (const d of docs) for (const x of d.tf.keys()) df.set(x, (df.get(x) ?? 0) + 1);
  const avgdl = docs.reduce((s, d) => s + d.len, 0) / docs.length;
  const bm25 = (d: (typeof docs)[number], term: string) => {
    const f = d.tf.get(term) ?? 0;
    if (f === 0) return 0;
    const n = df.get(term)!;
    return (Math.log(1 + (docs.length - n + 0.5) / (n + 0.5)) * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * d.len) / avgdl));
  };
  /** The passages matching `q` (every must group, else any should term) among those `keep` lets through, by score. */
  return (
    q: { must: readonly (readonly string[])[]; should: readonly { term: string; weight: number }[] },
    keep: (lang: string | null) => boolean,
  ) => {
    const out = new Map<string, number>();
    for (const d of docs) {
      if (!keep(d.lang) || !q.must.every((g) => g.some((x) => d.tf.has(x)))) continue;
      if (q.must.length === 0 && !q.should.some((x) => d.tf.has(x.term))) continue;
      let s = 0;
      for (const g of q.must) for (const x of new Set(g)) s += bm25(d, x);
      for (const x of q.should) s += x.weight * bm25(d, x.term);
      out.set(d.key, s);
    }
    return out;
  };
}

t.test('issue 14/42: the postings answer the BM25 arm with exact BM25 over the stored analysed text, filtered or not', async (t) => {
  const dir = t.testdir();
  const idx = await PassageIndex.open({ dir, embedder: createHashingEmbedder(64) });
  t.teardown(() => idx.close());
  // A quarter of the pages in French: a language filter that keeps some of the matches.
  await idx.upsertPages((await pages(300)).map((p) => ({ ...p, lang: p.pageRef % 4 === 0 ? 'fr' : 'en' })));
  await idx.textEngineReady();
  const naive = await naiveBm25(dir);
  for (const query of QUERIES)
    for (const lang of [undefined, 'fr', 'en'] as const) {
      const c = compileQuery(parseQuery(query));
      const got = new Map(
        (await idx.textCandidates(c.text!, lang ? { lang } : {}, 10_000, c.hitColumns)).map((r) => [
          `${r.page_ref}:${r.ordinal}`,
          r._score,
        ]),
      );
      const want = naive(c.text!, (l) => lang === undefined || l === lang);
      t.equal(got.size, want.size, `${query} (${lang ?? 'no filter'}): every matching passage (${want.size})`);
      let worst = 0;
      for (const [k, s] of want) worst = Math.max(worst, Math.abs((got.get(k) ?? Infinity) - s) / Math.max(1e-9, s));
      t.ok(worst < 1e-9, `${query} (${lang ?? 'no filter'}): the same passages, the same BM25 (worst relative difference ${worst})`);
    }
});

t.test('issue 14: postings patched version by version equal postings built from scratch (appends, replacements, compaction)', async (t) => {
  const { dir, idx, all } = await writtenIndex(t, 360, 200);
  await idx.upsertPages(all.slice(200, 300)); // new fragment
  await idx.textEngineReady();
  // Replacements (old rows deleted, new ones appended) and a removal.
  await idx.upsertPages(all.slice(0, 40).map((p) => ({ ...p, contentHash: `${p.contentHash}-v2`, passages: p.passages.slice(0, 1) })));
  await idx.removePage(all[50]!.pageRef);
  await idx.textEngineReady();
  await idx.upsertPages(all.slice(300));
  await idx.optimize(); // compaction rewrites fragments: their rows come back under new row ids
  await idx.textEngineReady();
  const fresh = await openIndex(t, dir);
  await fresh.textEngineReady();
  t.equal((await idx.stats()).passages, (await fresh.stats()).passages);
  for (const query of QUERIES) {
    const c = compileQuery(parseQuery(query));
    const a = (await idx.textCandidates(c.text!, {}, 300, []))!;
    const b = (await fresh.textCandidates(c.text!, {}, 300, []))!;
    t.ok(a && b, `${query}: both answered from postings`);
    // Tombstones still weigh in the patched postings' statistics (as in Lucene until a merge): same passages, close scores.
    t.same(
      a.map((r) => `${r.page_ref}:${r.ordinal}`).sort(),
      b.map((r) => `${r.page_ref}:${r.ordinal}`).sort(),
      `${query}: the same passages`,
    );
    t.notOk(
      a.some((r) => r.page_ref === all[50]!.pageRef || (r.page_ref <= 40 && r.ordinal > 0)),
      `${query}: no removed page, no passage of a replaced page's old version`,
    );
  }
});

t.test(
  'issue 14/42: a query right after a write waits for the postings to reach that version and answers from them, filtered too',
  async (t) => {
    const dir = t.testdir();
    const idx = await PassageIndex.open({ dir, embedder: createHashingEmbedder(64) });
    t.teardown(() => idx.close());
    await idx.upsertPages([makePage(1, 'a.example', ['the quick brown fox jumps'])]);
    await idx.textEngineReady();
    const text = compileQuery(parseQuery('zebra crossing')).text!;
    t.same(await idx.textCandidates(text, {}, 10, []), [], 'postings at the current version: nothing matches yet');
    const before = idx.textPostingsStats()!;
    await idx.upsertPages([makePage(2, 'b.example', ['a zebra crossing on the road'])]);
    // No wait of the test's own: the query is sent the moment the write is acknowledged.
    const r = await retrieve(idx, { query: 'zebra crossing site:b.example', mode: 'bm25', filters: { language: 'en' } });
    t.same(
      r.passages.map((p) => p.row.page_ref),
      [2],
      'the page just written is found, through a site: and a language filter',
    );
    const after = idx.textPostingsStats()!;
    t.equal(after.version, await idx.version(), 'the postings answered at the version the table reads');
    t.equal(after.answers, before.answers + 1, 'the postings answered the query (the one BM25 engine)');
    const db = await lancedb.connect(dir);
    const table = await db.openTable('passages');
    t.same(
      (await table.listIndices()).filter((i) => i.columns.includes('search_text')),
      [],
      'LanceDB holds no full-text index that could have answered',
    );
    table.close();
    db.close();
    const hits = await idx.textCandidates(text, {}, 10, []);
    t.same(
      hits.map((h) => h.page_ref),
      [2],
      'unfiltered too',
    );
    await idx.removePage(2);
    t.same(await idx.textCandidates(text, {}, 10, []), [], 'a removed page leaves the postings');
  },
);

/** A reader of `dir` opened now, its postings built: what postings followed version by version must equal. */
async function freshReader(t: Teardown, dir: string): Promise<PassageIndex> {
  const fresh = await openIndex(t, dir, { writes: false });
  await fresh.textEngineReady();
  return fresh;
}

/** Every query's candidates from the postings, as `page_ref:ordinal title` (sorted): what the BM25 arm reads. */
async function candidates(idx: PassageIndex): Promise<string[]> {
  const out: string[] = [];
  for (const query of QUERIES) {
    const c = compileQuery(parseQuery(query));
    const hits = await idx.textCandidates(c.text!, {}, 300, []);
    if (!hits) throw new Error(`${query}: not answered from the postings`);
    out.push(
      `${query} → ${hits
        .map((r) => `${r.page_ref}:${r.ordinal} ${r.title}`)
        .sort()
        .join(' | ')}`,
    );
  }
  return out;
}

t.test(
  'issue 14: a write is followed by the pages its commit named (no scan of the table), and the postings equal a fresh build',
  async (t) => {
    const { dir, idx, all } = await writtenIndex(t, 260, 200);
    const before = idx.textPostingsStats()!.syncs;
    const writes: (() => Promise<void>)[] = [
      () => idx.upsertPages(all.slice(200, 230)), // new pages
      // Replaced: fewer passages and a new title; more passages; the same text again (every row rewritten).
      () =>
        idx.upsertPages(
          all
            .slice(0, 10)
            .map((p) => ({ ...p, title: `${p.title} (revised)`, contentHash: `${p.contentHash}-v2`, passages: p.passages.slice(0, 1) })),
        ),
      () =>
        idx.upsertPages(
          all.slice(10, 15).map((p) => ({
            ...p,
            contentHash: `${p.contentHash}-v2`,
            passages: [...p.passages, ...all[100]!.passages].map((x, ordinal) => ({ ...x, ordinal })),
          })),
        ),
      () => idx.upsertPages(all.slice(20, 25)),
      () => idx.removePage(all[30]!.pageRef),
      () => idx.upsertPages([{ ...all[31]!, contentHash: 'empty', passages: [] }]), // a page left without passages
      () => idx.upsertPages([...all.slice(230, 260), { ...all[40]!, contentHash: 'x', passages: all[41]!.passages }]),
    ];
    for (const write of writes) {
      await write();
      await idx.textEngineReady();
    }
    const after = idx.textPostingsStats()!.syncs;
    t.equal(after.builds, before.builds, 'no rebuild');
    t.ok(after.pages >= writes.length - 1, `the writes were followed by their pages (${after.pages - before.pages} of ${writes.length})`);
    t.ok(after.scans - before.scans <= 1, `at most one scan (an index refresh between writes: ${after.scans - before.scans})`);
    const fresh = await openIndex(t, dir);
    await fresh.textEngineReady();
    t.equal(idx.textPostingsStats()!.live, fresh.textPostingsStats()!.live, 'as many live passages as the table');
    t.same(await candidates(idx), await candidates(fresh), 'every query: the same passages with their pages’ current titles');
    const revised = (await idx.textCandidates(compileQuery(parseQuery(all[0]!.title)).text!, {}, 300, []))!.find(
      (r) => r.page_ref === all[0]!.pageRef,
    );
    t.match(revised?.title, /\(revised\)$/, 'a replaced page’s new title');
  },
);

t.test(
  'issue 14: a reader told the writer’s commits follows by pages; told a wrong one, the row count catches it and a scan reconciles',
  async (t) => {
    const dir = t.testdir();
    const writer = await openIndex(t, dir, { textEngine: false });
    const all = await pages(120);
    await writer.upsertPages(all.slice(0, 80));
    const reader = await openIndex(t, dir, { writes: false, followHostsMs: 0 });
    await reader.textEngineReady();
    // As the search pool forwards them to its threads.
    const stop = writer.onPassageCommit((c) => reader.notePassageCommits([c]));
    await writer.upsertPages(all.slice(80, 100));
    await writer.upsertPages(all.slice(0, 5).map((p) => ({ ...p, contentHash: `${p.contentHash}-v2`, passages: p.passages.slice(0, 1) })));
    stop();
    await reader.catchUp(await writer.servingVersion());
    await reader.textEngineReady();
    const told = reader.textPostingsStats()!.syncs;
    t.ok(told.pages >= 1 && told.scans === 0, `followed by pages (${JSON.stringify(told)})`);
    // A commit reported with the wrong page: the pages read do not account for the table's rows.
    await writer.upsertPages(all.slice(100, 120));
    reader.notePassageCommits([{ version: await writer.servingVersion(), pageRefs: [all[60]!.pageRef] }]);
    await reader.catchUp(await writer.servingVersion());
    await reader.textEngineReady();
    const lied = reader.textPostingsStats()!.syncs;
    t.equal(lied.pages, told.pages + 1, 'tried by pages');
    t.equal(lied.scans, told.scans + 1, 'then scanned');
    const fresh = await freshReader(t, dir);
    t.equal(reader.textPostingsStats()!.live, fresh.textPostingsStats()!.live, 'as many live passages as the table');
    t.same(await candidates(reader), await candidates(fresh), 'the same candidates as a fresh build');
    // A commit the reader was not told of (versions between unknown): a scan.
    await writer.upsertPages(all.slice(40, 45).map((p) => ({ ...p, contentHash: `${p.contentHash}-v3` })));
    await reader.catchUp(await writer.servingVersion());
    await reader.textEngineReady();
    t.equal(reader.textPostingsStats()!.syncs.scans, lied.scans + 1, 'an untold commit: scanned');
  },
);

/** The row ids of every query's candidates from the postings. */
async function candidateRowIds(idx: PassageIndex): Promise<bigint[]> {
  const out: bigint[] = [];
  for (const query of QUERIES) {
    const c = compileQuery(parseQuery(query));
    for (const h of (await idx.textCandidates(c.text!, {}, 300, []))!) if (typeof h._rowid === 'bigint') out.push(h._rowid);
  }
  return out;
}

t.test(
  'issue 14: the writer’s compaction is followed by re-keying its rows (no rebuild, nothing analysed again), in the writer and a reader told of it',
  async (t) => {
    const dir = t.testdir();
    // No debounced refresh: an optimize its timer starts while the checks below run (they may outlast its delay) is
    // one more maintenance span the reader re-keys, and the counts below name each sync.
    const idx = await openIndex(t, dir, { refreshAfterMs: 0 });
    const all = await pages(300);
    for (let i = 0; i < 200; i += 40) await idx.upsertPages(all.slice(i, i + 40)); // several fragments
    await idx.textEngineReady();
    // No row cache in the reader: its result rows come from the postings' snippet store, which must follow the moves.
    const reader = await openIndex(t, dir, { writes: false, followHostsMs: 0, rowCacheBytes: 0 });
    await reader.textEngineReady();
    const stop = idx.onPassageCommit((c) => reader.notePassageCommits([c]));
    t.teardown(stop);
    const w0 = idx.textPostingsStats()!.syncs;
    const r0 = reader.textPostingsStats()!.syncs;
    const idsBefore = await candidateRowIds(idx);

    // A compaction alone, then one between writes (new pages before it, a replaced page and a removal after it).
    await idx.optimize();
    await idx.textEngineReady();
    const moved = await candidateRowIds(idx);
    t.ok(
      moved.filter((id) => !idsBefore.includes(id)).length > moved.length / 2,
      'the compaction moved most candidates to new row ids (what this test is about)',
    );
    t.equal(idx.cachedRows(moved), moved.length, 'the cached result rows moved with them');
    await idx.upsertPages(all.slice(200, 260));
    await idx.optimize();
    await idx.upsertPages(
      all
        .slice(0, 5)
        .map((p) => ({ ...p, title: `${p.title} (revised)`, contentHash: `${p.contentHash}-v2`, passages: p.passages.slice(0, 1) })),
    );
    await idx.removePage(all[7]!.pageRef);
    await idx.textEngineReady();
    await reader.catchUp(await idx.servingVersion());
    await reader.textEngineReady();

    const w1 = idx.textPostingsStats()!.syncs;
    const r1 = reader.textPostingsStats()!.syncs;
    t.equal(w1.builds, w0.builds, 'the writer: no rebuild');
    t.equal(w1.scans, w0.scans, 'the writer: no scan');
    t.ok(w1.rekeys - w0.rekeys >= 2, `the writer: re-keyed (${w1.rekeys - w0.rekeys})`);
    t.equal(r1.builds, r0.builds, 'the reader: no rebuild');
    t.equal(r1.scans, r0.scans, 'the reader: no scan');
    t.ok(r1.rekeys > r0.rekeys, `the reader: re-keyed (${r1.rekeys - r0.rekeys})`);

    const fresh = await freshReader(t, dir);
    const table = await openIndex(t, dir, { writes: false, textEngine: false, rowCacheBytes: 0 });
    const rs = reader.textPostingsStats()!;
    t.equal(rs.snippets.docs, rs.docs, `the reader keeps the snippet text of every document it added (${rs.docs})`);
    for (const [name, x] of [
      ['the writer', idx],
      ['the reader', reader],
    ] as const) {
      t.equal(x.textPostingsStats()!.live, fresh.textPostingsStats()!.live, `${name}: as many live passages as the table`);
      t.same(await candidates(x), await candidates(fresh), `${name}: every query's candidates (and titles) as a fresh build's`);
      t.same((await candidateRowIds(x)).sort(), (await candidateRowIds(fresh)).sort(), `${name}: under the table's row ids`);
      for (const query of QUERIES.slice(0, 4)) {
        // (The ranking itself may differ in close calls: the replaced rows' tombstones still weigh in the statistics.)
        const hits = (await retrieve(x, { query, mode: 'hybrid' })).passages.slice(0, 10).map((p) => p.row);
        t.ok(hits.length > 0 && hits.every((h) => typeof h._rowid === 'bigint'), `${name}, ${query}: hits with row ids`);
        const shown = async (i: PassageIndex, keys: readonly PassageKey[]) => {
          const rows = await i.passageRows(keys);
          return keys.map((k) => `${k.page_ref}:${k.ordinal} ${rows.get(`${k.page_ref}:${k.ordinal}`)?.text}`);
        };
        t.same(
          await shown(x, hits), // by row id: the row cache first, then a take
          await shown(
            fresh,
            hits.map(({ _rowid, ...key }) => key),
          ), // by key
          `${name}, ${query}: the rows of its results by their row ids are those passages`,
        );
        // As a search result reads them (the reader: from its snippet store, nothing from the table).
        const quoted = (rows: Map<string, ResultRow>) =>
          hits.map((k) => {
            const r = rows.get(`${k.page_ref}:${k.ordinal}`);
            return `${k.page_ref}:${k.ordinal} ${r?.title} ${r?.url} ${r?.snippet_text}`;
          });
        const before = x.rowReads();
        const got = await x.resultRows(hits);
        if (x === reader) t.equal(x.rowReads().table, before.table, `${name}, ${query}: result rows read from memory`);
        t.same(
          quoted(got),
          quoted(await table.resultRows(hits.map(({ _rowid, ...key }) => key))),
          `${name}, ${query}: its result rows are the table's`,
        );
      }
    }

    // A maintenance commit told for a version that did write pages: rows without a document; the reader scans. The
    // reader is told only that (not the write itself, which could start a sync by its pages before the marks arrive).
    stop();
    await idx.upsertPages(all.slice(260, 300));
    const wrote = await idx.servingVersion();
    reader.notePassageCommits([
      { version: wrote - 1, pageRefs: [], maintenance: 'begin' },
      { version: wrote, pageRefs: [], maintenance: 'end' },
    ]);
    await reader.catchUp(await idx.servingVersion());
    await reader.textEngineReady();
    const r2 = reader.textPostingsStats()!.syncs;
    t.equal(r2.rekeys, r1.rekeys + 1, 'tried to re-key');
    t.equal(r2.scans, r1.scans + 1, 'then scanned');
    t.same(await candidates(reader), await candidates(await freshReader(t, dir)), 'the same candidates as a fresh build');
  },
);

t.test(
  'issue 42: a query waits for the sync that brings the postings to its version (a build or a patch); failing syncs fail it',
  async (t) => {
    // No other engine answers meanwhile: a query waits for the postings however long the sync takes.
    const { dir, idx, all } = await writtenIndex(t, 30, 20);
    const db = await lancedb.connect(dir);
    const table = await db.openTable('passages');
    t.teardown(() => {
      table.close();
      db.close();
    });
    const engine = new TextEngine({ db, table, tableName: 'passages', log: undefined, maxTermLength: 40 });
    t.teardown(() => engine.close());
    engine.schedule();
    t.equal(engine.version, null, 'not started: scheduling alone builds nothing (a process that only writes)');
    const built = await table.version();
    const first = await engine.ready(built);
    t.equal(engine.version, built, 'the first query waited for the build');
    t.equal(first?.postings.size.live, await table.countRows(), 'every row live in it');

    await idx.upsertPages(all.slice(20, 30));
    await table.checkoutLatest();
    const v1 = await table.version();
    const snap = await engine.ready(v1);
    t.equal(engine.version, v1, 'a query for the new version waited for the patch');
    t.equal(snap?.postings.size.live, await table.countRows(), 'every row live in them');
    t.equal(await engine.ready(built), null, 'asked for an older version than the postings hold: the caller reads the version again');

    // A connection that cannot open the table: every sync fails; the query fails after a few attempts, not forever.
    const closed = await lancedb.connect(dir);
    closed.close();
    const broken = new TextEngine({ db: closed, table, tableName: 'passages', log: undefined, maxTermLength: 40 });
    t.teardown(() => broken.close());
    await t.rejects(broken.ready(v1), 'the query fails with the sync error');
    t.equal(broken.version, null, 'and no postings were made');
  },
);

t.test('issue 14: a reader told the writer’s commits brings its postings to them before any query asks', async (t) => {
  // A search thread's postings followed the writer only when a query named a newer version; at 1M passages the first
  // queries after a quiet spell then waited seconds for the re-key of a compaction.
  const { dir, idx, all } = await writtenIndex(t, 30, 10);
  const reader = await openIndex(t, dir, { writes: false, refreshAfterMs: 0 });
  await reader.textEngineReady();
  const commits: PassageCommit[] = [];
  const off = idx.onPassageCommit((c) => commits.push(c));
  t.teardown(off);
  await idx.upsertPages(all.slice(10, 20));
  await idx.optimize(); // compaction: the rows move (a begin and an end mark)
  await idx.upsertPages(all.slice(20, 30));
  const target = await idx.version();
  t.ok(
    commits.some((c) => c.maintenance === 'end'),
    'the writer told its maintenance',
  );
  t.ok((reader.textPostingsStats()?.version ?? 0) < target, 'the reader is behind before it is told');
  reader.notePassageCommits(commits);
  const deadline = performance.now() + 20_000;
  while ((reader.textPostingsStats()?.version ?? 0) < target && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const stats = reader.textPostingsStats()!;
  t.equal(stats.version, target, 'its postings reached the writer’s version with no query');
  t.equal(stats.live, (await idx.stats()).passages, 'every passage live in them');
  t.same(await candidates(reader), await candidates(await freshReader(t, dir)), 'the same candidates as postings built now');
});
