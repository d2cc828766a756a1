/**
 * Page extraction (node-html-parser): metadata (title, description, Open Graph, canonical, lang, dates), main text
 * and passages, links, JSON-LD entities and image metadata — everything the pipeline turns into a PageInput.
 * Pure: no I/O; the caller passes the body and the response headers.
 */
import { parse, type HTMLElement } from 'node-html-parser';
import { TextDecoder } from 'node:util';
import type { DateSource, ImageInput, PassageInput } from '../page-model.js';
import { readJsonLd, type JsonLdReading } from './extract-jsonld.js';
import { buildPassages } from './extract-passages.js';
import { blocksToText, extractMainBlocks, extractMainBlocksAndLength, squash, type TextBlock } from './extract-text.js';
import { relForbidsFollow, type MetaTag } from './directives.js';
import { normalizeUrl } from './url.js';

export { parseLlmsTxt, type LlmsTxt } from './extract-llms-txt.js';
export { estimateTokens } from './extract-passages.js';

/** One outgoing link. */
export interface ExtractedLink {
  /** Absolute, normalised (crawler/url.ts) target. */
  readonly url: string;
  /** Anchor text (whitespace squashed, at most 200 chars). */
  readonly text: string;
  /** rel contains nofollow (crawler/directives.ts relForbidsFollow): the link is not admitted to the frontier. */
  readonly nofollow: boolean;
}

/**
 * Why a page yielded little main text, for a webmaster: `ok` (enough text kept), `empty` (no visible text at all),
 * `script_rendered` (next to no text in the HTML, scripts present: the content is drawn in the browser),
 * `mostly_boilerplate` (plenty of text, almost all of it navigation, footers, link lists), `short_text` (the page
 * itself carries little text: a stub, a teaser before a paywall, a media page).
 */
export const EXTRACTION_VERDICTS = ['ok', 'empty', 'script_rendered', 'mostly_boilerplate', 'short_text'] as const;
export type ExtractionVerdict = (typeof EXTRACTION_VERDICTS)[number];

/** How much of a page's visible text became main text, and the verdict on it. */
export interface ExtractionReport {
  /** Visible text characters of the body (scripts, styles and templates excluded). */
  readonly pageChars: number;
  /** Characters of main text kept. */
  readonly keptChars: number;
  readonly verdict: ExtractionVerdict;
}

/** Below this many characters of main text a page is thin enough to explain. */
const THIN_TEXT = 200;

/** The verdict on an extraction (see EXTRACTION_VERDICTS). `scriptWeight`: inline script characters plus a flat weight per external script. */
export function extractionVerdict(pageChars: number, keptChars: number, scriptWeight: number): ExtractionVerdict {
  if (keptChars >= THIN_TEXT) return 'ok';
  // Script code outweighing the visible text many times over is what client-rendered pages ship.
  if (pageChars < THIN_TEXT && scriptWeight > Math.max(1000, pageChars * 10)) return 'script_rendered';
  if (pageChars === 0) return 'empty';
  if (pageChars >= 1000) return 'mostly_boilerplate';
  return 'short_text';
}

/** Everything read from one HTML page. */
export interface ExtractedPage {
  readonly title: string;
  readonly description: string;
  /** BCP 47 primary language subtag, lower-case ("en", "fr"), or null. */
  readonly lang: string | null;
  /** rel=canonical target, absolute and normalised, or null. A grouping hint only. */
  readonly canonicalUrl: string | null;
  /** Open Graph properties (`og:*`, `article:*`), first value of each. */
  readonly openGraph: Readonly<Record<string, string>>;
  readonly publishedAt: string | null;
  readonly modifiedAt: string | null;
  readonly dateSource: DateSource;
  /** Main text, blocks separated by blank lines. */
  readonly mainText: string;
  readonly blocks: readonly TextBlock[];
  readonly passages: readonly PassageInput[];
  readonly links: readonly ExtractedLink[];
  readonly jsonLd: JsonLdReading;
  readonly images: readonly ImageInput[];
  /** Every `<meta name content>` of the page (for crawler/directives.ts: robots, svcbot). */
  readonly metas: readonly MetaTag[];
  /** How much text was kept, and why little was (svc_site shows it per host). */
  readonly extraction: ExtractionReport;
}

