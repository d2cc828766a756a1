/**
 * Whether a result matches the query, as a band an agent can act on, by a rule relative to what a match of this query
 * would score, never to one collection's score scale (docs/api-search.md#relevance): the share of the query's IDF mass
 * a BM25 result holds, counted only when the result states two of the query's words together; for a result only the
 * vector arm found, its cosine similarity against the model's floor.
 */
import { TERM_TAGS, termOf, wordTokens, type Analysis } from './analyzer.js';
import type { CompiledQuery, CoverageWord, MatchableRow } from './query.js';

/**
 * `strong`: the result holds the words that carry two thirds of the query's weight or more (or is near it in
 * meaning); `partial`: a third or more; `weak`: less (it shares a few words, or is only the least unrelated passage).
 */
export const MATCH_BANDS = ['strong', 'partial', 'weak'] as const;
export type MatchBand = (typeof MATCH_BANDS)[number];

/**
 * Shares of the query's IDF mass a strong and a partial result hold: thirds. IDF is what BM25 weighs each word by, so
 * a result holding a third of the mass scores about a third of a full match; a word no passage holds weighs the most,
 * which is why a question about something the index does not cover falls low. A paraphrase (a claim and the abstract
 * that answers it) often holds under half of the mass, so half would call many answered queries weak.
 */
export const STRONG_COVERAGE = 2 / 3;
export const PARTIAL_COVERAGE = 1 / 3;

/**
 * How close two of the query's words must stand in a result's text (positions in words, stop words counted) for it to
 * state them together: a phrase or a short clause. A passage on another subject shares a question's everyday words
 * one here, one there; a passage that answers it says at least two of them in one breath.
 */
export const NEAR_WORDS = 8;

/**
 * The similarity of a strong vector-only result: halfway from the model's floor (below which a passage is unrelated,
 * model-profiles.ts) to an identical text. Relative to each model's own scale; nothing between floor and it is more
 * than weak, since the vector arm returns its nearest passages whether or not anything matches.
 */
export function strongSimilarity(floor: number): number {
  return (1 + floor) / 2;
}

/** What a ranked result's band reads: its row, what each arm said of it, and its text. */
export interface BandInput {
  readonly row: MatchableRow;
  /** Null: the BM25 arm did not find it. */
  readonly bm25Score: number | null;
  readonly similarity: number | null;
  /**
   * The result's title and quotable text, read for whether it states two query words together; null when it has no
   * quotable text (nosnippet), and then the words it holds count wherever they stand.
   */
  readonly text: { readonly title: string; readonly body: string } | null;
}

/**
 * The weight of each query word: the IDF of its most common reading (a reading no passage holds weighs the most, and
 * would otherwise count in every word). `idf` answers one per term of `termsOf(words)`, in that order.
 */
export function wordWeights(words: readonly CoverageWord[], idf: readonly number[]): number[] {
  const at = new Map(termsOf(words).map((t, i) => [t, i]));
  return words.map((w) => Math.min(...w.terms.map((t) => idf[at.get(t)!] ?? 0)));
}

/** The distinct terms of the query's words, in the order `wordWeights` reads their IDFs. */
export function termsOf(words: readonly CoverageWord[]): string[] {
  return [...new Set(words.flatMap((w) => w.terms))];
}

/**
 * The share of the query's IDF mass a result holds: each word by its weight times its repeats. A query of one word or
 * none: 1 (every BM25 candidate holds it).
 */
export function coverage(words: readonly CoverageWord[], weights: readonly number[], held: ArrayLike<number>): number {
  if (words.length < 2) return 1;
  let total = 0;
  let got = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!.n * weights[i]!;
    total += w;
    if (held[i] === 1) got += w;
  }
  return total > 0 ? got / total : 1;
}

const READINGS: readonly Analysis[] = ['en', 'fr', 'neutral'];
/** The reading an index term comes from: the one whose tag it begins with (English terms have none). */
const readingOf = (term: string): Analysis => READINGS.find((a) => TERM_TAGS[a] !== '' && term.startsWith(TERM_TAGS[a])) ?? 'en';
const untagged = (term: string): string => term.slice(TERM_TAGS[readingOf(term)].length);
const NONE: readonly number[] = [];
const head = (word: string): string => word.slice(0, 2).replace(/y/g, 'i');

