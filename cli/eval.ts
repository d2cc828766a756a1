/**
 * `svc eval --beir DIR [--mode bm25|vector|hybrid] [--json] [--data-dir D] [--name N] [--embedder auto|none|hashing]`:
 * runs the test-split queries of a BEIR dataset against the index (after `svc ingest --jsonl DIR/corpus.jsonl.gz`)
 * and prints nDCG@10 and recall@100 (pytrec_eval definitions: linear gain, binary/graded qrels as given).
 *
 * Protocol: a BEIR query is a natural-language claim, scored as a bag of words (termMode `any`), not with the
 * all-terms-must-match rule of interactive search; operator characters are neutralised so a claim starting with
 * "-" is not read as an exclusion. A document's score is its best passage's (max-passage).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { groupPages, hydrate } from '../index/retrieval.js';
import { PassageIndex } from '../index/store.js';
import { corpusName, pickEmbedder } from './ingest.js';
import { UsageError, type CliIo } from './io.js';

/** qrels: query id → (doc id → relevance). */
export type Qrels = Map<string, Map<string, number>>;

export function readQrels(file: string): Qrels {
  const out: Qrels = new Map();
  const lines = readFileSync(file, 'utf8').split(/\r?\n/);
  for (const [i, l] of lines.entries()) {
    if (l.trim() === '') continue;
    const [q, d, s] = l.split('\t');
    if (i === 0 && q === 'query-id') continue;
    if (q === undefined || d === undefined || s === undefined) continue;
    let m = out.get(q);
    if (!m) out.set(q, (m = new Map()));
    m.set(d, Number(s));
  }
  return out;
}

export function readQueries(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of readFileSync(file, 'utf8').split(/\r?\n/)) {
    if (l.trim() === '') continue;
    const o = JSON.parse(l) as { _id: string | number; text: string };
    out.set(String(o._id), o.text);
  }
  return out;
}

/** nDCG@k with linear gain (pytrec_eval `ndcg_cut`). */
export function ndcgAt(ranked: readonly string[], rel: ReadonlyMap<string, number>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((d, i) => {
    const g = rel.get(d) ?? 0;
    if (g > 0) dcg += g / Math.log2(i + 2);
  });
  const ideal = [...rel.values()].filter((g) => g > 0).sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

/** recall@k: share of the relevant documents found in the top k. */
export function recallAt(ranked: readonly string[], rel: ReadonlyMap<string, number>, k: number): number {
  const relevant = [...rel.entries()].filter(([, g]) => g > 0).map(([d]) => d);
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((d) => top.has(d)).length / relevant.length;
}

/** Neutralises operator syntax in a natural-language query (quotes, leading dashes, `x:` prefixes). */
export function plainQuery(text: string): string {
  return text.replace(/["\u201c\u201d]/g, ' ').replace(/(^|\s)-+/g, '$1').replace(/:/g, ' ').trim();
}

export interface EvalResult {
  readonly dataset: string;
  readonly mode: string;
  readonly ranking: string;
  readonly queries: number;
  readonly ndcg10: number;
  readonly recall100: number;
  readonly msPerQuery: number;
}

/** Runs the evaluation against an open index. */
export async function evaluate(index: PassageIndex, dir: string, opts: { mode: 'bm25' | 'vector' | 'hybrid'; name: string }): Promise<EvalResult> {
  const qrels = readQrels(join(dir, 'qrels', 'test.tsv'));
  const queries = readQueries(join(dir, 'queries.jsonl'));
  const host = `${opts.name}.corpus.invalid`;
  let ndcg = 0;
  let recall = 0;
  let n = 0;
  let ranking = '';
  const t0 = performance.now();
  for (const [qid, rel] of qrels) {
    const text = queries.get(qid);
    if (text === undefined) continue;
    const res = await index.search({ query: plainQuery(text), termMode: 'any', mode: opts.mode, candidates: 300 });
    ranking = res.ranking;
    const ours = res.passages.filter((p) => p.row.host === host);
    const { pages } = groupPages(ours, { collapseNearDuplicates: false });
    const best = await hydrate(index, pages.slice(0, 100).map((p) => p.best));
    const ranked = best.map((p) => p.row.external_id ?? '');
    ndcg += ndcgAt(ranked, rel, 10);
    recall += recallAt(ranked, rel, 100);
    n++;
  }
  const ms = (performance.now() - t0) / Math.max(1, n);
  return { dataset: opts.name, mode: opts.mode, ranking, queries: n, ndcg10: n ? ndcg / n : 0, recall100: n ? recall / n : 0, msPerQuery: ms };
}

/** `svc eval`. */
export async function evalCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      beir: { type: 'string' },
      mode: { type: 'string' },
      json: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      name: { type: 'string' },
      embedder: { type: 'string', default: 'auto' },
    },
  });
  if (!values.beir) throw new UsageError('usage: svc eval --beir DIR [--mode bm25|vector|hybrid] [--json] [--data-dir D]');
  const dir = values.beir;
  if (!existsSync(join(dir, 'qrels', 'test.tsv')) || !existsSync(join(dir, 'queries.jsonl'))) throw new UsageError(`${dir}: needs queries.jsonl and qrels/test.tsv`);
  const config = loadConfig({ env: io.env, flags: { dataDir: values['data-dir'] } });
  const embedder = await pickEmbedder(values.embedder ?? 'auto', config, io);
  const index = await PassageIndex.open({ dir: join(config.dataDir, 'lance'), embedder });
  try {
    const name = corpusName(values.name ?? join(dir, 'corpus.jsonl'));
    if (index.hostIdsUnder(`${name}.corpus.invalid`).length === 0) {
      io.stderr.write(`eval: corpus "${name}" is not in the index (run svc ingest --jsonl ${join(dir, 'corpus.jsonl.gz')} first)\n`);
      return 1;
    }
    const mode = (values.mode ?? (index.embedder ? 'hybrid' : 'bm25')) as 'bm25' | 'vector' | 'hybrid';
    if (!['bm25', 'vector', 'hybrid'].includes(mode)) throw new UsageError('--mode must be bm25, vector or hybrid');
    if (mode !== 'bm25' && !index.embedder) {
      io.stderr.write(`eval: --mode ${mode} needs embeddings, and none are available for this index (weights absent?)\n`);
      return 1;
    }
    const r = await evaluate(index, dir, { mode, name });
    if (values.json) io.stdout.write(JSON.stringify(r) + '\n');
    else {
      io.stdout.write(`| dataset | mode | ranking | queries | nDCG@10 | recall@100 | ms/query |\n|---|---|---|---|---|---|---|\n`);
      io.stdout.write(`| ${r.dataset} | ${r.mode} | ${r.ranking} | ${r.queries} | ${r.ndcg10.toFixed(4)} | ${r.recall100.toFixed(4)} | ${r.msPerQuery.toFixed(1)} |\n`);
    }
    return 0;
  } finally {
    await index.close();
    await embedder?.close();
  }
}
