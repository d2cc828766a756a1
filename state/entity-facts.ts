/**
 * The facts one source states about one establishment, and how they become the keys that match sources to
 * entities. Two producers: schema.org JSON-LD nodes from crawled pages (`factsFromJsonLd`) and rows of the
 * Statistics Canada open databases (entity-import.ts builds them with `datasetFacts`). Pure functions, no I/O.
 */
import type { JsonLdNode } from '../page-model.js';
import { isEntityKind, schemaAncestors } from '../schema-org-types.js';
import { canonicalPostalCode, decideCountry, findPostalCode, foldText, provinceOf, provinceOfPostalCode } from './entity-canada.js';

/** What one source says about one establishment (normalised; null = not stated). */
export interface EntityFacts {
  readonly name: string;
  /** schema.org type (the most specific admitted one the source declares). */
  readonly kind: string;
  readonly street: string | null;
  readonly locality: string | null;
  /** ISO 3166-2:CA code, e.g. "CA-QC". */
  readonly province: string | null;
  /** Canonical "A1A 1A1". */
  readonly postalCode: string | null;
  /** Always "CA": only Canadian establishments are admitted. */
  readonly country: 'CA';
  readonly lat: number | null;
  readonly lon: number | null;
  readonly telephone: string | null;
  readonly url: string | null;
  /** The JSON-LD @id when it is an absolute http(s) IRI. */
  readonly declaredId: string | null;
}

/** Why a node or row was not admitted. */
export type RejectReason = 'not_an_entity_type' | 'no_name' | 'foreign_country' | 'no_canadian_evidence' | 'no_province';

export type FactsResult = { readonly ok: true; readonly facts: EntityFacts } | { readonly ok: false; readonly reason: RejectReason };

/** First usable string of a JSON-LD value: a string, the first string of an array, or an object's @value / name. */
function text(v: unknown): string | null {
  if (typeof v === 'string') {
    const s = v.replace(/\s+/g, ' ').trim();
    return s === '' ? null : s;
  }
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (Array.isArray(v)) {
    for (const x of v) {
      const s = text(x);
      if (s !== null) return s;
    }
    return null;
  }
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return text(o['@value']) ?? text(o['name']);
  }
  return null;
}

