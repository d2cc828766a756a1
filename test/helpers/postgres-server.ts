/**
 * A real PostgreSQL server for tests: Debian's binaries (initdb, postgres) run in a fresh temp dir, listening on
 * 127.0.0.1 at a free port and on a unix socket inside the temp dir, with fsync off (throwaway data). PostgreSQL
 * refuses to run as root, and CI runs as root, so the server then runs as `nobody` (setpriv, which execs in place so
 * the child's pid is the postmaster's). stop() shuts it down fast and removes the dir.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { freePort } from './free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PostgresServer {
  /** postgres://svc@127.0.0.1:PORT/svc */
  readonly url: string;
  readonly port: number;
  /** A fresh empty database on this server (each test file or suite gets its own). */
  createDatabase(name: string): Promise<string>;
  /**
   * Stops the server (fast shutdown: sessions end, clients see their connections drop) but keeps its data dir, so
   * resume() brings the same databases back on the same port: a temporary outage.
   */
  halt(): Promise<void>;
  /** Starts the server again after halt(), on the same port and data dir; resolves once it accepts connections. */
  resume(): Promise<void>;
  /**
   * SIGSTOP to every process of the server (postmaster and backends): its sockets stay open and connections are
   * still accepted by the kernel, but nothing answers — a stalled database, not a down one. thaw() sends SIGCONT.
   */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

/** Where initdb and postgres live: SVC_PG_BIN, else the newest /usr/lib/postgresql/<v>/bin. null when absent. */
export function findPostgresBin(env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = env.SVC_PG_BIN ? [env.SVC_PG_BIN] : [];
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    for (const v of readdirSync(root).sort((a, b) => Number(b) - Number(a))) candidates.push(join(root, v, 'bin'));
  }
  return candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres'))) ?? null;
}

/** Why PostgreSQL tests cannot run here, or null when they can. */
export function postgresUnavailable(): string | null {
  return findPostgresBin()
    ? null
    : 'PostgreSQL server binaries not found (apt-get install postgresql, or set SVC_PG_BIN to the folder holding initdb and postgres)';
}

function nobody(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid))
    throw new Error('running as root and there is no user "nobody" to run PostgreSQL as');
  return { uid, gid };
}

/** Runs a PostgreSQL binary, as nobody when we are root. */
function command(bin: string, args: string[], as: { uid: number; gid: number } | null): [string, string[]] {
  return as ? ['setpriv', [`--reuid=${as.uid}`, `--regid=${as.gid}`, '--clear-groups', '--', bin, ...args]] : [bin, args];
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = findPostgresBin();
  if (!bin) throw new Error(postgresUnavailable() ?? 'no PostgreSQL');
  const as = nobody();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  if (as) chownSync(dir, as.uid, as.gid);
  const data = join(dir, 'data');
  const [initCmd, initArgs] = command(
    join(bin, 'initdb'),
    ['-D', data, '-A', 'trust', '-U', 'svc', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    as,
  );
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8', cwd: dir });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}): ${init.stderr || init.stdout}`);
  }
  const port = await freePort();
  const url = `postgres://svc@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let log = '';
  // Every process of the server: the postmaster and what it forked (backends call setsid(), so no process group
  // holds them all; /proc says whose child each one is).
  const signalAll = (signal: NodeJS.Signals): void => {
    const root = child?.pid;
    if (root === undefined || child?.exitCode !== null) return;
    const parent = new Map<number, number>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // exited meanwhile
      }
    }
    const pids = [root];
    for (let i = 0; i < pids.length; i++) for (const [pid, ppid] of parent) if (ppid === pids[i]) pids.push(pid);
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // exited meanwhile
      }
    }
  };
  // A test process that ends without stop() (a failed assertion path, process.exit) must not leave a server behind.
  const reap = () => {
    signalAll('SIGCONT');
    child?.kill('SIGKILL');
  };
  process.once('exit', reap);
  const launch = async (): Promise<void> => {
    const [cmd, args] = command(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-k',
        dir,
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
      ],
      as,
    );
    const proc: ChildProcess = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    proc.stderr?.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-8000)));
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const c = new pg.Client({ connectionString: url });
      try {
        await c.connect();
        await c.end();
        return;
      } catch (err) {
        await c.end().catch(() => undefined);
        if (proc.exitCode !== null || Date.now() > deadline) {
          proc.kill('SIGKILL');
          throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${log}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const shutdown = async (): Promise<void> => {
    const proc = child;
    if (!proc) return;
    // SIGINT = fast shutdown: roll back open transactions, end sessions, exit (a frozen server must run to see it).
    signalAll('SIGCONT');
    if (proc.exitCode === null) proc.kill('SIGINT');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await launch();
  } catch (err) {
    process.off('exit', reap);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let stopped = false;
  return {
    url,
    port,
    async createDatabase(name: string) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await c.end();
      }
      return `postgres://svc@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    },
    halt: shutdown,
    resume: launch,
    freeze: () => signalAll('SIGSTOP'),
    thaw: () => signalAll('SIGCONT'),
    async stop() {
      if (stopped) return;
      stopped = true;
      await shutdown();
      process.off('exit', reap);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
