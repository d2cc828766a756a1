/**
 * Issue 15, through the tool calls an agent makes (svc_search, svc_context over callTool on a whole service):
 * natural-language questions get ranked answers, operators stay exact, and context is relevant or absent.
 */
import t, { type Test } from 'tap';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import type { PageInput } from '../../page-model.js';
import { callTool } from '../../tools/call-tool.js';
import { contextTool } from '../../tools/context.js';
import { searchTool } from '../../tools/search.js';
import { makePage } from '../helpers/page-input.js';
import { startTestService } from '../helpers/service.js';

const PAGES: PageInput[] = [
  makePage(
    1,
    'www.novascotia.ca',
    [
      'Heat pump rebates for Nova Scotia homeowners: the provincial program pays up to 3,000 dollars toward a ductless heat pump installed by a registered contractor.',
      'To apply for the heat pump rebate, submit the invoice and the contractor registration number within 90 days of installation.',
    ],
    { title: 'Heat pump rebates in Nova Scotia' },
  ),
  makePage(
    2,
    'www.efficiencyns.ca',
    ['Efficiency Nova Scotia lists heat pump rebates, insulation rebates and free energy assessments for homes in the province.'],
    {
      title: 'Home energy rebates',
    },
  ),
  makePage(
    3,
    'www.tourism.example',
    ['Nova Scotia has lighthouses, beaches and seafood; summer is the best time to drive the coastal routes.'],
    { title: 'Visit Nova Scotia' },
  ),
  makePage(4, 'www.recipes.example', ['Slow cooker recipes: a pump of olive oil, onions and a long afternoon are all you need.'], {
    title: 'Weeknight dinners',
  }),
  makePage(5, 'www.sports.example', ['The home team scored in overtime; the rebate on season tickets ends Friday.'], {
    title: 'Match report',
  }),
  makePage(
    6,
    'www.canada.example',
    ['Federal greener homes grants help homeowners pay for heat pumps and other retrofits across Canada.'],
    { title: 'Greener homes grant' },
  ),
];

async function service(t: Test) {
  const s = await startTestService({ embedder: createHashingEmbedder() });
  t.teardown(() => s.close());
  await s.services.deps.index.upsertPages(PAGES);
  await s.services.deps.index.optimize();
  return { s, ctx: { deps: s.services.deps, caller: { keyId: 'test', digest: '0'.repeat(64) } } };
}

t.test('issue 15: a natural-language question gets ranked answers; operators stay exact', async (t) => {
  const { ctx } = await service(t);
  const q = await callTool(searchTool, { q: 'How much is the heat pump rebate in Nova Scotia?' }, ctx);
  t.ok(q.results.length >= 2, 'answered, not empty');
  t.equal(q.results[0]!.page_ref, 1, 'the page holding every content word ranks first');
  t.notOk(q.warnings.some((w) => w.code === 'no_results'));
  const strict = await callTool(searchTool, { q: 'heat pump rebates -insulation' }, ctx);
  t.same(strict.results.map((r) => r.page_ref).sort(), [1], 'with an operator every word must match, and the exclusion holds');
  const phrase = await callTool(searchTool, { q: '"heat pump rebate" site:novascotia.ca' }, ctx);
  t.same(
    phrase.results.map((r) => r.page_ref),
    [1],
  );
  const none = await callTool(searchTool, { q: 'zzqqx wwvvk' }, ctx);
  t.same(none.results, [], 'nothing matches at all: the only empty answer');
  t.ok(none.warnings.some((w) => w.code === 'no_results'));
});

t.test('issue 15: context leaves out sources far less relevant than the best, and says so', async (t) => {
  const { ctx } = await service(t);
  const onTopic = await callTool(contextTool, { query: 'heat pump rebates for homeowners in Nova Scotia', max_tokens: 4000 }, ctx);
  const sources = [...new Set(onTopic.context.map((c) => c.page_ref))];
  t.ok(sources.includes(1), 'the best page is quoted');
  t.notOk(sources.includes(4), 'a page sharing only "pump" is not quoted');
  t.notOk(sources.includes(5), 'a page sharing only "rebate" and "home" is not quoted');
  const omitted = onTopic.warnings.find((w) => w.code === 'low_relevance_omitted');
  t.ok(omitted, 'typed warning for what was left out');
  t.match(omitted?.message, /^\d+ matching source/);
  t.ok(onTopic.tokens_estimated < 4000, 'the budget is not filled with off-topic text because room is left');

  // A question about something else: the rebate pages share only "Nova Scotia" with it and are left out.
  const other = await callTool(contextTool, { query: 'Nova Scotia lighthouse routes', max_tokens: 4000 }, ctx);
  t.same([...new Set(other.context.map((c) => c.page_ref))], [3], 'only the page about lighthouses and routes');
  t.ok(other.warnings.some((w) => w.code === 'low_relevance_omitted'));
});