function num(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

function firstObject(v: unknown): Record<string, unknown> | null {
  if (Array.isArray(v)) {
    for (const x of v) {
      const o = firstObject(x);
      if (o) return o;
    }
    return null;
  }
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
}

/** Short schema.org type name ("http://schema.org/Dentist" → "Dentist"). */
function shortType(t: string): string {
  const s = t.trim();
  const cut = Math.max(s.lastIndexOf('/'), s.lastIndexOf('#'), s.lastIndexOf(':'));
  return cut >= 0 ? s.slice(cut + 1) : s;
}

/** The most specific admitted type among `types` (most ancestors wins; first declared on a tie), or null. */
export function mostSpecificKind(types: readonly string[]): string | null {
  let best: string | null = null;
  let depth = -1;
  for (const t of types) {
    const anc = schemaAncestors(t);
    if (anc !== null && anc.length > depth) {
      best = t;
      depth = anc.length;
    }
  }
  return best;
}

/** An absolute http(s) URL, normalised lightly (WHATWG form, no fragment unless kept); null otherwise. */
function httpUrl(v: string | null, base?: string, keepFragment = false): string | null {
  if (v === null) return null;
  try {
    const u = base === undefined ? new URL(v) : new URL(v, base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    if (u.username !== '' || u.password !== '') return null;
    // An @id names a node, and its fragment is what tells nodes of one page apart ("…/#org" vs "…/#store").
    if (!keepFragment) u.hash = '';
    return u.href;
  } catch {
    return null;
  }
}

/** Valid geographic coordinates or null. */
function geo(lat: number | null, lon: number | null): { lat: number | null; lon: number | null } {
  if (lat === null || lon === null || Math.abs(lat) > 90 || Math.abs(lon) > 180 || (lat === 0 && lon === 0))
    return { lat: null, lon: null };
  return { lat, lon };
}

/**
 * Maps one JSON-LD node (already selected as in scope by the crawler) to facts, or says why it is not admitted.
 * `pageUrl` resolves a relative `url` / `@id`.
 */
export function factsFromJsonLd(node: JsonLdNode, pageUrl: string): FactsResult {
  const t = node['@type'];
  const types = (Array.isArray(t) ? t : [t]).filter((x): x is string => typeof x === 'string').map(shortType);
  const kind = mostSpecificKind(types);
  if (kind === null) return { ok: false, reason: 'not_an_entity_type' };
  const name = text(node['name']) ?? text(node['legalName']);
  if (name === null) return { ok: false, reason: 'no_name' };

  const addrRaw = node['address'] ?? firstObject(node['location'])?.['address'];
  const addr = firstObject(addrRaw);
  const addrLine = addr === null ? text(addrRaw) : null;
  const street = addr ? text(addr['streetAddress']) : addrLine;
  const locality = addr ? text(addr['addressLocality']) : null;
  const region = addr ? text(addr['addressRegion']) : null;
  const postalRaw = addr ? text(addr['postalCode']) : null;
  const postalCode = postalRaw !== null ? canonicalPostalCode(postalRaw) : addrLine !== null ? findPostalCode(addrLine) : null;
  const country = addr ? text(addr['addressCountry']) : null;

  const decision = decideCountry({ country, postalCode: postalCode ?? postalRaw, region });
  if (!decision.canadian) return { ok: false, reason: decision.reason };
  // A foreign-looking postal code under a declared Canadian country is dropped, not trusted.
  const province = (region !== null ? provinceOf(region) : null) ?? (postalCode !== null ? provinceOfPostalCode(postalCode) : null);

  const g = firstObject(node['geo']);
  const { lat, lon } = geo(num(g?.['latitude']), num(g?.['longitude']));
  const idRaw = typeof node['@id'] === 'string' ? node['@id'] : null;
  return {
    ok: true,
    facts: {
      name,
      kind,
      street,
      locality,
      province: province?.code ?? null,
      postalCode,
      country: 'CA',
      lat,
      lon,
      telephone: text(node['telephone']),
      url: httpUrl(text(node['url']), pageUrl),
      declaredId: idRaw !== null && !idRaw.startsWith('_:') ? httpUrl(idRaw, pageUrl, true) : null,
    },
  };
}

/** Properties whose values are separate establishments of their own (a store's departments, a chain's branches). */
const NESTED_ENTITY_PROPS = ['department', 'subOrganization', 'containsPlace', 'hasPOS', 'location'] as const;
const MAX_NESTED_DEPTH = 3;
const MAX_NODES_PER_PAGE = 100;

/**
 * The page's nodes plus the named in-scope nodes nested under department, subOrganization, containsPlace, hasPOS and
 * location (the crawler keeps nested nodes inside their parent). Bounded: depth 3, 100 nodes per page. A nested node
 * must bring its own Canadian evidence; it inherits nothing from its parent.
 */
export function withNestedEntities(nodes: readonly JsonLdNode[]): JsonLdNode[] {
  const out: JsonLdNode[] = [];
  const seen = new Set<unknown>();
  const visit = (v: unknown, depth: number, top: boolean): void => {
    if (out.length >= MAX_NODES_PER_PAGE || depth > MAX_NESTED_DEPTH || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth, top);
      return;
    }
    if (seen.has(v)) return;
    seen.add(v);
    const node = v as JsonLdNode;
    const t = node['@type'];
    const types = (Array.isArray(t) ? t : [t]).filter((x): x is string => typeof x === 'string').map(shortType);
    if (top || (mostSpecificKind(types) !== null && text(node['name']) !== null)) out.push(node);
    for (const prop of NESTED_ENTITY_PROPS) if (node[prop] !== undefined) visit(node[prop], depth + 1, false);
  };
  for (const n of nodes) visit(n, 0, true);
  return out;
}

/** Title case for the all-lower or all-upper strings of the open databases ("st. john's" → "St. John's"). */
export function displayCase(s: string): string {
  const hasLower = /\p{Ll}/u.test(s);
  const hasUpper = /\p{Lu}/u.test(s);
  if (hasLower && hasUpper) return s;
  return s
    .toLowerCase()
    .replace(/(^|[\s\-/(])(\p{L})/gu, (_m, sep: string, ch: string) => sep + ch.toUpperCase())
    .replace(/\b(Ne|Nw|Se|Sw)\b/g, (d) => d.toUpperCase()); // street directions ("28 Oki Dr NW")
}

/**
 * Facts for a row of a Statistics Canada database (Canadian by construction). Rejected without a name or
 * without a recognisable province (the row cannot be placed).
 */
export function datasetFacts(row: {
  name: string;
  kind: string;
  street: string | null;
  locality: string | null;
  province: string | null;
  postalCode: string | null;
  lat: number | null;
  lon: number | null;
  telephone?: string | null;
  url?: string | null;
}): FactsResult {
  const name = row.name.replace(/\s+/g, ' ').trim();
  if (name === '') return { ok: false, reason: 'no_name' };
  if (!isEntityKind(row.kind)) return { ok: false, reason: 'not_an_entity_type' };
  const postalCode = row.postalCode !== null ? canonicalPostalCode(row.postalCode) : null;
  const province =
    (row.province !== null ? provinceOf(row.province) : null) ?? (postalCode !== null ? provinceOfPostalCode(postalCode) : null);
  if (province === null) return { ok: false, reason: 'no_province' };
  const { lat, lon } = geo(row.lat, row.lon);
  return {
    ok: true,
    facts: {
      name: displayCase(name),
      kind: row.kind,
      street: row.street !== null && row.street.trim() !== '' ? displayCase(row.street.trim()) : null,
      locality: row.locality !== null && row.locality.trim() !== '' ? displayCase(row.locality.trim()) : null,
      province: province.code,
      postalCode,
      country: 'CA',
      lat,
      lon,
      telephone: row.telephone ?? null,
      url: httpUrl(row.url ?? null),
      declaredId: null,
    },
  };
}

/** Name folded for matching: accents, case and punctuation ignored, "&" read as "and", a leading "the" dropped. */
export function matchName(name: string): string {
  return foldText(name.replace(/&/g, ' and ')).replace(/^the /, '');
}

/** URL folded for matching: host without "www.", no trailing slash, no fragment. */
export function matchUrl(url: string): string {
  const u = new URL(url);
  u.hash = '';
  const host = u.hostname.replace(/^www\./, '');
  const path = u.pathname.replace(/\/+$/, '');
  return `${host}${u.port ? `:${u.port}` : ''}${path}${u.search}`;
}

/**
 * The matching keys of a source, strongest first (docs/api-entities.md):
 * `id:` declared @id, `url:` declared url, `np:` normalised name + postal code, and — only when there is no
 * postal code — `ns:` name + street + locality + province, or `nl:` name + locality + province without a street.
 */
export function matchKeys(f: EntityFacts): string[] {
  const keys: string[] = [];
  if (f.declaredId !== null) keys.push(`id:${f.declaredId}`);
  if (f.url !== null) keys.push(`url:${matchUrl(f.url)}`);
  const n = matchName(f.name);
  if (n !== '' && f.postalCode !== null) keys.push(`np:${n}|${f.postalCode}`);
  else if (n !== '' && f.locality !== null && f.province !== null) {
    // Without a postal code, name + place alone would merge a chain's branches in one city: the street is added
    // when known (the ODBus rows without postal codes are mostly such branches).
    const street = f.street !== null ? foldText(f.street) : '';
    keys.push(street !== '' ? `ns:${n}|${street}|${foldText(f.locality)}|${f.province}` : `nl:${n}|${foldText(f.locality)}|${f.province}`);
  }
  return keys;
}
