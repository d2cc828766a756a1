/**
 * The entity store: Canadian establishments, organizations and places merged from their sources — schema.org
 * JSON-LD on crawled pages (through the EntitySink contract) and rows of the Statistics Canada open databases
 * (cli/entities.ts). Every fact stays an observation of its source, with provenance and licence per source.
 * Matching, country and licence rules: docs/api-entities.md.
 */
import { createHash } from 'node:crypto';
import type { EntitySink, JsonLdNode } from '../page-model.js';
import { schemaAncestors, withSubtypes } from '../schema-org-types.js';
import type { Statement } from 'better-sqlite3';
import type { StateDb } from './db.js';
import { foldText, provinceOf } from './entity-canada.js';
import { factsFromJsonLd, matchKeys, matchName, withNestedEntities, type EntityFacts, type RejectReason } from './entity-facts.js';
import { kindWord } from './entity-kind-words.js';

/** The open-data licence every Statistics Canada database here is published under. */
export const OGL_CANADA = {
  name: 'Open Government Licence – Canada',
  url: 'https://open.canada.ca/en/open-government-licence-canada',
  attribution: 'Contains information licensed under the Open Government Licence – Canada.',
} as const;

/** What the record says about a page source's licence: none is granted by the page's own declaration. */
export const PAGE_LICENCE_NOTE =
  "No licence: a page's own structured-data declaration grants no licence. The facts are shown as observations of that page, attributed to it.";

/** An open dataset the importer knows. */
export interface DatasetInfo {
  /** Short id used in source ids ("odhf"). */
  readonly id: string;
  readonly title: string;
  readonly version: string;
  readonly publisher: string;
  /**
   * When this version was published (ISO 8601): its rows were last confirmed by the publisher then, so it is their
   * verification time (last_verified_at), whatever day they are imported. Null when unknown (then the import time).
   */
  readonly releasedAt?: string | null;
}

/** The Statistics Canada databases the importer reads (provenance titles for their sources). */
export const KNOWN_DATASETS: readonly DatasetInfo[] = [
  // Release dates: the dates of Statistics Canada's distribution zips (../shared/data/ca-open-data/PROVENANCE.md).
  { id: 'odhf', title: 'Open Database of Healthcare Facilities', version: '1.1', publisher: 'Statistics Canada', releasedAt: '2020-08-06T00:00:00.000Z' },
  { id: 'odcaf', title: 'Open Database of Cultural and Art Facilities', version: '1.0', publisher: 'Statistics Canada', releasedAt: '2020-10-01T00:00:00.000Z' },
  { id: 'odef', title: 'Open Database of Educational Facilities', version: '2', publisher: 'Statistics Canada' },
  { id: 'odbus', title: 'Open Database of Businesses', version: '1.0', publisher: 'Statistics Canada' },
];

/** Licence of one source. `name`/`url` are null for page sources (no licence granted). */
export interface SourceLicence {
  readonly name: string | null;
  readonly url: string | null;
  readonly statement: string;
}

/** One source of an entity, with its provenance and licence. */
export interface EntitySource {
  /** Stable id of this source statement, e.g. "page:https://…#2" or "odhf:v1.1:row:10". */
  readonly source_id: string;
  readonly type: 'page' | 'dataset';
  readonly provenance: {
    readonly page_url: string | null;
    readonly page_ref: number | null;
    readonly dataset: string | null;
    readonly dataset_title: string | null;
    readonly row_id: string | null;
  };
  readonly licence: SourceLicence;
  /** When svc read this source. */
  readonly observed_at: string;
  /** When the source itself last confirmed it: a page's fetch, a dataset version's release date. */
  readonly verified_at: string;
}

/** One fact as one source stated it. */
export interface EntityObservation {
  readonly field: string;
  readonly value: string | number;
  readonly source_id: string;
  readonly observed_at: string;
}

