/**
 * Which shards answered a query: a query run in `withShardCoverage` records each shard that failed
 * or ran past its deadline; the sharded index leaves such a shard out for the rest of that query (its statistics,
 * candidates and rows alike, so the answer is the other shards' index, consistent in itself), and the tool reports
 * `partial_results` with `coverage.shards`. Carried in async context rather than through retrieval's arguments:
 * retrieval stays the one-index code it is, unaware of shards.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CorpusStats } from '../retrieval/engine-seam.js';

/** How many of an index's shards an answer covers. */
export interface ShardCoverage {
  readonly answered: number;
  readonly total: number;
  /** The shards left out, ascending. */
  readonly missing: readonly number[];
}

/**
 * One query's record: its per-shard budget, the time each shard has taken so far, and the shards left out. The budget
 * is each shard's own time waited on (its calls summed), not time since the query began: the query's steps wait for
 * every shard, so a clock shared by all would let one slow shard spend the others' budget too.
 */
export interface CoverageScope {
  /** Time a shard may take over all of the query's calls (ms); Infinity: none. */
  readonly deadlineMs: number;
  /** Time each shard's calls have taken so far (ms). */
  readonly spent: Map<number, number>;
  readonly missing: Set<number>;
  /**
   * Each remote shard's BM25 statistics as its `prepare` answered them for this query, and the terms they cover: the
   * query's later sums read them instead of asking again.
   */
  readonly stats: Map<number, { readonly terms: ReadonlySet<string>; readonly stats: CorpusStats }>;
}

const scopes = new AsyncLocalStorage<CoverageScope>();

/** The scope of the query running now, if it was started in one. */
export function currentCoverageScope(): CoverageScope | undefined {
  return scopes.getStore();
}

/**
 * Runs `fn` as one query over `total` shards, with `deadlineMs` for each shard to answer all of its calls, and says
 * which shards its answer covers.
 */
export async function withShardCoverage<T>(
  total: number,
  deadlineMs: number,
  fn: () => Promise<T>,
): Promise<{ value: T; coverage: ShardCoverage }> {
  const scope: CoverageScope = { deadlineMs, spent: new Map(), missing: new Set(), stats: new Map() };
  const value = await scopes.run(scope, fn);
  const missing = [...scope.missing].sort((a, b) => a - b);
  return { value, coverage: { answered: total - missing.length, total, missing } };
}
