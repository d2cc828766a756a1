/**
 * The entity store's decisions, shared by the SQLite and PostgreSQL backends: statements a page yields, which entity
 * one joins, field merging, records and query meaning. Pure (no I/O, no SQL) so both backends decide identically.
 */
import { schemaAncestors, withSubtypes } from '../schema-org-types.js';
import type { JsonLdNode } from '../page-model.js';
import { foldText, provinceOf } from './entity-canada.js';
import { factsFromJsonLd, matchKeys, matchName, withNestedEntities, type EntityFacts, type RejectReason } from './entity-facts.js';
import { kindWord } from './entity-kind-words.js';
import type { DatasetInfo, EntityObservation, EntityQuery, EntityRecord, EntitySource, UpsertOutcome } from './entity-types.js';

/** The open-data licence every Statistics Canada database here is published under. */
export const OGL_CANADA = {
  name: 'Open Government Licence – Canada',
  url: 'https://open.canada.ca/en/open-government-licence-canada',
  attribution: 'Contains information licensed under the Open Government Licence – Canada.',
} as const;

/** What the record says about a page source's licence: none is granted by the page's own declaration. */
export const PAGE_LICENCE_NOTE =
  "No licence: a page's own structured-data declaration grants no licence. The facts are shown as observations of that page, attributed to it.";

/** A search error the tool turns into 422 (e.g. an unknown province or kind). */
export class EntityQueryError extends Error {
  override readonly name = 'EntityQueryError';
  constructor(
    readonly field: 'province' | 'kind' | 'q' | 'limit',
    message: string,
  ) {
    super(message);
  }
}

/** An entity row as both backends store it (same column names). */
export interface EntityRow {
  seq: number;
  id: string;
  name: string;
  kind: string;
  street: string | null;
  locality: string | null;
  province: string | null;
  postal_code: string | null;
  country: string;
  lat: number | null;
  lon: number | null;
  telephone: string | null;
  url: string | null;
  last_verified_at: string;
}

/** A source row as both backends store it (facts = the mapped JSON). */
export interface SourceRow {
  source_key: string;
  entity_seq: number;
  type: 'page' | 'dataset';
  page_ref: number | null;
  page_url: string | null;
  dataset: string | null;
  row_id: string | null;
  facts: string;
  observed_at: string;
  verified_at: string | null;
}

/** Facts fields reported as observations, in record order. */
const OBSERVED_FIELDS = ['name', 'kind', 'street', 'locality', 'province', 'postalCode', 'lat', 'lon', 'telephone', 'url'] as const;
const FIELD_NAMES: Record<(typeof OBSERVED_FIELDS)[number], string> = {
  name: 'name',
  kind: 'kind',
  street: 'address.street',
  locality: 'address.locality',
  province: 'address.province',
  postalCode: 'address.postal_code',
  lat: 'geo.lat',
  lon: 'geo.lon',
  telephone: 'telephone',
  url: 'url',
};

/** Farthest apart (m) two descriptions of one establishment with the same name may place it. */
const SAME_PLACE_METRES = 250;

