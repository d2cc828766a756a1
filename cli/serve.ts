import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { isSvcError } from '../errors.js';
import { createServices, ROLES, startServer, type Role, type Services } from '../main.js';
import { redactDatabaseUrl } from '../state/repos/open.js';
import type { CliIo } from './io.js';

/** `svc serve` (cli/help.ts has the options): HTTP (REST, /mcp, pages), crawler, indexer; exit 1 when it cannot listen. */
export async function serveCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'no-crawl': { type: 'boolean' },
      'allow-loopback': { type: 'boolean' },
      resolve: { type: 'string', multiple: true },
      role: { type: 'string' },
      'lease-ms': { type: 'string' },
    },
  });
  const config = loadConfig({
    env: io.env,
    flags: {
      dataDir: values['data-dir'],
      host: values.host,
      port: values.port,
      crawl: values['no-crawl'] ? false : undefined,
      crawlAllowLoopback: values['allow-loopback'] ? true : undefined,
      resolve: values.resolve,
    },
  });
  const role = values.role ?? 'all';
  if (!(ROLES as readonly string[]).includes(role)) {
    io.stderr.write(`svc serve: --role must be one of ${ROLES.join(', ')} (got ${JSON.stringify(role)})\n`);
    return 2;
  }
  const leaseMs = values['lease-ms'] === undefined ? undefined : Number(values['lease-ms']);
  if (leaseMs !== undefined && !(Number.isInteger(leaseMs) && leaseMs >= 100)) {
    io.stderr.write(`svc serve: --lease-ms must be an integer ≥ 100 (got ${JSON.stringify(values['lease-ms'])})\n`);
    return 2;
  }
  let services: Services;
  try {
    services = await createServices(config, { role: role as Role, ...(leaseMs !== undefined ? { crawlLeaseMs: leaseMs } : {}) });
  } catch (err) {
    // The state database cannot be reached at start: one line (password masked), and a supervisor may retry.
    if (isSvcError(err) && err.code === 'unavailable' && config.databaseUrl) {
      io.stderr.write(
        `svc serve: the state database ${redactDatabaseUrl(config.databaseUrl)} (SVC_DATABASE_URL) is unreachable; start it or fix the URL, then start svc again\n`,
      );
      return 1;
    }
    throw err;
  }
  let running;
  try {
    running = await startServer(services);
  } catch (err) {
    await services.close();
    const code = (err as NodeJS.ErrnoException).code;
    // A person reads this, not a stack trace: say what is wrong and what to change.
    if (code === 'EADDRINUSE') {
      io.stderr.write(
        `svc serve: ${config.host}:${config.port} is already in use (another svc serve?); stop it or choose another port with --port P or SVC_PORT\n`,
      );
      return 1;
    }
    if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      io.stderr.write(`svc serve: cannot listen on ${config.host}:${config.port} (${code}); choose another --host or --port\n`);
      return 1;
    }
    throw err;
  }
  services.start();
  const log = services.deps.log;
  log.info({ url: running.url, data_dir: config.dataDir }, 'svc listening');
  io.stdout.write(
    `svc listening on ${running.url} (data in ${config.dataDir}; role ${role}; crawler ${services.crawler ? 'on' : 'off'})\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      void running
        .close()
        .then(() => services.close())
        .then(resolve, resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}
