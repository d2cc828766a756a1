import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { main } from '../../cli/main.js';
import { digestKey, parseKey } from '../../state/keys.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(argv, { stdout, stderr, env: {} });
  return { code, out, err };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

t.test('svc keys: create prints once, only the digest is stored, revoke works', async (t) => {
  const dir = t.testdir();
  const created = await run(['keys', 'create', '--name', 'agent one', '--per-minute', '7', '--per-day', '70', '--json', '--data-dir', dir]);
  t.equal(created.code, 0, created.err);
  const { id, key } = JSON.parse(created.out) as { id: string; key: string };
  t.match(key, /^svc_[0-9A-Za-z]{10}_[0-9A-Za-z]{39}$/);
  t.same(parseKey(key), { id }, 'checksum verifies');
  const flipped = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
  t.equal(parseKey(flipped), null, 'a typo fails the checksum');

  const listed = await run(['keys', 'list', '--json', '--data-dir', dir]);
  const rows = JSON.parse(listed.out) as Record<string, unknown>[];
  t.match(rows, [{ id, name: 'agent one', per_minute: 7, per_day: 70, revoked_at: null }]);
  t.notMatch(listed.out, key.slice(15), 'list never shows a secret');

  // Neither the key nor its secret part is anywhere in the data dir; its digest is.
  const secret = key.slice(15, 48);
  let sawDigest = false;
  for (const f of filesUnder(dir)) {
    const bytes = readFileSync(f);
    t.equal(bytes.indexOf(Buffer.from(secret)), -1, `${f} has no secret`);
    if (bytes.indexOf(digestKey(key)) !== -1) sawDigest = true;
  }
  t.ok(sawDigest, 'the SHA-256 digest is what is stored');

  const human = await run(['keys', 'create', '--name', 'two', '--data-dir', dir]);
  t.match(human.out, /only time it is shown/);
  const revoked = await run(['keys', 'revoke', id, '--data-dir', dir]);
  t.equal(revoked.code, 0);
  const again = await run(['keys', 'revoke', id, '--data-dir', dir]);
  t.equal(again.code, 1, 'revoking twice says so');
  const after = JSON.parse((await run(['keys', 'list', '--json', '--data-dir', dir])).out) as { id: string; revoked_at: string | null }[];
  t.ok(after.find((r) => r.id === id)?.revoked_at, 'revoked_at set');
});

t.test('svc keys: usage errors exit 2', async (t) => {
  const dir = t.testdir();
  t.equal((await run(['keys', 'create', '--data-dir', dir])).code, 2);
  t.equal((await run(['keys', 'create', '--name', 'x', '--per-minute', '0', '--data-dir', dir])).code, 2);
  t.equal((await run(['keys', 'frobnicate', '--data-dir', dir])).code, 2);
  t.equal((await run(['nope'])).code, 2);
});
