import { PassThrough } from 'node:stream';
import t from 'tap';
import { main } from '../../cli/main.js';

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(argv, { stdout, stderr, env });
  return { code, out, err };
}

t.test('issue 10: svc migrate applies the SQLite migrations once, then says it is up to date', async (t) => {
  const dir = t.testdir();
  const first = await run(['migrate', '--json', '--data-dir', dir]);
  t.equal(first.code, 0, first.err);
  const body = JSON.parse(first.out) as { backend: string; target: string; applied: string[] };
  t.equal(body.backend, 'sqlite');
  t.equal(body.target, `${dir}/state.sqlite`);
  t.ok(body.applied.includes('keys-001-keys-and-counters') && body.applied.includes('repos-001-host-politeness'), body.applied.join(' '));
  const again = await run(['migrate', '--data-dir', dir]);
  t.equal(again.code, 0);
  t.match(again.out, /^state: sqlite \(.*state\.sqlite\)\nup to date: no pending migrations\n$/);
});

t.test('issue 10: a SVC_DATABASE_URL that is not postgres:// is a configuration error naming the variable', async (t) => {
  const r = await run(['migrate', '--data-dir', t.testdir()], { SVC_DATABASE_URL: 'mysql://u:secret@127.0.0.1/x' });
  t.equal(r.code, 2);
  t.match(r.err, /SVC_DATABASE_URL/);
  t.notMatch(r.err, /secret/, 'the URL (and its password) is not echoed');
});

t.test('issue 10: svc serve with an unreachable SVC_DATABASE_URL says so in one line, password masked', async (t) => {
  const r = await run(['serve', '--port', '0', '--no-crawl', '--data-dir', t.testdir()], {
    SVC_DATABASE_URL: 'postgres://svc:hunter2@127.0.0.1:1/svc',
  });
  t.equal(r.code, 1);
  t.match(r.err, /^svc serve: the state database postgres:\/\/svc:\*\*\*@127\.0\.0\.1:1\/svc \(SVC_DATABASE_URL\) is unreachable; .*\n$/);
  t.notMatch(r.err + r.out, /hunter2/, 'the password is never printed');
});