/** What extraction needs to know about the response. */
export interface ExtractContext {
  /** The final URL of the page (after redirects): the base for relative links. */
  readonly url: string;
  /** Response headers, lower-case names. */
  readonly headers?: Readonly<Record<string, string>>;
}

const PARSE_OPTIONS = {
  lowerCaseTagName: true,
  comment: false,
  blockTextElements: { script: true, style: true, noscript: true, pre: true },
};

/**
 * node-html-parser with PARSE_OPTIONS. With lowerCaseTagName, the parser looks for the end of each script, style,
 * noscript and pre in a lower-cased copy of the whole document, made anew for each such element: on a large page
 * with many scripts that copying is most of the page's time. For the length of the (synchronous) call,
 * toLocaleLowerCase without arguments answers a repeat of the same string from its last result: the same value the
 * parser would compute, so the tree is unchanged. The original method is back before anything else can run.
 */
function parseHtml(html: string): HTMLElement {
  const proto = String.prototype;
  const original = proto.toLocaleLowerCase;
  let lastIn: string | null = null;
  let lastOut = '';
  proto.toLocaleLowerCase = function (this: string, ...args: Parameters<string['toLocaleLowerCase']>): string {
    if (args.length > 0) return original.apply(this, args);
    if (this !== lastIn) {
      lastOut = original.call(this);
      lastIn = this.valueOf();
    }
    return lastOut;
  };
  try {
    return parse(html, PARSE_OPTIONS);
  } finally {
    proto.toLocaleLowerCase = original;
  }
}

/** Limits that keep one hostile page from costing too much downstream. */
const MAX_LINKS = 2000;
const MAX_IMAGES = 200;
const MAX_TITLE = 500;
const MAX_DESCRIPTION = 1000;

/** ISO 8601 instant for a date string, or null when it does not parse (or lies before 1990 / far in the future). */
export function toIsoDate(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const s = value.trim();
  if (s === '') return null;
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return null;
  const year = new Date(ms).getUTCFullYear();
  if (year < 1990 || year > 2100) return null;
  return new Date(ms).toISOString();
}

function meta(root: HTMLElement): { byName: Map<string, string>; byProperty: Map<string, string>; metas: MetaTag[] } {
  const byName = new Map<string, string>();
  const byProperty = new Map<string, string>();
  const metas: MetaTag[] = [];
  for (const m of root.querySelectorAll('meta')) {
    const content = m.getAttribute('content');
    if (content === undefined) continue;
    const rawName = m.getAttribute('name');
    if (rawName !== undefined) metas.push({ name: rawName, content });
    const name = rawName?.trim().toLowerCase();
    const prop = m.getAttribute('property')?.trim().toLowerCase();
    const httpEquiv = m.getAttribute('http-equiv')?.trim().toLowerCase();
    if (name && !byName.has(name)) byName.set(name, content.trim());
    if (prop && !byProperty.has(prop)) byProperty.set(prop, content.trim());
    if (httpEquiv && !byName.has(`http-equiv:${httpEquiv}`)) byName.set(`http-equiv:${httpEquiv}`, content.trim());
  }
  return { byName, byProperty, metas };
}

function primaryLang(v: string | undefined | null): string | null {
  if (!v) return null;
  const m = /^\s*([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]+)*\s*(?:,|$)/.exec(v);
  return m ? m[1]!.toLowerCase() : null;
}

/** The document base: `<base href>` resolved against the page URL, when valid. */
function baseOf(root: HTMLElement, pageUrl: string): string {
  const href = root.querySelector('base')?.getAttribute('href');
  if (href) {
    const b = normalizeUrl(href, pageUrl);
    if (b !== null) return b;
  }
  return pageUrl;
}

