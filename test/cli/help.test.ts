/**
 * The `svc` command as a person meets it (issue 13): `--help` on every command prints its usage and exits 0, and a
 * port already in use is one clear line and exit 1, not an EADDRINUSE stack trace.
 */
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import t from 'tap';
import { COMMAND_HELP } from '../../cli/help.js';
import { main } from '../../cli/main.js';
import { serveCommand } from '../../cli/serve.js';

function capture(): { io: { stdout: Writable; stderr: Writable; env: NodeJS.ProcessEnv }; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, cb) {
        add(String(chunk));
        cb();
      },
    });
  return { io: { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)), env: {} }, out: () => out, err: () => err };
}

const COMMANDS = [
  'serve',
  'keys',
  'crawl',
  'ingest',
  'reindex',
  'eval',
  'entities',
  'fixtures',
  'openapi',
  'status',
  'migrate',
  'webmaster',
];

t.test('issue 13: --help and -h on every command print its usage and exit 0', async (t) => {
  t.same(Object.keys(COMMAND_HELP).sort(), [...COMMANDS].sort(), 'every command has a help text');
  for (const name of COMMANDS) {
    for (const flag of ['--help', '-h']) {
      const c = capture();
      t.equal(await main([name, flag], c.io), 0, `svc ${name} ${flag} exits 0`);
      t.match(c.out(), new RegExp(`^usage:[\\s\\S]*svc ${name}\\b`), `svc ${name} ${flag} prints its usage`);
      t.equal(c.err(), '', `svc ${name} ${flag} writes nothing to stderr`);
    }
  }
  const c = capture();
  t.equal(await main(['serve', '--port', '1', '--help'], c.io), 0, 'help wins over other options (nothing is started)');
  t.match(c.out(), /--no-crawl/);
  const top = capture();
  t.equal(await main(['--help'], top.io), 0);
  t.match(top.out(), /fixtures +serve the local test web/);
  const bad = capture();
  t.equal(await main(['serve', '--bogus'], bad.io), 2, 'an unknown option is still a usage error');
  t.match(bad.err(), /^svc: Unknown option '--bogus'/);
});

t.test('issue 13: svc serve on a port already in use says so in one line and exits 1', async (t) => {
  const blocker = createServer();
  await new Promise<void>((ok) => blocker.listen(0, '127.0.0.1', () => ok()));
  t.teardown(() => new Promise<void>((ok) => blocker.close(() => ok())));
  const port = (blocker.address() as { port: number }).port;
  const c = capture();
  const code = await serveCommand(['--port', String(port), '--data-dir', t.testdir(), '--no-crawl'], {
    ...c.io,
    env: { SVC_LOG_LEVEL: 'silent' },
  });
  t.equal(code, 1);
  t.equal(
    c.err(),
    `svc serve: 127.0.0.1:${port} is already in use (another svc serve?); stop it or choose another port with --port P or SVC_PORT\n`,
  );
  t.notMatch(c.err(), /EADDRINUSE|at .*\.ts/, 'no error code or stack trace');
  t.equal(c.out(), '', 'nothing claims it is listening');
});