/** The public entity record (docs/api-entities.md). */
export interface EntityRecord {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly address: {
    readonly street: string | null;
    readonly locality: string | null;
    readonly province: string | null;
    readonly postal_code: string | null;
    readonly country: 'CA';
  };
  readonly geo: { readonly lat: number; readonly lon: number } | null;
  readonly telephone: string | null;
  readonly url: string | null;
  readonly observations: EntityObservation[];
  readonly sources: EntitySource[];
  readonly last_verified_at: string;
}

/** Search filters (all optional; combined with AND). */
export interface EntityQuery {
  /** Words of the name (accents and case ignored; the last word may be a prefix). */
  readonly q?: string;
  /** ISO 3166-2:CA code ("CA-QC"), the short code ("QC") or an English/French name ("Québec"). */
  readonly province?: string;
  readonly locality?: string;
  /** A schema.org type; its subtypes match too. */
  readonly kind?: string;
  /** 1–20. @default 10 */
  readonly limit?: number;
}

/** What happened to one source statement when it was recorded. */
export type UpsertOutcome = 'created' | 'merged' | 'updated';

interface EntityRow {
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

interface SourceRow {
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

/** The durable id of an entity first created from `primaryKey`: stable across recrawls, re-imports and rebuilds. */
export function entityIdFor(primaryKey: string): string {
  return `ent_${createHash('sha256').update(primaryKey).digest('hex').slice(0, 20)}`;
}

/** FTS5 query from folded words: each word quoted (no operator can be injected), all required, last one a prefix. */
function ftsQuery(words: readonly string[]): string {
  return words.map((w, i) => `"${w}"${i === words.length - 1 ? '*' : ''}`).join(' ');
}

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

/**
 * Whether an entity with the same folded name is the establishment these facts describe, when no key matched
 * (one side lacks a postal code, the spellings of the locality differ: "Québec" vs "Québec City"): different
 * postal codes say no; coordinates within 250 m, or the same street in the same locality, say yes.
 */
function samePlace(
  e: { lat: number | null; lon: number | null; postal_code: string | null; street: string | null; locality: string | null },
  f: EntityFacts,
): boolean {
  if (e.postal_code !== null && f.postalCode !== null && e.postal_code !== f.postalCode) return false;
  if (e.lat !== null && e.lon !== null && f.lat !== null && f.lon !== null) return metresBetween({ lat: e.lat, lon: e.lon }, { lat: f.lat, lon: f.lon }) <= SAME_PLACE_METRES;
  return e.street !== null && f.street !== null && e.locality !== null && f.locality !== null && foldText(e.street) === foldText(f.street) && foldText(e.locality) === foldText(f.locality);
}

/**
 * SQLite-backed entity store. Implements EntitySink for the crawler pipeline: `observePage` replaces what a page
 * contributes, `withdrawPage` removes it, and an entity with no remaining source is deleted.
 */
export class EntityStore implements EntitySink {
  readonly #db: StateDb;
  readonly #datasets = new Map<string, DatasetInfo>();
  /** Prepared statements by SQL text: an import runs the same few statements tens of thousands of times. */
  readonly #stmts = new Map<string, Statement>();

  constructor(db: StateDb, datasets: readonly DatasetInfo[] = []) {
    this.#db = db;
    for (const d of [...KNOWN_DATASETS, ...datasets]) this.#datasets.set(d.id, d);
  }

  #prep<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> {
    let st = this.#stmts.get(sql);
    if (!st) {
      st = this.#db.prepare(sql);
      this.#stmts.set(sql, st);
    }
    return st as unknown as Statement<P, R>;
  }

  /** Registers a dataset's title for provenance (the importer does this; unknown ids still work). */
  registerDataset(info: DatasetInfo): void {
    this.#datasets.set(info.id, info);
  }

  /**
   * Replaces everything the page contributes with the admitted nodes, in one transaction (EntitySink). Nodes that
   * are not Canadian, unnamed or out of scope are skipped; `observePageDetailed` says why.
   */
  observePage(
    page: { pageRef: number; url: string; host: string; lang: string | null },
    nodes: readonly JsonLdNode[],
    observedAt: string,
  ): void {
    this.observePageDetailed(page, nodes, observedAt);
  }

