/**
 * svc_search says "nothing relevant": every result carries a match band (the share of the query's IDF mass it holds,
 * when it states two query words together, docs/api-search.md#relevance), and an answer whose results are all weak
 * carries `low_relevance`. Through the tool call an agent makes, over a small real corpus (SciFact abstracts):
 * questions it cannot answer are flagged, claims it answers are not; and over a few pages made for it: the same
 * words together match, scattered they do not.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { corpusPage, readCorpus } from '../../cli/ingest.js';
import type { PageInput } from '../../page-model.js';
import { callTool } from '../../tools/call-tool.js';
import { searchTool } from '../../tools/search.js';
import { startTestService } from '../helpers/service.js';

const SCIFACT = fileURLToPath(new URL('../../../shared/data/beir/scifact/', import.meta.url));
const QUESTIONS = fileURLToPath(new URL('../fixtures/unanswerable-questions.json', import.meta.url));

/** SciFact claims by id, and the ids of the abstracts judged to answer each (test split). */
function claimsWithAnswers(): { text: string; docs: string[] }[] {
  const text = new Map(
    readFileSync(`${SCIFACT}queries.jsonl`, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { _id: string; text: string })
      .map((q) => [q._id, q.text]),
  );
  const docs = new Map<string, string[]>();
  for (const line of readFileSync(`${SCIFACT}qrels/test.tsv`, 'utf8').split('\n').slice(1)) {
    const [q, d] = line.split('\t');
    if (q && d) docs.set(q, [...(docs.get(q) ?? []), d]);
  }
  return [...docs].map(([q, d]) => ({ text: text.get(q) ?? '', docs: d }));
}

t.test('low_relevance: unanswerable questions are flagged, answered claims are not', async (t) => {
  const claims = claimsWithAnswers().slice(0, 12);
  const wanted = new Set(claims.flatMap((c) => c.docs));
  const pages: PageInput[] = [];
  let i = 0;
  for await (const doc of readCorpus(`${SCIFACT}corpus.jsonl.gz`)) {
    i++;
    if (i <= 400 || wanted.has(doc._id)) pages.push(corpusPage(doc, i, 'scifact', '2026-11-20T00:00:00Z'));
  }
  t.ok(
    claims.every((c) => c.docs.some((d) => pages.some((p) => p.externalId === d))),
    'each claim has its answer in the corpus',
  );

  const s = await startTestService();
  t.teardown(() => s.close());
  await s.services.deps.index.upsertPages(pages);
  await s.services.deps.index.optimize();
  const ctx = { deps: s.services.deps, caller: { keyId: 'test', digest: '0'.repeat(64) } };
  const search = (q: string) => callTool(searchTool, { q, limit: 10 }, ctx);
  const flagged = (r: Awaited<ReturnType<typeof search>>) => r.warnings.some((w) => w.code === 'low_relevance');

  const questions = (JSON.parse(readFileSync(QUESTIONS, 'utf8')) as { questions: string[] }).questions;
  for (const q of [
    'When does the Rideau Canal skateway open for skating this winter?',
    'Which Montreal metro line goes to the Olympic Stadium?',
    "How do I renew my Ontario driver's licence online?",
    'What day is garbage collection in Gatineau?',
  ]) {
    t.ok(questions.includes(q), `"${q}" is one of the unanswerable questions`);
    const r = await search(q);
    t.ok(r.results.length > 0, `${q}: some abstracts share a word`);
    t.ok(flagged(r), `${q}: low_relevance`);
    t.ok(
      r.results.every((x) => x.match === 'weak'),
      `${q}: every result weak`,
    );
  }
  // A French question is read as French: an English-only index has none of its terms.
  const french = await search('Quand a lieu la collecte des ordures à Québec?');
  t.same(french.results, []);
  t.ok(
    french.warnings.some((w) => w.code === 'no_results'),
    'French question over English abstracts: no_results',
  );

  let answered = 0;
  for (const c of claims) {
    const r = await search(c.text);
    const hit = r.results.findIndex((x) => c.docs.some((d) => pages.find((p) => p.pageRef === x.page_ref)?.externalId === d));
    if (hit === -1) continue; // not this test's point: the ranking
    answered++;
    t.notOk(flagged(r), `${c.text.slice(0, 60)}: answered, not flagged`);
    t.not(r.results[hit]!.match, 'weak', `${c.text.slice(0, 60)}: its answer is not weak`);
  }
  t.ok(answered >= 8, `${answered} of ${claims.length} claims find their judged answer in the first 10`);
});

t.test('bands through the index: words stated together match, the same words scattered do not', async (t) => {
  const filler = (seed: number) =>
    Array.from({ length: 30 }, (_, i) => ['river', 'stone', 'window', 'paper', 'orange', 'violin'][(i + seed) % 6]).join(' ');
  const docs = [
    { _id: 'together', title: 'Calendar', text: 'Gatineau garbage collection: bins go out on Monday morning.' },
    { _id: 'scattered', title: 'Notes', text: `Gatineau ${filler(1)} garbage ${filler(2)} collection ${filler(3)}.` },
    { _id: 'one-word', title: 'Stamps', text: `A collection of stamps. ${filler(4)}` },
    ...Array.from({ length: 9 }, (_, i) => ({ _id: `other-${i}`, title: `Other ${i}`, text: filler(i) })),
  ];
  const s = await startTestService();
  t.teardown(() => s.close());
  await s.services.deps.index.upsertPages(docs.map((d, i) => corpusPage(d, i + 1, 'bands', '2026-11-20T00:00:00Z')));
  await s.services.deps.index.optimize();
  const ctx = { deps: s.services.deps, caller: { keyId: 'test', digest: '0'.repeat(64) } };
  const search = (q: string) => callTool(searchTool, { q, limit: 10 }, ctx);
  const idOf = (ref: number) => docs[ref - 1]!._id;

  const r = await search('garbage collection in Gatineau');
  t.same(
    Object.fromEntries(r.results.map((x) => [idOf(x.page_ref), x.match])),
    { together: 'strong', scattered: 'weak', 'one-word': 'weak' },
    'all words together: strong; the same words 30 apart: weak; one word of three: weak',
  );
  t.notOk(
    r.warnings.some((w) => w.code === 'low_relevance'),
    'one strong result: no warning',
  );

  const none = await search('buy stamps in Gatineau');
  t.ok(none.results.length >= 3, 'pages share a word each');
  t.ok(
    none.results.every((x) => x.match === 'weak'),
    'no page holds two of the words',
  );
  t.ok(
    none.warnings.some((w) => w.code === 'low_relevance'),
    'low_relevance',
  );
});
