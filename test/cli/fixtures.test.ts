/** `svc fixtures serve` (issue 13): the local test web on loopback, with the pins and a crawl command to copy. */
import { request } from 'node:http';
import { Writable } from 'node:stream';
import t from 'tap';
import { fixturesCommand } from '../../cli/fixtures.js';
import { UsageError } from '../../cli/io.js';
import { crawlCommand } from '../../cli/crawl.js';
import { openStateDb } from '../../state/db.js';
import { join } from 'node:path';
import { waitFor } from '../helpers/wait-for.js';

const get = (port: number, host: string, path: string): Promise<{ status: number; body: string }> =>
  new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: `${host}:${port}` } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += String(c)));
      res.on('end', () => ok({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', fail);
    req.end();
  });

/** `svc fixtures serve` on a free port, its output collected; resolves once it listens. */
async function serveFixtures() {
  const o = { out: '' };
  const stdout = new Writable({
    write(c, _e, cb) {
      o.out += String(c);
      cb();
    },
  });
  const stop = new AbortController();
  const running = fixturesCommand(['serve', '--port', '0'], { stdout, stderr: stdout, env: {} }, { signal: stop.signal });
  await waitFor('the fixture web listening', () => o.out.includes('Ctrl-C'));
  return { out: o.out, stdout, stop, running };
}

t.test('issue 13: svc fixtures serve serves the virtual hosts on loopback and prints a crawl command for them', async (t) => {
  const { out, stdout, stop, running } = await serveFixtures();
  const port = Number(/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
  t.ok(port > 0, out);
  t.match(out, new RegExp(`npx svc crawl --allow-loopback --stay-on-hosts --resolve ville-quebec\\.test:${port}:127\\.0\\.0\\.1`));
  t.match(out, new RegExp(`--seeds http://ville-quebec\\.test:${port}/`));
  const page = await get(port, 'ville-quebec.test', '/bibliotheques/gabrielle-roy.html');
  t.equal(page.status, 200);
  t.match(page.body, /Bibliothèque Gabrielle-Roy/);
  t.match(page.body, new RegExp(`"url": "http://ville-quebec\\.test:${port}/bibliotheques/gabrielle-roy\\.html"`), 'origins filled in');
  stop.abort();
  t.equal(await running, 0);
  await t.rejects(get(port, 'ville-quebec.test', '/'), 'stopped: nothing listens any more');
  await t.rejects(fixturesCommand(['serve', '--host', '0.0.0.0'], { stdout, stderr: stdout, env: {} }), UsageError, 'loopback only');
  await t.rejects(fixturesCommand([], { stdout, stderr: stdout, env: {} }), UsageError);
});

t.test('issue 46: the crawl command svc fixtures serve prints gets indexed pages on every host it names', async (t) => {
  const { out, stop, running } = await serveFixtures();
  t.teardown(async () => {
    stop.abort();
    await running;
  });
  // The printed command, as a person copies it (the line continuation joined), run through the real CLI.
  const command = /npx svc crawl (.*)\\\n\s+(--seeds .*)\n/.exec(out);
  t.ok(command, out);
  const args = `${command![1]!} ${command![2]!}`.split(/\s+/).filter((a) => a !== '');
  const seeds = args.slice(args.indexOf('--seeds') + 1);
  const named = seeds.map((s) => new URL(s).hostname);
  t.same(named, ['ville-quebec.test', 'ontario-gov.test', 'gc-ca.test', 'shop-montreal.test']);
  const data = join(t.testdir(), 'data');
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const code = await crawlCommand([...args, '--data-dir', data, '--gap-ms', '50'], { stdout: sink, stderr: sink, env: {} });
  t.equal(code, 0);
  const db = openStateDb(join(data, 'state.sqlite'));
  t.teardown(() => db.close());
  for (const host of named) {
    const n = db.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM documents WHERE host = ? AND status = 'indexed'`).get(host)!.n;
    t.ok(n > 0, `${host}: ${n} pages indexed`);
  }
});
