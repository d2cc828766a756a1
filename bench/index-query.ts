/**
 * Query latency (p50/p95) and throughput of the passage index at N passages, beside SQLite FTS5 bm25 over the same
 * passages in the same run.
 *
 *   node --import tsx bench/index-query.ts [--sizes 10000,100000] [--queries 200] [--concurrency 4] [--bm25-only]
 *                                          [--keep DIR] [--only "svc bm25,FTS5"] [--query-model ../shared/data/models]
 *                                          [--anchor tantivy|none] [--text-engine postings|lance] [--warmup 100]
 *                                          [--row-cache-mb N] [--engine-segments]
 *
 * `--keep DIR` builds each size under DIR/<size>[-bm25] and keeps it; a later run with the same DIR reuses it
 * (building 1M passages takes minutes), so query changes can be measured on the same index.
 *
 * Passages are synthetic but made of real text: each is 3–6 sentences drawn (seeded PRNG) from the SciFact corpus
 * (../shared/data/beir/scifact), spread over 500 hosts. Vectors come from the deterministic HASHING STAND-IN
 * embedder (dim 384, the size of all-MiniLM-L6-v2) because the model weights are absent: "hybrid" rows measure the
 * index and fusion path, not the cost of a real query embedding (see bench/embedding.ts for that).
 * `--query-model DIR` adds hybrid rows whose QUERY embedding is real (all-MiniLM-L6-v2 int8 from DIR, the service's
 * embedder): the index vectors stay synthetic (same dimension), so these rows measure the latency of the served
 * hybrid path including the real query embedding, not its relevance.
 * Anchors: SQLite FTS5 bm25 in process, and a Lucene-class engine, tantivy (Rust, block-max WAND; PyPI `tantivy`,
 * pinned below), run by bench/anchors/tantivy_anchor.py from a venv this script makes under ~/.cache/svc-bench (pip
 * reaches PyPI; nothing is downloaded at run time of the service). It indexes the very passages of the FTS5 table and
 * times the same queries in its own process. The closing table gives svc / anchor p95 ratios.
 * Compiled: `npx tsc -p . && node dist/bench/index-query.js …` times the code `npm start` runs (tsx's transform
 * output measured about twice the main-thread time per query on a small index).
 * `--text-engine`: `postings` (the default) builds the in-process postings before timing; `lance` compared them with
 * LanceDB's full-text index until issue 42, which made the postings the one BM25 engine: it now only leaves their build
 * to the first timed query (bench/filtered-query.ts measured the two engines before that change).
 * Queries: 3 content words from each SciFact test query, all-terms-must-match (web search semantics) for both
 * engines, and the full natural-language claim in any-term mode. Bounded: `--queries` per row, then a
 * throughput run of the same count at `--concurrency`.
 * `--row-cache-mb`: the result-row cache's bound (SVC_ROW_CACHE_MB; default 1/32 of the machine's memory, 64–1024 MiB).
 * `--engine-segments`: open the postings from the index's published engine segment as `svc serve` does (a writer
 * here: it publishes one at close when it had to build them), instead of building them in the JS heap.
 * Warm-up: before each row, `--warmup` queries of the same kind that the row does NOT time (the next ones of the same
 * query set), so the row measures a process in steady state (JIT-compiled code, as a served process that has answered
 * a few hundred queries) without having seen the timed queries; when the set has none left, the first 10 timed
 * queries warm up.
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { homedir } from 'node:os';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import { createEmbedder, createHashingEmbedder, type Embedder } from '../index/serving/embedder.js';
import { searchPages } from '../index/retrieval/retrieval.js';
import { PassageIndex } from '../index/engines/lance/store.js';
import type { PageInput } from '../page-model.js';
import { BENCH_SRC, pct, SCIFACT, sentencePool, requireEach, shortQuery, syntheticPages } from './synthetic.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    queries: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '4' },
    // No vectors at all: the BM25 rows only (builds 1M passages without IVF-PQ training).
    'bm25-only': { type: 'boolean', default: false },
    keep: { type: 'string' },
    'query-model': { type: 'string' },
    // Only the cases whose label contains one of these (comma-separated), e.g. "svc bm25".
    only: { type: 'string' },
    anchor: { type: 'string', default: 'tantivy' },
    'text-engine': { type: 'string', default: 'postings' },
    warmup: { type: 'string', default: '100' },
    'row-cache-mb': { type: 'string' },
    // Postings loaded from the index's published engine segment, as `svc serve` opens them (SVC_ENGINE_SEGMENTS,
    // on by default): read in place outside the JS heap, where a build from the table holds them in it.
    'engine-segments': { type: 'boolean', default: false },
  },
});
if (!['postings', 'lance'].includes(values['text-engine']!)) throw new Error('--text-engine: postings or lance');
const TEXT_ENGINE = values['text-engine'] === 'postings';

/** Builds the in-process postings before anything is timed (a served index builds them once, at open). */
async function warmPostings(idx: PassageIndex, label: string): Promise<void> {
  if (!TEXT_ENGINE) return;
  const t0 = performance.now();
  await idx.textEngineReady();
  const mb = Math.round(process.memoryUsage().rss / 2 ** 20);
  process.stderr.write(`${label}: postings ready in ${((performance.now() - t0) / 1000).toFixed(1)} s (process RSS ${mb} MiB)\n`);
}
const BM25_ONLY = values['bm25-only'] === true;
const SIZES = values.sizes!.split(',').map(Number);
const NQ = Number(values.queries);
const CONC = Number(values.concurrency);

