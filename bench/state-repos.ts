/**
 * The cost of going shared: quota decisions and frontier claims on the SQLite and PostgreSQL backends of
 * the state repositories, next to today's in-memory RateLimiter. PostgreSQL is a real server started on loopback in
 * a temp dir (the tests' helper) and stopped at the end. Bounded: `--ops` operations per row.
 *
 *   node --import tsx bench/state-repos.ts [--ops 2000]
 */
import '../fixtures/loopback-only.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStateDb } from '../state/db.js';
import { RateLimiter } from '../state/rate-limits.js';
import { openPostgresRepositories } from '../state/repos/postgres.js';
import { openSqliteRepositories, sqliteRepositories } from '../state/repos/sqlite.js';
import type { Repositories } from '../state/repos/types.js';
import { startPostgres } from '../test/helpers/postgres-server.js';

const { values } = parseArgs({ options: { ops: { type: 'string', default: '2000' } } });
const OPS = Math.max(100, Math.min(100_000, Number(values.ops)));

interface Row {
  what: string;
  backend: string;
  conc: number;
  ops: number;
  perSec: number;
  p50: number;
  p99: number;
}

/** Runs `op` OPS times with `conc` in flight; latency per op in ms. */
async function measure(conc: number, op: (i: number) => Promise<unknown>): Promise<Omit<Row, 'what' | 'backend' | 'conc'>> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next < OPS) {
        const i = next++;
        const s = performance.now();
        await op(i);
        lat.push(performance.now() - s);
      }
    }),
  );
  const ms = performance.now() - t0;
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? 0;
  return { ops: OPS, perSec: (OPS / ms) * 1000, p50: q(0.5), p99: q(0.99) };
}

const rows: Row[] = [];
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-state-'));
const pgServer = await startPostgres();
try {
  const limits = { perMinute: 1e9, perDay: 1e9 };
  // Today's limiter: in memory, written behind (one process only).
  {
    const db = openStateDb(join(dir, 'legacy.sqlite'));
    const limiter = new RateLimiter(db);
    for (const conc of [1, 16])
      rows.push({
        what: 'quota decision',
        backend: 'RateLimiter (memory, write-behind)',
        conc,
        ...(await measure(conc, async (i) => limiter.consume((i % 50).toString(16).padStart(64, '0'), limits))),
      });
    limiter.close();
    db.close();
  }
  // The embedded default of svc serve: that limiter behind the async UsageCountersRepo.
  {
    const db = openStateDb(join(dir, 'embedded.sqlite'));
    const r = sqliteRepositories(db, { inProcessUsage: true });
    for (const conc of [1, 16])
      rows.push({
        what: 'quota decision',
        backend: 'sqlite repo, in-process usage (svc serve default)',
        conc,
        ...(await measure(conc, (i) => r.usage.consume((i % 50).toString(16).padStart(64, '0'), limits))),
      });
    await r.close();
    db.close();
  }
  const backends: [string, () => Promise<Repositories>][] = [
    ['sqlite repo', async () => openSqliteRepositories(join(dir, `r${rows.length}.sqlite`), { defaultGapMs: 0 })],
    [
      'postgres repo',
      async () => openPostgresRepositories(await pgServer.createDatabase(`b${rows.length}`), { defaultGapMs: 0, poolSize: 16 }),
    ],
  ];
  for (const [name, open] of backends) {
    for (const conc of [1, 16]) {
      const r = await open();
      rows.push({
        what: 'quota decision',
        backend: name,
        conc,
        ...(await measure(conc, (i) => r.usage.consume((i % 50).toString(16).padStart(64, '0'), limits))),
      });
      await r.close();
    }
    for (const conc of [1, 8]) {
      const r = await open();
      for (let i = 0; i < OPS; i++) await r.frontier.enqueue({ url: `http://h${i}.test/`, host: `h${i}.test`, reason: 'bench' });
      rows.push({
        what: 'frontier claim + complete',
        backend: name,
        conc,
        ...(await measure(conc, async () => {
          const item = await r.frontier.claim({ owner: 'bench', leaseMs: 60_000 });
          if (item) await r.frontier.complete(item, { recrawlAt: Number.MAX_SAFE_INTEGER });
        })),
      });
      await r.close();
    }
  }
} finally {
  await pgServer.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`\n${OPS} operations per row\n`);
console.log('| operation | backend | in flight | ops/s | p50 ms | p99 ms |');
console.log('|---|---|---:|---:|---:|---:|');
for (const r of rows)
  console.log(`| ${r.what} | ${r.backend} | ${r.conc} | ${r.perSec.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`);
