/**
 * Kill -9 at a chosen point of a child's write loop (the crash tests): the child prints a line starting with `marker`
 * after each step it finished, and is killed `extraMs` after the `after`-th, so the kill lands inside the next step.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs the tsx script `script` with `args` until killed as above; resolves with the steps it reported finished. `env`:
 * the child's whole environment (default: this process's).
 */
export function runUntilKilled(
  script: string,
  args: readonly string[],
  marker: string,
  after: number,
  extraMs: number,
  env?: NodeJS.ProcessEnv,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
      ...(env ? { env } : {}),
    });
    let out = '';
    let armed = false;
    const steps = (): number => out.split('\n').filter((l) => l.startsWith(marker)).length;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (!armed && steps() >= after) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), extraMs);
      }
    });
    child.on('error', reject);
    child.on('close', () => resolve(steps()));
  });
}
