/**
 * The match band of a result (index/retrieval/relevance.ts, docs/api-search.md#relevance): the share of the query's
 * IDF mass it holds, counted only when it holds two query words and states two of them within NEAR_WORDS of each
 * other; a vector-only result by its similarity against the model's floor.
 */
import t from 'tap';
import {
  coverage,
  lowRelevance,
  matchBands,
  NEAR_WORDS,
  PARTIAL_COVERAGE,
  statesTogether,
  STRONG_COVERAGE,
  strongSimilarity,
  termsOf,
  wordWeights,
  type BandInput,
} from '../../index/retrieval/relevance.js';
import { compileQuery, parseQuery } from '../../index/retrieval/query.js';
import { indexText } from '../../index/retrieval/analyzer.js';

const compiled = (q: string) => compileQuery(parseQuery(q));
/** A BM25 result whose analysed text is that of `body` (English), with its quotable text. */
const bm25 = (body: string, title = ''): BandInput => ({
  row: { host: 'h', title, search_text: indexText(title, body, 'en') },
  bm25Score: 1,
  similarity: null,
  text: { title, body },
});
const filler = (n: number) => Array.from({ length: n }, (_, i) => `zz${String.fromCharCode(97 + (i % 26))}`).join(' ');

t.test('thresholds: thirds of the mass, halfway from the floor to 1', async (t) => {
  t.equal(STRONG_COVERAGE, 2 / 3);
  t.equal(PARTIAL_COVERAGE, 1 / 3);
  t.equal(NEAR_WORDS, 8);
  t.equal(strongSimilarity(0.2), 0.6);
});

t.test('weights: each word the least IDF of its readings; coverage the share of the mass held', async (t) => {
  const c = compiled('garbage collection gatineau');
  t.same(
    c.coverageWords.map((w) => w.word),
    ['garbage', 'collection', 'gatineau'],
  );
  const idfOf: Record<string, number> = { garbag: 2, collect: 1 }; // every reading of gatineau absent: the largest
  const weights = wordWeights(
    c.coverageWords,
    termsOf(c.coverageWords).map((x) => idfOf[x] ?? 5),
  );
  t.same(weights, [2, 1, 5]);
  t.equal(coverage(c.coverageWords, weights, [1, 1, 1]), 1);
  t.equal(coverage(c.coverageWords, weights, [1, 1, 0]), 3 / 8);
  t.equal(coverage(c.coverageWords, weights, [0, 0, 1]), 5 / 8);
  const one = compiled('gatineau');
  t.equal(coverage(one.coverageWords, [5], [0]), 1, 'a query of one word: every candidate holds it');
});

t.test("weighed words: a question's words and the asker's pronouns are left out, as in ranking", async (t) => {
  const words = (q: string) => compiled(q).coverageWords.map((w) => w.word);
  t.same(words('How much is my Canada Child Benefit?'), ['canada', 'child', 'benefit']);
  t.same(words('Where can I recycle old electronics?'), ['recycle', 'old', 'electronics']);
  t.same(words('How many players do you need?'), ['players', 'need']);
  t.same(words('US health care costs'), ['us', 'health', 'care', 'costs'], '"us" is also the country');
  t.same(words('combien coûte mon abonnement'), ['coute', 'abonnement'], 'French: combien, and mon a stop word');
});

t.test('statesTogether: two different query words within NEAR_WORDS, in the title or in the body', async (t) => {
  const words = compiled('garbage collection gatineau').coverageWords;
  t.equal(statesTogether(words, { title: '', body: 'Garbage is picked up; collection days vary.' }), true);
  t.equal(statesTogether(words, { title: '', body: `garbage ${filler(NEAR_WORDS - 1)} collection` }), true, 'NEAR_WORDS apart');
  t.equal(statesTogether(words, { title: '', body: `garbage ${filler(NEAR_WORDS)} collection` }), false, 'one more word apart');
  t.equal(statesTogether(words, { title: '', body: `garbage ${filler(20)} garbage ${filler(20)} collection` }), false);
  t.equal(statesTogether(words, { title: 'Garbage', body: 'Collection of stamps' }), false, 'title and body are apart');
  t.equal(statesTogether(words, { title: 'Collecting garbage', body: '' }), true, 'stemmed: collecting ~ collection');
  t.equal(
    statesTogether(compiled('star dies').coverageWords, { title: '', body: 'A dying star.' }),
    true,
    'a word whose stem does not start as it does (dying → die)',
  );
  t.equal(statesTogether(compiled('gatineau').coverageWords, { title: '', body: '' }), true, 'one word: nothing to pair');
  t.equal(
    statesTogether(compiled('collect collection').coverageWords, { title: '', body: 'a collection and a collection' }),
    false,
    'two forms of one stem are one word',
  );
});

t.test('bands: coverage counts when the result states two query words together', async (t) => {
  const c = compiled('garbage collection gatineau');
  const idfOf: Record<string, number> = { garbag: 2, collect: 1 };
  const idf = async (terms: readonly string[]) => terms.map((x) => idfOf[x] ?? 5);
  const far = filler(20);
  const bands = await matchBands(
    c,
    [
      bm25('Gatineau garbage collection schedule'), // everything, together: 8/8
      bm25(`Gatineau ${far} garbage ${far} collection`), // everything, each word alone: counts for nothing
      bm25('garbage collection'), // 3/8, together
      bm25('collection days'), // one word only
      bm25(`garbage ${far} collection`), // 3/8, apart
      { ...bm25(`Gatineau ${far} garbage ${far} collection`), text: null }, // no quotable text: where words stand is unknown
      { row: { host: 'h', title: '', search_text: 'collect' }, bm25Score: null, similarity: 0.9, text: null },
      { row: { host: 'h', title: '', search_text: 'collect' }, bm25Score: null, similarity: 0.3, text: null },
      { ...bm25(`Gatineau ${far} garbage`), similarity: 0.7 }, // apart, but near in meaning
    ],
    idf,
    0.2,
  );
  t.same(bands, ['strong', 'weak', 'partial', 'weak', 'weak', 'strong', 'strong', 'weak', 'strong']);
});

t.test('bands: a query of one word, or of operators only, is held by every BM25 result', async (t) => {
  const idf = async (terms: readonly string[]) => terms.map(() => 3);
  t.same(await matchBands(compiled('gatineau'), [bm25('Gatineau')], idf, 0.2), ['strong']);
  t.same(await matchBands(compiled('site:example.org'), [bm25('anything')], idf, 0.2), ['strong']);
  t.same(await matchBands(compiled('gatineau'), [], idf, 0.2), []);
});

t.test('lowRelevance: results, every one weak', async (t) => {
  t.equal(lowRelevance(['weak', 'weak']), true);
  t.equal(lowRelevance(['weak', 'partial']), false);
  t.equal(lowRelevance([]), false, 'an empty answer says no_results instead');
});