const TANTIVY = 'tantivy==0.27.0';

/** The venv holding tantivy (made once, reused): its python. */
function tantivyPython(): string {
  const venv = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'svc-bench', 'tantivy-venv');
  const py = join(venv, 'bin', 'python');
  const ready = join(venv, TANTIVY);
  if (!existsSync(ready)) {
    process.stderr.write(`  making ${venv} (pip install ${TANTIVY})…\n`);
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(py, ['-m', 'pip', 'install', '-q', TANTIVY], { stdio: 'inherit' });
    writeFileSync(ready, new Date().toISOString());
  }
  return py;
}

interface AnchorResult {
  readonly docs: number;
  readonly build_s: number;
  /** Per kind ("3 words, AND", …), and the same kind with the hits' stored text read ("…, stored text"). */
  readonly rows: Record<string, { p50: number; p95: number; n: number }>;
}

/** Runs the tantivy anchor over the FTS5 table's passages (index kept in `dir/tantivy`). */
function runTantivy(dir: string, shorts: string[], claims: string[], nfcorpus: string[]): AnchorResult {
  const qfile = join(dir, 'anchor-queries.json');
  const warm = { shorts: WARMUP.get(shorts) ?? [], claims: WARMUP.get(claims) ?? [], nfcorpus: WARMUP.get(nfcorpus) ?? [] };
  writeFileSync(qfile, JSON.stringify({ shorts, claims, nfcorpus, warm, warmup: 10 }));
  const script = join(BENCH_SRC, 'anchors', 'tantivy_anchor.py');
  const out = execFileSync(tantivyPython(), [script, join(dir, 'fts5.sqlite'), join(dir, 'tantivy'), qfile], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split('\n').pop()!) as AnchorResult;
}

const fts5Query = (q: string, op: 'AND' | 'OR') =>
  q
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => `"${w.replace(/"/g, '')}"`)
    .join(` ${op} `);

async function measure(
  queries: string[],
  run: (q: string) => Promise<unknown> | unknown,
): Promise<{ p50: number; p95: number; qps: number }> {
  const warm = WARMUP.get(queries);
  for (const q of warm && warm.length >= 10 ? warm : queries.slice(0, 10)) await run(q);
  const lat: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    await run(q);
    lat.push(performance.now() - t0);
  }
  let i = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONC }, async () => {
      while (i < queries.length) await run(queries[i++]!);
    }),
  );
  const qps = queries.length / ((performance.now() - t0) / 1000);
  return { p50: pct(lat, 50), p95: pct(lat, 95), qps };
}

