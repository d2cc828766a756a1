import { PassThrough } from 'node:stream';
import t from 'tap';
import { main } from '../../cli/main.js';

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await main(argv, { stdout, stderr: new PassThrough(), env: {} });
  return { code, out };
}

t.test('svc status reports what the data dir holds', async (t) => {
  const dir = t.testdir();
  await run(['keys', 'create', '--name', 'a', '--data-dir', dir]);
  const b = JSON.parse((await run(['keys', 'create', '--name', 'b', '--json', '--data-dir', dir])).out) as { id: string };
  await run(['keys', 'revoke', b.id, '--data-dir', dir]);
  const r = await run(['status', '--json', '--data-dir', dir]);
  t.equal(r.code, 0);
  t.match(JSON.parse(r.out), { index: { pages: 0, passages: 0 }, keys: { active: 1, revoked: 1 }, frontier: { queued: 0 } });
});
