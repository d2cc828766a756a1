/**
 * Issue 13: crawl scope is kept, and `svc crawl` ends by itself.
 * - `svc crawl --stay-on-hosts` stores its scope with every frontier entry; `svc serve` (another process, on the
 *   same data dir) continues that frontier and never leaves the seed's hosts; seeding again without the flag widens it.
 * - a seed whose robots.txt answers 503 leaves the command waiting only up to --wait: it lists what stays queued
 *   and when it is due, and exits 0.
 * - a seed that died because loopback was not allowed is revived when it is seeded again.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { crawlCommand } from '../../cli/crawl.js';
import { loadConfig } from '../../config.js';
import { createCrawler } from '../../crawler/crawler.js';
import { EntityStore } from '../../state/entities.js';
import { CrawlFrontier } from '../../crawler/crawl-frontier.js';
import { inScope } from '../../crawler/frontier.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';

const REPO = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

let web: TestWeb;
t.before(async () => {
  web = await startTestWeb({ generatedHosts: 2, generatedPages: 6 });
  // gen-0's home page also links off-site, to gen-1 (the generated pages only link within their host).
  web.setPage('gen-0.test', '/', {
    body: `<!doctype html><html lang="en"><head><title>Gen zero home</title></head><body><main><h1>Home of gen zero</h1>
      <p>The start of a small generated site with a handful of pages that link to each other and one page elsewhere.</p>
      <a href="/p/1.html">page 1</a> <a href="${web.url('gen-1.test', '/p/2.html')}">elsewhere</a></main></body></html>`,
  });
});
t.teardown(() => web.close());

function capture(): { stream: Writable; text: () => string } {
  let buf = '';
  return {
    stream: new Writable({
      write(c, _e, cb) {
        buf += String(c);
        cb();
      },
    }),
    text: () => buf,
  };
}

const pinArgs = () => web.pins.flatMap((p) => ['--resolve', p]);

async function crawl(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = capture();
  const err = capture();
  const code = await crawlCommand([...args, '--gap-ms', '20', ...pinArgs()], {
    stdout: out.stream,
    stderr: err.stream,
    env: { SVC_LOG_LEVEL: 'silent' },
  });
  return { code, out: out.text(), err: err.text() };
}

t.test('inScope: null is the open web, a list is its hosts', async (t) => {
  t.ok(inScope(null, 'http://anything.test/x'));
  t.ok(inScope(['a.test'], 'http://a.test/p'));
  t.notOk(inScope(['a.test'], 'http://b.test/p'));
});

t.test('issue 13: --stay-on-hosts is stored and svc serve (another process) keeps to it; seeding again widens it', async (t) => {
  const dir = t.testdir();
  const data = join(dir, 'data');
  const first = await crawl([
    '--seeds',
    web.url('gen-0.test', '/'),
    '--stay-on-hosts',
    '--allow-loopback',
    '--data-dir',
    data,
    '--max-pages',
    '1',
  ]);
  t.equal(first.code, 0, first.err);
  const db = openStateDb(join(data, 'state.sqlite'));
  t.teardown(() => db.close());
  const frontier = new CrawlFrontier(sqliteRepositories(db).frontier);
  t.same((await frontier.get(web.url('gen-0.test', '/')))!.scope, ['gen-0.test'], 'the seed carries its scope');
  t.same((await frontier.get(web.url('gen-0.test', '/p/1.html')))!.scope, ['gen-0.test'], 'a link admitted under it inherits it');
  t.equal(await frontier.get(web.url('gen-1.test', '/p/2.html')), null, 'the off-site link was not admitted');
  t.ok((await frontier.pending()) > 0, 'the rest is left for svc serve');

  // svc serve, a separate process on the same data dir, crawls what is left.
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'cli/run.ts', 'serve', '--data-dir', data, '--port', '0', '--allow-loopback', ...pinArgs()],
    {
      cwd: REPO,
      env: { ...process.env, SVC_LOG_LEVEL: 'warn', SVC_CRAWL_GAP_MS: '20' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let childOut = '';
  child.stdout.on('data', (c: Buffer) => (childOut += String(c)));
  child.stderr.on('data', (c: Buffer) => (childOut += String(c)));
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  const deadline = Date.now() + 90_000;
  while ((await frontier.pending()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  child.kill('SIGTERM');
  t.equal(await exited, 0, childOut);
  t.equal(await frontier.pending(), 0, 'svc serve finished the stored frontier');
  t.ok((await frontier.countsForHost('gen-0.test')).done >= 6, 'every gen-0 page was crawled');
  t.same(web.requests('gen-1.test'), [], 'svc serve never went off the seed host');
  const hosts = db
    .prepare<[], { host: string }>('SELECT DISTINCT host FROM frontier')
    .all()
    .map((r) => r.host);
  t.same(hosts, ['gen-0.test'], 'nothing off-site entered the frontier');

  // Seeding again without --stay-on-hosts widens the crawl it started: the seed is read again under the open web.
  const wide = await crawl([
    '--seeds',
    web.url('gen-0.test', '/'),
    '--allow-loopback',
    '--data-dir',
    data,
    '--max-pages',
    '1',
    '--wait',
    '0',
  ]);
  t.equal(wide.code, 0, wide.err);
  t.equal((await frontier.get(web.url('gen-0.test', '/')))!.scope, null, 'the seed is open now');
  t.equal((await frontier.get(web.url('gen-0.test', '/p/3.html')))!.scope, null, 'and so are the pages admitted under its old scope');
  t.ok(await frontier.get(web.url('gen-1.test', '/p/2.html')), 'the off-site link is admitted now');
});

t.test('issue 13: svc crawl ends by itself when only a later retry is left, and says what stays queued', async (t) => {
  const data = join(t.testdir(), 'data');
  const r = await crawl(['--seeds', web.url('robots-503.test', '/page.html'), '--allow-loopback', '--data-dir', data, '--wait', '2']);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /crawl finished in/);
  t.match(
    r.out,
    new RegExp(`later: ${web.url('robots-503.test', '/page.html').replace(/[.?]/g, '\\$&')} due \\S+Z \\(in \\d+ s\\) after robots_\\w+`),
  );
  t.match(r.out, /1 item\(s\) stay queued: run this command again later, or let svc serve continue them\./);
});

t.test('issue 13: a seed dead-lettered because loopback was not allowed is revived when seeded again', async (t) => {
  const data = join(t.testdir(), 'data');
  const seed = web.url('gen-1.test', '/p/4.html');
  const refused = await crawl(['--seeds', seed, '--data-dir', data, '--max-pages', '1', '--wait', '0']);
  t.equal(refused.code, 0, refused.err);
  t.match(refused.out, /dead: .*gen-1\.test.*blocked_address/);
  const again = await crawl(['--seeds', seed, '--allow-loopback', '--data-dir', data, '--max-pages', '1', '--wait', '0']);
  t.equal(again.code, 0, again.err);
  const db = openStateDb(join(data, 'state.sqlite'));
  t.teardown(() => db.close());
  const f = new CrawlFrontier(sqliteRepositories(db).frontier);
  const row = (await f.get(seed))!;
  t.equal(row.state, 'done');
  t.equal(row.lastOutcome, 'indexed');

  // A link found again does not revive a dead entry (traps stay dead); a submitted URL does.
  await f.enqueue('http://dead.test/x', { reason: 'link' });
  const item = (await f.claimUrl('http://dead.test/x'))!;
  await f.fail(item, { error: 'blocked_address', retryable: false });
  t.equal((await f.enqueue('http://dead.test/x', { reason: 'link' }))!.state, 'dead');
  t.equal((await f.enqueue('http://dead.test/x', { reason: 'request:discovery', priority: 'submitted' }))!.state, 'queued');
});

t.test('issue 13: a URL fetched on request (processNow) that was not known stays on its host', async (t) => {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const config = loadConfig({ env: {}, flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 0 } });
  const repos = sqliteRepositories(db, { defaultGapMs: config.crawlGapMs });
  const crawler = createCrawler({
    config,
    repos,
    sink: { upsertPage: async () => {}, removePage: async () => {} },
    entities: new EntityStore(db),
  });
  const before = web.requests('gen-1.test').length;
  const o = await crawler.processNow(web.url('gen-0.test', '/'), { reason: 'request:removal' });
  t.equal(o.outcome, 'indexed');
  const f = new CrawlFrontier(repos.frontier);
  t.same((await f.get(web.url('gen-0.test', '/')))!.scope, ['gen-0.test']);
  t.equal(await f.get(web.url('gen-1.test', '/p/2.html')), null, 'its off-site link is not admitted');
  t.ok(await f.get(web.url('gen-0.test', '/p/1.html')), 'its on-site link is');
  t.equal(web.requests('gen-1.test').length, before);
});
