/**
 * `svc crawl` against the local test web: usage errors, the progress line and summary, and the durability proof —
 * kill -9 a crawling child process, resume, and every URL is completed exactly once with none lost.
 */
import t from 'tap';
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crawlCommand } from '../../cli/crawl.js';
import { UsageError } from '../../cli/io.js';
import { openStateDb } from '../../state/db.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { captureStream } from '../helpers/capture-stream.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const REPO = resolve(HERE, '..', '..');
const CHILD = join(HERE, 'crawl-child.ts');

let web: TestWeb;
t.before(async () => {
  web = await startTestWeb({ generatedHosts: 3, generatedPages: 15 });
});
t.teardown(() => web.close());

const pinArgs = () => web.pins.flatMap((p) => ['--resolve', p]);

t.test('usage errors', async (t) => {
  const io = { stdout: captureStream(false).stream, stderr: captureStream(false).stream, env: {} };
  await t.rejects(crawlCommand([], io), UsageError);
  await t.rejects(crawlCommand(['--seeds', 'http://a.test/', '--max-pages', 'zero'], io), UsageError);
  await t.rejects(crawlCommand(['stray'], io), UsageError);
  await t.rejects(crawlCommand(['--seeds-file', join(t.testdir(), 'missing.txt')], io), UsageError);
  const err = captureStream(false);
  t.equal(await crawlCommand(['--seeds', 'ftp://x.test/', '--data-dir', t.testdir()], { ...io, stderr: err.stream }), 1);
  t.match(err.text(), /not a crawlable/);
});

t.test('a crawl from a seeds file: live progress on a TTY, summary at the end, data in the data dir', async (t) => {
  const dir = t.testdir({ 'seeds.txt': `# seeds\n${web.url('gen-0.test', '/')}\n\n${web.url('gen-1.test', '/p/3.html')}\n` });
  const out = captureStream(true);
  const err = captureStream(false);
  const code = await crawlCommand(
    [
      '--seeds-file',
      join(dir, 'seeds.txt'),
      '--allow-loopback',
      '--data-dir',
      join(dir, 'data'),
      '--gap-ms',
      '20',
      '--max-pages',
      '6',
      '--stay-on-hosts',
      ...pinArgs(),
    ],
    { stdout: out.stream, stderr: err.stream, env: {} },
    { progressMs: 5 },
  );
  t.equal(code, 0, err.text());
  t.ok(out.text().includes('\r\u001b[2Kfetched '), 'progress line redrawn in place');
  t.match(out.text(), /fetched \d+ · indexed \d+ · queued \d+ · waiting hosts \d+ · errors \d+/, 'progress line');
  t.match(out.text(), /crawl finished in [\d.]+ s\n {2}fetched +\d+\n {2}indexed +6\n/);
  const db = openStateDb(join(dir, 'data', 'state.sqlite'));
  t.teardown(() => db.close());
  const n = db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM documents WHERE status = 'indexed'`).get()!.n;
  t.equal(n, 6, 'max-pages bounds the crawl');
  const hosts = db
    .prepare<[], { host: string }>(`SELECT DISTINCT host FROM frontier`)
    .all()
    .map((r) => r.host)
    .sort();
  t.same(hosts, ['gen-0.test', 'gen-1.test'], '--stay-on-hosts');
  const plain = captureStream(false);
  t.equal(
    await crawlCommand(
      ['--seeds', web.url('gen-0.test', '/'), '--allow-loopback', '--data-dir', join(dir, 'data'), '--max-pages', '1', ...pinArgs()],
      { stdout: plain.stream, stderr: err.stream, env: {} },
    ),
    0,
  );
  t.notMatch(plain.text(), /\r/, 'no progress line when stdout is not a terminal');
});

function runChild(args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; signal: string | null; out: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    cwd: REPO,
    env: { ...process.env, SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const done = new Promise<{ code: number | null; signal: string | null; out: string }>((ok) =>
    child.on('exit', (code, signal) => ok({ code, signal, out })),
  );
  return { child, done };
}

t.test('kill -9 mid-crawl, then resume: every URL completed exactly once, none lost (issue 3)', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  const seedsFile = join(dir, 'seeds.txt');
  writeFileSync(seedsFile, ['gen-0.test', 'gen-1.test', 'gen-2.test'].map((h) => web.url(h, '/')).join('\n'));
  // Leases lapse by time only (no process-id checks, issue 10): a short lease lets the resumed run take back the
  // killed run's items quickly.
  const args = [
    '--seeds-file',
    seedsFile,
    '--allow-loopback',
    '--data-dir',
    dataDir,
    '--gap-ms',
    '60',
    '--stay-on-hosts',
    '--lease-ms',
    '1500',
    ...pinArgs(),
  ];
  const start = web.accessLog.length;
  const pageHits = () => web.accessLog.slice(start).filter((e) => e.path.startsWith('/p/')).length;

  // Pages the child has completed so far, read without disturbing its writes (0 before its database exists).
  const donePages = (): number => {
    try {
      const db = new Database(join(dataDir, 'state.sqlite'), { readonly: true, fileMustExist: true });
      try {
        return (db.prepare(`SELECT count(*) AS n FROM frontier WHERE kind = 'page' AND state = 'done'`).get() as { n: number }).n;
      } finally {
        db.close();
      }
    } catch {
      return 0;
    }
  };

  const first = runChild(args);
  // Kill once the crawl is well under way (about a third of the pages requested) and at least one page is done: on
  // a loaded machine the fetched pages can all still be in the pipeline, and the kill would not be mid-crawl.
  await new Promise<void>((ok, fail) => {
    const iv = setInterval(() => {
      if (pageHits() >= 15 && donePages() > 0) {
        clearInterval(iv);
        first.child.kill('SIGKILL');
        ok();
      }
    }, 20);
    void first.done.then((r) => {
      clearInterval(iv);
      if (r.signal !== 'SIGKILL') fail(new Error(`child ended before the kill: ${r.code} ${r.out}`));
    });
  });
  const killed = await first.done;
  t.equal(killed.signal, 'SIGKILL');

  {
    const db = openStateDb(join(dataDir, 'state.sqlite'));
    const c = db
      .prepare<
        [],
        { done: number; open: number }
      >(`SELECT sum(state = 'done') AS done, sum(state <> 'done') AS open FROM frontier WHERE kind = 'page'`)
      .get()!;
    db.close();
    t.ok(c.done > 0 && c.open > 0, `killed mid-crawl (${c.done} done, ${c.open} not)`);
  }

  const second = runChild(args);
  const resumed = await second.done;
  t.equal(resumed.code, 0, resumed.out);
  t.match(resumed.out, /crawl finished/);

  const db = openStateDb(join(dataDir, 'state.sqlite'));
  t.teardown(() => db.close());
  const rows = db
    .prepare<
      [],
      { url: string; state: string; completions: number }
    >(`SELECT url, state, completions FROM frontier WHERE kind = 'page' ORDER BY url`)
    .all();
  const expected = ['gen-0.test', 'gen-1.test', 'gen-2.test']
    .flatMap((h) => [web.url(h, '/'), ...Array.from({ length: 15 }, (_, i) => web.url(h, `/p/${i}.html`))])
    .sort();
  t.same(
    rows.map((r) => r.url),
    expected,
    'no URL lost, none invented',
  );
  t.same(
    rows.filter((r) => r.state !== 'done' || r.completions !== 1),
    [],
    'every URL completed exactly once',
  );
  const indexed = db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM documents WHERE status = 'indexed'`).get()!.n;
  t.equal(indexed, expected.length, 'every page in the document registry');
});