/** Great-circle distance in metres (haversine). */
function metresBetween(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** What the name-key step needs of a candidate entity. */
export interface PlaceCandidate {
  entity_seq: number;
  lat: number | null;
  lon: number | null;
  postal_code: string | null;
  street: string | null;
  locality: string | null;
}

/**
 * Whether an entity with the same folded name is the establishment these facts describe, when no key matched
 * (one side lacks a postal code, the spellings of the locality differ: "Québec" vs "Québec City"): different
 * postal codes say no; coordinates within 250 m, or the same street in the same locality, say yes.
 */
export function samePlace(e: Omit<PlaceCandidate, 'entity_seq'>, f: EntityFacts): boolean {
  if (e.postal_code !== null && f.postalCode !== null && e.postal_code !== f.postalCode) return false;
  if (e.lat !== null && e.lon !== null && f.lat !== null && f.lon !== null)
    return metresBetween({ lat: e.lat, lon: e.lon }, { lat: f.lat, lon: f.lon }) <= SAME_PLACE_METRES;
  return (
    e.street !== null &&
    f.street !== null &&
    e.locality !== null &&
    f.locality !== null &&
    foldText(e.street) === foldText(f.street) &&
    foldText(e.locality) === foldText(f.locality)
  );
}

/** One node of a page: rejected (with why), or a source statement to record. */
export type PageStatement =
  | { readonly ok: false; readonly reason: RejectReason }
  | { readonly ok: true; readonly sourceKey: string; readonly facts: EntityFacts; readonly keys: string[] };

/**
 * The source statements a page's nodes make (nested establishments included). A node without any matching key is
 * identified by page URL + name (it can then merge with nothing else); the same establishment declared twice on one
 * page is one statement (the repeat yields nothing).
 */
export function pageStatements(pageRef: number, pageUrl: string, nodes: readonly JsonLdNode[]): PageStatement[] {
  const out: PageStatement[] = [];
  const seenKeys = new Set<string>();
  let n = 0;
  for (const node of withNestedEntities(nodes)) {
    const mapped = factsFromJsonLd(node, pageUrl);
    if (!mapped.ok) {
      out.push(mapped);
      continue;
    }
    const keys = matchKeys(mapped.facts);
    if (keys.length === 0) keys.push(`pn:${pageUrl}|${matchName(mapped.facts.name)}`);
    if (keys.some((k) => seenKeys.has(k))) continue;
    for (const k of keys) seenKeys.add(k);
    out.push({ ok: true, sourceKey: `page:${pageRef}:${n++}`, facts: mapped.facts, keys });
  }
  return out;
}

/** The source key and matching keys of a dataset row (idempotent by dataset + row id). */
export function datasetStatement(dataset: string, rowId: string, facts: EntityFacts): { sourceKey: string; keys: string[] } {
  const keys = matchKeys(facts);
  if (keys.length === 0) keys.push(`row:${dataset}:${rowId}`);
  return { sourceKey: `${dataset}:row:${rowId}`, keys };
}

/**
 * What the join decision asks its backend, one row set at a time: `source` (entity a statement feeds), `byKey`
 * (≤ 8 matches under a key), `alive`, `byName` (≤ 20 alike-named), `create` (new entity, id from entityIdFor).
 */
export type JoinAsk =
  | { readonly op: 'source'; readonly sourceKey: string }
  | { readonly op: 'byKey'; readonly key: string; readonly sourceKey: string }
  | { readonly op: 'alive'; readonly seq: number }
  | { readonly op: 'byName'; readonly key: string; readonly sourceKey: string }
  | { readonly op: 'create'; readonly primaryKey: string; readonly facts: EntityFacts };

export interface JoinDecision {
  readonly seq: number;
  readonly outcome: UpsertOutcome;
  /** Keys to store for this source (its matching keys plus the name key, which only finds candidates). */
  readonly storedKeys: readonly string[];
}

/**
 * Which entity a source statement joins: its previous entity, else one found by keys (a differing postal code is a
 * different establishment), else one this page fed, else same name at the same place, else a new one. A generator
 * so the sync SQLite store and the async PostgreSQL repository run the very same decision.
 */
export function* joinDecision(
  sourceKey: string,
  facts: EntityFacts,
  keys: readonly string[],
  previous: ReadonlyMap<string, number>,
): Generator<JoinAsk, JoinDecision, unknown> {
  let seq: number | undefined;
  let outcome: UpsertOutcome = 'merged';
  const existing = (yield { op: 'source', sourceKey }) as number | null;
  if (existing !== null) {
    seq = existing;
    outcome = 'updated';
  }
  if (seq === undefined) {
    for (const key of keys) {
      const hits = (yield { op: 'byKey', key, sourceKey }) as { entity_seq: number; postal_code: string | null }[];
      const hit = hits.find((c) => c.postal_code === null || facts.postalCode === null || c.postal_code === facts.postalCode);
      if (hit) {
        seq = hit.entity_seq;
        break;
      }
    }
  }
  if (seq === undefined) {
    for (const key of keys) {
      const s = previous.get(key);
      if (s !== undefined && ((yield { op: 'alive', seq: s }) as boolean)) {
        seq = s;
        outcome = 'updated';
        break;
      }
    }
  }
  // The same name across sources (ODCAF without a postal code, a page with one; "Québec" vs "Québec City"):
  // one establishment when the places agree. The name key only finds candidates; it never names an id.
  const nameKey = nameKeyOf(facts);
  if (seq === undefined && nameKey !== null) {
    const candidates = (yield { op: 'byName', key: nameKey, sourceKey }) as PlaceCandidate[];
    const hit = candidates.find((c) => samePlace(c, facts));
    if (hit) seq = hit.entity_seq;
  }
  if (seq === undefined) {
    seq = (yield { op: 'create', primaryKey: keys[0]!, facts }) as number;
    outcome = 'created';
  }
  return { seq, outcome, storedKeys: nameKey !== null ? [...keys, nameKey] : [...keys] };
}

/** The key under which sources with the same folded name find each other (null for a name that folds to nothing). */
export function nameKeyOf(facts: EntityFacts): string | null {
  const n = matchName(facts.name);
  return n === '' ? null : `nm:${n}`;
}

/** Runs a join decision against synchronous lookups (SQLite). */
export function runJoinSync(gen: Generator<JoinAsk, JoinDecision, unknown>, answer: (ask: JoinAsk) => unknown): JoinDecision {
  let step = gen.next();
  while (!step.done) step = gen.next(answer(step.value));
  return step.value;
}

/** Runs a join decision against asynchronous lookups (PostgreSQL). */
export async function runJoinAsync(
  gen: Generator<JoinAsk, JoinDecision, unknown>,
  answer: (ask: JoinAsk) => Promise<unknown>,
): Promise<JoinDecision> {
  let step = gen.next();
  while (!step.done) step = gen.next(await answer(step.value));
  return step.value;
}

/** The entity fields recomputed from its sources (null when no source is left: the entity goes). */
export interface MergedEntity {
  readonly name: string;
  readonly kind: string;
  readonly street: string | null;
  readonly locality: string | null;
  readonly localityKey: string | null;
  readonly province: string | null;
  readonly postalCode: string | null;
  readonly lat: number | null;
  readonly lon: number | null;
  readonly telephone: string | null;
  readonly url: string | null;
  readonly lastVerifiedAt: string;
  readonly updatedAt: string;
  /** Every name the sources use, joined (ODHF upper case, a page's own spelling, French names): what search reads. */
  readonly names: string;
}

/** Most recently confirmed first; ties by observation, then source key (both backends sort here, not in SQL). */
function byConfirmation(a: SourceRow, b: SourceRow): number {
  const va = a.verified_at ?? a.observed_at;
  const vb = b.verified_at ?? b.observed_at;
  if (va !== vb) return va < vb ? 1 : -1;
  if (a.observed_at !== b.observed_at) return a.observed_at < b.observed_at ? 1 : -1;
  return a.source_key < b.source_key ? -1 : a.source_key > b.source_key ? 1 : 0;
}

/**
 * Recomputes an entity from its sources: each field from the most recently confirmed source that states it (a page
 * fetched last week over a 2020 dataset imported today); the kind is the most specific type any source declares;
 * last_verified_at is the newest confirmation.
 */
export function mergeSources(rows: readonly SourceRow[]): MergedEntity | null {
  if (rows.length === 0) return null;
  const sources = [...rows].sort(byConfirmation);
  const facts = sources.map((s) => JSON.parse(s.facts) as EntityFacts);
  const pick = <K extends keyof EntityFacts>(k: K): EntityFacts[K] | null => {
    for (const f of facts) if (f[k] !== null && f[k] !== undefined) return f[k];
    return null;
  };
  let kind = facts[0]!.kind;
  let depth = -1;
  for (const f of facts) {
    const d = schemaAncestors(f.kind)?.length ?? -1;
    if (d > depth) {
      kind = f.kind;
      depth = d;
    }
  }
  // Coordinates travel as a pair from one source.
  const geoFrom = facts.find((f) => f.lat !== null && f.lon !== null);
  const locality = pick('locality');
  return {
    name: pick('name') ?? facts[0]!.name,
    kind,
    street: pick('street'),
    locality,
    localityKey: locality === null ? null : foldText(locality),
    province: pick('province'),
    postalCode: pick('postalCode'),
    lat: geoFrom?.lat ?? null,
    lon: geoFrom?.lon ?? null,
    telephone: pick('telephone'),
    url: pick('url'),
    lastVerifiedAt: sources[0]!.verified_at ?? sources[0]!.observed_at,
    updatedAt: sources.reduce((m, x) => (x.observed_at > m ? x.observed_at : m), sources[0]!.observed_at),
    names: [...new Set(facts.map((f) => f.name))].join(' \u2022 '),
  };
}

/** The searchable words of an entity's names, folded as query words are (duplicates kept: bm25 counts them). */
export function nameTokens(names: string): string[] {
  return foldText(names)
    .split(' ')
    .filter((w) => w !== '');
}

/** The public record of an entity row and its sources (docs/api-entities.md). */
export function toEntityRecord(row: EntityRow, rows: readonly SourceRow[], datasets: ReadonlyMap<string, DatasetInfo>): EntityRecord {
  // Dataset rows first, then pages; newest observation first; then source key.
  const sources = [...rows].sort((a, b) => {
    if (a.type !== b.type) return a.type < b.type ? 1 : -1;
    if (a.observed_at !== b.observed_at) return a.observed_at < b.observed_at ? 1 : -1;
    return a.source_key < b.source_key ? -1 : a.source_key > b.source_key ? 1 : 0;
  });
  const outSources: EntitySource[] = [];
  const observations: EntityObservation[] = [];
  for (const s of sources) {
    const sourceId =
      s.type === 'page' ? `page:${s.page_url ?? s.page_ref}#${s.source_key.split(':').pop()}` : `${s.dataset}:row:${s.row_id}`;
    const ds = s.dataset !== null ? datasets.get(s.dataset) : undefined;
    outSources.push({
      source_id: sourceId,
      type: s.type,
      provenance: {
        page_url: s.page_url,
        page_ref: s.page_ref,
        dataset: s.dataset,
        dataset_title: ds ? `${ds.title} v${ds.version} (${ds.publisher})` : null,
        row_id: s.row_id,
      },
      licence:
        s.type === 'dataset'
          ? { name: OGL_CANADA.name, url: OGL_CANADA.url, statement: OGL_CANADA.attribution }
          : { name: null, url: null, statement: PAGE_LICENCE_NOTE },
      observed_at: s.observed_at,
      verified_at: s.verified_at ?? s.observed_at,
    });
    const f = JSON.parse(s.facts) as EntityFacts;
    for (const k of OBSERVED_FIELDS) {
      const v = f[k];
      if (v !== null && v !== undefined)
        observations.push({ field: FIELD_NAMES[k], value: v, source_id: sourceId, observed_at: s.observed_at });
    }
  }
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    address: { street: row.street, locality: row.locality, province: row.province, postal_code: row.postal_code, country: 'CA' },
    geo: row.lat !== null && row.lon !== null ? { lat: row.lat, lon: row.lon } : null,
    telephone: row.telephone,
    url: row.url,
    observations,
    sources: outSources,
    last_verified_at: row.last_verified_at,
  };
}

