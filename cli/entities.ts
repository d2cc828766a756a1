/**
 * `svc entities import --odhf|--odcaf|--odbus|--odef FILE [--data-dir D]`: imports a Statistics Canada LODE
 * open database (UTF-8 CSV, optionally gzipped) into the entity store. Idempotent: a row is a source keyed by
 * dataset + row index, so a re-import updates it and never duplicates; rows matching an establishment already
 * known (from a page or another database) merge into it (docs/api-entities.md).
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { loadConfig } from '../config.js';
import { openStateDb } from '../state/db.js';
import { EntityStore, KNOWN_DATASETS, type DatasetInfo } from '../state/entities.js';
import { datasetFacts, type RejectReason } from '../state/entity-facts.js';

/** Where the SQLite state lives inside the data directory. */
export const STATE_FILE = 'state.sqlite';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
}

/** A CSV record: column name → raw value. */
type Row = Record<string, string>;

/** How one dataset's columns become facts. */
interface DatasetMapping {
  readonly info: DatasetInfo;
  /** Columns that must be in the header, else the file is refused. */
  readonly required: readonly string[];
  readonly rowId: (r: Row) => string;
  readonly kind: (r: Row) => string | null;
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

function streetOf(r: Row, unit: string, no: string, name: string): string | null {
  const parts = [val(r, no), val(r, name)].filter((x): x is string => x !== null);
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

const MAPPINGS: Record<'odhf' | 'odcaf', DatasetMapping> = {
  odhf: {
    info: KNOWN_DATASETS[0]!,
    required: ['index', 'facility_name', 'odhf_facility_type', 'province', 'postal_code', 'city'],
    rowId: (r) => val(r, 'index') ?? '',
    kind: (r) => ODHF_KINDS[(val(r, 'odhf_facility_type') ?? '').toLowerCase()] ?? null,
    name: (r) => val(r, 'facility_name') ?? '',
    street: (r) => streetOf(r, 'unit', 'street_no', 'street_name'),
    locality: (r) => val(r, 'city') ?? val(r, 'CSDname'),
    province: (r) => val(r, 'province'),
    postal: (r) => val(r, 'postal_code'),
    lat: (r) => numVal(r, 'latitude'),
    lon: (r) => numVal(r, 'longitude'),
  },
  odcaf: {
    info: KNOWN_DATASETS[1]!,
    required: ['Index', 'Facility_Name', 'ODCAF_Facility_Type', 'Prov_Terr', 'Postal_Code', 'City'],
    rowId: (r) => val(r, 'Index') ?? '',
    kind: (r) => ODCAF_KINDS[(val(r, 'ODCAF_Facility_Type') ?? '').toLowerCase()] ?? null,
    name: (r) => val(r, 'Facility_Name') ?? '',
    street: (r) => streetOf(r, 'Unit', 'Street_No', 'Street_Name'),
    locality: (r) => val(r, 'City') ?? val(r, 'CSD_Name'),
    province: (r) => val(r, 'Prov_Terr'),
    postal: (r) => val(r, 'Postal_Code'),
    lat: (r) => numVal(r, 'Latitude'),
    lon: (r) => numVal(r, 'Longitude'),
  },
};

/** Datasets whose column layout could not be verified against a published schema or sample. */
const UNSUPPORTED: Record<string, string> = {
  odbus:
    'ODBus (Open Database of Businesses) is not supported yet: no sample or published column schema was available to build and test its mapping against; the import was refused and nothing was stored.',
  odef:
    'ODEF (Open Database of Educational Facilities) is not supported yet: no sample or published column schema was available to build and test its mapping against; the import was refused and nothing was stored.',
};

/**
 * Streams RFC 4180 CSV records (quoted fields, doubled quotes, CR/LF line ends, newlines inside quotes).
 * The first record is the header.
 */
export async function* readCsv(stream: AsyncIterable<string | Buffer>): AsyncGenerator<string[]> {
  let field = '';
  let record: string[] = [];
  let inQuotes = false;
  let quotePending = false; // saw a quote inside a quoted field: either an escaped quote or the closing one
  let any = false;
  for await (const chunk of stream) {
    const s = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    for (let i = 0; i < s.length; i++) {
      const c = s[i]!;
      if (inQuotes) {
        if (quotePending) {
          quotePending = false;
          if (c === '"') {
            field += '"';
            continue;
          }
          inQuotes = false;
          // fall through: c is handled as an unquoted character below
        } else if (c === '"') {
          quotePending = true;
          continue;
        } else {
          field += c;
          continue;
        }
      }
      if (c === '"' && field === '') {
        inQuotes = true;
        any = true;
      } else if (c === ',') {
        record.push(field);
        field = '';
        any = true;
      } else if (c === '\n') {
        record.push(field);
        yield record;
        record = [];
        field = '';
        any = false;
      } else if (c === '\r') {
        // CRLF: the LF ends the record.
      } else {
        field += c;
        any = true;
      }
    }
  }
  if (any || field !== '' || record.length > 0) {
    record.push(field);
    yield record;
  }
}

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
  reasons: Partial<Record<RejectReason | 'unknown_facility_type' | 'no_row_id' | 'bad_record', number>>;
}

/**
 * Imports one file into `store`. Throws Error with a clear message when the header lacks a required column.
 * Rows are committed in batches so a crash loses at most one batch, and a re-run repairs it (idempotent).
 */
export async function importDataset(
  store: EntityStore,
  dataset: 'odhf' | 'odcaf',
  file: string,
  observedAt: string,
): Promise<ImportReport> {
  const m = MAPPINGS[dataset];
  store.registerDataset(m.info);
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
  const flush = (): void => {
    const rows = batch;
    batch = [];
    store.transaction(() => {
      for (const r of rows) {
        const rowId = m.rowId(r);
        if (rowId === '') {
          reject('no_row_id');
          continue;
        }
        const kind = m.kind(r);
        if (kind === null) {
          reject('unknown_facility_type');
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
        const out = store.upsertDatasetRow(dataset, rowId, f.facts, observedAt);
        if (out.outcome === 'created') report.admitted++;
        else if (out.outcome === 'merged') report.merged++;
        else report.updated++;
      }
    });
  };
  for await (const rec of readCsv(input)) {
    if (header === null) {
      header = rec.map((h) => h.replace(/^\uFEFF/, '').trim());
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
    if (batch.length >= 500) flush();
  }
  if (batch.length > 0) flush();
  return report;
}

const USAGE = `usage: svc entities import --odhf FILE | --odcaf FILE | --odbus FILE | --odef FILE [--data-dir D]
  Imports a Statistics Canada open database (UTF-8 CSV, .gz accepted) into the entity store.
  Re-importing the same file updates the same records; nothing is duplicated.`;

/** Entry point for `svc entities …`; returns the process exit code. */
export async function entitiesCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const write = (s: NodeJS.WritableStream, text: string): void => void s.write(`${text}\n`);
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    write(io.stdout, USAGE);
    return 0;
  }
  if (sub !== 'import') {
    write(io.stderr, USAGE);
    return 2;
  }
  let dataset: string | null = null;
  let file: string | null = null;
  let dataDir: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const flag = /^--(odhf|odcaf|odbus|odef)(?:=(.*))?$/.exec(a);
    if (flag) {
      if (dataset !== null) {
        write(io.stderr, 'svc entities import: give exactly one of --odhf, --odcaf, --odbus, --odef');
        return 2;
      }
      dataset = flag[1]!;
      file = flag[2] ?? rest[++i] ?? null;
    } else if (a === '--data-dir' || a.startsWith('--data-dir=')) {
      dataDir = a.includes('=') ? a.slice(a.indexOf('=') + 1) : rest[++i];
    } else {
      write(io.stderr, `svc entities import: unknown argument ${a}\n${USAGE}`);
      return 2;
    }
  }
  if (dataset === null || file === null || file === '') {
    write(io.stderr, USAGE);
    return 2;
  }
  const unsupported = UNSUPPORTED[dataset];
  if (unsupported !== undefined) {
    write(io.stderr, `svc entities import: ${unsupported}`);
    return 2;
  }
  let config;
  try {
    config = loadConfig({ env: io.env, flags: { dataDir } });
  } catch (e) {
    write(io.stderr, `svc entities import: ${(e as Error).message}`);
    return 2;
  }
  const db = openStateDb(join(config.dataDir, STATE_FILE));
  try {
    const store = new EntityStore(db);
    const report = await importDataset(store, dataset as 'odhf' | 'odcaf', file, new Date().toISOString());
    const reasons = Object.entries(report.reasons)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const total = store.counts();
    write(
      io.stdout,
      [
        `${MAPPINGS[dataset as 'odhf' | 'odcaf'].info.title}: read ${report.read}, admitted ${report.admitted}, merged ${report.merged}, updated ${report.updated}, rejected ${report.rejected}${reasons ? ` (${reasons})` : ''}`,
        `entity store: ${total.entities} entities from ${total.sources} sources (${total.datasetSources} dataset rows, ${total.pageSources} page declarations)`,
        'licence: Open Government Licence – Canada (https://open.canada.ca/en/open-government-licence-canada)',
      ].join('\n'),
    );
    return 0;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    write(io.stderr, `svc entities import: ${err.code === 'ENOENT' ? `no such file: ${file}` : err.message}`);
    return 1;
  } finally {
    db.close();
  }
}