function readLinks(root: HTMLElement, base: string): ExtractedLink[] {
  const seen = new Map<string, ExtractedLink>();
  for (const a of root.querySelectorAll('a[href], area[href]')) {
    if (seen.size >= MAX_LINKS) break;
    const href = a.getAttribute('href') ?? '';
    if (/^\s*(javascript|mailto|tel|data):/i.test(href)) continue;
    const url = normalizeUrl(href, base);
    if (url === null) continue;
    const nofollow = relForbidsFollow(a.getAttribute('rel'));
    const prev = seen.get(url);
    // The same target linked twice: it is followable if any of the links is.
    if (prev) {
      if (prev.nofollow && !nofollow) seen.set(url, { ...prev, nofollow: false });
      continue;
    }
    seen.set(url, { url, text: squash(a.text).slice(0, 200), nofollow });
  }
  return [...seen.values()];
}

function dimension(v: string | undefined): number | null {
  if (v === undefined) return null;
  const m = /^\s*(\d{1,5})(?:px)?\s*$/.exec(v);
  return m ? Number(m[1]) : null;
}

function readImages(root: HTMLElement, base: string): ImageInput[] {
  const out: ImageInput[] = [];
  const seen = new Set<string>();
  for (const img of root.querySelectorAll('img')) {
    if (out.length >= MAX_IMAGES) break;
    let src = img.getAttribute('src') ?? '';
    if (src.trim() === '' || /^\s*data:/i.test(src)) {
      const set = img.getAttribute('srcset') ?? img.getAttribute('data-src') ?? '';
      src = set.trim().split(/\s+/)[0] ?? '';
    }
    if (src === '' || /^\s*data:/i.test(src)) continue;
    const url = normalizeUrl(src, base);
    if (url === null || seen.has(url)) continue;
    seen.add(url);
    out.push({
      src: url,
      alt: squash(img.getAttribute('alt') ?? ''),
      width: dimension(img.getAttribute('width')),
      height: dimension(img.getAttribute('height')),
    });
  }
  return out;
}

/**
 * Extracts a page. Never throws on malformed HTML (the parser is forgiving); callers only need to pass HTML text.
 *
 * @example const page = extractPage(html, { url: 'https://example.ca/a', headers: { 'last-modified': '…' } });
 */
export function extractPage(html: string, ctx: ExtractContext): ExtractedPage {
  try {
    return extractParsed(html, ctx);
  } catch (err) {
    // Pathological nesting (thousands of levels) overflows the recursive tree walks here and in the parser's
    // own text getters: fall back to flat text so a hostile page costs one degraded extraction, not a crash.
    if (err instanceof RangeError) return extractFlat(html, ctx);
    throw err;
  }
}

/** Decodes the few entities that matter for flat text. */
function decodeEntities(s: string): string {
  return s
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#(\d+);/g, (_m, d: string) => String.fromCodePoint(Math.min(Number(d), 0x10ffff)))
    .replace(/&amp;/g, '&');
}

/** The degraded extraction: title and tag-stripped body text, no links, images or JSON-LD. */
function extractFlat(html: string, ctx: ExtractContext): ExtractedPage {
  const title = squash(decodeEntities(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? '')).slice(0, MAX_TITLE);
  const text = squash(
    decodeEntities(
      html
        .replace(/<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1\s*>/gi, ' ')
        .replace(/<head\b[\s\S]*?<\/head\s*>/i, ' ')
        .replace(/<[^>]*>/g, ' '),
    ),
  );
  const blocks: TextBlock[] = text === '' ? [] : [{ kind: 'text', text, snippetText: text }];
  return {
    title,
    description: '',
    lang: null,
    canonicalUrl: null,
    openGraph: {},
    publishedAt: null,
    modifiedAt: toIsoDate(ctx.headers?.['last-modified']),
    dateSource: ctx.headers?.['last-modified'] && toIsoDate(ctx.headers['last-modified']) ? 'http-last-modified' : 'none',
    mainText: text,
    blocks,
    passages: buildPassages(blocks),
    links: [],
    jsonLd: readJsonLd([]),
    images: [],
    // Directives must still apply: meta tags are read with a tolerant attribute scan.
    metas: flatMetas(html),
    extraction: { pageChars: text.length, keptChars: text.length, verdict: extractionVerdict(text.length, text.length, 0) },
  };
}

