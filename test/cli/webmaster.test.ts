/**
 * Issue 11: `svc webmaster` usage and refusals — bad usage exits 2, refused operations exit 1 with a stable code on
 * stderr, owner-scoped commands act only for the property's own account.
 */
import t from 'tap';
import { Writable } from 'node:stream';
import { main } from '../../cli/main.js';

t.test('issue 11: svc webmaster — usage errors exit 2, refusals exit 1 with their code', async (t) => {
  const dataDir = t.testdir();
  let out = '';
  let err = '';
  const io = {
    stdout: new Writable({ write: (c, _e, cb) => ((out += String(c)), cb()) }),
    stderr: new Writable({ write: (c, _e, cb) => ((err += String(c)), cb()) }),
    env: {} as NodeJS.ProcessEnv,
  };
  const me = ['--issuer', 'https://id.example.ca', '--subject', 'a', '--data-dir', dataDir];
  const run = async (...args: string[]) => {
    out = '';
    err = '';
    return main(['webmaster', ...args], io);
  };
  t.equal(await run('--data-dir', dataDir), 2, 'no sub-command');
  t.equal(await run('nonsense', ...me), 2);
  t.equal(await run('property', 'create', '--kind', 'zone', '--name', 'a.test', ...me), 2, 'unknown kind');
  t.match(err, /--kind must be one of domain, host/);
  t.equal(await run('property', 'create', '--kind', 'domain', '--name', 'a.test', '--data-dir', dataDir), 2, 'no identity');
  t.match(err, /--issuer is required/);
  t.equal(await run('property', 'create', '--kind', 'domain', '--name', '10.0.0.1', ...me), 1);
  t.match(err, /invalid_property_name/);
  t.equal(
    await run(
      'property',
      'create',
      '--kind',
      'domain',
      '--name',
      'a.test',
      '--issuer',
      'http://id.example.ca',
      '--subject',
      'a',
      '--data-dir',
      dataDir,
    ),
    1,
  );
  t.match(err, /invalid_identity/);

  t.equal(await run('property', 'create', '--kind', 'domain', '--name', 'A.Test.', ...me), 0);
  const { property } = JSON.parse(out) as { property: { id: string; name: string; account: string } };
  t.equal(property.name, 'a.test');
  t.match(property.account, /^acct_[0-9a-f]{32}$/);
  t.equal(await run('status', '--property', property.id, '--issuer', 'https://id.example.ca', '--subject', 'b', '--data-dir', dataDir), 1);
  t.match(err, /not_owner/);
  t.equal(
    await run('proof', 'issue', '--property', property.id, '--method', 'well_known', ...me),
    1,
    'a domain property proves by DNS only',
  );
  t.match(err, /method_not_allowed/);
  t.equal(await run('submit', '--property', property.id, '--url', 'http://a.test/x', ...me), 1);
  t.match(JSON.parse(out), { outcome: 'not_verified', frontierId: null });
  t.equal(await run('diagnostics', '--property', property.id, ...me), 1);
  t.match(err, /not_verified/);
  t.equal(await run('audit', '--property', property.id, '--data-dir', dataDir), 0);
  t.same(
    (JSON.parse(out) as { audit: { event: string; outcome: string }[] }).audit.map((e) => `${e.event}:${e.outcome}`),
    ['property_created:ok', 'fast_lane_refused:not_verified'],
  );
});
