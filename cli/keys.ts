import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openRepositories, stateOptions } from '../state/repos/open.js';
import { UsageError, type CliIo } from './io.js';

const USAGE = `usage:
  svc keys create --name NAME [--per-minute N] [--per-day N] [--json] [--data-dir D]
  svc keys list [--json] [--data-dir D]
  svc keys revoke ID [--data-dir D]`;

const positiveInt = (v: string | undefined, flag: string): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${flag} takes a whole number ≥ 1`);
  return Number(v);
};

/** `svc keys …`: issue, list and revoke API keys (operators only; there is no sign-up). */
export async function keysCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      json: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
    },
  });
  const config = loadConfig({ env: io.env, flags: { dataDir: values['data-dir'] } });
  // The repositories: with SVC_DATABASE_URL the key lands in PostgreSQL, where every replica verifies it.
  const repos = await openRepositories(stateOptions(config));
  try {
    const keys = repos.keys;
    switch (sub) {
      case 'create': {
        const name = values.name?.trim();
        if (!name) throw new UsageError('keys create needs --name NAME');
        const perMinute = positiveInt(values['per-minute'], '--per-minute') ?? config.keyPerMinute;
        const perDay = positiveInt(values['per-day'], '--per-day') ?? config.keyPerDay;
        const { record, key } = await keys.create({ name, perMinute, perDay });
        if (values.json) io.stdout.write(JSON.stringify({ id: record.id, key }) + '\n');
        else
          io.stdout.write(
            `key ${record.id} created for "${name}" (${perMinute}/min, ${perDay}/day).\n` +
              `This is the only time it is shown; only its SHA-256 digest is stored:\n\n  ${key}\n\n` +
              `Keep it server-side (for example in an environment variable) and never commit it.\n`,
          );
        return 0;
      }
      case 'list': {
        const list = (await keys.list()).map((k) => ({
          id: k.id,
          name: k.name,
          per_minute: k.perMinute,
          per_day: k.perDay,
          created_at: k.createdAt,
          revoked_at: k.revokedAt,
        }));
        if (values.json) io.stdout.write(JSON.stringify(list) + '\n');
        else if (list.length === 0) io.stdout.write('no keys\n');
        else
          for (const k of list)
            io.stdout.write(
              `${k.id}  ${k.revoked_at ? 'revoked' : 'active '}  ${k.per_minute}/min ${k.per_day}/day  ${k.created_at}  ${k.name}\n`,
            );
        return 0;
      }
      case 'revoke': {
        const id = positionals[0];
        if (!id) throw new UsageError('keys revoke needs the key ID (see svc keys list)');
        if (!(await keys.revoke(id))) {
          io.stderr.write(`svc: no active key with id ${id}\n`);
          return 1;
        }
        io.stdout.write(`key ${id} revoked\n`);
        return 0;
      }
      default:
        throw new UsageError(USAGE);
    }
  } finally {
    await repos.close();
  }
}
