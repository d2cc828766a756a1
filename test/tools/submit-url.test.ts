import t, { type Test } from 'tap';
import { refusedTargets } from '../../fixtures/loopback-only.js';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { openStateDb } from '../../state/db.js';
import { sqliteEntities, sqliteRepositories } from '../../state/repos/sqlite.js';
import { EntityStore } from '../../state/entities.js';
import type { PassageIndex } from '../../index/engines/lance/store.js';
import { callTool } from '../../tools/call-tool.js';
import type { ServiceDeps } from '../../tools/deps.js';
import { pinnedByOperator, submitUrlTool, validateSubmissionUrl } from '../../tools/submit-url.js';
import { requestStatusTool } from '../../tools/request-status.js';
import { SvcError } from '../../errors.js';

function setup(t: Test, flags: Record<string, unknown> = {}) {
  const dir = t.testdir();
  const config = loadConfig({ env: {}, flags: { dataDir: dir, submissionsPerDay: 3, ...flags } });
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const deps: ServiceDeps = {
    config,
    repos: sqliteRepositories(db),
    log: createLogger({ level: 'silent' }),
    now: () => new Date(),
    // The URL tools never touch the passage index.
    index: null as unknown as PassageIndex,
    entities: sqliteEntities(new EntityStore(db)),
    crawler: null,
  };
  const ctx = (k = 'a') => ({ deps, caller: { keyId: `key_${k}`, digest: createHash('sha256').update(k).digest('hex') } });
  const stored = () => (db.prepare('SELECT count(*) AS n FROM url_requests').get() as { n: number }).n;
  return { deps, ctx, stored };
}

const fail = async (p: Promise<unknown>): Promise<SvcError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof SvcError) return e;
    throw e;
  }
  throw new Error('expected an SvcError');
};

t.test('bad URLs and types: clear codes, nothing stored', async (t) => {
  const { ctx, stored } = setup(t);
  const cases: [unknown, string][] = [
    [{ type: 'discovery', url: 'not a url' }, 'invalid_url'],
    [{ type: 'discovery', url: '/relative/path' }, 'invalid_url'],
    [{ type: 'discovery', url: 'ftp://files.example.ca/x' }, 'invalid_url'],
    [{ type: 'discovery', url: 'javascript:alert(1)' }, 'invalid_url'],
    [{ type: 'discovery', url: 'https://user:pw@www.example.ca/' }, 'invalid_url'],
    [{ type: 'discovery', url: 'http://10.0.0.1/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://169.254.169.254/latest/meta-data/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://127.0.0.1:8787/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://2130706433/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://0x7f.1/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://[::1]/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://[::ffff:192.168.1.1]/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://[fd00::1]/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://localhost/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://printer.local/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://db.internal/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://intranet/' }, 'invalid_host'],
    [{ type: 'discovery', url: 'http://alpha.test/' }, 'invalid_host'],
    [{ type: 'delete', url: 'https://www.example.ca/' }, 'bad_request'],
    [{ type: 'discovery', url: `https://www.example.ca/${'a'.repeat(2040)}` }, 'validation_failed'],
    [{ type: 'discovery', url: 'https://www.example.ca/', note: 'x'.repeat(1001) }, 'validation_failed'],
    [{ type: 'discovery' }, 'validation_failed'],
    [{ url: 'https://www.example.ca/' }, 'validation_failed'],
  ];
  for (const [input, code] of cases) {
    const e = await fail(callTool(submitUrlTool, input, ctx()));
    t.equal(e.code, code, JSON.stringify(input).slice(0, 80));
  }
  t.equal(stored(), 0, 'nothing stored');
});

