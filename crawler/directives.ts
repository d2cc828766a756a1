/**
 * Page-level indexing directives from meta robots, meta svcbot and X-Robots-Tag (other crawlers' prefixes ignored),
 * combined most-restrictively. Canonical is only a grouping hint and never grants or removes permission
 * (see DIRECTIVE_TABLE).
 */

/**
 * The crawler's product token, defined once: robots.txt groups, the User-Agent header (fetcher.ts) and the pages
 * that explain the crawler all use it.
 */
export const USER_AGENT_TOKEN = 'SvcBot';
/** The meta name and X-Robots-Tag prefix addressed to us (lower-case; matched case-insensitively). */
export const META_NAME = USER_AGENT_TOKEN.toLowerCase();

/** The combined directives of one page. */
export interface Directives {
  /** Exclude the page and its entities (and remove them if indexed before). */
  readonly noindex: boolean;
  /** Admit none of the page's links. */
  readonly nofollow: boolean;
  /** Show no excerpt. */
  readonly nosnippet: boolean;
  /** Longest excerpt in characters; null = no limit. 0 never appears here: it becomes `nosnippet`. */
  readonly maxSnippet: number | null;
  /** ISO 8601 instant after which the page must be dropped; null = none. */
  readonly unavailableAfter: string | null;
  /** Do not index the page's images. */
  readonly noimageindex: boolean;
  /** Do not offer a cached copy. */
  readonly noarchive: boolean;
  /** `none`, `standard` or `large`; null = not given. */
  readonly maxImagePreview: 'none' | 'standard' | 'large' | null;
  /** Directive tokens that applied to us, normalised (`noindex`, `max-snippet:50` …), for the site-evidence tool. */
  readonly applied: readonly string[];
}

/** No restriction at all. */
export const NO_DIRECTIVES: Directives = Object.freeze({
  noindex: false,
  nofollow: false,
  nosnippet: false,
  maxSnippet: null,
  unavailableAfter: null,
  noimageindex: false,
  noarchive: false,
  maxImagePreview: null,
  applied: [],
});

/** One row of the public directive table. */
export interface DirectiveRow {
  /** How webmasters write it. */
  readonly directive: string;
  /** What SvcBot does. */
  readonly effect: string;
  /** True for the rows of spec §1.3's table; the others are supported extensions. */
  readonly spec: boolean;
  /** An example token that exercises the row (tests and the /webmasters page use it). */
  readonly example: string;
}

/**
 * The single source of truth for the /webmasters page. The first four rows are spec §1.3's table, verbatim;
 * the rest are extensions SvcBot honours too. Tests check that each row's example produces its effect.
 */
export const DIRECTIVE_TABLE: readonly DirectiveRow[] = Object.freeze([
  { directive: 'noindex or none', effect: 'excludes the page and its entities', spec: true, example: 'noindex' },
  { directive: 'nofollow', effect: "stops admission of the page's links", spec: true, example: 'nofollow' },
  { directive: 'nosnippet or max-snippet:0', effect: 'removes the excerpt', spec: true, example: 'nosnippet' },
  { directive: 'canonical', effect: 'a grouping hint only, never permission', spec: true, example: '<link rel="canonical">' },
  { directive: 'max-snippet:N', effect: 'excerpts are at most N characters (-1: no limit)', spec: false, example: 'max-snippet:50' },
  {
    directive: 'unavailable_after:DATE',
    effect: 'after DATE the page is treated as noindex',
    spec: false,
    example: 'unavailable_after: 2000-01-01',
  },
  { directive: 'noimageindex', effect: "the page's images are not indexed", spec: false, example: 'noimageindex' },
  {
    directive: 'data-nosnippet (HTML attribute)',
    effect: 'the marked text never appears in excerpts',
    spec: false,
    example: '<span data-nosnippet>',
  },
  { directive: 'rel="nofollow" (on a link)', effect: 'that link is not admitted', spec: false, example: '<a rel="nofollow">' },
  { directive: 'all', effect: 'no restriction (the default)', spec: false, example: 'all' },
]);

/** Directive names that carry a value after a colon; any other `name:` prefix names a crawler. */
const VALUED = new Set(['max-snippet', 'max-image-preview', 'max-video-preview', 'unavailable_after', 'unavailable-after']);
const KNOWN = new Set([
  'all',
  'none',
  'noindex',
  'index',
  'nofollow',
  'follow',
  'nosnippet',
  'noarchive',
  'nocache',
  'noimageindex',
  'notranslate',
  'indexifembedded',
  ...VALUED,
]);

interface Acc {
  noindex: boolean;
  nofollow: boolean;
  nosnippet: boolean;
  maxSnippet: number | null;
  unavailableAfter: number | null;
  noimageindex: boolean;
  noarchive: boolean;
  maxImagePreview: Directives['maxImagePreview'];
  applied: string[];
}

const PREVIEW_RANK = { none: 0, standard: 1, large: 2 } as const;

/** Parses a date the way webmasters write unavailable_after (RFC 822/850, ISO 8601); null when unparsable. */
function parseDate(v: string): number | null {
  const t = Date.parse(v.trim());
  return Number.isNaN(t) ? null : t;
}

