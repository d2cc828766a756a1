import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { redactDatabaseUrl, openRepositories, stateOptions } from '../state/repos/open.js';
import type { CliIo } from './io.js';

/**
 * `svc migrate`: applies pending state migrations and says which. PostgreSQL when SVC_DATABASE_URL is set, else the
 * SQLite file in the data dir. Opening the state at start migrates too; this command lets a fleet migrate once,
 * before its processes start. The database URL is printed with its password masked.
 */
export async function migrateCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { json: { type: 'boolean', default: false }, 'data-dir': { type: 'string' } },
  });
  const config = loadConfig({ env: io.env, flags: { dataDir: values['data-dir'] } });
  const repos = await openRepositories(stateOptions(config));
  try {
    const target = repos.backend === 'postgres' ? redactDatabaseUrl(config.databaseUrl ?? '') : `${config.dataDir}/state.sqlite`;
    if (values.json) {
      io.stdout.write(JSON.stringify({ backend: repos.backend, target, applied: repos.applied }) + '\n');
    } else {
      io.stdout.write(`state: ${repos.backend} (${target})\n`);
      io.stdout.write(
        repos.applied.length === 0
          ? 'up to date: no pending migrations\n'
          : `applied ${repos.applied.length} migration(s):\n${repos.applied.map((id) => `  ${id}\n`).join('')}`,
      );
    }
    return 0;
  } finally {
    await repos.close();
  }
}
