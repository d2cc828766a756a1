import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

t.test('svc serve: listens on its embedded default, answers health, stops cleanly on SIGTERM', async (t) => {
  const dir = t.testdir();
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/run.ts', 'serve', '--data-dir', dir, '--port', '0', '--no-crawl'], {
    cwd: ROOT,
    env: { ...process.env, SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listen line: ${out}`)), 60_000);
    child.stdout.on('data', () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, 'binds loopback by default');
  const health = await fetch(url + '/healthz');
  t.equal(health.status, 200);
  const ready = (await (await fetch(url + '/readyz')).json()) as { status: string; checks: Record<string, string> };
  t.match(ready, { status: 'ready', checks: { state: 'ok', index: 'ok' } });
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exit code 0 after SIGTERM');
});
