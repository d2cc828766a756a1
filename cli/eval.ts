/**
 * `svc eval --beir DIR [--tool search|context] [--mode auto|bm25|vector|hybrid] [--split test|train] [--json]
 *  [--data-dir D] [--name N] [--embedder auto|model|none|hashing] [--limit N]`
 *
 * Relevance measured on the served path: each BEIR query is sent, as its raw text, through the same tool call an
 * agent makes (`callTool`: input parsing, the tool's handler, output check) on the services `svc serve` builds,
 * with the tool's defaults. Nothing is ranked differently for eval.
 *
 * - `--tool search` (default): nDCG@10 of the first page (limit 10, the default); recall@100 from the pages an agent
 *   reads by paging (limit 20, offsets 0–80); the share of queries answered empty; p50/p95 latency of the first page.
 * - `--tool context`: svc_context with its defaults; the packed passages' pages, in order, are the ranking (nDCG@10);
 *   also the share of queries whose context quotes at least one judged-relevant page, and the share of quoted pages
 *   that are judged relevant.
 * - `--mode` is the service's ranking setting (`SVC_RANKING`), so the arms are compared on the same served path.
 *
 * Metrics follow pytrec_eval (linear gain, qrels as given). Results outside the corpus (crawled pages in the same
 * index) count as non-relevant, as they would for a user.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, RANKING_SETTINGS, type Config, type RankingSetting } from '../config.js';
import { createHashingEmbedder } from '../index/serving/embedder.js';
import { createLogger } from '../logger.js';
import { createServices, type Services } from '../main.js';
import { callTool } from '../tools/call-tool.js';
import { contextTool } from '../tools/context.js';
import { searchTool } from '../tools/search.js';
import { corpusDomain, corpusName, corpusUrl } from './ingest.js';
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
  const ideal = [...rel.values()]
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
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

/** Nearest-rank percentile of a list of numbers. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export interface EvalResult {
  readonly dataset: string;
  readonly tool: 'search' | 'context';
  readonly mode: RankingSetting;
  /** The ranking the service reported (e.g. hybrid-rrf, bm25). */
  readonly ranking: string;
  readonly queries: number;
  readonly ndcg10: number;
  /** search: recall@100 over the pages an agent can read; context: recall of the packed sources. */
  readonly recall: number;
  /** Share of queries answered with no result (search) or no passage (context). */
  readonly emptyShare: number;
  /** context: share of queries whose context quotes at least one judged-relevant page. */
  readonly relevantSourceShare: number | null;
  /** context: share of quoted pages that are judged relevant. */
  readonly sourcePrecision: number | null;
  /** Share of queries whose first page (search) or context quotes a page from outside the corpus (e.g. crawled web pages in the same index). */
  readonly outsideShare: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

/** The corpus document id of a result URL (`corpus:<name>/<id>`), or null for any other page. */
function docId(url: string, name: string): string | null {
  const prefix = corpusUrl(name, '');
  return url.startsWith(prefix) ? decodeURIComponent(url.slice(prefix.length)) : null;
}

/** Page size and offsets an agent uses to read the first 100 results (the spec's bounds: limit ≤ 20, offset ≤ 90). */
const PAGE = 20;
const DEPTH = 100;

/** Runs the queries of one split through a tool of the running services. */
export async function evaluate(
  services: Pick<Services, 'deps'>,
  dir: string,
  opts: { tool: 'search' | 'context'; name: string; mode: RankingSetting; split?: 'test' | 'train'; limit?: number },
): Promise<EvalResult> {
  const qrels = readQrels(join(dir, 'qrels', `${opts.split ?? 'test'}.tsv`));
  const queries = readQueries(join(dir, 'queries.jsonl'));
  const ctx = { deps: services.deps, caller: { keyId: 'eval', digest: '0'.repeat(64) } };
  let ndcg = 0;
  let recall = 0;
  let empty = 0;
  let withRelevant = 0;
  let quoted = 0;
  let quotedRelevant = 0;
  let outside = 0;
  let n = 0;
  let ranking = '';
  const times: number[] = [];
  for (const [qid, rel] of qrels) {
    const raw = queries.get(qid);
    if (raw === undefined) continue;
    if (opts.limit !== undefined && n >= opts.limit) break;
    // The query as an agent sends it: the text itself, within the tool's 300-character bound.
    const text = raw.slice(0, 300);
    if (opts.tool === 'search') {
      const t0 = performance.now();
      const first = await callTool(searchTool, { q: text }, ctx);
      times.push(performance.now() - t0);
      ranking = first.ranking;
      if (first.results.length === 0) empty++;
      const ids = (rs: readonly { url: string }[]) => rs.map((r) => docId(r.url, opts.name) ?? `web:${r.url}`);
      ndcg += ndcgAt(ids(first.results), rel, 10);
      if (first.results.some((r) => docId(r.url, opts.name) === null)) outside++;
      const deep: string[] = [];
      for (let offset = 0; offset < DEPTH && offset <= 90; offset += PAGE) {
        const page = await callTool(searchTool, { q: text, limit: PAGE, offset }, ctx);
        deep.push(...ids(page.results));
        if (page.results.length < PAGE) break;
      }
      recall += recallAt(deep, rel, DEPTH);
    } else {
      const t0 = performance.now();
      const res = await callTool(contextTool, { query: text }, ctx);
      times.push(performance.now() - t0);
      ranking = res.ranking;
      if (res.context.length === 0) empty++;
      const pages = [...new Set(res.context.map((c) => docId(c.source, opts.name) ?? `web:${c.source}`))];
      if (pages.some((p) => p.startsWith('web:'))) outside++;
      ndcg += ndcgAt(pages, rel, 10);
      recall += recallAt(pages, rel, pages.length);
      const hits = pages.filter((p) => (rel.get(p) ?? 0) > 0).length;
      if (hits > 0) withRelevant++;
      quoted += pages.length;
      quotedRelevant += hits;
    }
    n++;
  }
  const avg = (x: number) => (n ? x / n : 0);
  return {
    dataset: opts.name,
    tool: opts.tool,
    mode: opts.mode,
    ranking,
    queries: n,
    ndcg10: avg(ndcg),
    recall: avg(recall),
    emptyShare: avg(empty),
    relevantSourceShare: opts.tool === 'context' ? avg(withRelevant) : null,
    sourcePrecision: opts.tool === 'context' ? (quoted ? quotedRelevant / quoted : 0) : null,
    outsideShare: avg(outside),
    p50Ms: percentile(times, 50),
    p95Ms: percentile(times, 95),
  };
}

