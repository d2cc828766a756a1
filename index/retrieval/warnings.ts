/**
 * Typed warnings shared by svc_search and svc_context (ARCHITECTURE.md, "Trust": warnings are typed objects,
 * never free prose only). The code is the contract a caller branches on; the message is for humans.
 */
import { z } from 'zod';
import type { VectorsUnused } from './engine-seam.js';

/**
 * Every warning code the index and its tools can emit (meanings: docs/api-search.md). A closed set, so clients can
 * rely on the list: add a code here before emitting it.
 */
export const warningCodes = [
  'no_results',
  'budget_exhausted',
  'stale_sources',
  'instruction_like_text',
  'truncated_passage',
  'snippet_restricted',
  'embedder_unavailable',
  'vector_model_mismatch',
  'query_ignored_terms',
  'low_relevance_omitted',
  'low_relevance',
  'partial_results',
] as const;

/** One of {@link warningCodes}. */
export type WarningCode = (typeof warningCodes)[number];

/** A typed warning. `source` is the URL of the page the warning is about, when it is about one page. */
export interface Warning {
  readonly code: WarningCode;
  readonly message: string;
  readonly source?: string;
}

/** The zod schema tools reuse in their output schemas (each field described: it is API text for a model). */
export const warningSchema = z
  .object({
    code: z.enum(warningCodes).describe('Machine-readable warning code; branch on this, not on the message.'),
    message: z.string().describe('Human-readable explanation of the warning.'),
    source: z.string().optional().describe('URL of the source page this warning is about, when it concerns one page.'),
  })
  .describe('A typed warning about the response (for example budget_exhausted, no_results, instruction_like_text).');

/** Builds a warning, leaving `source` out entirely when absent (so JSON output has no `source: undefined`). */
export function makeWarning(code: WarningCode, message: string, source?: string): Warning {
  return source === undefined ? { code, message } : { code, message, source };
}

/** The `vector_model_mismatch` warning for an index that cannot use the configured model, else null. */
export function vectorsUnusedWarning(v: VectorsUnused | null): Warning | null {
  if (!v) return null;
  if (v.reembedding)
    return makeWarning(
      'vector_model_mismatch',
      `The index's passages are being embedded with the configured model ${v.configured} in the background: ranking is BM25 only until every passage has its vector.`,
    );
  const why = v.stored === null ? 'was built without vectors' : `holds vectors of ${v.stored}`;
  return makeWarning(
    'vector_model_mismatch',
    `The index ${why}, not of the configured model ${v.configured}: ranking is BM25 only until the corpus is embedded again (svc reindex --vectors).`,
  );
}
