import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { isSvcError } from '../errors.js';
import { createServices, listen, ROLES, type Listening, type Role, type Services } from '../main.js';
import { redactDatabaseUrl } from '../state/repos/open.js';
import { ShardOwnedError } from '../crawler/shard-fence.js';
import { ShardListError } from '../index/shards/searcher-shards.js';
import type { CliIo } from './io.js';
import { parseShardList } from './shard-list.js';
import { onStopSignals } from './stop-signals.js';

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
      shards: { type: 'string' },
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
  let shards: number[] | undefined;
  if (values.shards !== undefined) {
    if (role !== 'indexer' && role !== 'searcher') {
      io.stderr.write(`svc serve: --shards is for --role indexer or searcher (got --role ${role})\n`);
      return 2;
    }
    try {
      shards = parseShardList(values.shards);
    } catch (err) {
      io.stderr.write(`svc serve: ${(err as Error).message}\n`);
      return 2;
    }
  }
  // Listen first: /healthz answers from the first second and /readyz says what the start waits for (a database,
  // the model, an indexer's tables), while the stores open; the app takes over the same socket once they are.
  let stage: string = 'state database';
  let listening: Listening;
  try {
    listening = await listen(config, { role: role as Role, waitingFor: () => stage });
  } catch (err) {
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
  io.stdout.write(`svc starting at ${listening.url}: /healthz answers now, /readyz once the stores are open (role ${role})\n`);
  // Ctrl-C and SIGTERM alike, from the start: a stop asked for while the stores open is honoured once they are.
  const stop = onStopSignals();
  let services: Services;
  try {
    services = await createServices(config, {
      role: role as Role,
      ...(leaseMs !== undefined ? { crawlLeaseMs: leaseMs } : {}),
      ...(shards ? { shards } : {}),
      // A searcher registers the address it listens at unless SVC_SEARCHER_URL names the one others reach it by.
      advertiseUrl: listening.url,
      onStage: (s) => (stage = s),
    });
  } catch (err) {
    stop.dispose();
    await listening.close();
    // The state database cannot be reached at start: one line (password masked), and a supervisor may retry.
    if (isSvcError(err) && err.code === 'unavailable' && config.databaseUrl) {
      io.stderr.write(
        `svc serve: the state database ${redactDatabaseUrl(config.databaseUrl)} (SVC_DATABASE_URL) is unreachable; start it or fix the URL, then start svc again\n`,
      );
      return 1;
    }
    // Another indexer writes one of the shards asked for (one writer per shard), or a shard the index does not have.
    if (err instanceof ShardOwnedError || err instanceof ShardListError) {
      io.stderr.write(`svc serve: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const log = services.deps.log;
  if (stop.signal.aborted) {
    log.info({ signal: stop.received() }, 'shutting down before serving');
    stop.dispose();
    await listening.close();
    await services.close();
    return 0;
  }
  listening.serve(services);
  services.start();
  log.info({ url: listening.url, data_dir: config.dataDir }, 'svc listening');
  io.stdout.write(
    `svc listening on ${listening.url} (data in ${config.dataDir}; role ${role}; crawler ${services.crawler ? 'on' : 'off'})\n`,
  );
  await new Promise<void>((resolve) => {
    stop.signal.addEventListener('abort', () => resolve(), { once: true });
    services.failed?.addEventListener('abort', () => resolve(), { once: true });
  });
  stop.dispose();
  if (services.failed?.aborted) {
    // An indexer that lost its shards writes nothing more: it stops, and a supervisor may start it again.
    io.stderr.write(`svc serve: ${(services.failed.reason as Error).message}; stopping\n`);
    await listening.close();
    await services.close().catch((err: unknown) => log.warn({ err: (err as Error).name }, 'closing the stores failed'));
    return 1;
  }
  log.info({ signal: stop.received() }, 'shutting down');
  // Requests in flight finish, then the background work stops (the crawler hands its leases back) and the stores close.
  await listening.close();
  await services.close().catch((err: unknown) => log.warn({ err: (err as Error).name }, 'closing the stores failed'));
  return 0;
}
