/**
 * Imports the Statistics Canada LODE open databases (ODHF, ODCAF, ODEF, ODBus) into the entity store from CSV.
 * Idempotent: each row is a source keyed by dataset + row index, so a re-import updates and never duplicates.
 */
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { readCsv } from './csv.js';
import { datasetFacts, type RejectReason } from './entity-facts.js';
import { KNOWN_DATASETS, type DatasetInfo, type DatasetRowInput, type UpsertOutcome } from './entity-types.js';

/** A CSV record: lower-cased column name → raw value. */
type Row = Record<string, string>;

/** The four Statistics Canada databases the importer knows. */
export type DatasetId = 'odhf' | 'odcaf' | 'odef' | 'odbus';

/** How one dataset's columns become facts. Column names are compared in lower case. */
interface DatasetMapping {
  readonly info: DatasetInfo;
  /** Columns that must be in the header, else the file is refused. */
  readonly required: readonly string[];
  readonly rowId: (r: Row) => string;
  /** schema.org type, or a reject reason. */
  readonly kind: (r: Row) => string | { reject: 'unknown_facility_type' | 'inactive' };
  readonly name: (r: Row) => string;
  readonly street: (r: Row) => string | null;
  readonly locality: (r: Row) => string | null;
  readonly province: (r: Row) => string | null;
  readonly postal: (r: Row) => string | null;
  readonly lat: (r: Row) => number | null;
  readonly lon: (r: Row) => number | null;
}

/** `..` and blanks mean "not available" in the LODE databases. */
function val(r: Row, col: string): string | null {
  const v = (r[col] ?? '').trim();
  return v === '' || v === '..' ? null : v;
}

