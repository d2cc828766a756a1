/**
 * What svc_search and svc_context say of a sharded index's answer: how many shards it covers, and `partial_results`
 * when some were left out (no live searcher, or past SVC_SHARD_DEADLINE_MS; index/shards/shard-coverage.ts). One
 * definition for both tools, so MCP, REST and OpenAPI carry the same shape.
 */
import { z } from 'zod';
import { ShardedIndex, type ServedIndex } from '../index/shards/sharded-index.js';
import { makeWarning, type Warning } from '../index/retrieval/warnings.js';

export const shardsCoveredSchema = z
  .object({
    answered: z.number().int().describe('Shards answering.'),
    total: z.number().int().describe('All shards.'),
  })
  .describe('Fleet only: index shards covered.');

/** `fn` (one query) over `index`, and the shards it covered (null: not an index read over searchers). */
export async function runCovered<T>(
  index: ServedIndex,
  fn: () => Promise<T>,
): Promise<{ value: T; shards: { answered: number; total: number } | null; warning: Warning | null }> {
  // Shards in this process always all answer: only an index read over searchers reports its coverage.
  if (!(index instanceof ShardedIndex) || !index.remote) return { value: await fn(), shards: null, warning: null };
  const { value, coverage } = await index.covered(fn);
  const shards = { answered: coverage.answered, total: coverage.total };
  const warning =
    coverage.answered < coverage.total
      ? makeWarning(
          'partial_results',
          `${coverage.total - coverage.answered} of ${coverage.total} index shards did not answer in time: results come from the other ${coverage.answered} and may miss pages; retry for complete results.`,
        )
      : null;
  return { value, shards, warning };
}
