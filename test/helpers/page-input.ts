import type { PageInput } from '../../page-model.js';

/**
 * A complete PageInput for index tests: one page of `host` whose passages are `texts` (snippetText = text),
 * with neutral defaults that `over` replaces field by field.
 */
export function makePage(ref: number, host: string, texts: readonly string[], over: Partial<PageInput> = {}): PageInput {
  return {
    pageRef: ref,
    url: `https://${host}/page-${ref}`,
    canonicalUrl: null,
    host,
    title: `Page ${ref}`,
    description: '',
    lang: 'en',
    publishedAt: null,
    modifiedAt: null,
    dateSource: 'none',
    fetchedAt: '2026-11-20T12:00:00Z',
    contentHash: `hash-${ref}`,
    snippet: { nosnippet: false, maxSnippet: null },
    filetype: 'html',
    signals: { declaredTypes: [], addressCountries: [], addressRegions: [] },
    images: [],
    ...over,
    passages: texts.map((text, ordinal) => ({ ordinal, text, snippetText: text, headingPath: [] })),
  };
}
