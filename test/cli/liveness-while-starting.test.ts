/**
 * Issue 46 item 5: liveness from the first second. `svc serve --role api` and `--role crawler` started over an
 * index whose tables do not exist yet answer /healthz at once and /readyz 503 naming what they wait for, every
 * other route 503 problem+json with Retry-After; once a writer creates the tables they serve, /readyz 200.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ingestCommand } from '../../cli/ingest.js';
import { waitFor } from '../helpers/wait-for.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function serve(role: string, dataDir: string, indexDir: string) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('SVC_')) delete env[k];
  // Long enough that only the writer's tables, never the end of the wait, can make the replica ready.
  Object.assign(env, { SVC_LOG_LEVEL: 'warn', SVC_INDEX_URI: indexDir, SVC_INDEX_WAIT_FOR_WRITER_S: '900', SVC_SEARCH_THREADS: '0' });
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/run.ts', 'serve', '--role', role, '--data-dir', dataDir, '--port', '0'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p = { child, out: '', exited: new Promise<number | null>((ok) => child.on('exit', (code) => ok(code))) };
  child.stdout.on('data', (c: Buffer) => (p.out += String(c)));
  child.stderr.on('data', (c: Buffer) => (p.out += String(c)));
  return p;
}

t.test('issue 46: api and crawler replicas waiting for the index tables are alive and say what they wait for', async (t) => {
  const dir = t.testdir();
  const indexDir = join(dir, 'index');
  const replicas = [serve('api', join(dir, 'api'), indexDir), serve('crawler', join(dir, 'crawler'), indexDir)];
  t.teardown(() => {
    for (const r of replicas) r.child.kill('SIGKILL');
  });
  const urls: string[] = [];
  for (const r of replicas) {
    await waitFor('the starting line', () => /svc starting at (http:\/\/\S+):/.test(r.out) || r.child.exitCode !== null, 120_000);
    urls.push(/svc starting at (http:\/\/\S+):/.exec(r.out)![1]!);
  }
  for (const [i, url] of urls.entries()) {
    const role = i === 0 ? 'api' : 'crawler';
    // Wait until the start reaches the tables (the state and the model come first, briefly).
    let ready: { status: string; waiting_for?: string; checks: Record<string, string> } = { status: '', checks: {} };
    await waitFor(`${role} to wait for the index tables`, async () => {
      const r = await fetch(`${url}/readyz`);
      ready = (await r.json()) as typeof ready;
      return r.status === 503 && ready.waiting_for === 'index tables';
    });
    t.same(ready, { status: 'starting', waiting_for: 'index tables', checks: { role } }, `${role}: /readyz says what it waits for`);
    const health = await fetch(`${url}/healthz`);
    t.equal(health.status, 200, `${role}: /healthz answers while it waits`);
    t.same(await health.json(), { status: 'ok' });
    const search = await fetch(`${url}/api/v1/search?q=rivers`, { headers: { authorization: 'Bearer svc_x' } });
    t.equal(search.status, 503, `${role}: an API route is 503 while starting`);
    t.equal(search.headers.get('content-type'), 'application/problem+json');
    t.equal(search.headers.get('retry-after'), '5');
    t.match(await search.json(), { code: 'unavailable', status: 503, detail: /waiting for index tables/ });
    t.notMatch(replicas[i]!.out, /listening on/, `${role}: not serving yet`);
  }

  // The writer (here `svc ingest`) creates the tables: both replicas open them and serve.
  const corpus = join(dir, 'c.jsonl');
  writeFileSync(corpus, JSON.stringify({ _id: 'a', title: 'Rivers', text: 'Rivers of Quebec.' }) + '\n');
  const sink = new PassThrough().resume();
  t.equal(
    await ingestCommand(['--jsonl', corpus, '--data-dir', join(dir, 'writer'), '--embedder', 'none'], {
      stdout: sink,
      stderr: sink,
      env: { SVC_INDEX_URI: indexDir },
    }),
    0,
  );
  for (const [i, url] of urls.entries()) {
    await waitFor('the replica to serve', () => /listening on/.test(replicas[i]!.out), 120_000);
    const r = await fetch(`${url}/readyz`);
    t.equal(r.status, 200, replicas[i]!.out);
    t.match(await r.json(), { status: 'ready', checks: { index: 'ok' } });
  }
  for (const r of replicas) r.child.kill('SIGTERM');
  for (const r of replicas) t.equal(await r.exited, 0, 'SIGTERM: a clean exit');
});
