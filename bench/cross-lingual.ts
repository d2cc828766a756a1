/**
 * The French and cross-lingual checks, per model (issue 45 item 1): the questions of test/helpers/cross-lingual-set.ts
 * (English → French page, French → English page, French → French page; 6 each) sent through svc_search on a service
 * holding those 14 real pages, with the vector arm and with hybrid. Prints, per model, arm and direction, how many
 * questions get their page first and in the top 3.
 *
 *   node --import tsx bench/cross-lingual.ts [--model-dir ../shared/data/models] [--model all-MiniLM-L6-v2]
 *     [--model multilingual-e5-small] [--threads 2]
 *
 * A small set: it tells a model that cannot cross languages from one that can, not two close models apart.
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { callTool } from '../tools/call-tool.js';
import { searchTool } from '../tools/search.js';
import { crossLingualSet, type Check } from '../test/helpers/cross-lingual-set.js';
import { startTestService } from '../test/helpers/service.js';

const { values } = parseArgs({
  options: {
    'model-dir': { type: 'string', default: fileURLToPath(new URL('../../shared/data/models/', import.meta.url)) },
    model: { type: 'string', multiple: true, default: ['all-MiniLM-L6-v2', 'multilingual-e5-small'] },
    threads: { type: 'string', default: '2' },
  },
});
const set = crossLingualSet();
const caller = { keyId: 'bench', digest: '0'.repeat(64) };
const groups: [string, readonly Check[]][] = [
  ['en → fr', set.enToFr],
  ['fr → en', set.frToEn],
  ['fr → fr', set.frToFr],
];

console.log('| model | arm | direction | first | top 3 | of |');
console.log('|---|---|---|---|---|---|');
for (const model of values.model!) {
  const s = await startTestService({
    config: { modelDir: values['model-dir']!, modelName: model, embedThreads: Number(values.threads), ranking: 'vector' },
  });
  try {
    await s.services.deps.index.upsertPages([...set.web, ...set.facilities.values()]);
    for (const arm of ['vector', 'hybrid'] as const) {
      const deps = { ...s.services.deps, config: { ...s.services.deps.config, ranking: arm } };
      for (const [direction, checks] of groups) {
        let first = 0;
        let top3 = 0;
        for (const [q, want] of checks) {
          const r = await callTool(searchTool, { q }, { deps, caller });
          if (r.ranking === 'bm25') throw new Error(`${model}: the ${arm} arm did not answer (${r.ranking})`);
          const urls = r.results.map((x) => x.url);
          if (urls[0] === want) first++;
          if (urls.slice(0, 3).includes(want)) top3++;
        }
        console.log(`| ${model} | ${arm} | ${direction} | ${first} | ${top3} | ${checks.length} |`);
      }
    }
  } finally {
    await s.close();
  }
}
