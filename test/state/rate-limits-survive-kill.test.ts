import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { openStateDb } from '../../state/db.js';
import { RateLimiter, reservationBlock } from '../../state/rate-limits.js';

const CHILD = fileURLToPath(new URL('./rate-limits-crash-child.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const digest = 'ef'.repeat(32);
// Half a minute into the current minute: the limiter prunes counters older than two days by the real clock, so a
// fixed date would see its counters pruned once it is two days old.
const at = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000).toISOString();
const perMinute = 400;
const perDay = 100_000;

/** Runs the child until it is killed -9 after `killAfterMs` (or finishes); returns the acknowledged admissions. */
function runChild(file: string, killAfterMs: number | null): Promise<{ acked: number; refused: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file, digest, String(perMinute), String(perDay), at], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (killAfterMs !== null && timer === undefined && out.includes('ready\n'))
        timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve({ acked: out.split('\n').filter((l) => l === 'A').length, refused: out.includes('refused\n') });
    });
  });
}

t.test('issue 12 item 8: kill -9 never gives quota back (bounded loop)', async (t) => {
  const file = join(t.testdir(), 'state.sqlite');
  let acked = 0;
  const rounds = 4;
  for (let i = 0; i < rounds; i++) {
    // Kill at varied points inside the one-request-per-millisecond run (well within the write-behind second of old).
    const r = await runChild(file, 40 + i * 37);
    t.notOk(r.refused, `round ${i}: killed before the quota ran out`);
    acked += r.acked;
  }
  t.ok(acked > 0, `acknowledged ${acked} before the kills`);
  // A clean run admits what is left, then refuses.
  const last = await runChild(file, null);
  t.ok(last.refused, 'the clean run reaches the quota');
  const total = acked + last.acked;
  t.ok(total <= perMinute, `never over-admits: ${total} ≤ ${perMinute}`);
  const worstLoss = rounds * (reservationBlock(perMinute) - 1);
  t.ok(perMinute - total <= worstLoss, `under-admits at most one block per crash: lost ${perMinute - total} ≤ ${worstLoss}`);
});

t.test('issue 12 item 8: the stored counter covers every admitted request before it is answered', async (t) => {
  const file = join(t.testdir(), 'state.sqlite');
  const db = openStateDb(file);
  const limiter = new RateLimiter(db);
  const now = new Date(at);
  const read = openStateDb(file);
  t.teardown(() => {
    read.close();
  });
  const stored = () =>
    (read.prepare("SELECT count FROM usage_counters WHERE window = 'minute'").get() as { count: number } | undefined)?.count ?? 0;
  for (let i = 1; i <= 25; i++) {
    t.equal(limiter.consume(digest, { perMinute: 30, perDay: 1000 }, now).allowed, true);
    t.ok(stored() >= i, `after ${i} admitted another connection sees ${stored()}`);
    t.ok(stored() - i < reservationBlock(30), 'reserved ahead by less than one block');
  }
  limiter.close();
  t.equal(stored(), 25, 'a clean close gives the unused reservation back');
  db.close();
});