function applyToken(acc: Acc, name: string, value: string | null): void {
  switch (name) {
    case 'none':
      acc.noindex = acc.nofollow = true;
      break;
    case 'noindex':
      acc.noindex = true;
      break;
    case 'nofollow':
      acc.nofollow = true;
      break;
    case 'nosnippet':
      acc.nosnippet = true;
      break;
    case 'noarchive':
    case 'nocache':
      acc.noarchive = true;
      break;
    case 'noimageindex':
      acc.noimageindex = true;
      break;
    case 'max-snippet': {
      if (value === null || !/^-?\d+$/.test(value.trim())) return; // malformed: ignored, as other engines do
      const n = Number(value.trim());
      if (n < 0) break; // -1: no limit, never loosens another source's limit
      if (n === 0) acc.nosnippet = true;
      else acc.maxSnippet = acc.maxSnippet === null ? n : Math.min(acc.maxSnippet, n);
      break;
    }
    case 'max-image-preview': {
      const v = value?.trim().toLowerCase();
      if (v !== 'none' && v !== 'standard' && v !== 'large') return;
      if (acc.maxImagePreview === null || PREVIEW_RANK[v] < PREVIEW_RANK[acc.maxImagePreview]) acc.maxImagePreview = v;
      break;
    }
    case 'unavailable_after':
    case 'unavailable-after': {
      const t = value === null ? null : parseDate(value);
      if (t === null) return;
      acc.unavailableAfter = acc.unavailableAfter === null ? t : Math.min(acc.unavailableAfter, t);
      break;
    }
    default:
      if (!KNOWN.has(name)) return;
  }
  acc.applied.push(value === null ? name : `${name}:${value.trim()}`);
}

/** Splits a directive list on commas, keeping the commas of an unavailable_after date (`Monday, 25-Jun-2010 …`). */
function splitTokens(text: string): string[] {
  const parts = text.split(',');
  const out: string[] = [];
  for (const p of parts) {
    const prev = out[out.length - 1];
    const looksLikeDirective = /^\s*[A-Za-z][A-Za-z0-9_-]*\s*(:|$)/.test(p);
    if (prev !== undefined && /^\s*unavailable[_-]after\s*:/i.test(prev) && !looksLikeDirective) out[out.length - 1] = `${prev},${p}`;
    else out.push(p);
  }
  return out.map((t) => t.trim()).filter((t) => t !== '');
}

/**
 * Applies one directive list. With `headerPrefixes`, a token `name: rest` whose name is not a known valued
 * directive switches the target crawler for the rest of the list (X-Robots-Tag syntax): only unprefixed tokens
 * and those after `svcbot:` apply to us.
 */
function applyList(acc: Acc, text: string, headerPrefixes: boolean): void {
  let forUs = true;
  for (const tok of splitTokens(text)) {
    let t = tok;
    if (headerPrefixes) {
      const m = /^([A-Za-z0-9_.-]+)\s*:\s*(.*)$/s.exec(t);
      if (m && !VALUED.has((m[1] as string).toLowerCase())) {
        forUs = (m[1] as string).toLowerCase() === META_NAME;
        t = (m[2] as string).trim();
        if (t === '') continue;
      }
    }
    if (!forUs) continue;
    const colon = t.indexOf(':');
    const name = (colon < 0 ? t : t.slice(0, colon)).trim().toLowerCase();
    const value = colon < 0 ? null : t.slice(colon + 1);
    applyToken(acc, name, value);
  }
}

/** A `<meta>` element's name and content, as the extractor found it. */
export interface MetaTag {
  readonly name: string;
  readonly content: string;
}

/** Inputs of {@link parseDirectives}. */
export interface DirectiveSources {
  /** All `<meta name=… content=…>` of the page; only `robots` and `svcbot` are read. */
  readonly metas?: readonly MetaTag[];
  /** X-Robots-Tag header value(s); several headers may come as an array or already joined with ", ". */
  readonly xRobotsTag?: string | readonly string[] | null;
  /** Response headers (lower-case names); X-Robots-Tag is read from here when `xRobotsTag` is absent. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Clock for unavailable_after. @default new Date() */
  readonly now?: Date;
}

/**
 * Combines meta robots, meta svcbot and X-Robots-Tag most-restrictively. `none` = noindex + nofollow;
 * `max-snippet:0` = nosnippet; an `unavailable_after` in the past = noindex.
 */
export function parseDirectives(src: DirectiveSources): Directives {
  const acc: Acc = { ...NO_DIRECTIVES, unavailableAfter: null, applied: [] };
  for (const m of src.metas ?? []) {
    const name = m.name.trim().toLowerCase();
    if (name === 'robots' || name === META_NAME) applyList(acc, m.content, false);
  }
  const header = src.xRobotsTag ?? src.headers?.['x-robots-tag'] ?? null;
  for (const h of header === null ? [] : typeof header === 'string' ? [header] : header) applyList(acc, h, true);
  const now = (src.now ?? new Date()).getTime();
  if (acc.unavailableAfter !== null && acc.unavailableAfter <= now) acc.noindex = true;
  return {
    noindex: acc.noindex,
    nofollow: acc.nofollow,
    nosnippet: acc.nosnippet,
    maxSnippet: acc.nosnippet ? null : acc.maxSnippet,
    unavailableAfter: acc.unavailableAfter === null ? null : new Date(acc.unavailableAfter).toISOString(),
    noimageindex: acc.noimageindex,
    noarchive: acc.noarchive,
    maxImagePreview: acc.maxImagePreview,
    applied: acc.applied,
  };
}

/** Whether a link's rel attribute forbids following it. Only `nofollow` does; `sponsored` and `ugc` are hints we do not act on. */
export function relForbidsFollow(rel: string | null | undefined): boolean {
  if (!rel) return false;
  return rel
    .toLowerCase()
    .split(/\s+/)
    .some((r) => r === 'nofollow');
}
