/**
 * How often svc_search says "nothing relevant" (`low_relevance`, or `no_results` when nothing matches at all), through
 * the tool call an agent makes, with BM25 ranking, on two collections:
 *
 * - SciFact (an index of its corpus): its claims, which it answers; and two sets of questions it cannot answer,
 *   test/fixtures/unanswerable-questions.json (Canadian and French civic questions, the rule was designed on them)
 *   and test/fixtures/unanswerable-everyday-questions.json (sport, cooking, municipal services, travel, software;
 *   held out while it was designed), test/fixtures/unanswerable-household-questions.json (shopping, gardening,
 *   pets, home repair, banking, weather; held out while the question words were extended).
 * - News and blog pages (the 181 pages of ../shared/data/web/article-extraction-benchmark, indexed here in a temp
 *   dir): test/fixtures/web-article-questions.json, questions those pages answer (held out too), and both
 *   unanswerable sets again.
 *
 * Prints one table; the rule is docs/api-search.md#relevance.
 *
 *   node --import tsx bench/relevance-flags.ts --data-dir D
 *
 * D is a data dir made by `svc ingest --jsonl ../shared/data/beir/scifact/corpus.jsonl.gz --data-dir D --embedder none`
 * (read only).
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { corpusPage } from '../cli/ingest.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { createServices, type Services } from '../main.js';
import { callTool } from '../tools/call-tool.js';
import { searchTool } from '../tools/search.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' } } });
if (!values['data-dir']) throw new Error('--data-dir is required (a data dir holding SciFact)');
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const claims = readFileSync(here('../../shared/data/beir/scifact/queries.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => (JSON.parse(l) as { text: string }).text);
const questions = (file: string) => (JSON.parse(readFileSync(here(file), 'utf8')) as { questions: string[] }).questions;
const civic = questions('../test/fixtures/unanswerable-questions.json');
const everyday = questions('../test/fixtures/unanswerable-everyday-questions.json');
const household = questions('../test/fixtures/unanswerable-household-questions.json');
const webQuestions = (
  JSON.parse(readFileSync(here('../test/fixtures/web-article-questions.json'), 'utf8')) as { questions: { q: string; page: string }[] }
).questions;

/** The article benchmark's pages as corpus records: the expected main text, a title from the URL's last segment. */
function articlePages() {
  const truth = JSON.parse(readFileSync(here('../../shared/data/web/article-extraction-benchmark/ground-truth.json'), 'utf8')) as Record<
    string,
    { articleBody: string; url: string }
  >;
  return Object.entries(truth).map(([id, v], i) => {
    const slug =
      new URL(v.url).pathname
        .split('/')
        .filter((s) => s !== '')
        .pop() ?? '';
    const title = slug
      .replace(/\.(html?|php)$/, '')
      .split(/[-_]+/)
      .filter((w) => !/^[0-9a-f]{8,}$|^\d{5,}$/.test(w))
      .join(' ');
    return corpusPage({ _id: id.slice(0, 12), title, text: v.articleBody }, i + 1, 'articles', '2026-11-20T00:00:00Z');
  });
}

const log = createLogger({ level: 'error' });
const open = (dataDir: string) =>
  createServices({ ...loadConfig({ env: process.env, flags: { dataDir } }), crawl: false, ranking: 'bm25', modelDir: undefined }, { log });

console.log(
  '| index | questions | answers | flagged low_relevance | flagged no_results | flagged in all | first result strong / partial / weak |',
);
console.log('|---|---|---|---|---|---|---|');
async function measure(s: Services, index: string, name: string, list: readonly string[], answerable: boolean): Promise<void> {
  const ctx = { deps: s.deps, caller: { keyId: 'bench', digest: '0'.repeat(64) } };
  let low = 0;
  let none = 0;
  const first = { strong: 0, partial: 0, weak: 0 };
  const wrong: string[] = [];
  for (const q of list) {
    const r = await callTool(searchTool, { q: q.slice(0, 300), limit: 10 }, ctx);
    const isLow = r.warnings.some((w) => w.code === 'low_relevance');
    const isNone = r.warnings.some((w) => w.code === 'no_results');
    if (isLow) low++;
    if (isNone) none++;
    if (r.results[0]) first[r.results[0].match]++;
    if ((isLow || isNone) === answerable && wrong.length < 10) wrong.push(q);
  }
  const pct = (n: number) => `${((100 * n) / list.length).toFixed(1)} %`;
  console.log(
    `| ${index} | ${name} | ${list.length} | ${pct(low)} | ${pct(none)} | **${pct(low + none)}** | ${first.strong} / ${first.partial} / ${first.weak} |`,
  );
  if (wrong.length > 0) console.error(`${index}, ${name}: ${answerable ? 'flagged' : 'not flagged'}: ${wrong.join(' | ')}`);
}

const scifact = await open(values['data-dir']);
try {
  await measure(scifact, 'SciFact', 'claims (answered)', claims, true);
  await measure(scifact, 'SciFact', 'Canadian / French civic (unanswerable; designed on)', civic, false);
  await measure(scifact, 'SciFact', 'everyday EN / FR (unanswerable; held out)', everyday, false);
  await measure(scifact, 'SciFact', 'household EN / FR (unanswerable; held out)', household, false);
} finally {
  await scifact.close();
}

const dir = mkdtempSync(join(tmpdir(), 'relevance-flags-'));
const web = await open(dir);
try {
  await web.deps.index.upsertPages(articlePages());
  await web.deps.index.optimize();
  await measure(
    web,
    'news pages',
    'questions they answer (held out)',
    webQuestions.map((x) => x.q),
    true,
  );
  await measure(web, 'news pages', 'Canadian / French civic (unanswerable)', civic, false);
  await measure(web, 'news pages', 'everyday EN / FR (unanswerable)', everyday, false);
  await measure(web, 'news pages', 'household EN / FR (unanswerable)', household, false);
} finally {
  await web.close();
  rmSync(dir, { recursive: true, force: true });
}
