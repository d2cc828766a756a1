/**
 * `svc entities import --odhf|--odcaf|--odbus|--odef FILE [--data-dir D]`: imports a Statistics Canada LODE
 * open database (UTF-8 CSV, optionally gzipped) into the entity store (state/entity-import.ts reads and maps it).
 */
import { loadConfig } from '../config.js';
import { KNOWN_DATASETS } from '../state/entity-types.js';
import { importDataset, type DatasetId, type ImportReport } from '../state/entity-import.js';
import { openRepositories, stateOptions } from '../state/repos/open.js';
import { COMMAND_HELP } from './help.js';

/** Where the SQLite state lives inside the data directory. */
export const STATE_FILE = 'state.sqlite';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
}

const USAGE = COMMAND_HELP['entities']!;

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
  let asOf: string | undefined;
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
    } else if (a === '--as-of' || a.startsWith('--as-of=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : rest[++i];
      const t = v !== undefined && /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
      if (Number.isNaN(t)) {
        write(io.stderr, `svc entities import: --as-of takes an ISO date such as 2020-10-01`);
        return 2;
      }
      asOf = new Date(t).toISOString();
    } else {
      write(io.stderr, `svc entities import: unknown argument ${a}\n${USAGE}`);
      return 2;
    }
  }
  if (dataset === null || file === null || file === '') {
    write(io.stderr, USAGE);
    return 2;
  }
  let config;
  try {
    config = loadConfig({ env: io.env, flags: { dataDir } });
  } catch (e) {
    write(io.stderr, `svc entities import: ${(e as Error).message}`);
    return 2;
  }
  // The repositories: the SQLite file in the data dir, or PostgreSQL with SVC_DATABASE_URL (shared by the fleet).
  let repos;
  try {
    repos = await openRepositories(stateOptions(config));
  } catch (e) {
    write(io.stderr, `svc entities import: ${(e as Error).message}`);
    return 1;
  }
  const store = repos.entities;
  try {
    if (!store) throw new Error('this state backend holds no entities');
    const tty = (io.stdout as NodeJS.WriteStream).isTTY === true;
    // A live progress line on a terminal only (a large open-data file runs for minutes); logs and pipes get the summary alone.
    const progress = tty
      ? (r: Readonly<ImportReport>) =>
          void io.stdout.write(`\rread ${r.read}, admitted ${r.admitted}, merged ${r.merged}, updated ${r.updated}, rejected ${r.rejected}`)
      : undefined;
    const report = await importDataset(store, dataset as DatasetId, file, new Date().toISOString(), progress, asOf);
    await store.afterImport?.();
    if (tty) io.stdout.write('\r\x1b[K');
    const reasons = Object.entries(report.reasons)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const total = await store.counts();
    write(
      io.stdout,
      [
        `${KNOWN_DATASETS.find((d) => d.id === dataset)!.title}: read ${report.read}, admitted ${report.admitted}, merged ${report.merged}, updated ${report.updated}, rejected ${report.rejected}${reasons ? ` (${reasons})` : ''}`,
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
    await repos.close();
  }
}