function flatMetas(html: string): MetaTag[] {
  const out: MetaTag[] = [];
  for (const m of html.matchAll(/<meta\b([^>]*)>/gi)) {
    const attrs = m[1] ?? '';
    const get = (name: string): string | undefined => {
      const a = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, 'i').exec(attrs);
      return a ? decodeEntities(a[1] ?? a[2] ?? a[3] ?? '') : undefined;
    };
    const name = get('name');
    const content = get('content');
    if (name !== undefined && content !== undefined) out.push({ name, content });
  }
  return out;
}

function extractParsed(html: string, ctx: ExtractContext): ExtractedPage {
  const root = parseHtml(html);
  const headers = ctx.headers ?? {};
  const base = baseOf(root, ctx.url);
  const { byName, byProperty, metas } = meta(root);

  const openGraph: Record<string, string> = {};
  for (const [k, v] of byProperty) if (k.startsWith('og:') || k.startsWith('article:')) openGraph[k] = v;

  const titleEl = root.querySelector('title');
  let title = squash(titleEl?.text ?? '');
  if (title === '') title = squash(byProperty.get('og:title') ?? byName.get('twitter:title') ?? '');
  if (title === '') title = squash(root.querySelector('h1')?.text ?? '');
  title = title.slice(0, MAX_TITLE);

  const description = squash(
    byName.get('description') ?? byProperty.get('og:description') ?? byName.get('twitter:description') ?? '',
  ).slice(0, MAX_DESCRIPTION);

  const htmlEl = root.querySelector('html');
  const lang =
    primaryLang(htmlEl?.getAttribute('lang')) ??
    primaryLang(htmlEl?.getAttribute('xml:lang')) ??
    primaryLang(byName.get('http-equiv:content-language')) ??
    primaryLang(headers['content-language']) ??
    primaryLang(byProperty.get('og:locale'));

  let canonicalUrl: string | null = null;
  for (const l of root.querySelectorAll('link[rel]')) {
    const rel = (l.getAttribute('rel') ?? '').toLowerCase().split(/\s+/);
    if (!rel.includes('canonical')) continue;
    const href = l.getAttribute('href');
    if (href) canonicalUrl = normalizeUrl(href, base);
    break;
  }

  const scripts = root.querySelectorAll('script');
  const blocksJson = scripts
    .filter((s) => (s.getAttribute('type') ?? '').trim().toLowerCase().split(';')[0] === 'application/ld+json')
    .map((s) => s.rawText);
  const jsonLd = readJsonLd(blocksJson);

  // Dates, most authoritative source first: schema.org, then article:* meta, then <time>, then Last-Modified.
  let publishedAt: string | null = null;
  let modifiedAt: string | null = null;
  let dateSource: DateSource = 'none';
  const take = (pub: string | null, mod: string | null, source: DateSource): void => {
    const p = toIsoDate(pub);
    const m = toIsoDate(mod);
    if (publishedAt === null && p !== null) {
      publishedAt = p;
      if (dateSource === 'none' || modifiedAt === null) dateSource = source;
    }
    if (modifiedAt === null && m !== null) {
      modifiedAt = m;
      if (dateSource === 'none') dateSource = source;
    }
  };
  take(jsonLd.datePublished, jsonLd.dateModified, 'schema.org');
  take(
    byProperty.get('article:published_time') ?? byName.get('article:published_time') ?? null,
    byProperty.get('article:modified_time') ?? byName.get('article:modified_time') ?? byProperty.get('og:updated_time') ?? null,
    'article-meta',
  );
  if (publishedAt === null) {
    const times = root.querySelectorAll('time[datetime]');
    const pubTime =
      times.find(
        (t) =>
          t.getAttribute('pubdate') !== undefined ||
          /publish|posted|date/i.test(`${t.getAttribute('itemprop') ?? ''} ${t.getAttribute('class') ?? ''}`),
      ) ?? times[0];
    if (pubTime) take(pubTime.getAttribute('datetime') ?? null, null, 'time-element');
  }
  if (modifiedAt === null) take(null, headers['last-modified'] ?? null, 'http-last-modified');

  const links = readLinks(root, base);
  const images = readImages(root, base);

  // Main text last: it prunes the tree in place. When the strict pass keeps almost nothing of a page that has
  // plenty of text, the class/role hints misfired: a second, lenient pass on a fresh parse keeps only hard rules.
  // Each external script counts as much as a page of inline code: bundles are what render such pages.
  const scriptWeight = scripts
    .filter((s) => /^(|module|(text|application)\/(x-)?(java|ecma)script)$/.test((s.getAttribute('type') ?? '').trim().toLowerCase()))
    .reduce((n, s) => n + (s.getAttribute('src') !== undefined ? 5000 : s.rawText.length), 0);
  const first = extractMainBlocksAndLength(root);
  const visible = first.visible;
  let blocks = first.blocks;
  if (blocksToText(blocks).length < 250 && visible > 1000) {
    const lenient = extractMainBlocks(parseHtml(html), { lenient: true });
    if (blocksToText(lenient).length > blocksToText(blocks).length) blocks = lenient;
  }
  // Still next to nothing, and the page ships its article inside <noscript> (the text a reader without scripts
  // gets, the script-side copy being a template): read that copy as markup.
  if (blocksToText(blocks).length < 250 && /<noscript\b/i.test(html)) {
    const unwrapped = html.replace(/<(\/?)noscript\b[^>]*>/gi, '<$1div>');
    const fromNoscript = extractMainBlocks(parseHtml(unwrapped), { lenient: true });
    // A short <noscript> is a notice ("enable JavaScript"), not the article.
    if (blocksToText(fromNoscript).length >= 250) blocks = fromNoscript;
  }
  const passages = buildPassages(blocks);
  const mainText = blocksToText(blocks);
  // Counted like the page's visible text: block separators are not text.
  const kept = blocks.reduce((n, b) => n + b.text.length, 0);

  return {
    title,
    description,
    lang,
    canonicalUrl,
    openGraph,
    publishedAt,
    modifiedAt,
    dateSource,
    mainText,
    blocks,
    passages,
    links,
    jsonLd,
    images,
    metas,
    extraction: { pageChars: visible, keptChars: kept, verdict: extractionVerdict(visible, kept, scriptWeight) },
  };
}

