/**
 * The LanceDB full-text calls behind svc's BM25 arm, on the engine alone (keys and scores of 200 rows, no svc code
 * around them), with the FTS index built without and with positions; then a stress run of writes and `optimize()`
 * with an unindexed tail. Run it under two LanceDB versions to compare them.
 *
 *   node --import tsx bench/lance-engine.ts [--sizes 10000,100000] [--queries 100] [--positions off,on]
 *                                           [--rounds 6] [--tail 2000] [--settle-s 300]
 *
 * Passages and queries are those of bench/index-query.ts (bench/synthetic.ts). Rows: `search_text` = page title +
 * passage, analyzed with LanceDB's English analyzer (positions as asked). LANCE_CPU_THREADS is left as the caller set it
 * (unset: Lance's own default, one thread per core), so a run without it answers whether svc's override is needed.
 * Every index build and optimize is bounded by `--settle-s`: one that does not settle is reported, and the process
 * exits with status 3 once the table is printed (a stuck native call cannot be cancelled).
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import * as lancedb from '@lancedb/lancedb';
import { BooleanQuery, Index, MatchQuery, Occur, Operator, PhraseQuery, type FullTextQuery, type Table } from '@lancedb/lancedb';
import { Field, Int32, Schema, Utf8 } from 'apache-arrow';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readQueries } from '../cli/eval.js';
import { STOP_WORDS } from '../index/retrieval/analyzer.js';
import { mulberry32, pct, SCIFACT, sentencePool, shortQuery, syntheticPages, twoWordPhrase } from './synthetic.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    queries: { type: 'string', default: '100' },
    positions: { type: 'string', default: 'off,on' },
    rounds: { type: 'string', default: '6' },
    tail: { type: 'string', default: '2000' },
    'settle-s': { type: 'string', default: '300' },
  },
});
const SIZES = values.sizes!.split(',').map(Number);
const NQ = Number(values.queries);
const ROUNDS = Number(values.rounds);
const TAIL = Number(values.tail);
const SETTLE_MS = Number(values['settle-s']) * 1000;
const COL = 'search_text';
const LANCE_VERSION = (
  JSON.parse(readFileSync(new URL('../node_modules/@lancedb/lancedb/package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const THREADS = process.env.LANCE_CPU_THREADS ?? 'unset';

const schema = new Schema([
  new Field('id', new Int32(), false),
  new Field('page_ref', new Int32(), false),
  new Field(COL, new Utf8(), false),
]);

/**
 * The engine's own English analyzer over raw text (what svc used before its own analyzer, index/retrieval/analyzer.ts), with
 * positions as asked. `customStopWords` (0.38+) names 0.31's built-in list, so both versions agree.
 */
const ENGINE_OPTIONS = {
  baseTokenizer: 'simple',
  lowercase: true,
  asciiFolding: true,
  stem: true,
  removeStopWords: true,
  language: 'English',
  maxTokenLength: 40,
} as const;
function ftsOptions(withPosition: boolean) {
  return LANCE_VERSION.startsWith('0.31.')
    ? { ...ENGINE_OPTIONS, withPosition }
    : { ...ENGINE_OPTIONS, customStopWords: [...STOP_WORDS.en], withPosition };
}

let hung = false;
/** Runs `task` unless it takes longer than --settle-s; the elapsed ms, or why it failed. */
async function bounded(task: () => Promise<unknown>): Promise<{ ms: number; error: string | null }> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), SETTLE_MS)));
  try {
    const r = await Promise.race([task().then(() => 'done' as const), timeout]);
    if (r === 'timeout') {
      hung = true;
      return { ms: performance.now() - t0, error: `did not settle in ${SETTLE_MS / 1000} s` };
    }
    return { ms: performance.now() - t0, error: null };
  } catch (err) {
    return { ms: performance.now() - t0, error: (err instanceof Error ? err.message : String(err)).slice(0, 160) };
  } finally {
    clearTimeout(timer);
  }
}

const keys = async (table: Table, q: FullTextQuery, k = 200) =>
  (await table.query().fullTextSearch(q).select(['id', '_score']).limit(k).toArray()) as { id: number; _score: number }[];

async function measure(table: Table, queries: readonly FullTextQuery[]): Promise<{ p50: number; p95: number; rows: number }> {
  for (const q of queries.slice(0, 5)) await keys(table, q); // warm-up
  const lat: number[] = [];
  let rows = 0;
  for (const q of queries) {
    const t0 = performance.now();
    rows += (await keys(table, q)).length;
    lat.push(performance.now() - t0);
  }
  return { p50: pct(lat, 50), p95: pct(lat, 95), rows: rows / Math.max(1, queries.length) };
}

const pool = await sentencePool();
const all = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()];
const claims = all.slice(0, NQ);
const shorts = all
  .map(shortQuery)
  .filter((q) => q.split(' ').length >= 2)
  .slice(0, NQ);
const phrases = all
  .map(twoWordPhrase)
  .filter((p): p is string => p !== null)
  .slice(0, NQ);

const latency: string[] = [];
const stress: string[] = [];
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;

