import t, { type Test } from 'tap';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { openStateDb } from '../../state/db.js';
import { RequestStore, SUBMISSION_NOTICE } from '../../state/requests.js';
import type { SvcError } from '../../errors.js';

const digest = (k: string) => createHash('sha256').update(k).digest('hex');
const KEY_A = digest('svc_test_key_a');
const KEY_B = digest('svc_test_key_b');

function setup(t: Test, perDay = 100, now = () => new Date('2026-05-01T12:00:00.000Z')) {
  const db = openStateDb(join(t.testdir(), 'state.sqlite'));
  t.teardown(() => db.close());
  return { db, store: new RequestStore(db, { perDay, now }) };
}

const sub = (type: string, url: string, extra: { note?: string; idempotencyKey?: string } = {}) => ({
  type,
  url,
  host: new URL(url).hostname,
  ...extra,
});

t.test('submission, open-request dedup, and per-key visibility', async (t) => {
  const { store, db } = setup(t);
  const a = store.submit(KEY_A, sub('recrawl', 'https://www.example.ca/page'));
  t.equal(a.deduplicated, false);
  t.match(a.request.id, /^req_[A-Za-z0-9_-]{22}$/);
  t.equal(a.request.status, 'received');
  t.same(a.request.history, [{ status: 'received', at: '2026-05-01T12:00:00.000Z' }]);
  const again = store.submit(KEY_A, sub('recrawl', 'https://www.example.ca/page'));
  t.equal(again.request.id, a.request.id, 'same key + type + url while open → same id');
  t.equal(again.deduplicated, true);
  const otherType = store.submit(KEY_A, sub('correction', 'https://www.example.ca/page', { note: 'wrong hours' }));
  t.not(otherType.request.id, a.request.id);
  t.equal(otherType.request.note, 'wrong hours');
  const otherKey = store.submit(KEY_B, sub('recrawl', 'https://www.example.ca/page'));
  t.not(otherKey.request.id, a.request.id, 'another key gets its own request');
  t.equal(store.getForKey(a.request.id, KEY_B), null, 'another key cannot see it');
  t.equal(store.getForKey(a.request.id, KEY_A)?.id, a.request.id);
  // Records keep the digest only.
  const cols = db.prepare('SELECT * FROM url_requests WHERE id = ?').get(a.request.id) as Record<string, unknown>;
  t.equal(cols.key_digest, KEY_A);
  t.notOk(JSON.stringify(cols).includes('svc_test_key_a'));
  t.match(SUBMISSION_NOTICE, /neither indexing nor position/);
});

t.test('a completed request no longer deduplicates: a new submission opens a new request', async (t) => {
  const { store } = setup(t);
  const a = store.submit(KEY_A, sub('discovery', 'https://www.example.ca/x'));
  store.transition(a.request.id, 'queued');
  store.transition(a.request.id, 'in_progress');
  store.transition(a.request.id, 'completed', { outcome: 'indexed' });
  const b = store.submit(KEY_A, sub('discovery', 'https://www.example.ca/x'));
  t.not(b.request.id, a.request.id);
  t.equal(b.deduplicated, false);
});

t.test('Idempotency-Key: same key → same request; reused for another URL → 409 conflict', async (t) => {
  const { store } = setup(t);
  const a = store.submit(KEY_A, sub('discovery', 'https://www.example.ca/a', { idempotencyKey: 'k-1' }));
  store.transition(a.request.id, 'queued');
  store.transition(a.request.id, 'completed', { outcome: 'unchanged' });
  const b = store.submit(KEY_A, sub('discovery', 'https://www.example.ca/a', { idempotencyKey: 'k-1' }));
  t.equal(b.request.id, a.request.id, 'even after completion');
  t.equal(b.deduplicated, true);
  const err = t.throws(() => store.submit(KEY_A, sub('discovery', 'https://www.example.ca/other', { idempotencyKey: 'k-1' }))) as SvcError;
  t.equal(err.code, 'conflict');
  t.equal(err.status, 409);
  // Idempotency keys are per API key.
  const c = store.submit(KEY_B, sub('discovery', 'https://www.example.ca/other', { idempotencyKey: 'k-1' }));
  t.equal(c.deduplicated, false);
});

