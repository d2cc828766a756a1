/**
 * The engine-neutral terms retrieval speaks to the engines in (with `CandidateSource`, retrieval.ts): the text query
 * tree the BM25 engine answers, the ranking modes an answer names, and why configured vectors go unused. Engines
 * import these from here; nothing here knows an engine.
 */

/** A query in the engine's terms: every `must` group needs one of its terms; `should` terms add weight × BM25. */
export interface TextQuery {
  /** Groups of alternative terms; a document must hold a term of every group (their BM25 counts in the score). */
  readonly must: readonly (readonly string[])[];
  /** Optional terms with their query weight (a word given twice counts twice, as in Lucene). */
  readonly should: readonly { readonly term: string; readonly weight: number }[];
  /** Every term whose presence the query's code checks read (required, excluded and ranked words' terms). */
  readonly probe: readonly string[];
}

/** Ranking modes a response names. `-hashing` marks the deterministic stand-in embedder (no semantics). */
export const RANKING_MODES = ['hybrid-rrf', 'bm25', 'vector', 'hybrid-rrf-hashing', 'vector-hashing'] as const;
/** One of {@link RANKING_MODES}. */
export type RankingMode = (typeof RANKING_MODES)[number];

/** A configured embedder the index's vectors are not of: the vector arm is off until every passage has one. */
export interface VectorsUnused {
  /** The model id the index's vectors came from (`svc-index-meta.json`); null: built without vectors. */
  readonly stored: string | null;
  /** The configured embedder's model id. */
  readonly configured: string;
  /** The writer is giving every passage a vector of the configured model (reembed.ts); the vector arm serves after. */
  readonly reembedding?: boolean;
}

/**
 * The passage statistics BM25 scores with, for a query's terms: live documents (tombstones left out, postings.ts
 * `corpusStats`), their total length in terms, and each term's document frequency among them. A shard of a sharded index (index/shards/)
 * scores with these summed over every shard, so N shards rank and score exactly as one index would.
 */
export interface CorpusStats {
  readonly docs: number;
  readonly totalLength: number;
  /** Document frequency per analysed term (0: no document holds it). */
  readonly df: ReadonlyMap<string, number>;
}

/** The title-field statistics the title boost scores with (title-stats.ts), summed over shards as `CorpusStats` is. */
export interface TitleCorpus {
  readonly titles: number;
  readonly terms: number;
  readonly df: ReadonlyMap<string, number>;
}