/** Whitespace-normalised main text the content hash is computed over (so layout-only changes do not count). */
export function normalizedTextForHash(mainText: string): string {
  return mainText.replace(/\s+/g, ' ').trim().toLowerCase();
}

/**
 * Decodes an HTML body to text: charset from the Content-Type header, else a BOM, else a `<meta charset>` /
 * `http-equiv` declaration in the first 2 KiB, else UTF-8. Unknown labels fall back to UTF-8 (WHATWG decoders
 * replace invalid bytes, so this never throws).
 */
export function decodeHtml(body: Uint8Array, contentType?: string): string {
  let label: string | null = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType ?? '')?.[1] ?? null;
  if (label === null) {
    if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) label = 'utf-8';
    else if (body[0] === 0xff && body[1] === 0xfe) label = 'utf-16le';
    else if (body[0] === 0xfe && body[1] === 0xff) label = 'utf-16be';
  }
  if (label === null) {
    const head = Buffer.from(body.subarray(0, 2048)).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1] ?? null;
    // A body that is valid UTF-8 with multi-byte sequences is UTF-8 whatever its meta says (pages re-saved by
    // editors and CMSs keep the old declaration); legacy encodings almost never form valid UTF-8 by chance.
    if (label !== null && !/^utf-?8$/i.test(label) && isMultibyteUtf8(body)) label = 'utf-8';
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label ?? 'utf-8');
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(body);
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Whether bytes decode as UTF-8 without error and hold at least one non-ASCII character. */
function isMultibyteUtf8(body: Uint8Array): boolean {
  if (!body.some((b) => b >= 0x80)) return false;
  try {
    STRICT_UTF8.decode(body);
    return true;
  } catch {
    return false;
  }
}