function numVal(r: Row, col: string): number | null {
  const v = val(r, col);
  if (v === null) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function streetOf(r: Row, unit: string, no: string, ...name: string[]): string | null {
  const parts = [val(r, no), ...name.map((c) => val(r, c))].filter((x): x is string => x !== null);
  if (parts.length === 0) return null;
  const u = val(r, unit);
  return `${u !== null ? `${u}-` : ''}${parts.join(' ')}`;
}

/** ODHF facility types → schema.org. */
const ODHF_KINDS: Record<string, string> = {
  hospitals: 'Hospital',
  'ambulatory health care services': 'MedicalClinic',
  'nursing and residential care facilities': 'MedicalOrganization',
};

/** ODCAF facility types → schema.org. */
const ODCAF_KINDS: Record<string, string> = {
  'library or archives': 'Library',
  museum: 'Museum',
  gallery: 'ArtGallery',
  'heritage or historic site': 'LandmarksOrHistoricalBuildings',
  'theatre/performance and concert hall': 'PerformingArtsTheater',
  'festival site': 'EventVenue',
  'art or cultural centre': 'Place',
  miscellaneous: 'Place',
  artist: 'Organization',
};

/** ODEF ISCED 2011 level flags ("1"/"0", also Y/N) → the schema.org school type; several levels → School. */
export function odefKind(r: Row): string {
  const on = (c: string): boolean => ['1', 'y', 'yes', 'true'].includes((val(r, c) ?? '').toLowerCase());
  const early = on('isced010') || on('isced020');
  const levels = [on('isced1'), on('isced2'), on('isced3'), on('isced4plus') || on('isced4+')];
  const count = levels.filter(Boolean).length;
  if (count === 0) return early ? 'Preschool' : 'EducationalOrganization';
  if (count > 1) return 'School';
  if (levels[0]) return 'ElementarySchool';
  if (levels[1]) return 'MiddleSchool';
  if (levels[2]) return 'HighSchool';
  return 'CollegeOrUniversity';
}

/** NAICS prefixes (first match wins, most specific listed first) → schema.org, for ODBus rows. */
const NAICS_KINDS: readonly (readonly [string, string])[] = [
  ['44611', 'Pharmacy'],
  ['4451', 'GroceryStore'],
  ['441', 'AutomotiveBusiness'],
  ['44', 'Store'],
  ['45', 'Store'],
  ['721', 'LodgingBusiness'],
  ['722', 'FoodEstablishment'],
  ['23', 'HomeAndConstructionBusiness'],
  ['5411', 'LegalService'],
  ['5412', 'AccountingService'],
  ['54', 'ProfessionalService'],
  ['531', 'RealEstateAgent'],
  ['5221', 'BankOrCreditUnion'],
  ['52', 'FinancialService'],
  ['6212', 'Dentist'],
  ['6211', 'Physician'],
  ['624', 'Organization'],
  ['62', 'MedicalOrganization'],
  ['61', 'EducationalOrganization'],
  ['7139', 'SportsActivityLocation'],
  ['71', 'EntertainmentBusiness'],
  ['8111', 'AutoRepair'],
  ['8121', 'HealthAndBeautyBusiness'],
  ['91', 'GovernmentOrganization'],
];

/**
 * The schema.org type of an ODBus row from its most detailed NAICS code (source_NAICS_primary, else the 2-digit
 * derived_NAICS); unknown or missing NAICS → LocalBusiness. Businesses whose status is "Not Active" are refused.
 */
export function odbusKind(r: Row): string | { reject: 'inactive' } {
  if ((val(r, 'status') ?? '').toLowerCase() === 'not active') return { reject: 'inactive' };
  const codes = [val(r, 'source_naics_primary'), val(r, 'derived_naics')].filter((c): c is string => c !== null && /^\d{2,6}$/.test(c));
  for (const code of codes) {
    const hit = NAICS_KINDS.find(([prefix]) => code.startsWith(prefix));
    if (hit) return hit[1];
  }
  return 'LocalBusiness';
}

const MAPPINGS: Record<DatasetId, DatasetMapping> = {
  odhf: {
    info: KNOWN_DATASETS[0]!,
    required: ['index', 'facility_name', 'odhf_facility_type', 'province', 'postal_code', 'city'],
    rowId: (r) => val(r, 'index') ?? '',
    kind: (r) => ODHF_KINDS[(val(r, 'odhf_facility_type') ?? '').toLowerCase()] ?? { reject: 'unknown_facility_type' },
    name: (r) => val(r, 'facility_name') ?? '',
    street: (r) => streetOf(r, 'unit', 'street_no', 'street_name'),
    locality: (r) => val(r, 'city') ?? val(r, 'csdname'),
    province: (r) => val(r, 'province'),
    postal: (r) => val(r, 'postal_code'),
    lat: (r) => numVal(r, 'latitude'),
    lon: (r) => numVal(r, 'longitude'),
  },
  odcaf: {
    info: KNOWN_DATASETS[1]!,
    required: ['index', 'facility_name', 'odcaf_facility_type', 'prov_terr', 'postal_code', 'city'],
    rowId: (r) => val(r, 'index') ?? '',
    kind: (r) => ODCAF_KINDS[(val(r, 'odcaf_facility_type') ?? '').toLowerCase()] ?? { reject: 'unknown_facility_type' },
    name: (r) => val(r, 'facility_name') ?? '',
    street: (r) => streetOf(r, 'unit', 'street_no', 'street_name'),
    locality: (r) => val(r, 'city') ?? val(r, 'csd_name'),
    province: (r) => val(r, 'prov_terr'),
    postal: (r) => val(r, 'postal_code'),
    lat: (r) => numVal(r, 'latitude'),
    lon: (r) => numVal(r, 'longitude'),
  },
  // ODEF v2.x layout (Statistics Canada LODE): Index, Source_ID, Facility_Name, Facility_Type, Authority_Name,
  // ISCED010, ISCED020, ISCED1, ISCED2, ISCED3, ISCED4Plus, [OLMS_Status,] Full_Addr, Unit, Street_No, Street_Name,
  // City, Prov_Terr, Postal_Code, Provider, Latitude, Longitude, Geo_Source, CSDUID, CSDNAME, PRUID.
  odef: {
    info: KNOWN_DATASETS[2]!,
    required: ['index', 'facility_name', 'prov_terr', 'postal_code', 'city', 'isced1', 'isced3'],
    rowId: (r) => val(r, 'index') ?? '',
    kind: odefKind,
    name: (r) => val(r, 'facility_name') ?? '',
    street: (r) => streetOf(r, 'unit', 'street_no', 'street_name') ?? val(r, 'full_addr'),
    locality: (r) => val(r, 'city') ?? val(r, 'csdname'),
    province: (r) => val(r, 'prov_terr'),
    postal: (r) => val(r, 'postal_code'),
    lat: (r) => numVal(r, 'latitude'),
    lon: (r) => numVal(r, 'longitude'),
  },
  // ODBus v1 layout (32 columns; the ones read are listed in docs/api-entities.md). idx is not unique in ODBus v1
  // (see rowKeys in importDataset).
  odbus: {
    info: KNOWN_DATASETS[3]!,
    required: ['idx', 'business_name', 'prov_terr', 'postal_code', 'city', 'derived_naics'],
    rowId: (r) => val(r, 'idx') ?? '',
    kind: odbusKind,
    name: (r) => val(r, 'business_name') ?? val(r, 'alt_business_name') ?? '',
    street: (r) => streetOf(r, 'unit', 'street_no', 'street_name', 'street_type', 'street_direction') ?? val(r, 'full_address'),
    locality: (r) => val(r, 'city') ?? val(r, 'csdname'),
    province: (r) => val(r, 'prov_terr'),
    postal: (r) => val(r, 'postal_code'),
    lat: (r) => numVal(r, 'latitude'),
    lon: (r) => numVal(r, 'longitude'),
  },
};

/** Import counts printed at the end (and returned for tests). */
export interface ImportReport {
  read: number;
  /** New entities created. */
  admitted: number;
  /** Rows that joined an establishment already known from another source (or another row). */
  merged: number;
  /** Rows seen before (re-import) whose source was refreshed. */
  updated: number;
  rejected: number;
  reasons: Partial<Record<RejectReason | 'unknown_facility_type' | 'inactive' | 'no_row_id' | 'bad_record', number>>;
}

/**
 * Imports one file into `store`. Throws Error with a clear message when the header lacks a required column.
 * Rows are committed in batches so a crash loses at most one batch, and a re-run repairs it (idempotent).
 */
export async function importDataset(
  /** The entity store or repository (SQLite EntityStore, or the repositories' EntitiesRepo on either backend). */
  store: {
    importRows(
      dataset: string,
      rows: readonly DatasetRowInput[],
      observedAt: string,
      verifiedAt?: string | null,
    ): UpsertOutcome[] | Promise<UpsertOutcome[]>;
  },
  dataset: DatasetId,
  file: string,
  observedAt: string,
  onBatch?: (r: Readonly<ImportReport>) => void,
  /** When the publisher last confirmed the rows. @default the dataset version's release date (KNOWN_DATASETS) */
  verifiedAt?: string,
): Promise<ImportReport> {
  const m = MAPPINGS[dataset];
  const raw = createReadStream(file);
  const input = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  // pipe() does not forward errors: a missing file must fail the import, not leave it waiting.
  if (input !== raw) raw.on('error', (e) => input.destroy(e));
  input.setEncoding('utf8');
  const report: ImportReport = { read: 0, admitted: 0, merged: 0, updated: 0, rejected: 0, reasons: {} };
  const reject = (r: keyof ImportReport['reasons']): void => {
    report.rejected++;
    report.reasons[r] = (report.reasons[r] ?? 0) + 1;
  };
  let header: string[] | null = null;
  let batch: Row[] = [];
  const occurrences = new Map<string, number>();
  const flush = async (): Promise<void> => {
    const rows = batch;
    batch = [];
    const admitted: DatasetRowInput[] = [];
    for (const r of rows) {
      const id = m.rowId(r);
      // Row ids are not unique in every database (ODBus v1 repeats idx): the n-th repeat in file order gets
      // "~n", which is stable for the same file, so a re-import still updates the same sources.
      const seen = occurrences.get(id) ?? 0;
      occurrences.set(id, seen + 1);
      const rowId = seen === 0 ? id : `${id}~${seen + 1}`;
      if (id === '') {
        reject('no_row_id');
        continue;
      }
      const kind = m.kind(r);
      if (typeof kind !== 'string') {
        reject(kind.reject);
        continue;
      }
      const f = datasetFacts({
        name: m.name(r),
        kind,
        street: m.street(r),
        locality: m.locality(r),
        province: m.province(r),
        postalCode: m.postal(r),
        lat: m.lat(r),
        lon: m.lon(r),
      });
      if (!f.ok) {
        reject(f.reason);
        continue;
      }
      admitted.push({ rowId, facts: f.facts });
    }
    // One transaction per batch: a crash loses at most this batch, and a re-run repairs it (idempotent).
    for (const outcome of await store.importRows(dataset, admitted, observedAt, verifiedAt)) {
      if (outcome === 'created') report.admitted++;
      else if (outcome === 'merged') report.merged++;
      else report.updated++;
    }
  };
  for await (const rec of readCsv(input)) {
    if (header === null) {
      header = rec.map((h) =>
        h
          .replace(/^\uFEFF/, '')
          .trim()
          .toLowerCase(),
      );
      const missing = m.required.filter((c) => !header!.includes(c));
      if (missing.length > 0) {
        raw.destroy();
        throw new Error(`${file} does not look like ${m.info.title} v${m.info.version}: missing column(s) ${missing.join(', ')}`);
      }
      continue;
    }
    if (rec.length === 1 && rec[0] === '') continue; // blank line
    report.read++;
    if (rec.length !== header.length) {
      reject('bad_record');
      continue;
    }
    const row: Row = {};
    header.forEach((h, i) => (row[h] = rec[i] ?? ''));
    batch.push(row);
    if (batch.length >= 500) {
      await flush();
      onBatch?.(report);
    }
  }
  if (batch.length > 0) await flush();
  return report;
}