t.test('public URLs are accepted in normal form; non-public hosts only through operator pins', async (t) => {
  t.same(validateSubmissionUrl('HTTPS://WWW.Example.CA:443/a/./b/../c#frag', { pins: [] }), {
    url: 'https://www.example.ca/a/c',
    host: 'www.example.ca',
  });
  // The default port and dot segments go; validation only parses and classifies (no connection).
  t.same(validateSubmissionUrl('HTTP://Example.CA:80/x/../y', { pins: [] }), { url: 'http://example.ca/y', host: 'example.ca' });
  t.same(refusedTargets, [], 'no connection was attempted');
  const pins = ['alpha.test:8080:127.0.0.1', 'beta.test:*:127.0.0.1'];
  t.same(validateSubmissionUrl('http://alpha.test:8080/', { pins }).host, 'alpha.test');
  t.same(validateSubmissionUrl('http://beta.test:1234/', { pins }).host, 'beta.test', 'a HOST:*:ADDR pin covers every port');
  t.throws(() => validateSubmissionUrl('http://alpha.test:9090/', { pins }), { code: 'invalid_host' }, 'a pin covers its own port only');
  // Issue 46 item 4: literals are classified as for a caller, never with the operator's --allow-loopback.
  for (const url of ['http://127.0.0.1:9/', 'http://127.0.0.2/', 'http://[::1]/', 'http://10.1.2.3/', 'http://2130706433/'])
    t.throws(() => validateSubmissionUrl(url, { pins }), { code: 'invalid_host' }, `${url} refused`);
  // With pinnedOnly (the crawler reaches loopback), any other name is refused: DNS could point it there later.
  t.throws(() => validateSubmissionUrl('https://www.example.ca/', { pins, pinnedOnly: true }), { code: 'invalid_host' });
  t.same(validateSubmissionUrl('http://alpha.test:8080/', { pins, pinnedOnly: true }).host, 'alpha.test');
  t.equal(pinnedByOperator('http://alpha.test:8080/x', pins), true);
  t.equal(pinnedByOperator('http://alpha.test/x', pins), false);
  t.equal(pinnedByOperator('https://beta.test/x', pins), true);
  t.equal(pinnedByOperator('http://gamma.test:8080/', ['gamma.test:8080:not-an-address']), false, 'a malformed pin covers nothing');
});

t.test('submit then read status; idempotency key; quota; other keys see 404', async (t) => {
  const { ctx, stored } = setup(t);
  const a = await callTool(submitUrlTool, { type: 'recrawl', url: 'https://www.example.ca/p', idempotency_key: 'abc' }, ctx());
  t.equal(a.request.status, 'received');
  t.equal(a.request.type, 'recrawl');
  t.equal(a.deduplicated, false);
  t.match(a.notice, /neither indexing nor position/);
  t.match(a.request.notice, /neither indexing nor position/);
  const b = await callTool(submitUrlTool, { type: 'recrawl', url: 'https://www.example.ca/p', idempotency_key: 'abc' }, ctx());
  t.equal(b.request.id, a.request.id);
  t.equal(b.deduplicated, true);
  t.equal(
    (await fail(callTool(submitUrlTool, { type: 'removal', url: 'https://www.example.ca/p', idempotency_key: 'abc' }, ctx()))).code,
    'conflict',
  );
  const st = await callTool(requestStatusTool, { id: a.request.id }, ctx());
  t.same(st.request, a.request);
  t.equal((await fail(callTool(requestStatusTool, { id: a.request.id }, ctx('b')))).code, 'not_found');
  t.equal((await fail(callTool(requestStatusTool, { id: 'req_nope' }, ctx()))).code, 'not_found');
  await callTool(submitUrlTool, { type: 'discovery', url: 'https://www.example.ca/q' }, ctx());
  await callTool(submitUrlTool, { type: 'discovery', url: 'https://www.example.ca/r' }, ctx());
  const q = await fail(callTool(submitUrlTool, { type: 'discovery', url: 'https://www.example.ca/s' }, ctx()));
  t.equal(q.code, 'submission_quota_exceeded');
  t.ok((q.retryAfter ?? 0) > 0);
  t.equal(stored(), 3);
});

t.test('tool definitions: REST bindings and annotations', async (t) => {
  t.same(submitUrlTool.rest[0], {
    method: 'POST',
    path: '/requests',
    source: 'body',
    successStatus: 202,
    headers: { 'idempotency-key': 'idempotency_key' },
    summary: submitUrlTool.rest[0].summary,
  });
  t.equal(submitUrlTool.annotations.readOnlyHint, false);
  t.equal(submitUrlTool.annotations.openWorldHint, true);
  t.equal(requestStatusTool.rest[0].path, '/requests/:id');
  t.equal(requestStatusTool.annotations.readOnlyHint, true);
  for (const tool of [submitUrlTool, requestStatusTool]) {
    for (const [name, field] of Object.entries(tool.input.shape))
      t.ok((field as { description?: string }).description, `${tool.name}.${name} is described`);
  }
});