t.test('daily quota per key: 429 submission_quota_exceeded with Retry-After to UTC midnight; repeats are free', async (t) => {
  const { store, db } = setup(t, 2);
  store.submit(KEY_A, sub('discovery', 'https://www.example.ca/1'));
  store.submit(KEY_A, sub('discovery', 'https://www.example.ca/2'));
  t.equal(store.submit(KEY_A, sub('discovery', 'https://www.example.ca/2')).deduplicated, true, 'a repeat does not count');
  const err = t.throws(() => store.submit(KEY_A, sub('discovery', 'https://www.example.ca/3'))) as SvcError;
  t.equal(err.code, 'submission_quota_exceeded');
  t.equal(err.status, 429);
  t.equal(err.retryAfter, 12 * 3600, 'noon → 12 h to midnight UTC');
  t.equal((db.prepare('SELECT count(*) AS n FROM url_requests').get() as { n: number }).n, 2, 'nothing stored');
  t.equal(store.submit(KEY_B, sub('discovery', 'https://www.example.ca/3')).deduplicated, false, 'other keys unaffected');
  // Next UTC day: the quota resets.
  const { store: tomorrow } = { store: new RequestStore(db, { perDay: 2, now: () => new Date('2026-05-02T00:00:01.000Z') }) };
  t.equal(tomorrow.submit(KEY_A, sub('discovery', 'https://www.example.ca/3')).deduplicated, false);
});

t.test('bad input stores nothing', async (t) => {
  const { store, db } = setup(t);
  const e1 = t.throws(() => store.submit(KEY_A, sub('delete', 'https://www.example.ca/'))) as SvcError;
  t.equal(e1.code, 'bad_request');
  t.same(e1.errors[0]?.path, ['type']);
  const e2 = t.throws(() => store.submit(KEY_A, sub('correction', 'https://www.example.ca/', { note: 'x'.repeat(1001) }))) as SvcError;
  t.equal(e2.code, 'validation_failed');
  t.equal((db.prepare('SELECT count(*) AS n FROM url_requests').get() as { n: number }).n, 0);
});

t.test('lifecycle transitions are enforced and recorded', async (t) => {
  let clock = Date.parse('2026-05-01T12:00:00.000Z');
  const { store } = setup(t, 100, () => new Date(clock));
  const { request } = store.submit(KEY_A, sub('removal', 'https://www.example.ca/gone'));
  t.throws(() => store.transition(request.id, 'completed'), /needs an outcome/);
  t.throws(() => store.transition(request.id, 'failed'), /need a reason/);
  clock += 1000;
  store.transition(request.id, 'in_progress');
  t.throws(() => store.transition(request.id, 'completed', { outcome: 'rejected' }), /need a reason/);
  clock += 1000;
  const done = store.transition(request.id, 'completed', { outcome: 'removed', reason: 'a fresh fetch answered 410' });
  t.same(
    done.history.map((h) => [h.status, h.at, h.outcome ?? null]),
    [
      ['received', '2026-05-01T12:00:00.000Z', null],
      ['in_progress', '2026-05-01T12:00:01.000Z', null],
      ['completed', '2026-05-01T12:00:02.000Z', 'removed'],
    ],
  );
  t.equal(done.attempts, 1);
  t.throws(() => store.transition(request.id, 'queued'), /not allowed/, 'completed is final');
  t.same(store.counts(), { received: 0, queued: 0, in_progress: 0, completed: 1, failed: 0 });
  t.same(
    store.listByStatus('completed').map((r) => r.id),
    [request.id],
  );
});
