import { PassThrough } from 'node:stream';
import t from 'tap';
import { join } from 'node:path';
import { main } from '../../cli/main.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

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
  t.match(JSON.parse(r.out), {
    index: { pages: 0, passages: 0, segments: [{ version: null, files: 0 }] },
    keys: { active: 1, revoked: 1 },
    frontier: { queued: 0 },
  });
});

t.test("svc status reports the newest engine segment beside the table's version", async (t) => {
  const dir = t.testdir();
  const segments = { deltaDocs: Infinity, deltaAfterMs: Infinity, quietMs: Infinity };
  const idx = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null, refreshAfterMs: 0, engineSegments: segments });
  await idx.upsertPages([makePage(1, 'a.example.ca', ['alpha one'])]);
  await idx.engineImageNow();
  const published = await idx.version();
  // Written by a process that publishes none: the table moves on, the newest segment stays.
  await idx.close();
  const late = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null, textEngine: false, refreshAfterMs: 0 });
  await late.upsertPages([makePage(2, 'b.example.ca', ['beta two'])]);
  const table = await late.version();
  await late.close();
  t.ok(table > published);

  const r = await run(['status', '--json', '--data-dir', dir]);
  t.equal(r.code, 0);
  const got = (JSON.parse(r.out) as { index: { segments: { version: number; table_version: number; files: number }[] } }).index.segments;
  t.same(
    got.map((g) => ({ version: g.version, table_version: g.table_version, files: g.files })),
    [{ version: published, table_version: table, files: 1 }],
  );
  const text = await run(['status', '--data-dir', dir]);
  t.match(text.out, new RegExp(`segments {3}newest at index version ${published} of ${table}: a base and 0 deltas`));
});