  /** Same as observePage, with the per-node outcome. */
  observePageDetailed(
    page: { pageRef: number; url: string },
    nodes: readonly JsonLdNode[],
    observedAt: string,
  ): ({ ok: true; id: string; outcome: UpsertOutcome } | { ok: false; reason: RejectReason })[] {
    return this.#db.transaction(() => {
      // Entities this page fed before: reused when a node no longer matches anything else, so ids stay put.
      const previous = new Map<string, number>();
      for (const r of this.#prep<[number], { key: string; entity_seq: number }>(
          `SELECT k.key, k.entity_seq FROM entity_keys k JOIN entity_sources s ON s.source_key = k.source_key WHERE s.page_ref = ?`,
        )
        .all(page.pageRef)) {
        previous.set(r.key, r.entity_seq);
      }
      const touched = new Set<number>(this.#prep<[number], { entity_seq: number }>('SELECT entity_seq FROM entity_sources WHERE page_ref = ?').all(page.pageRef).map((r) => r.entity_seq));
      this.#prep('DELETE FROM entity_sources WHERE page_ref = ?').run(page.pageRef);

      const results: ({ ok: true; id: string; outcome: UpsertOutcome } | { ok: false; reason: RejectReason })[] = [];
      const seenKeys = new Set<string>();
      let n = 0;
      for (const node of withNestedEntities(nodes)) {
        const mapped = factsFromJsonLd(node, page.url);
        if (!mapped.ok) {
          results.push(mapped);
          continue;
        }
        const keys = matchKeys(mapped.facts);
        // Without any matching key, the page URL + name identifies the node (it can then merge with nothing else).
        if (keys.length === 0) keys.push(`pn:${page.url}|${matchName(mapped.facts.name)}`);
        // The same establishment declared twice on one page is one source statement.
        if (keys.some((k) => seenKeys.has(k))) continue;
        for (const k of keys) seenKeys.add(k);
        const sourceKey = `page:${page.pageRef}:${n++}`;
        const r = this.#record(
          { sourceKey, type: 'page', pageRef: page.pageRef, pageUrl: page.url, dataset: null, rowId: null, verifiedAt: observedAt },
          mapped.facts,
          keys,
          observedAt,
          previous,
        );
        touched.add(r.seq);
        results.push({ ok: true, id: r.id, outcome: r.outcome });
      }
      for (const seq of touched) this.#refresh(seq);
      return results;
    }).immediate();
  }

  /** Withdraws everything the page contributed; entities left without a source disappear. */
  withdrawPage(pageRef: number): void {
    this.#db.transaction(() => {
      const seqs = this.#prep<[number], { entity_seq: number }>('SELECT DISTINCT entity_seq FROM entity_sources WHERE page_ref = ?').all(pageRef);
      this.#prep('DELETE FROM entity_sources WHERE page_ref = ?').run(pageRef);
      for (const { entity_seq } of seqs) this.#refresh(entity_seq);
    }).immediate();
  }

  /**
   * Records one dataset row (idempotent by dataset + row id: a re-import updates the same source of the same
   * entity). Callers batch rows inside `transaction`.
   */
  upsertDatasetRow(
    dataset: string,
    rowId: string,
    facts: EntityFacts,
    observedAt: string,
    /** When the publisher last confirmed the row. @default the dataset's release date, else observedAt */
    verifiedAt?: string | null,
  ): { id: string; outcome: UpsertOutcome } {
    const verified = verifiedAt ?? this.#datasets.get(dataset)?.releasedAt ?? null;
    return this.#db.transaction(() => {
      const keys = matchKeys(facts);
      if (keys.length === 0) keys.push(`row:${dataset}:${rowId}`);
      const r = this.#record(
        { sourceKey: `${dataset}:row:${rowId}`, type: 'dataset', pageRef: null, pageUrl: null, dataset, rowId, verifiedAt: verified },
        facts,
        keys,
        observedAt,
        new Map(),
      );
      this.#refresh(r.seq);
      return { id: r.id, outcome: r.outcome };
    }).immediate();
  }

  /** Runs `fn` in one SQLite transaction (bulk imports). */
  transaction<T>(fn: () => T): T {
    return this.#db.transaction(fn).immediate();
  }

  /** One record by durable id, or null. */
  get(id: string): EntityRecord | null {
    const row = this.#prep<[string], EntityRow>('SELECT * FROM entities WHERE id = ?').get(id);
    return row ? this.#toRecord(row) : null;
  }

  /** Number of entities and sources (status, tests). */
  counts(): { entities: number; sources: number; pageSources: number; datasetSources: number } {
    const e = this.#prep<[], { n: number }>('SELECT count(*) AS n FROM entities').get()?.n ?? 0;
    const s = this.#prep<[], { type: string; n: number }>('SELECT type, count(*) AS n FROM entity_sources GROUP BY type')
      .all();
    const page = s.find((r) => r.type === 'page')?.n ?? 0;
    const dataset = s.find((r) => r.type === 'dataset')?.n ?? 0;
    return { entities: e, sources: page + dataset, pageSources: page, datasetSources: dataset };
  }

  /**
   * Finds entities. Filters are compiled to bound parameters only (never concatenated user text); `kind` expands
   * to the type and its subtypes from the generated schema.org table. Throws EntityQueryError for an unknown
   * province or kind. Ordered by name relevance when `q` is given, else by name.
   */
  search(query: EntityQuery): EntityRecord[] {
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? 10), 1), 20);
    const where: string[] = [];
    const params: (string | number)[] = [];
    let from = 'entities e';
    let order = 'e.name COLLATE NOCASE, e.seq';
    if (query.q !== undefined && query.q.trim() !== '') {
      const words = foldText(query.q).split(' ').filter((w) => w !== '');
      if (words.length === 0) throw new EntityQueryError('q', 'q has no searchable word');
      // Kind words (library, bibliothèque, école, hôpital…) match the kind or the word in either language; the
      // other words must all be in a name.
      const nameWords: string[] = [];
      const kindConds: { kinds: string[]; match: string }[] = [];
      for (const w of words) {
        const k = kindWord(w);
        if (k === null) nameWords.push(w);
        else kindConds.push({ kinds: withSubtypes(k.kind), match: k.nameWords.map((n) => `"${n}"`).join(' OR ') });
      }
      if (nameWords.length > 0) {
        // CROSS JOIN keeps the FTS scan first: otherwise SQLite may walk a filter index and re-run MATCH per row.
        from = 'entity_names f CROSS JOIN entities e ON e.seq = f.rowid';
        where.push('entity_names MATCH ?');
        params.push(ftsQuery(nameWords));
        order = 'bm25(entity_names), e.seq';
      }
      for (const c of kindConds) {
        const byKind = c.kinds.length > 0 ? `e.kind IN (${c.kinds.map(() => '?').join(', ')}) OR ` : '';
        where.push(`(${byKind}e.seq IN (SELECT rowid FROM entity_names WHERE entity_names MATCH ?))`);
        params.push(...c.kinds, c.match);
      }
    }
    if (query.province !== undefined && query.province.trim() !== '') {
      const p = provinceOf(query.province);
      if (p === null) throw new EntityQueryError('province', `unknown province or territory: use an ISO 3166-2:CA code such as CA-ON or ON, or a name`);
      where.push('e.province = ?');
      params.push(p.code);
    }
    if (query.locality !== undefined && query.locality.trim() !== '') {
      where.push('e.locality_key = ?');
      params.push(foldText(query.locality));
    }
    if (query.kind !== undefined && query.kind.trim() !== '') {
      // A schema.org type ("Library"), or a kind word in either language ("bibliothèque", "hospital").
      const typed = query.kind.trim();
      const kinds = withSubtypes(typed).length > 0 ? withSubtypes(typed) : withSubtypes(kindWord(typed)?.kind ?? '');
      if (kinds.length === 0) throw new EntityQueryError('kind', `unknown kind: use a schema.org type such as LocalBusiness, Hospital, Library or Organization`);
      where.push(`e.kind IN (${kinds.map(() => '?').join(', ')})`);
      params.push(...kinds);
    }
    const sql = `SELECT e.* FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ?`;
    params.push(limit);
    const rows = this.#prep<(string | number)[], EntityRow>(sql).all(...params);
    return rows.map((r) => this.#toRecord(r));
  }

  /**
   * Attaches a source statement to an entity: the source's own previous entity (re-import), else an entity found
   * by its keys (strongest first; a candidate whose postal code differs is not the same establishment), else an
   * entity this page fed before under one of these keys, else a new entity named after the first key.
   */
  #record(
    src: {
      sourceKey: string;
      type: 'page' | 'dataset';
      pageRef: number | null;
      pageUrl: string | null;
      dataset: string | null;
      rowId: string | null;
      verifiedAt: string | null;
    },
    facts: EntityFacts,
    keys: readonly string[],
    observedAt: string,
    previous: ReadonlyMap<string, number>,
  ): { seq: number; id: string; outcome: UpsertOutcome } {
    let seq: number | undefined;
    let outcome: UpsertOutcome = 'merged';
    const existing = this.#prep<[string], { entity_seq: number }>('SELECT entity_seq FROM entity_sources WHERE source_key = ?').get(src.sourceKey);
    if (existing) {
      seq = existing.entity_seq;
      outcome = 'updated';
    }
    if (seq === undefined) {
      const byKey = this.#prep<[string, string], { entity_seq: number; postal_code: string | null }>(
        `SELECT k.entity_seq, e.postal_code FROM entity_keys k JOIN entities e ON e.seq = k.entity_seq
         WHERE k.key = ? AND k.source_key <> ? ORDER BY k.entity_seq LIMIT 8`,
      );
      for (const key of keys) {
        const hit = byKey.all(key, src.sourceKey).find((c) => c.postal_code === null || facts.postalCode === null || c.postal_code === facts.postalCode);
        if (hit) {
          seq = hit.entity_seq;
          break;
        }
      }
    }
    if (seq === undefined) {
      for (const key of keys) {
        const s = previous.get(key);
        if (s !== undefined && this.#prep<[number], { n: number }>('SELECT 1 AS n FROM entities WHERE seq = ?').get(s)) {
          seq = s;
          outcome = 'updated';
          break;
        }
      }
    }
    // The same name across sources (ODCAF without a postal code, a page with one; "Québec" vs "Québec City"):
    // one establishment when the places agree (samePlace). The name key only finds candidates; it never names an id.
    const nameKey = `nm:${matchName(facts.name)}`;
    if (seq === undefined && nameKey !== 'nm:') {
      const candidates = this.#prep<
        [string, string],
        { entity_seq: number; lat: number | null; lon: number | null; postal_code: string | null; street: string | null; locality: string | null }
      >(
        `SELECT DISTINCT k.entity_seq, e.lat, e.lon, e.postal_code, e.street, e.locality FROM entity_keys k
         JOIN entities e ON e.seq = k.entity_seq WHERE k.key = ? AND k.source_key <> ? ORDER BY k.entity_seq LIMIT 20`,
      ).all(nameKey, src.sourceKey);
      const hit = candidates.find((c) => samePlace(c, facts));
      if (hit) seq = hit.entity_seq;
    }
    if (seq === undefined) {
      seq = this.#create(keys[0]!, facts, observedAt);
      outcome = 'created';
    }
    this.#prep(
      `INSERT INTO entity_sources (source_key, entity_seq, type, page_ref, page_url, dataset, row_id, facts, observed_at, verified_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (source_key) DO UPDATE SET entity_seq = excluded.entity_seq, page_url = excluded.page_url,
         facts = excluded.facts, observed_at = excluded.observed_at, verified_at = excluded.verified_at`,
    ).run(src.sourceKey, seq, src.type, src.pageRef, src.pageUrl, src.dataset, src.rowId, JSON.stringify(facts), observedAt, src.verifiedAt);
    this.#prep('DELETE FROM entity_keys WHERE source_key = ?').run(src.sourceKey);
    const addKey = this.#prep('INSERT OR IGNORE INTO entity_keys (key, source_key, entity_seq) VALUES (?, ?, ?)');
    for (const k of nameKey !== 'nm:' ? [...keys, nameKey] : keys) addKey.run(k, src.sourceKey, seq);
    const id = this.#prep<[number], { id: string }>('SELECT id FROM entities WHERE seq = ?').get(seq)!.id;
    return { seq, id, outcome };
  }

  #create(primaryKey: string, facts: EntityFacts, at: string): number {
    let id = entityIdFor(primaryKey);
    // A hash collision with a different live entity (practically impossible) gets a salted id rather than a merge.
    for (let i = 1; this.#prep<[string], { n: number }>('SELECT 1 AS n FROM entities WHERE id = ?').get(id); i++) {
      id = entityIdFor(`${primaryKey}#${i}`);
    }
    const r = this.#prep(
        `INSERT INTO entities (id, name, kind, country, last_verified_at, created_at, updated_at) VALUES (?, ?, ?, 'CA', ?, ?, ?)`,
      )
      .run(id, facts.name, facts.kind, at, at, at);
    return Number(r.lastInsertRowid);
  }

  /**
   * Recomputes an entity from its sources: each field from the most recently confirmed source that states it (a
   * page fetched last week over a 2020 dataset imported today); the kind is the most specific type any source
   * declares; last_verified_at is the newest confirmation. No source left → the entity is deleted.
   */
  #refresh(seq: number): void {
    const sources = this.#prep<[number], SourceRow>(
      'SELECT * FROM entity_sources WHERE entity_seq = ? ORDER BY coalesce(verified_at, observed_at) DESC, observed_at DESC, source_key',
    ).all(seq);
    this.#prep('DELETE FROM entity_names WHERE rowid = ?').run(seq);
    if (sources.length === 0) {
      this.#prep('DELETE FROM entities WHERE seq = ?').run(seq);
      return;
    }
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
    const name = pick('name') ?? facts[0]!.name;
    const locality = pick('locality');
    this.#prep(
      `UPDATE entities SET name = ?, kind = ?, street = ?, locality = ?, locality_key = ?, province = ?, postal_code = ?,
         lat = ?, lon = ?, telephone = ?, url = ?, last_verified_at = ?, updated_at = ? WHERE seq = ?`,
    ).run(
      name,
      kind,
      pick('street'),
      locality,
      locality === null ? null : foldText(locality),
      pick('province'),
      pick('postalCode'),
      geoFrom?.lat ?? null,
      geoFrom?.lon ?? null,
      pick('telephone'),
      pick('url'),
      sources[0]!.verified_at ?? sources[0]!.observed_at,
      sources.reduce((m, x) => (x.observed_at > m ? x.observed_at : m), sources[0]!.observed_at),
      seq,
    );
    // All names the sources use are searchable (ODHF upper case, a page's own spelling, French names).
    const names = [...new Set(facts.map((f) => f.name))].join(' \u2022 ');
    this.#prep('INSERT INTO entity_names (rowid, name) VALUES (?, ?)').run(seq, names);
  }

  #toRecord(row: EntityRow): EntityRecord {
    const sources = this.#prep<[number], SourceRow>('SELECT * FROM entity_sources WHERE entity_seq = ? ORDER BY type DESC, observed_at DESC, source_key')
      .all(row.seq);
    const outSources: EntitySource[] = [];
    const observations: EntityObservation[] = [];
    for (const s of sources) {
      const sourceId = s.type === 'page' ? `page:${s.page_url ?? s.page_ref}#${s.source_key.split(':').pop()}` : `${s.dataset}:row:${s.row_id}`;
      const ds = s.dataset !== null ? this.#datasets.get(s.dataset) : undefined;
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
        if (v !== null && v !== undefined) observations.push({ field: FIELD_NAMES[k], value: v, source_id: sourceId, observed_at: s.observed_at });
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
}
