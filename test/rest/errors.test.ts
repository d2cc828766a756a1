import { readFileSync } from 'node:fs';
import t from 'tap';
import { SvcError, errorTable, toProblem, type ErrorCode } from '../../errors.js';

t.test('every error code has a status and a row in docs/errors.md with the same status', async (t) => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map([...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1] as string, Number(m[2])]));
  for (const [code, entry] of Object.entries(errorTable)) {
    t.ok(entry.status >= 400 && entry.status <= 599, `${code} has an error status`);
    t.equal(rows.get(code), entry.status, `${code} documented with status ${entry.status}`);
  }
  t.same([...rows.keys()].sort(), Object.keys(errorTable).sort(), 'no documented code that does not exist');
});

t.test('problem bodies: internal details never leave, retry_after carried', async (t) => {
  const internal = toProblem(new SvcError('internal', 'db path /var/secret broke'));
  t.equal(internal.detail, 'Internal error');
  const limited = toProblem(new SvcError('rate_limited', 'slow down', { retryAfter: 12 }));
  t.match(limited, { code: 'rate_limited', status: 429, retry_after: 12, detail: 'slow down', errors: [] });
  const codes: ErrorCode[] = ['validation_failed'];
  t.equal(toProblem(new SvcError(codes[0]!, 'x', { errors: [{ path: ['q'], issue: 'too long' }] })).errors.length, 1);
});
