/**
 * svc_search says "nothing relevant": every result carries a match band (the share of the query's IDF mass it holds,
 * docs/api-search.md#relevance), and an answer whose results are all weak carries `low_relevance`. Over a small real
 * corpus (SciFact abstracts, through the tool call an agent makes): questions the corpus cannot answer are flagged,
 * claims it answers are not.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { corpusPage, readCorpus } from '../../cli/ingest.js';
import { lowRelevance, matchBands } from '../../index/retrieval/relevance.js';
import { compileQuery, parseQuery } from '../../index/retrieval/query.js';
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

t.test('bands: the share of the IDF mass a result holds, relative to what a full match holds', async (t) => {
  const compiled = compileQuery(parseQuery('garbage collection gatineau'));
  const idfOf: Record<string, number> = { garbag: 2, collect: 1 }; // gatineau in no reading: the largest
  const idf = async (terms: readonly string[]) => terms.map((x) => idfOf[x] ?? 5);
  const row = (words: string) => ({ host: 'h', title: '', search_text: words });
  const bands = await matchBands(
    compiled,
    [
      { row: row('garbag collect gatineau'), bm25Score: 1, similarity: null },
      { row: row('garbag collect'), bm25Score: 1, similarity: null },
      { row: row('collect'), bm25Score: 1, similarity: null },
      { row: row('collect'), bm25Score: null, similarity: 0.9 },
      { row: row('collect'), bm25Score: null, similarity: 0.3 },
    ],
    idf,
    0.2,
  );
  // Per word, the least IDF of its readings: garbage 2, collection 1, gatineau 5 (every reading absent).
  t.same(bands, ['strong', 'partial', 'weak', 'strong', 'weak'], 'full; 3 of 8; 1 of 8; vector-only near; vector-only far');
  t.equal(lowRelevance(['weak', 'weak']), true);
  t.equal(lowRelevance(['weak', 'partial']), false);
  t.equal(lowRelevance([]), false, 'an empty answer says no_results instead');
});
