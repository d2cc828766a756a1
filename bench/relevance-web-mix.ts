/**
 * Do unrelated web pages leak into answers? Adds real web pages (the Zyte article-extraction benchmark's HTML, through
 * our extractor) to an index that holds a BEIR corpus, then evaluates the corpus' claims through the served tool
 * calls (`evaluate`: svc_context and svc_search with their defaults) and reports how often a web page is quoted.
 *
 *   SVC_MODEL_DIR=../shared/data/models node --import tsx bench/relevance-web-mix.ts --data-dir COPY_OF_SCIFACT_DATA [--pages 80]
 *
 * It WRITES into --data-dir: give it a copy of a data dir made by `svc ingest` of SciFact.
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { evaluate } from '../cli/eval.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { createServices } from '../main.js';
import type { PageInput } from '../page-model.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { extractedPage } from '../test/helpers/page-input.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, pages: { type: 'string', default: '80' } } });
if (!values['data-dir']) throw new Error('--data-dir is required (a copy: this benchmark writes into it)');
const web = fileURLToPath(new URL('../../shared/data/web/article-extraction-benchmark/', import.meta.url));
const scifact = fileURLToPath(new URL('../../shared/data/beir/scifact/', import.meta.url));
const truth = JSON.parse(readFileSync(`${web}ground-truth.json`, 'utf8')) as Record<string, { url: string }>;
const config = { ...loadConfig({ env: process.env, flags: { dataDir: values['data-dir'] } }), crawl: false };
const s = await createServices(config, { log: createLogger({ level: 'warn' }) });
try {
  const pages: PageInput[] = [];
  for (const f of readdirSync(`${web}html`).slice(0, Number(values.pages))) {
    const url = truth[f.replace('.html.gz', '')]?.url;
    if (!url) continue;
    const html = gunzipSync(readFileSync(`${web}html/${f}`)).toString('utf8');
    const page = extractedPage(html, s.local.documents.allocate(url, new URL(url).host), url);
    pages.push({ ...page, fetchedAt: new Date().toISOString() });
  }
  await s.deps.index.upsertPages(pages);
  await s.deps.index.optimize();
  console.log(`\n${pages.length} web pages added; index: ${(await s.deps.index.stats()).passages} passages\n`);
  console.log('| tool | ranking | nDCG@10 | claims quoting a judged-relevant page | claims showing a web page |');
  console.log('|---|---|---|---|---|');
  for (const tool of ['context', 'search'] as const) {
    const r = await evaluate(s, scifact, { tool, name: 'scifact', mode: 'auto' });
    const rel = r.relevantSourceShare === null ? '–' : `${(100 * r.relevantSourceShare).toFixed(1)} %`;
    console.log(
      `| ${tool} | ${r.ranking} | ${r.ndcg10.toFixed(4)} | ${rel} | ${(100 * r.outsideShare).toFixed(1)} % (${Math.round(r.outsideShare * r.queries)} of ${r.queries}) |`,
    );
  }
} finally {
  await s.close();
}
