/**
 * Issue 46 item 6: SIGTERM stops `svc crawl` and `svc ingest` as Ctrl-C does — leases handed back, every record
 * read written, the summary printed, the command's own exit code — through the real CLI in a child process.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { waitFor } from '../helpers/wait-for.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let web: TestWeb;
t.before(async () => {
  web = await startTestWeb({ generatedHosts: 1, generatedPages: 10 });
});
t.teardown(() => web.close());

function svc(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/run.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += String(c)));
  child.stderr.on('data', (c: Buffer) => (err += String(c)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) =>
    child.on('exit', (code, signal) => ok({ code, signal })),
  );
  return { child, exited, out: () => out, err: () => err };
}

t.test('issue 46: SIGTERM mid-crawl hands the leased URL back, prints the summary and exits 0 like Ctrl-C', async (t) => {
  const data = join(t.testdir(), 'data');
  // The slow URL holds a lease for as long as its headers take (a minute): SIGTERM lands while it is leased.
  const slow = web.url('trap.test', '/slow-headers?ms=120000');
  const run = svc([
    'crawl',
    '--allow-loopback',
    '--data-dir',
    data,
    '--gap-ms',
    '20',
    ...web.pins.flatMap((p) => ['--resolve', p]),
    '--seeds',
    slow,
    web.url('gen-0.test', '/'),
  ]);
  let db: Database.Database | null = null;
  t.teardown(() => {
    db?.close();
    run.child.kill('SIGKILL');
  });
  const state = (url: string): string | undefined => {
    db ??= new Database(join(data, 'state.sqlite'), { readonly: true, fileMustExist: true });
    return db.prepare<[string], { state: string }>('SELECT state FROM frontier WHERE url = ?').get(url)?.state;
  };
  await waitFor('the slow URL to be leased', () => {
    try {
      return state(slow) === 'leased';
    } catch {
      return false; // the state file is not there yet
    }
  });
  run.child.kill('SIGTERM');
  const { code, signal } = await run.exited;
  t.equal(signal, null, 'the process ends by itself, not by the signal');
  t.equal(code, 0, run.err());
  t.match(run.out(), /crawl stopped by SIGTERM in [\d.]+ s\n {2}fetched +\d+\n {2}indexed +\d+\n/, 'the summary is printed');
  const leased = db!.prepare<[], { n: number }>(`SELECT count(*) AS n FROM frontier WHERE state = 'leased'`).get()!.n;
  t.equal(leased, 0, 'no frontier entry is left leased');
  t.not(state(slow), 'dead', 'the interrupted URL is not dead-lettered');
  t.not(state(slow), 'done', 'nor counted as crawled: it stays to be crawled');
});

t.test('issue 46: SIGTERM mid-ingest writes every record read, prints the summary and exits 130 like Ctrl-C', async (t) => {
  const dir = t.testdir();
  // Far more records than are read before the signal lands: the run is stopped mid-corpus.
  const file = join(dir, 'corpus.jsonl');
  const total = 200_000;
  const lines: string[] = [];
  for (let i = 0; i < total; i++)
    lines.push(JSON.stringify({ _id: `r${i}`, title: `Record ${i}`, text: `Text of record ${i} about rivers.` }));
  writeFileSync(file, lines.join('\n') + '\n');
  const data = join(dir, 'data');
  const run = svc(['ingest', '--jsonl', file, '--data-dir', data, '--embedder', 'none', '--batch', '64', '--name', 'piped']);
  t.teardown(() => run.child.kill('SIGKILL'));
  let db: Database.Database | null = null;
  t.teardown(() => db?.close());
  const allocated = (): number => {
    try {
      db ??= new Database(join(data, 'state.sqlite'), { readonly: true, fileMustExist: true });
      return db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM documents WHERE url LIKE 'corpus:piped/%'`).get()!.n;
    } catch {
      return 0;
    }
  };
  await waitFor('the first records to be read', () => allocated() >= 1000, 120_000);
  run.child.kill('SIGTERM');
  const { code, signal } = await run.exited;
  t.equal(signal, null, 'the process ends by itself, not by the signal');
  t.equal(code, 130, run.out() + run.err());
  const read = Number(/(\d+) docs, \d+ passages/.exec(run.out())?.[1]);
  t.ok(read >= 1000 && read < total, `the summary is printed, mid-corpus: ${run.out()}`);
  t.match(run.out(), new RegExp(`index: ${read} pages, ${read} passages`), 'every record read is in the index');
  t.match(run.out(), new RegExp(`ingest stopped by SIGTERM: the ${read} records read are indexed`));
  t.equal(allocated(), read, 'no record was given a page_ref without being read into the summary');
  const indexed = db!.prepare<[], { n: number }>(`SELECT count(*) AS n FROM documents WHERE status = 'indexed'`).get()!.n;
  t.equal(indexed, read, 'and each is recorded as indexed');
});