/** Writes `size` synthetic passages into the svc index and an FTS5 table, then optimizes both. */
async function buildBoth(idx: PassageIndex, sqlite: Database.Database, size: number, t0: number): Promise<void> {
  sqlite.exec(
    `CREATE VIRTUAL TABLE p USING fts5(title, text, page_ref UNINDEXED, ordinal UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')`,
  );
  const ins = sqlite.prepare('INSERT INTO p (title, text, page_ref, ordinal) VALUES (?, ?, ?, ?)');
  let batch: PageInput[] = [];
  const flush = async () => {
    await idx.upsertPages(batch);
    sqlite.transaction(() => {
      for (const p of batch) for (const s of p.passages) ins.run(p.title, s.text, p.pageRef, s.ordinal);
    })();
    batch = [];
  };
  let done = 0;
  for (const p of syntheticPages(size, pool)) {
    batch.push(p);
    if (batch.length >= 2000) {
      done += batch.length;
      await flush();
      process.stderr.write(`  ${done} pages written (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
    }
  }
  await flush();
  process.stderr.write(`  optimize (compaction, index update, IVF-PQ at >= 50k vectors)…\n`);
  await idx.optimize();
  sqlite.exec(`INSERT INTO p(p) VALUES ('optimize')`);
}

const rows: string[] = [];
const ratios: string[] = [];
const pool = await sentencePool();
const all = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()];
const claims = all.slice(0, NQ);
// NFCorpus queries: short natural-language titles ("How Fruits and Vegetables Can Treat Asthma"), a second query set.
const allNfq = [...readQueries(join(SCIFACT, '..', 'nfcorpus', 'queries.jsonl')).values()];
const nfq = allNfq.slice(0, NQ);
const allShorts = all.map(shortQuery).filter((q) => q.split(' ').length >= 2);
const shorts = allShorts.slice(0, NQ);
// Each timed set's warm-up: the queries after it in the same set (never timed in this run).
const WARM_N = Number(values.warmup);
const WARMUP = new Map<string[], string[]>([
  [claims, all.slice(NQ, NQ + WARM_N)],
  [nfq, allNfq.slice(NQ, NQ + WARM_N)],
  [shorts, allShorts.slice(NQ, NQ + WARM_N)],
]);

for (const size of SIZES) {
  const dir = values.keep ? join(values.keep, `${size}${BM25_ONLY ? '-bm25' : ''}`) : mkdtempSync(join(tmpdir(), 'svc-bench-index-'));
  const builtMark = join(dir, 'built');
  const reuse = values.keep !== undefined && existsSync(builtMark);
  if (values.keep && !reuse) rmSync(dir, { recursive: true, force: true }); // a half-built leftover
  mkdirSync(dir, { recursive: true });
  try {
    const t0 = performance.now();
    const openIndex = () =>
      PassageIndex.open({
        dir: join(dir, 'lance'),
        embedder: BM25_ONLY ? null : createHashingEmbedder(384),
        optimizeEvery: Number.MAX_SAFE_INTEGER,
        textEngine: TEXT_ENGINE,
        ...(values['engine-segments'] ? { engineSegments: true } : {}),
        ...(values['row-cache-mb'] !== undefined ? { rowCacheBytes: Number(values['row-cache-mb']) * 2 ** 20 } : {}),
      });
    let idx = await openIndex();
    const sqlite = new Database(join(dir, 'fts5.sqlite'));
    sqlite.pragma('journal_mode = WAL');
    if (!reuse) {
      await buildBoth(idx, sqlite, size, t0);
      if (values.keep) writeFileSync(builtMark, new Date().toISOString());
      // Timed as a served index is: opened on the built tables, no maintenance of the build still pending.
      await idx.close();
      idx = await openIndex();
    }
    const buildS = (performance.now() - t0) / 1000;
    await warmPostings(idx, 'index');
    const st = await idx.stats();
    process.stderr.write(`${reuse ? 'reused' : 'built'} ${st.passages} passages (${st.pages} pages) in ${buildS.toFixed(0)} s\n`);

    // svc_search's retrieval (searchPages: result page hydrated, as svc_search reads it).
    /** The query as sent: "all" requires every word (+word), "any" is the default ranked query. */
    const asSent = (q: string, termMode: 'all' | 'any') => (termMode === 'all' ? requireEach(q) : q);
    const svcSearch = (mode: 'bm25' | 'hybrid', termMode: 'all' | 'any') => async (q: string) =>
      searchPages(idx, { query: asSent(q, termMode), mode, limit: 10, offset: 0 });
    const fts5 = (op: 'AND' | 'OR') => {
      // bm25 weights: title 2, text 1; 10 best rows, like one result page.
      const stmt = sqlite.prepare(`SELECT page_ref, ordinal, bm25(p, 2.0, 1.0) AS s FROM p WHERE p MATCH ? ORDER BY s LIMIT 10`);
      return (q: string) => stmt.all(fts5Query(q, op));
    };
    // The real model embeds the query; the index accepts it as the stand-in it was built with (same dimension).
    let realQuery: PassageIndex | null = null;
    let model: Embedder | null = null;
    if (values['query-model'] && !BM25_ONLY) {
      model = await createEmbedder({ modelDir: values['query-model'] });
      if (!model) throw new Error('--query-model: the model did not load');
      const real = model;
      const stand = createHashingEmbedder(384);
      const wrapped: Embedder = {
        dim: stand.dim,
        modelId: stand.modelId,
        kind: 'hashing-stand-in',
        embed: (texts, o) => real.embed(texts, o),
        close: async () => {},
      };
      realQuery = await PassageIndex.open({
        dir: join(dir, 'lance'),
        embedder: wrapped,
        optimizeEvery: Number.MAX_SAFE_INTEGER,
        refreshAfterMs: 0,
        textEngine: TEXT_ENGINE,
        ...(values['engine-segments'] ? { engineSegments: true } : {}),
      });
      await warmPostings(realQuery, 'real-query index');
    }
    const realSearch = (termMode: 'all' | 'any') => async (q: string) =>
      searchPages(realQuery!, { query: asSent(q, termMode), mode: 'hybrid', limit: 10, offset: 0 });
    const cases: [string, string[], (q: string) => unknown][] = [
      ['svc bm25 (3 words, all must match)', shorts, svcSearch('bm25', 'all')],
      ['svc hybrid-rrf-hashing (3 words, all)', shorts, svcSearch('hybrid', 'all')],
      ['SQLite FTS5 bm25 (3 words, AND)', shorts, fts5('AND')],
      // The same three words as an agent sends them: the default semantics rank any-term matches.
      ['svc bm25 (3 words, any term)', shorts, svcSearch('bm25', 'any')],
      ['SQLite FTS5 bm25 (3 words, OR)', shorts, fts5('OR')],
      ['svc bm25 (claim, any term)', claims, svcSearch('bm25', 'any')],
      ['svc hybrid-rrf-hashing (claim, any term)', claims, svcSearch('hybrid', 'any')],
      ['SQLite FTS5 bm25 (claim, OR)', claims, fts5('OR')],
      ['svc bm25 (NFCorpus query, any term)', nfq, svcSearch('bm25', 'any')],
      ['SQLite FTS5 bm25 (NFCorpus query, OR)', nfq, fts5('OR')],
      ...(realQuery
        ? ([
            ['svc hybrid, REAL query embedding (3 words, all)', shorts, realSearch('all')],
            ['svc hybrid, REAL query embedding (3 words, any term)', shorts, realSearch('any')],
            ['svc hybrid, REAL query embedding (claim, any term)', claims, realSearch('any')],
            ['svc hybrid, REAL query embedding (NFCorpus query, any term)', nfq, realSearch('any')],
          ] as [string, string[], (q: string) => unknown][])
        : []),
    ];
    const only = values.only?.split(',');
    const wanted = cases.filter(([label]) => !(BM25_ONLY && label.includes('hybrid')) && (!only || only.some((o) => label.includes(o))));
    const p95 = new Map<string, number>();
    for (const [label, qs, run] of wanted) {
      const m = await measure(qs, run);
      p95.set(label, m.p95);
      rows.push(
        `| ${st.passages.toLocaleString('en-US')} | ${label} | ${qs.length} | ${m.p50.toFixed(1)} | ${m.p95.toFixed(1)} | ${m.qps.toFixed(0)} |`,
      );
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    }
    if (values.anchor === 'tantivy') {
      const a = runTantivy(dir, shorts, claims, nfq);
      process.stderr.write(`  tantivy: ${a.docs} docs${a.build_s > 0 ? `, built in ${a.build_s.toFixed(0)} s` : ' (reused)'}\n`);
      for (const [kind, r] of Object.entries(a.rows)) {
        p95.set(`tantivy ${kind}`, r.p95);
        rows.push(
          `| ${st.passages.toLocaleString('en-US')} | tantivy bm25 (${kind}) | ${r.n} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | – |`,
        );
      }
    }
    // svc / anchor ratios of p95, the form the aims take (docs/benchmarks.md: against FTS5 and the Lucene-class anchor).
    const pairs: [string, string, string][] = [
      ['3 words', 'svc bm25 (3 words, all must match)', 'SQLite FTS5 bm25 (3 words, AND)'],
      ['3 words', 'svc bm25 (3 words, all must match)', 'tantivy 3 words, AND'],
      ['3 words, any', 'svc bm25 (3 words, any term)', 'SQLite FTS5 bm25 (3 words, OR)'],
      ['3 words, any', 'svc bm25 (3 words, any term)', 'tantivy 3 words, OR'],
      ['claims', 'svc bm25 (claim, any term)', 'SQLite FTS5 bm25 (claim, OR)'],
      ['claims', 'svc bm25 (claim, any term)', 'tantivy claim, OR'],
      ['NFCorpus', 'svc bm25 (NFCorpus query, any term)', 'SQLite FTS5 bm25 (NFCorpus query, OR)'],
      ['NFCorpus', 'svc bm25 (NFCorpus query, any term)', 'tantivy NFCorpus query, OR'],
      // Like for like: svc's rows read the result page's rows; these read the 10 hits' stored text too.
      ['3 words', 'svc bm25 (3 words, all must match)', 'tantivy 3 words, AND, stored text'],
      ['3 words, any', 'svc bm25 (3 words, any term)', 'tantivy 3 words, OR, stored text'],
      ['claims', 'svc bm25 (claim, any term)', 'tantivy claim, OR, stored text'],
      ['NFCorpus', 'svc bm25 (NFCorpus query, any term)', 'tantivy NFCorpus query, OR, stored text'],
    ];
    for (const [kind, svc, anchor] of pairs) {
      const x = p95.get(svc);
      const y = p95.get(anchor);
      if (x !== undefined && y !== undefined)
        ratios.push(
          `| ${st.passages.toLocaleString('en-US')} | ${kind} | ${anchor.startsWith('tantivy') ? `tantivy${anchor.endsWith('stored text') ? ', stored text read' : ''}` : 'SQLite FTS5'} | ${(x / y).toFixed(2)} |`,
        );
    }
    await idx.close();
    await realQuery?.close();
    await model?.close();
    sqlite.close();
  } finally {
    if (!values.keep) rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`\nconcurrency for throughput: ${CONC}; machine: 2 cores shared with other work\n`);
console.log('| passages | engine / query kind | queries | p50 ms | p95 ms | queries/s |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
if (ratios.length > 0) {
  console.log('\n| passages | queries | anchor | svc p95 / anchor p95 |');
  console.log('|---|---|---|---|');
  for (const r of ratios) console.log(r);
}
