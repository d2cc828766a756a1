/**
 * Whether a result matches the query, as a band an agent can act on, by a rule relative to what a match of this query
 * would score, never to one collection's score scale (docs/api-search.md#relevance): the share of the query's IDF mass
 * a BM25 result holds, and for a result only the vector arm found, its cosine similarity against the model's floor.
 */
import type { CompiledQuery, MatchableRow } from './query.js';

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
 * The similarity of a strong vector-only result: halfway from the model's floor (below which a passage is unrelated,
 * model-profiles.ts) to an identical text. Relative to each model's own scale; nothing between floor and it is more
 * than weak, since the vector arm returns its nearest passages whether or not anything matches.
 */
export function strongSimilarity(floor: number): number {
  return (1 + floor) / 2;
}

/** What a ranked result's band reads: its row, and what each arm said of it. */
export interface BandInput {
  readonly row: MatchableRow;
  /** Null: the BM25 arm did not find it. */
  readonly bm25Score: number | null;
  readonly similarity: number | null;
}

/**
 * The band of each result. `idf` answers the BM25 inverse document frequency of terms (CandidateSource.termIdf);
 * `floor` is the vector arm's similarity floor.
 */
export async function matchBands(
  compiled: Pick<CompiledQuery, 'coverage' | 'coverageTerms'>,
  results: readonly BandInput[],
  idf: (terms: readonly string[]) => Promise<number[]>,
  floor: number,
): Promise<MatchBand[]> {
  if (results.length === 0) return [];
  const weights = compiled.coverageTerms.length > 0 ? await idf(compiled.coverageTerms) : [];
  return results.map((r) => {
    const cover = r.bm25Score !== null ? compiled.coverage(r.row, weights) : 0;
    if (cover >= STRONG_COVERAGE || (r.similarity !== null && r.similarity >= strongSimilarity(floor))) return 'strong';
    return cover >= PARTIAL_COVERAGE ? 'partial' : 'weak';
  });
}

/** Whether an answer gets the `low_relevance` warning: it has results and every one is weak. */
export function lowRelevance(bands: readonly MatchBand[]): boolean {
  return bands.length > 0 && bands.every((b) => b === 'weak');
}
