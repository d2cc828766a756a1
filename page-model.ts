/**
 * The page contract between producers (the crawler pipeline, the corpus ingest) and the passage index.
 * Both sides import only this file, so crawler/ and index/ never import each other (ARCHITECTURE.md).
 */

/** How an excerpt of this page may be shown (meta robots / X-Robots-Tag snippet rules, combined most-restrictively). */
export interface SnippetPolicy {
  /** nosnippet or max-snippet:0: no excerpt at all. */
  readonly nosnippet: boolean;
  /** max-snippet:N (N > 0): excerpts at most N characters; null means no limit. */
  readonly maxSnippet: number | null;
}

/** One passage of a page, in reading order. */
export interface PassageInput {
  /** 0-based position of the passage in the page. */
  readonly ordinal: number;
  /** The passage text as indexed (searchable). */
  readonly text: string;
  /**
   * The same text with every data-nosnippet part removed: the only text an excerpt or a quoted passage may show.
   * Equal to `text` when the page has no data-nosnippet element in this passage.
   */
  readonly snippetText: string;
  /** Headings above the passage, outermost first (h1 > h2 > …). */
  readonly headingPath: readonly string[];
  /** 1-based page of a paged document (PDF) the passage is on, so a cite can say "p. 12"; absent for HTML. */
  readonly page?: number;
}

/** An image the page shows: metadata only (no bytes are ever fetched or stored). */
export interface ImageInput {
  /** Absolute, normalised image URL. */
  readonly src: string;
  readonly alt: string;
  /** Declared width/height attributes (CSS pixels) when present and numeric. */
  readonly width: number | null;
  readonly height: number | null;
}

/** Where the page's published/modified dates came from. */
export const DATE_SOURCES = ['schema.org', 'article-meta', 'http-last-modified', 'time-element', 'pdf-metadata', 'corpus', 'none'] as const;
/** One of {@link DATE_SOURCES}. */
export type DateSource = (typeof DATE_SOURCES)[number];

/** Hints the index turns into country / province / source_type signals (it owns that classification). */
export interface PageSignals {
  /** schema.org @type values declared on the page (JSON-LD), e.g. GovernmentOrganization, LocalBusiness. */
  readonly declaredTypes: readonly string[];
  /** addressCountry values declared on the page (JSON-LD), raw. */
  readonly addressCountries: readonly string[];
  /** addressRegion values declared on the page (JSON-LD), raw. */
  readonly addressRegions: readonly string[];
}

/** Everything the index stores about one page. */
export interface PageInput {
  /** Durable integer reference, allocated by state/documents.ts (one per normalised URL). */
  readonly pageRef: number;
  /** The normalised URL that was fetched (after redirects). */
  readonly url: string;
  /** rel=canonical target (normalised), a grouping hint only; null when absent. */
  readonly canonicalUrl: string | null;
  /** Lower-case host name of `url` (no port). */
  readonly host: string;
  readonly title: string;
  readonly description: string;
  /** BCP 47 primary language (e.g. "en", "fr") or null when unknown. */
  readonly lang: string | null;
  /** ISO 8601 instants or null. */
  readonly publishedAt: string | null;
  readonly modifiedAt: string | null;
  readonly dateSource: DateSource;
  /** ISO 8601 instant of the fetch that produced this content. */
  readonly fetchedAt: string;
  /** sha256 hex of the normalised main text (change detection, near-duplicate collapse). */
  readonly contentHash: string;
  readonly snippet: SnippetPolicy;
  /**
   * The document's real type as a lower-case extension: from its Content-Type (html, pdf, txt, md), else the URL
   * path's extension ("html" when none). What `filetype:` matches.
   */
  readonly filetype: string;
  readonly signals: PageSignals;
  readonly passages: readonly PassageInput[];
  /** Images on the page (metadata only); empty for corpus documents or noimageindex pages. */
  readonly images: readonly ImageInput[];
  /** A corpus document id (BEIR `_id`) when ingested from a corpus; absent for crawled pages. */
  readonly externalId?: string;
}

/** What a producer writes the index through. Implemented by index/store; a test double only in unit tests. */
/**
 * FNV-1a (32 bits) of a URL's UTF-8 bytes: what a sharded index splits pages by (`hash % shard count`), and what an
 * outbox entry carries so an indexer can claim its shards' pages without the crawler knowing the shard count.
 */
export function urlHash32(url: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(url)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export interface PageSink {
  /** Insert or replace the page and all its passages atomically (a reader never sees half a page). */
  upsertPage(page: PageInput): Promise<void>;
  /**
   * Remove the page and its passages from every surface (noindex, exact removal, 404/410). `url`, the page's URL
   * when the caller knows it, routes the removal to the page's shard (a sharded index, the outbox).
   */
  removePage(pageRef: number, url?: string): Promise<void>;
}

/** One schema.org JSON-LD node as declared on a page (after @graph flattening), untouched otherwise. */
export type JsonLdNode = Readonly<Record<string, unknown>>;

/** Why a JSON-LD block of a page could not be read (closed vocabulary: webmaster diagnostics report it, no text). */
export const JSON_LD_PARSE_ERRORS = ['empty_block', 'invalid_json'] as const;
export type JsonLdParseError = (typeof JSON_LD_PARSE_ERRORS)[number];
/** The JSON-LD blocks of one page that could not be parsed, counted by reason. */
export type JsonLdParseErrors = Readonly<Partial<Record<JsonLdParseError, number>>>;

/**
 * Where the crawler pipeline sends the structured data it read. Implemented by the entity store (state/): the SQLite
 * EntityStore answers at once, the repositories (EntitiesRepo, PostgreSQL too) with a promise the pipeline awaits.
 * A page that is excluded (noindex, removal, gone) is withdrawn: everything it contributed goes.
 */
export interface EntitySink {
  /**
   * Replaces what this page contributes with `nodes` (LocalBusiness and subtypes, Organization, Place, …) and the
   * count of its JSON-LD blocks that failed to parse (kept for webmaster diagnostics; none when omitted).
   */
  observePage(
    page: { pageRef: number; url: string; host: string; lang: string | null },
    nodes: readonly JsonLdNode[],
    observedAt: string,
    parseErrors?: JsonLdParseErrors,
  ): void | Promise<void>;
  /** Withdraws everything this page contributed. */
  withdrawPage(pageRef: number): void | Promise<void>;
}
