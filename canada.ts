/**
 * Canada's provinces and territories, defined once: the index's province signal (index/retrieval/source-type.ts), the
 * svc_context province filter and the entity store's address facts (state/entity-canada.ts) all derive from it.
 */

/** ISO 3166-2:CA subdivision codes, lower case (the "ca-" prefix and case are the caller's choice at the edges). */
export const PROVINCES = ['ab', 'bc', 'mb', 'nb', 'nl', 'ns', 'nt', 'nu', 'on', 'pe', 'qc', 'sk', 'yt'] as const;
/** One of {@link PROVINCES}. */
export type Province = (typeof PROVINCES)[number];
