import { createHash } from 'node:crypto';
import { extractPage } from '../../crawler/extract.js';
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

/**
 * A PageInput as the crawler would index `html` under `url` (through the real extractor); `extractUrl` is the URL the
 * page is extracted as, when it differs (a copy of a page served under another address).
 */
export function extractedPage(html: string, pageRef: number, url: string, extractUrl = url): PageInput {
  const x = extractPage(html, { url: extractUrl });
  return {
    pageRef,
    url,
    canonicalUrl: null,
    host: new URL(url).host,
    title: x.title,
    description: x.description,
    lang: x.lang,
    publishedAt: x.publishedAt,
    modifiedAt: x.modifiedAt,
    dateSource: x.dateSource,
    fetchedAt: '2026-11-20T12:00:00Z',
    contentHash: createHash('sha256').update(x.mainText).digest('hex'),
    snippet: { nosnippet: false, maxSnippet: null },
    filetype: 'html',
    signals: { declaredTypes: [], addressCountries: [], addressRegions: [] },
    passages: [...x.passages],
    images: [],
  };
}
