/**
 * Issue 11: a proof's challenge appears exactly once in the output of the whole operator session (`svc webmaster
 * proof issue`) and nowhere afterwards: not in any later output or log line, not in any file of the data dir (the
 * SQLite database, its WAL and shared memory included) — neither as text nor as its raw random bytes.
 */
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../cli/main.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { CHALLENGE_PREFIX } from '../../webmaster/ownership.js';
import { startDnsServer } from '../helpers/dns-server.js';

const count = (hay: string | Buffer, needle: string | Buffer): number => {
  let n = 0;
  for (let i = hay.indexOf(needle as never); i >= 0; i = hay.indexOf(needle as never, i + 1)) n++;
  return n;
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

t.test('issue 11: the challenge is shown once and is nowhere in the output, logs, data dir or database afterwards', async (t) => {
  const web = await startTestWeb({ generatedHosts: 1, generatedPages: 2 });
  const dns = await startDnsServer();
  t.teardown(async () => {
    await web.close();
    await dns.close();
  });
  const dataDir = t.testdir();
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: new Writable({ write: (c, _e, cb) => ((stdout += String(c)), cb()) }),
    stderr: new Writable({ write: (c, _e, cb) => ((stderr += String(c)), cb()) }),
    env: { SVC_LOG_LEVEL: 'debug', SVC_RESOLVE: web.pins.join(' '), SVC_CRAWL_ALLOW_LOOPBACK: '1' } as NodeJS.ProcessEnv,
  };
  const who = ['--issuer', 'https://id.example.ca', '--subject', 'owner-9', '--data-dir', dataDir];
  const net = ['--dns-server', dns.server, '--proof-origin', `http://{host}:${web.port}`];
  const run = async (...args: string[]) => {
    const before = stdout.length;
    const code = await main(['webmaster', ...args, ...who, ...net], io);
    return { code, out: stdout.slice(before) };
  };

  const dom = JSON.parse((await run('property', 'create', '--kind', 'domain', '--name', 'secret-test.test')).out) as {
    property: { id: string };
  };
  const host = JSON.parse((await run('property', 'create', '--kind', 'host', '--name', 'alpha.test')).out) as { property: { id: string } };
  const issued = await run('proof', 'issue', '--property', dom.property.id, '--method', 'dns_txt');
  t.equal(issued.code, 0);
  const { challenge, proof } = JSON.parse(issued.out) as { challenge: string; proof: { id: string } };
  const meta = JSON.parse((await run('proof', 'issue', '--property', host.property.id, '--method', 'meta_tag')).out) as {
    challenge: string;
  };
  t.ok(challenge.startsWith(CHALLENGE_PREFIX) && meta.challenge.startsWith(CHALLENGE_PREFIX));
  t.equal(count(issued.out, challenge), 1, 'exactly once in the issuing command’s output');

  dns.setTxt('_svc-verification.secret-test.test', [`svc-site-verification=${challenge}`]);
  web.setPage('alpha.test', '/', {
    body: `<html><head><meta name="svc-site-verification" content="${meta.challenge}"></head><body>hi</body></html>`,
  });
  t.teardown(() => web.setPage('alpha.test', '/', null));
  const v1 = await run('proof', 'verify', '--property', dom.property.id, '--method', 'dns_txt');
  t.equal(v1.code, 0, v1.out);
  t.match(JSON.parse(v1.out), { outcome: 'ok', owned: true });
  const v2 = await run('proof', 'verify', '--property', host.property.id, '--method', 'meta_tag');
  t.match(JSON.parse(v2.out), { outcome: 'ok', owned: true });
  await run('status', '--property', dom.property.id);
  await run('reverify');
  await run('audit');
  const rotated = await run('proof', 'rotate', '--property', dom.property.id, '--method', 'dns_txt');
  const next = (JSON.parse(rotated.out) as { challenge: string }).challenge;
  t.equal((await run('proof', 'revoke', '--proof', proof.id)).code, 0);
  await run('diagnostics', '--property', dom.property.id);

  for (const c of [challenge, meta.challenge, next]) {
    t.equal(count(stdout, c), 1, 'once in all output of the session');
    t.equal(count(stderr, c), 0, 'never in stderr / logs');
    const raw = Buffer.from(c.slice(CHALLENGE_PREFIX.length), 'base64url');
    t.equal(raw.length, 32);
    const forms = [
      Buffer.from(c),
      Buffer.from(c.slice(CHALLENGE_PREFIX.length)),
      raw,
      Buffer.from(raw.toString('hex')),
      Buffer.from(raw.toString('base64')),
    ];
    const scanned = files(dataDir);
    t.ok(
      scanned.some((f) => f.endsWith('state.sqlite')),
      'the database is among the files scanned',
    );
    for (const f of scanned) {
      const bytes = readFileSync(f);
      for (const form of forms) t.equal(count(bytes, form), 0, `not in ${f.slice(dataDir.length)}`);
    }
  }
});