/** A search as both backends run it (every value is bound as a parameter, never spliced into SQL). */
export interface SearchPlan {
  /** Folded words that must all be in a name, the last one as a prefix; empty: no name condition. */
  readonly nameWords: readonly string[];
  /** Kind words: each matches an entity of one of `kinds` or one whose names carry one of `words` (whole words). */
  readonly kindConds: readonly { readonly kinds: readonly string[]; readonly words: readonly string[] }[];
  /** ISO 3166-2:CA code. */
  readonly province: string | null;
  /** Folded locality. */
  readonly localityKey: string | null;
  /** The kind filter with its subtypes. */
  readonly kinds: readonly string[] | null;
  /** 1–20. */
  readonly limit: number;
}

/**
 * How a query is understood: kind words (library, bibliothèque, école, hôpital…) match the kind or the word in
 * either language, the other words must all be in a name; `kind` takes a schema.org type or a kind word, expanded
 * to its subtypes. Throws EntityQueryError for a q without a word, an unknown province or kind.
 */
export function searchPlan(query: EntityQuery): SearchPlan {
  const limit = Math.min(Math.max(Math.trunc(query.limit ?? 10), 1), 20);
  const nameWords: string[] = [];
  const kindConds: { kinds: string[]; words: string[] }[] = [];
  if (query.q !== undefined && query.q.trim() !== '') {
    const words = foldText(query.q)
      .split(' ')
      .filter((w) => w !== '');
    if (words.length === 0) throw new EntityQueryError('q', 'q has no searchable word');
    for (const w of words) {
      const k = kindWord(w);
      if (k === null) nameWords.push(w);
      else kindConds.push({ kinds: withSubtypes(k.kind), words: [...k.nameWords] });
    }
  }
  let province: string | null = null;
  if (query.province !== undefined && query.province.trim() !== '') {
    const p = provinceOf(query.province);
    if (p === null)
      throw new EntityQueryError('province', `unknown province or territory: use an ISO 3166-2:CA code such as CA-ON or ON, or a name`);
    province = p.code;
  }
  const localityKey = query.locality !== undefined && query.locality.trim() !== '' ? foldText(query.locality) : null;
  let kinds: string[] | null = null;
  if (query.kind !== undefined && query.kind.trim() !== '') {
    // A schema.org type ("Library"), or a kind word in either language ("bibliothèque", "hospital").
    const typed = query.kind.trim();
    kinds = withSubtypes(typed).length > 0 ? withSubtypes(typed) : withSubtypes(kindWord(typed)?.kind ?? '');
    if (kinds.length === 0)
      throw new EntityQueryError('kind', `unknown kind: use a schema.org type such as LocalBusiness, Hospital, Library or Organization`);
  }
  return { nameWords, kindConds, province, localityKey, kinds, limit };
}

/** The name order when no name word ranks: SQLite's NOCASE (ASCII letters only folded), then the byte order. */
export function nameSortKey(name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase());
}
