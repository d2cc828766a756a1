/**
 * `svc fixtures serve`: the local test web (fixtures/test-web: alpha.test, ville-quebec.test, gen-0.test …) on
 * loopback, so a newcomer can crawl and search end to end without touching the internet. It prints the curl-style
 * pins that point those names at it and a crawl command that uses them, then serves until Ctrl-C / SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startTestWeb } from '../fixtures/test-web/index.js';
import { COMMAND_HELP } from './help.js';
import { UsageError, type CliIo } from './io.js';

/**
 * Where a first crawl starts: static Canadian sites with JSON-LD establishments, a sitemap and robots rules. Each
 * seed is a path SvcBot may fetch, so every host named gets pages: gc-ca.test's robots.txt disallows `/` and lets
 * SvcBot into `/en/` only (test/cli/fixtures.test.ts crawls the printed command).
 */
export const STARTER_SEEDS: readonly { readonly host: string; readonly path: string }[] = [
  { host: 'ville-quebec.test', path: '/' },
  { host: 'ontario-gov.test', path: '/' },
  { host: 'gc-ca.test', path: '/en/benefits.html' },
  { host: 'shop-montreal.test', path: '/' },
];

/** Resolves when the process is asked to stop (tests pass their own signal). */
const untilSignal = (signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => {
    if (signal) {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
      return;
    }
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });

/** `svc fixtures serve [--port P]`. */
export async function fixturesCommand(argv: string[], io: CliIo, opts: { signal?: AbortSignal } = {}): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'serve') throw new UsageError(COMMAND_HELP['fixtures']!);
  const { values } = parseArgs({ args: rest, options: { port: { type: 'string' }, host: { type: 'string' } } });
  // Loopback only: the fixtures include SSRF traps and endless bodies that must never face a network.
  if (values.host !== undefined && values.host !== '127.0.0.1') throw new UsageError('svc fixtures serve listens on 127.0.0.1 only');
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port takes a port number (0 = any free port)');
  let web;
  try {
    web = await startTestWeb({ port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      io.stderr.write(`svc fixtures: port ${port} on 127.0.0.1 is already in use; choose another with --port P (0 = any free port)\n`);
      return 1;
    }
    throw err;
  }
  const pins = STARTER_SEEDS.map((s) => `--resolve ${s.host}:${web.port}:127.0.0.1`).join(' ');
  io.stdout.write(
    [
      `svc fixtures: the local test web is on 127.0.0.1:${web.port} (${web.hosts.length} virtual hosts; see fixtures/test-web/README.md)`,
      `  hosts:   ${web.hosts.join(' ')}`,
      `  pins:    SVC_RESOLVE="${web.pins.join(' ')}"`,
      `  crawl:   npx svc crawl --allow-loopback --stay-on-hosts ${pins} \\`,
      `             --seeds ${STARTER_SEEDS.map((s) => web.url(s.host, s.path)).join(' ')}`,
      'Ctrl-C stops it.',
    ].join('\n') + '\n',
  );
  await untilSignal(opts.signal);
  await web.close();
  return 0;
}
