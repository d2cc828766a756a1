/**
 * `svc serve --role <role>` as its own process, for the fleet tests (issue 10): started from the repository's
 * cli/run.ts through tsx on port 0, with none of this process's SVC_* variables but the ones given, its output kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export type ServeRole = 'api' | 'crawler' | 'indexer' | 'searcher';

export interface ServeProcess {
  readonly role: ServeRole;
  readonly dataDir: string;
  readonly child: ChildProcess;
  /**
   * Its base URL, from the "listening on" line. Rejects when it exits before that line or gives none within
   * `listenTimeoutMs` (only a caller that awaits it sees the rejection).
   */
  readonly url: Promise<string>;
  /** Its exit code; null when a signal ended it. */
  readonly exited: Promise<number | null>;
  /** Its stdout and stderr so far. */
  out: string;
}

export interface ServeRoleOptions {
  readonly role: ServeRole;
  readonly dataDir: string;
  /** --lease-ms: how long its claims (frontier items, outbox batches) stay leased unless extended. */
  readonly leaseMs: number;
  /** The SVC_* settings of the process (everything else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /** How long to wait for the "listening on" line. @default 50000 */
  readonly listenTimeoutMs?: number;
  /** More `svc serve` arguments (e.g. `--shards 0-1`). */
  readonly args?: readonly string[];
}

export function serveRole(o: ServeRoleOptions): ServeProcess {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('SVC_')) delete env[k];
  // Searches on the HTTP thread (a fleet test starts several processes on two cores) unless the test sets it.
  env.SVC_SEARCH_THREADS = '0';
  Object.assign(env, o.env);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'cli/run.ts',
      'serve',
      '--role',
      o.role,
      '--data-dir',
      o.dataDir,
      '--port',
      '0',
      '--lease-ms',
      String(o.leaseMs),
      ...(o.args ?? []),
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const p: ServeProcess = {
    role: o.role,
    dataDir: o.dataDir,
    child,
    out: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    url: new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listen line from ${o.role}: ${p.out}`)), o.listenTimeoutMs ?? 50_000);
      const look = (c: Buffer) => {
        p.out += c.toString();
        const m = /listening on (http:\/\/[^\s]+)/.exec(p.out);
        if (m?.[1]) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      };
      child.stdout!.on('data', look);
      child.stderr!.on('data', (c: Buffer) => (p.out += c.toString()));
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${o.role} exited (${code}) before listening: ${p.out}`));
      });
    }),
  };
  // A process the test kills without waiting for its address must not leave an unhandled rejection behind.
  p.url.catch(() => undefined);
  return p;
}
