/**
 * What the entity store records and answers, shared by both backends, the merge rules, the open-data import and
 * the tools: the public record (docs/api-entities.md), its sources and observations, the query, the known open
 * datasets, and the durable id of an entity. Types and constants only, so that nothing here depends on a backend.
 */
import { createHash } from 'node:crypto';
import { JSON_LD_PARSE_ERRORS, type JsonLdParseError, type JsonLdParseErrors } from '../page-model.js';
import type { EntityFacts, RejectReason } from './entity-facts.js';

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
  {
    id: 'odhf',
    title: 'Open Database of Healthcare Facilities',
    version: '1.1',
    publisher: 'Statistics Canada',
    releasedAt: '2020-08-06T00:00:00.000Z',
  },
  {
    id: 'odcaf',
    title: 'Open Database of Cultural and Art Facilities',
    version: '1.0',
    publisher: 'Statistics Canada',
    releasedAt: '2020-10-01T00:00:00.000Z',
  },
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

/** Per-node outcome of a page observation. */
export type NodeOutcome = { ok: true; id: string; outcome: UpsertOutcome } | { ok: false; reason: RejectReason };

/** One dataset row for a batch import. */
export interface DatasetRowInput {
  readonly rowId: string;
  readonly facts: EntityFacts;
}

/** JSON-LD blocks of one page that failed to parse, with provenance (webmaster diagnostics; no page text). */
export interface JsonLdParseErrorRecord {
  readonly pageRef: number;
  readonly url: string;
  readonly host: string;
  readonly reason: JsonLdParseError;
  /** How many blocks of the page failed for this reason at its last fetch. */
  readonly blocks: number;
  readonly observedAt: string;
}

/** The parse-error rows to store for a page: known reasons with a positive whole count only. */
export function parseErrorRows(parseErrors: JsonLdParseErrors | undefined): [JsonLdParseError, number][] {
  const out: [JsonLdParseError, number][] = [];
  for (const reason of JSON_LD_PARSE_ERRORS) {
    const n = parseErrors?.[reason];
    if (n !== undefined && Number.isInteger(n) && n > 0) out.push([reason, n]);
  }
  return out;
}

/** The durable id of an entity first created from `primaryKey`: stable across recrawls, re-imports and rebuilds. */
export function entityIdFor(primaryKey: string): string {
  return `ent_${createHash('sha256').update(primaryKey).digest('hex').slice(0, 20)}`;
}