for (const size of SIZES) {
  for (const pos of values.positions!.split(',')) {
    const withPosition = pos === 'on';
    const dir = mkdtempSync(join(tmpdir(), 'svc-lance-engine-'));
    try {
      const db = await lancedb.connect(dir);
      const table = await db.createEmptyTable('p', schema, { storageOptions: { new_table_data_storage_version: '2.1' } });
      let id = 0;
      let batch: Record<string, unknown>[] = [];
      for (const p of syntheticPages(size, pool)) {
        for (const s of p.passages) batch.push({ id: id++, page_ref: p.pageRef, [COL]: `${p.title}\n${s.text}` });
        if (batch.length >= 20_000) {
          await table.add(lancedb.makeArrowTable(batch, { schema }));
          batch = [];
        }
      }
      if (batch.length) await table.add(lancedb.makeArrowTable(batch, { schema }));
      const build = await bounded(() => table.createIndex(COL, { config: Index.fts(ftsOptions(withPosition)) }));
      const label = `${size.toLocaleString('en-US')} | ${LANCE_VERSION} | ${pos}`;
      process.stderr.write(`${label}: index built in ${(build.ms / 1000).toFixed(1)} s ${build.error ?? ''}\n`);
      if (build.error) {
        stress.push(row([label, 'index build', '—', build.error, '—']));
        continue;
      }
      const opt0 = await bounded(() => table.optimize());
      stress.push(
        row([
          label,
          'index build; first optimize',
          `${(build.ms / 1000).toFixed(1)} s; ${(opt0.ms / 1000).toFixed(1)} s`,
          opt0.error ?? 'ok',
          '—',
        ]),
      );

      // Latency of the calls the BM25 arm makes (or could make).
      const and = (q: string) => new MatchQuery(q, COL, { operator: Operator.And });
      const cases: [string, FullTextQuery[]][] = [
        ['MatchQuery AND, 3 words', shorts.map(and)],
        [
          'MatchQuery AND, 3 words + MustNot word',
          shorts.map(
            (q) =>
              new BooleanQuery([
                [Occur.Must, and(q)],
                [Occur.MustNot, new MatchQuery(q.includes('patients') ? 'cells' : 'patients', COL)],
              ]),
          ),
        ],
        ['MatchQuery OR, claim (any term)', claims.map((q) => new MatchQuery(q, COL, { operator: Operator.Or }))],
        ['MatchQuery AND, 2 adjacent words', phrases.map(and)],
      ];
      if (withPosition) cases.push(['PhraseQuery, the same 2 words', phrases.map((q) => new PhraseQuery(q, COL))]);
      cases.push(['MatchQuery AND, word + unknown word "zzzq"', shorts.slice(0, 20).map((q) => and(`${q.split(' ')[0]!} zzzq`))]);
      for (const [name, qs] of cases) {
        try {
          const m = await measure(table, qs);
          latency.push(row([label, name, qs.length, m.p50.toFixed(1), m.p95.toFixed(1), m.rows.toFixed(1)]));
        } catch (err) {
          latency.push(
            row([label, name, qs.length, '—', '—', `error: ${(err instanceof Error ? err.message : String(err)).slice(0, 120)}`]),
          );
        }
        process.stderr.write(`${latency[latency.length - 1]}\n`);
      }

      // Stress: new rows (an unindexed tail, one of them with a word the index has never seen), queries on it,
      // then optimize (compaction + index update), bounded; then the same queries on the folded-in rows.
      const rnd = mulberry32(7 + size);
      for (let r = 1; r <= ROUNDS && !hung; r++) {
        const fresh = `qqfresh${r}x`;
        const rows = Array.from({ length: TAIL }, (_, i) => ({
          id: id++,
          page_ref: 10_000_000 + r,
          [COL]:
            i === 0
              ? `Regulatory ${fresh} cells were measured`
              : Array.from({ length: 4 }, () => pool.sentences[Math.floor(rnd() * pool.sentences.length)]!).join(' '),
        }));
        await table.add(lancedb.makeArrowTable(rows, { schema }));
        const probe = async () => {
          const found = (await keys(table, and(`cells ${fresh}`))).length;
          const phrase = withPosition ? (await keys(table, new PhraseQuery(`${fresh} cells`, COL))).length : '—';
          const unknown = (await keys(table, and('cells qqneverseen'))).length;
          return `"cells ${fresh}" ${found}, phrase ${phrase}, "cells qqneverseen" ${unknown}`;
        };
        let before: string;
        try {
          before = await probe();
        } catch (err) {
          before = `error: ${(err instanceof Error ? err.message : String(err)).slice(0, 120)}`;
        }
        const opt = await bounded(() => table.optimize());
        let after = '—';
        if (!opt.error) {
          try {
            after = await probe();
          } catch (err) {
            after = `error: ${(err instanceof Error ? err.message : String(err)).slice(0, 120)}`;
          }
        }
        stress.push(
          row([
            label,
            `round ${r}: +${TAIL} rows, optimize`,
            `${(opt.ms / 1000).toFixed(1)} s`,
            opt.error ?? 'ok',
            `before: ${before}; after: ${after}`,
          ]),
        );
        process.stderr.write(`${stress[stress.length - 1]}\n`);
      }
      if (!hung) {
        table.close();
        db.close();
      }
    } finally {
      if (!hung) rmSync(dir, { recursive: true, force: true });
    }
    if (hung) break;
  }
  if (hung) break;
}

console.log(`\nLanceDB ${LANCE_VERSION}, LANCE_CPU_THREADS=${THREADS}, Node ${process.version}; keys and _score of 200 rows per query\n`);
console.log('| passages | lancedb | positions | call | queries | p50 ms | p95 ms | rows returned (mean) |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of latency) console.log(r);
console.log('\n| passages | lancedb | positions | step | time | result | rows found (expected 1, 1, 0) |');
console.log('|---|---|---|---|---|---|---|');
for (const r of stress) console.log(r);
process.exit(hung ? 3 : 0);