/** `svc eval`. */
export async function evalCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      beir: { type: 'string' },
      tool: { type: 'string', default: 'search' },
      mode: { type: 'string' },
      split: { type: 'string', default: 'test' },
      json: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      name: { type: 'string' },
      embedder: { type: 'string', default: 'auto' },
      limit: { type: 'string' },
    },
  });
  const usage =
    'usage: svc eval --beir DIR [--tool search|context] [--mode auto|bm25|vector|hybrid] [--split test|train] [--json] [--data-dir D] [--embedder auto|model|none|hashing]';
  if (!values.beir) throw new UsageError(usage);
  const dir = values.beir;
  const split = values.split === 'train' ? 'train' : values.split === 'test' ? 'test' : null;
  if (!split) throw new UsageError('--split must be test or train');
  if (!existsSync(join(dir, 'qrels', `${split}.tsv`)) || !existsSync(join(dir, 'queries.jsonl')))
    throw new UsageError(`${dir}: needs queries.jsonl and qrels/${split}.tsv`);
  const tool = values.tool === 'context' ? 'context' : values.tool === 'search' ? 'search' : null;
  if (!tool) throw new UsageError('--tool must be search or context');
  const mode = (values.mode ?? 'auto') as RankingSetting;
  if (!(RANKING_SETTINGS as readonly string[]).includes(mode)) throw new UsageError('--mode must be auto, bm25, vector or hybrid');
  const limit = values.limit === undefined ? undefined : Math.max(1, Number(values.limit) || 1);
  const base = loadConfig({ env: io.env, flags: { dataDir: values['data-dir'] } });
  // The embedder as `svc serve` would open it; `none` hides the model directory, `hashing` is for tests.
  const embedder = values.embedder ?? 'auto';
  if (!['auto', 'model', 'none', 'hashing'].includes(embedder)) throw new UsageError('--embedder must be auto, model, none or hashing');
  if (embedder === 'model' && !base.modelDir) throw new UsageError('--embedder model needs SVC_MODEL_DIR');
  const config: Config = { ...base, crawl: false, ranking: mode, ...(embedder === 'none' ? { modelDir: undefined } : {}) };
  const services = await createServices(config, {
    log: createLogger({ level: 'warn' }),
    ...(embedder === 'hashing' ? { embedder: createHashingEmbedder() } : {}),
  });
  try {
    const name = corpusName(values.name ?? join(dir, 'corpus.jsonl'));
    if (services.deps.index.hostIdsUnder(corpusDomain(name)).length === 0) {
      io.stderr.write(`eval: corpus "${name}" is not in the index (run svc ingest --jsonl ${join(dir, 'corpus.jsonl.gz')} first)\n`);
      return 1;
    }
    if ((mode === 'vector' || mode === 'hybrid') && !services.deps.index.embedder) {
      io.stderr.write(`eval: --mode ${mode} needs embeddings, and none are available for this index (weights absent?)\n`);
      return 1;
    }
    // Searches run where `svc serve` runs them (the services' executor: the search threads), each query once they are
    // ready, not on this thread meanwhile.
    await services.searchPool?.textEngineReady(services.deps.index);
    const r = await evaluate(services, dir, { tool, name, mode, split, ...(limit !== undefined ? { limit } : {}) });
    if (values.json) io.stdout.write(JSON.stringify(r) + '\n');
    else {
      const pct = (x: number | null) => (x === null ? '–' : `${(100 * x).toFixed(1)} %`);
      io.stdout.write(
        `| dataset | tool | mode | ranking | queries | nDCG@10 | ${tool === 'search' ? 'recall@100' : 'recall'} | empty | relevant source | source precision | outside the corpus | p50 ms | p95 ms |\n` +
          `|---|---|---|---|---|---|---|---|---|---|---|---|---|\n` +
          `| ${r.dataset} | ${r.tool} | ${r.mode} | ${r.ranking} | ${r.queries} | ${r.ndcg10.toFixed(4)} | ${r.recall.toFixed(4)} | ${pct(r.emptyShare)} | ${pct(r.relevantSourceShare)} | ${pct(r.sourcePrecision)} | ${pct(r.outsideShare)} | ${r.p50Ms.toFixed(1)} | ${r.p95Ms.toFixed(1)} |\n`,
      );
    }
    return 0;
  } finally {
    await services.close();
  }
}
