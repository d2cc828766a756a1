/**
 * schema.org JSON-LD reading: tolerant parsing of `<script type="application/ld+json">` blocks, flattening of
 * `@graph` and arrays, selection of the in-scope entity types (LocalBusiness, Organization, Place and all their
 * subtypes — see ../schema-org-types.ts), and the dates and address signals a page declares. Microdata and RDFa are
 * deliberately not read (spec §1.4).
 */
import type { JsonLdNode, JsonLdParseError } from '../page-model.js';
import { isEntityKind } from '../schema-org-types.js';

/** What the JSON-LD of one page declares. */
export interface JsonLdReading {
  /** In-scope nodes (LocalBusiness / Organization / Place family), outermost first, nested ones kept in place. */
  readonly entities: readonly JsonLdNode[];
  /** Every @type seen anywhere in the page's JSON-LD (short names, deduplicated, in order of appearance). */
  readonly declaredTypes: readonly string[];
  /** addressCountry values found in any PostalAddress (raw; Country objects give their name). */
  readonly addressCountries: readonly string[];
  /** addressRegion values found in any PostalAddress (raw). */
  readonly addressRegions: readonly string[];
  /** The first datePublished / dateModified found on a non-entity node (Article, WebPage, …) or any node. */
  readonly datePublished: string | null;
  readonly dateModified: string | null;
  /** Blocks that could not be parsed even after repair. */
  readonly parseErrors: number;
  /** The same blocks by reason (closed vocabulary; the entity sink keeps them for webmaster diagnostics). */
  readonly parseErrorReasons: Readonly<Partial<Record<JsonLdParseError, number>>>;
}

/** Short type name: the last segment of an IRI or CURIE ("http://schema.org/Restaurant" → "Restaurant"). */
export function shortType(t: string): string {
  const s = t.trim();
  const cut = Math.max(s.lastIndexOf('/'), s.lastIndexOf('#'), s.lastIndexOf(':'));
  return cut >= 0 ? s.slice(cut + 1) : s;
}

/** The @type values of a node as short names. */
export function typesOf(node: Readonly<Record<string, unknown>>): string[] {
  const t = node['@type'];
  const list = Array.isArray(t) ? t : t === undefined ? [] : [t];
  return list.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map(shortType);
}

/** True when one of the types is LocalBusiness, Organization, Place or a subtype of them. */
export function isEntityType(types: readonly string[]): boolean {
  return types.some(isEntityKind);
}

/**
 * Parses one JSON-LD block, repairing the common breakages seen on real pages: HTML comment / CDATA wrappers,
 * trailing commas, raw control characters inside strings, several top-level objects one after another.
 * Returns null when nothing can be recovered.
 */
export function parseJsonLdBlock(raw: string): unknown[] | null {
  let text = raw.trim();
  if (text === '') return null;
  text = text.replace(/^\s*<!--/, '').replace(/-->\s*$/, '');
  text = text.replace(/^\s*\/\/\s*<!\[CDATA\[/, '').replace(/\/\/\s*\]\]>\s*$/, '');
  text = text
    .replace(/^\s*<!\[CDATA\[/, '')
    .replace(/\]\]>\s*$/, '')
    .trim();
  const direct = tryParse(text);
  if (direct.ok) return [direct.value];
  const repaired = repairJson(text);
  const second = tryParse(repaired);
  if (second.ok) return [second.value];
  // Several objects back to back ({…}{…} or {…}\n{…}): wrap them in an array.
  const joined = tryParse(`[${repaired.replace(/}\s*{/g, '},{')}]`);
  if (joined.ok && Array.isArray(joined.value)) return joined.value as unknown[];
  return null;
}

function tryParse(s: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(s) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Escapes raw control characters inside strings, drops // and /* comments outside strings and trailing commas. */
function repairJson(s: string): string {
  let out = '';
  let inStr = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (inStr) {
      if (c === '\\') {
        out += c + (s[i + 1] ?? '');
        i++;
      } else if (c === '"') {
        inStr = false;
        out += c;
      } else if (c === '\n') out += '\\n';
      else if (c === '\r') out += '\\r';
      else if (c === '\t') out += '\\t';
      else if (c < ' ') out += ' ';
      else out += c;
      continue;
    }
    if (c === '"') {
      inStr = true;
      out += c;
    } else if (c === '/' && s[i + 1] === '/') {
      while (i < s.length && s[i] !== '\n') i++;
    } else if (c === '/' && s[i + 1] === '*') {
      const end = s.indexOf('*/', i + 2);
      i = end < 0 ? s.length : end + 1;
    } else out += c;
  }
  return out.replace(/,(\s*[}\]])/g, '$1');
}

const MAX_DEPTH = 12;
const MAX_NODES = 2000;

/**
 * Reads every JSON-LD block of a page. Top-level arrays and `@graph` are flattened; in-scope nodes are kept whole
 * (nested in-scope nodes stay inside their parent); in-scope nodes nested inside out-of-scope ones (an Article's
 * publisher, a WebPage's `about`) are lifted out so they are not lost.
 */
export function readJsonLd(blocks: readonly string[]): JsonLdReading {
  const entities: JsonLdNode[] = [];
  const declared = new Set<string>();
  const countries = new Set<string>();
  const regions = new Set<string>();
  let datePublished: string | null = null;
  let dateModified: string | null = null;
  let entityDatePublished: string | null = null;
  let entityDateModified: string | null = null;
  let parseErrors = 0;
  const parseErrorReasons: Partial<Record<JsonLdParseError, number>> = {};
  let visited = 0;

  const visit = (value: unknown, depth: number, insideEntity: boolean): void => {
    if (depth > MAX_DEPTH || visited > MAX_NODES) return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v, depth + 1, insideEntity);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    visited++;
    const node = value as Record<string, unknown>;
    const types = typesOf(node);
    for (const t of types) declared.add(t);
    const entity = isEntityType(types);
    if (entity && !insideEntity) entities.push(node);
    if (types.includes('PostalAddress')) {
      const c = node['addressCountry'];
      const country = typeof c === 'string' ? c : c && typeof c === 'object' ? (c as Record<string, unknown>)['name'] : undefined;
      if (typeof country === 'string' && country.trim() !== '') countries.add(country.trim());
      const r = node['addressRegion'];
      if (typeof r === 'string' && r.trim() !== '') regions.add(r.trim());
    }
    const pub = node['datePublished'];
    const mod = node['dateModified'];
    if (entity || insideEntity) {
      if (typeof pub === 'string' && entityDatePublished === null) entityDatePublished = pub;
      if (typeof mod === 'string' && entityDateModified === null) entityDateModified = mod;
    } else {
      if (typeof pub === 'string' && datePublished === null) datePublished = pub;
      if (typeof mod === 'string' && dateModified === null) dateModified = mod;
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === '@context' || k === '@type' || k === '@id') continue;
      if (v !== null && typeof v === 'object') visit(v, depth + 1, insideEntity || entity);
    }
  };

  for (const raw of blocks) {
    const parsed = parseJsonLdBlock(raw);
    if (parsed === null) {
      parseErrors++;
      const reason: JsonLdParseError = raw.trim() === '' ? 'empty_block' : 'invalid_json';
      parseErrorReasons[reason] = (parseErrorReasons[reason] ?? 0) + 1;
      continue;
    }
    for (const v of parsed) visit(v, 0, false);
  }
  return {
    entities,
    declaredTypes: [...declared],
    addressCountries: [...countries],
    addressRegions: [...regions],
    datePublished: datePublished ?? entityDatePublished,
    dateModified: dateModified ?? entityDateModified,
    parseErrors,
    parseErrorReasons,
  };
}
