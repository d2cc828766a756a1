/**
 * Pages to rows and back: what a PageInput becomes in the three tables (with the country / province / source_type
 * the index derives), what a stored row is to callers, and Arrow results as plain objects.
 */
import type { PageInput } from '../../../page-model.js';
import { indexText, passageAnalyses } from '../../retrieval/analyzer.js';
import type { IMAGE_COLUMNS, ImageRow, PAGE_COLUMNS, PageRow, PASSAGE_COLUMNS, PassageWriteRow, RowOf } from './columns.js';
import { formatNearPrint, nearPrintOf } from '../../retrieval/near-print.js';
import { classifySource, type Province, type SourceType } from '../../retrieval/source-type.js';
import { estimateTokens } from '../../retrieval/tokens.js';

/** The text a passage's vector is of: its page's title, then the passage (a write and a re-embedding alike). */
export const embedText = (title: string, text: string): string => (title ? `${title}\n${text}` : text);

/** A page as stored: the PageInput fields (without its passages, images and raw signals) plus what the index derived. */
export interface StoredPage extends Omit<PageInput, 'passages' | 'images' | 'signals' | 'externalId'> {
  readonly country: string | null;
  readonly province: Province | null;
  readonly sourceType: SourceType;
  readonly passageCount: number;
  readonly externalId: string | null;
}

/** One passage of a page, for continuation reads. */
export interface StoredPassage {
  readonly ordinal: number;
  readonly text: string;
  readonly snippetText: string;
  readonly headingPath: string[];
  readonly tokens: number;
  /** 1-based page of a paged document (PDF); null otherwise. */
  readonly page: number | null;
}

/** Image metadata hit. */
export interface ImageHit {
  readonly pageRef: number;
  readonly pageUrl: string;
  readonly host: string;
  readonly src: string;
  readonly alt: string;
  readonly width: number | null;
  readonly height: number | null;
}

/** Languages are stored as a lower-case primary subtag so they can be compared as closed-set literals. */
export function normaliseLang(lang: string | null): string | null {
  if (!lang) return null;
  const p = lang.trim().toLowerCase().split(/[-_]/, 1)[0] ?? '';
  return /^[a-z]{2,3}$/.test(p) ? p : null;
}

const toMs = (iso: string | null): number | null => {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : null;
};

/** A page's near-duplicate print over its main text (its passages in order), as stored. */
function pagePrint(p: PageInput): string | null {
  const print = nearPrintOf(p.passages.map((s) => s.text).join('\n'));
  return print && formatNearPrint(print);
}

/** The rows one page becomes, and the texts its passages are embedded from (same order as `passages`). */
export interface PageRows {
  readonly passages: PassageWriteRow[];
  readonly embedTexts: string[];
  readonly page: PageRow;
  readonly images: ImageRow[];
}

/**
 * The rows of `page`; `hostIdOf` gives the id of its (lower-cased) host, asked only once the page is valid. Throws
 * RangeError for a page_ref out of Int32 range.
 */
