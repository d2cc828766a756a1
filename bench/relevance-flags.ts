/**
 * How often svc_search says "nothing relevant" (`low_relevance`, or `no_results` when nothing matches at all), through
 * the tool call an agent makes, with BM25 ranking: over SciFact's claims (an index of the SciFact corpus, which answers
 * them) and over questions that index cannot answer (test/fixtures/unanswerable-questions.json: Canadian and French
 * civic questions). Prints one table; the rule is docs/api-search.md#relevance.
 *
 *   node --import tsx bench/relevance-flags.ts --data-dir D
 *
 * D is a data dir made by `svc ingest --jsonl ../shared/data/beir/scifact/corpus.jsonl.gz --data-dir D --embedder none`
 * (read only).
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { createServices } from '../main.js';
import { callTool } from '../tools/call-tool.js';
import { searchTool } from '../tools/search.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' } } });
if (!values['data-dir']) throw new Error('--data-dir is required (a data dir holding SciFact)');
const claims = readFileSync(fileURLToPath(new URL('../../shared/data/beir/scifact/queries.jsonl', import.meta.url)), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => (JSON.parse(l) as { text: string }).text);
const unanswerable = (
  JSON.parse(readFileSync(fileURLToPath(new URL('../test/fixtures/unanswerable-questions.json', import.meta.url)), 'utf8')) as {
    questions: string[];
  }
).questions;

const base = loadConfig({ env: process.env, flags: { dataDir: values['data-dir'] } });
const s = await createServices({ ...base, crawl: false, ranking: 'bm25', modelDir: undefined }, { log: createLogger({ level: 'warn' }) });
const ctx = { deps: s.deps, caller: { keyId: 'bench', digest: '0'.repeat(64) } };
try {
  console.log(
    '| questions | answers | flagged low_relevance | flagged no_results | flagged in all | first result strong / partial / weak |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const [name, list] of [
    ['SciFact claims', claims],
    ['unanswerable Canadian / French questions', unanswerable],
  ] as const) {
    let low = 0;
    let none = 0;
    const first = { strong: 0, partial: 0, weak: 0 };
    const flaggedExamples: string[] = [];
    for (const q of list) {
      const r = await callTool(searchTool, { q: q.slice(0, 300), limit: 10 }, ctx);
      const isLow = r.warnings.some((w) => w.code === 'low_relevance');
      const isNone = r.warnings.some((w) => w.code === 'no_results');
      if (isLow) low++;
      if (isNone) none++;
      if (r.results[0]) first[r.results[0].match]++;
      if ((isLow || isNone) === (name === 'SciFact claims') && flaggedExamples.length < 10) flaggedExamples.push(q);
    }
    const pct = (n: number) => `${((100 * n) / list.length).toFixed(1)} %`;
    console.log(
      `| ${name} | ${list.length} | ${pct(low)} | ${pct(none)} | **${pct(low + none)}** | ${first.strong} / ${first.partial} / ${first.weak} |`,
    );
    if (flaggedExamples.length > 0)
      console.error(`${name}: ${name === 'SciFact claims' ? 'flagged' : 'not flagged'}: ${flaggedExamples.join(' | ')}`);
  }
} finally {
  await s.close();
}
