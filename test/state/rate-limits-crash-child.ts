/**
 * Child process entry for test/state/rate-limits-survive-kill.test.ts: admits requests for one key at a fixed
 * instant, one per millisecond, and acknowledges each admitted one on stdout (a synchronous write) before the next,
 * so the parent can kill -9 it at any point and know exactly what was acknowledged. Not a test file itself.
 */
import { writeSync } from 'node:fs';
import { openStateDb } from '../../state/db.js';
import { RateLimiter } from '../../state/rate-limits.js';

const [file, digest, perMinute, perDay, at] = process.argv.slice(2) as [string, string, string, string, string];
const db = openStateDb(file);
const limiter = new RateLimiter(db);
const limits = { perMinute: Number(perMinute), perDay: Number(perDay) };
const now = new Date(at);
writeSync(1, 'ready\n');
const step = (): void => {
  const d = limiter.consume(digest, limits, now);
  if (!d.allowed) {
    writeSync(1, 'refused\n');
    limiter.close();
    db.close();
    return;
  }
  writeSync(1, 'A\n');
  setTimeout(step, 1);
};
step();