export function pageRows(p: PageInput, hostIdOf: (host: string) => number): PageRows {
  if (!Number.isInteger(p.pageRef) || p.pageRef < 0 || p.pageRef > 2 ** 31 - 1) throw new RangeError(`page_ref out of range: ${p.pageRef}`);
  const host = p.host.toLowerCase();
  const hostId = hostIdOf(host);
  const lang = normaliseLang(p.lang);
  const sig = classifySource(host, p.signals);
  const dateMs = toMs(p.modifiedAt) ?? toMs(p.publishedAt) ?? toMs(p.fetchedAt) ?? 0;
  const maxSnippet = p.snippet.maxSnippet === null ? null : Math.max(0, Math.floor(p.snippet.maxSnippet));
  const nosnippet = p.snippet.nosnippet || maxSnippet === 0;
  const common = {
    title: p.title,
    url: p.url,
    host,
    host_id: hostId,
    filetype: p.filetype.toLowerCase(),
    lang,
    country: sig.country,
    province: sig.province,
    source_type: sig.sourceType,
    date_ms: dateMs,
    published_at: p.publishedAt,
    modified_at: p.modifiedAt,
    fetched_at: p.fetchedAt,
    date_source: p.dateSource,
    group_key: p.canonicalUrl ?? p.url,
    content_hash: p.contentHash,
    near_print: pagePrint(p),
    nosnippet,
    max_snippet: nosnippet ? null : maxSnippet,
    external_id: p.externalId ?? null,
  };
  const passages: PassageWriteRow[] = [];
  const embedTexts: string[] = [];
  const analyses = passageAnalyses(
    lang,
    p.title,
    p.passages.map((s) => s.text),
  );
  for (const [i, s] of p.passages.entries()) {
    passages.push({
      page_ref: p.pageRef,
      ordinal: s.ordinal,
      text: s.text,
      search_text: indexText(p.title, s.text, analyses[i]!),
      snippet_text: s.snippetText,
      heading_path: JSON.stringify(s.headingPath),
      page_no: s.page ?? null,
      tokens: estimateTokens(s.text),
      ...common,
    });
    embedTexts.push(embedText(p.title, s.text));
  }
  const page: PageRow = {
    page_ref: p.pageRef,
    url: p.url,
    canonical_url: p.canonicalUrl,
    host,
    host_id: hostId,
    title: p.title,
    description: p.description,
    lang,
    published_at: p.publishedAt,
    modified_at: p.modifiedAt,
    date_source: p.dateSource,
    fetched_at: p.fetchedAt,
    content_hash: p.contentHash,
    near_print: common.near_print,
    nosnippet,
    max_snippet: nosnippet ? null : maxSnippet,
    filetype: common.filetype,
    signals: JSON.stringify(p.signals),
    country: sig.country,
    province: sig.province,
    source_type: sig.sourceType,
    passage_count: p.passages.length,
    external_id: p.externalId ?? null,
  };
  const images = p.images.map(
    (im, i): ImageRow => ({
      page_ref: p.pageRef,
      ordinal: i,
      page_url: p.url,
      host,
      src: im.src,
      alt: im.alt,
      width: im.width,
      height: im.height,
    }),
  );
  return { passages, embedTexts, page, images };
}

/** A stored page row as callers see it. */
export function toStoredPage(r: RowOf<typeof PAGE_COLUMNS, 'stored'>): StoredPage {
  return {
    pageRef: r.page_ref,
    url: r.url,
    canonicalUrl: r.canonical_url ?? null,
    host: r.host,
    title: r.title,
    description: r.description,
    lang: r.lang ?? null,
    publishedAt: r.published_at ?? null,
    modifiedAt: r.modified_at ?? null,
    dateSource: r.date_source,
    fetchedAt: r.fetched_at,
    contentHash: r.content_hash,
    snippet: { nosnippet: r.nosnippet, maxSnippet: r.max_snippet ?? null },
    filetype: r.filetype,
    country: r.country ?? null,
    province: r.province ?? null,
    sourceType: r.source_type,
    passageCount: r.passage_count,
    externalId: r.external_id ?? null,
  };
}

/** A passage row of a continuation read as callers see it. */
export function toStoredPassage(r: RowOf<typeof PASSAGE_COLUMNS, 'continuation'>): StoredPassage {
  return {
    ordinal: r.ordinal,
    text: r.text,
    snippetText: r.snippet_text,
    headingPath: JSON.parse(r.heading_path) as string[],
    tokens: r.tokens,
    page: r.page_no ?? null,
  };
}

/** An image row of an image search as callers see it. */
export function toImageHit(r: RowOf<typeof IMAGE_COLUMNS, 'hit'>): ImageHit {
  return { pageRef: r.page_ref, pageUrl: r.page_url, host: r.host, src: r.src, alt: r.alt, width: r.width, height: r.height };
}

/** The part of an Arrow table `arrowRows` reads (LanceDB's `toArrow()` result). */
interface ArrowColumns {
  readonly numRows: number;
  readonly schema: { readonly fields: readonly { readonly name: string }[] };
  getChild(name: string): Iterable<unknown> | null;
}

/**
 * An Arrow table as plain row objects, built column by column: each column is iterated once (Arrow's batch
 * iterator), where per-row `toJSON()` dispatched a visitor for every cell (the largest main-thread cost of a
 * served search after term checks).
 */
export function arrowRows<T>(table: ArrowColumns): T[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < table.numRows; i++) out.push({});
  for (const { name } of table.schema.fields) {
    const col = table.getChild(name);
    if (!col) continue;
    let i = 0;
    for (const v of col) out[i++]![name] = v;
  }
  return out as T[];
}

/** Arrow rows (lazy proxies over the batch) as plain objects the caller may keep and annotate. */
export function plainRows<T>(rows: readonly unknown[]): T[] {
  return rows.map((r) => {
    const row = r as { toJSON?: () => T };
    return typeof row.toJSON === 'function' ? row.toJSON() : ({ ...(r as object) } as T);
  });
}