/**
 * Which query words a text token is (a token counts as a word when one of its readings is one of the word's terms),
 * remembered per token for the query's results.
 */
function wordFinder(words: readonly CoverageWord[]): (token: string) => readonly number[] {
  const wordOf = new Map<string, number[]>();
  words.forEach((w, i) => {
    for (const t of w.terms) wordOf.set(t, [...(wordOf.get(t) ?? []), i]);
  });
  // Both stemmers keep a word's first two letters, but for a y that may become i (dying → die): a token whose first
  // two are no query term's cannot match, and is passed over without being stemmed.
  const heads = new Set(words.flatMap((w) => w.terms.map((t) => head(untagged(t)))));
  // Only the readings the query has terms in (an English question has no French terms to meet).
  const readings = READINGS.filter((a) => words.some((w) => w.terms.some((t) => readingOf(t) === a)));
  const memo = new Map<string, readonly number[]>();
  return (token) => {
    let found = memo.get(token);
    if (found) return found;
    found = NONE;
    if (heads.has(head(token))) {
      const seen = new Set<number>();
      for (const a of readings) {
        const term = termOf(token, a);
        for (const i of (term !== null && wordOf.get(term)) || NONE) seen.add(i);
      }
      if (seen.size > 0) found = [...seen];
    }
    memo.set(token, found);
    return found;
  };
}

/**
 * Whether two different query words stand within `NEAR_WORDS` of each other in the title or in the body. A query of
 * fewer than two words: true.
 */
export function statesTogether(
  words: readonly CoverageWord[],
  text: { readonly title: string; readonly body: string },
  find = wordFinder(words),
): boolean {
  if (words.length < 2) return true;
  // Two words with a reading in common (two forms of one stem) are one word seen twice, not a pair.
  const apart = (i: number, j: number) => i !== j && !words[i]!.terms.some((t) => words[j]!.terms.includes(t));
  for (const part of [text.title, text.body]) {
    // The last position each query word was seen at: a sighting of another word within reach makes a pair.
    const last = new Map<number, number>();
    let pos = -1;
    for (const token of wordTokens(part)) {
      pos++;
      const seen = find(token);
      if (seen.length === 0) continue;
      for (const i of seen) for (const [j, at] of last) if (pos - at <= NEAR_WORDS && apart(i, j)) return true;
      for (const i of seen) last.set(i, pos);
    }
  }
  return false;
}

/**
 * The band of each result. `idf` answers the BM25 inverse document frequency of terms (CandidateSource.termIdf);
 * `floor` is the vector arm's similarity floor. A BM25 result's coverage counts when it holds two of the query's words
 * or more and states two together (`statesTogether`); otherwise it is weak unless its similarity makes it strong.
 */
export async function matchBands(
  compiled: Pick<CompiledQuery, 'coverageWords' | 'wordsHeld'>,
  results: readonly BandInput[],
  idf: (terms: readonly string[]) => Promise<number[]>,
  floor: number,
): Promise<MatchBand[]> {
  if (results.length === 0) return [];
  const words = compiled.coverageWords;
  const weights = words.length > 1 ? wordWeights(words, await idf(termsOf(words))) : [];
  const find = words.length > 1 ? wordFinder(words) : undefined;
  return results.map((r) => {
    if (r.similarity !== null && r.similarity >= strongSimilarity(floor)) return 'strong';
    if (r.bm25Score === null) return 'weak';
    if (words.length < 2) return 'strong';
    const held = compiled.wordsHeld(r.row);
    let heldCount = 0;
    for (let i = 0; i < held.length; i++) heldCount += held[i]!;
    const cover = heldCount >= 2 ? coverage(words, weights, held) : 0;
    // Where the words stand is read last, and only when it can change the band.
    if (cover < PARTIAL_COVERAGE || (r.text !== null && !statesTogether(words, r.text, find))) return 'weak';
    return cover >= STRONG_COVERAGE ? 'strong' : 'partial';
  });
}

/** Whether an answer gets the `low_relevance` warning: it has results and every one is weak. */
export function lowRelevance(bands: readonly MatchBand[]): boolean {
  return bands.length > 0 && bands.every((b) => b === 'weak');
}
