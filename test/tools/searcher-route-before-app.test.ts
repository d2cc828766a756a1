/**
 * A searcher answers its internal shard calls before the app's middleware (rest/app.ts `PlainRoute`), and answers
 * them exactly as the app's route does: the same status, media type, body and headers for an answer and for each
 * failure, the same refusals (secret, shard, method), the same request counts in /metrics, and a peer leaving
 * mid-body counted as a client abort, never an internal error. A call with a query string is not the plain handler's
 * (its path is the call's alone), so the app's route answers it: the reference.
 */
import { connect } from 'node:net';
import t from 'tap';
import { makePage } from '../helpers/page-input.js';
import { api, startTestService } from '../helpers/service.js';
import { waitFor } from '../helpers/wait-for.js';

const NOW = new Date('2026-11-21T00:00:00Z');
const SECRET = 'fleet-secret-for-tests-0123456789';

t.test('the plain shard route answers as the app route does', async (t) => {
  const indexUri = t.testdir();
  const writer = await startTestService({ now: () => NOW, embedder: null, config: { indexShards: 2, indexUri } });
  t.teardown(() => writer.close());
  await writer.services.deps.index.upsertPages([
    makePage(1, 'www.canada.ca', ['Adult passport fees and payment options.']),
    makePage(2, 'www.ontario.ca', ['Renew a driver licence online or by mail.']),
  ]);
  const s = await startTestService({
    now: () => NOW,
    embedder: null,
    role: 'searcher',
    config: { indexUri, fleetSecret: SECRET, indexReadConsistencyS: 0 },
  });
  t.teardown(() => s.close());

  // Which requests the plain handler took (the rest the app answered).
  const route = s.services.plainRoutes?.[0];
  t.equal(route?.pattern, '/internal/v1/shard/:shard/:call', 'a searcher with the fleet secret has the plain route');
  const take = route!.take.bind(route);
  const taken: string[] = [];
  (route as { take: typeof take }).take = (req) => {
    const answer = take(req);
    if (answer) taken.push(req.url ?? '');
    return answer;
  };

  const call = async (path: string, o: { body?: string; auth?: string; method?: string } = {}) => {
    const res = await fetch(`${s.url}${path}`, {
      method: o.method ?? 'POST',
      headers: { authorization: o.auth ?? `Bearer ${SECRET}`, 'content-type': 'application/json' },
      ...(o.method === 'GET' ? {} : { body: o.body ?? '{}' }),
    });
    const headers = Object.fromEntries([...res.headers].filter(([k]) => !['date', 'x-request-id', 'keep-alive', 'connection'].includes(k)));
    t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, `${path}: a request id`);
    return { status: res.status, headers, body: await res.text() };
  };
  const both = async (path: string, o: { body?: string; auth?: string; method?: string } = {}) => ({
    plain: await call(path, o),
    app: await call(`${path}?via=app`, o),
  });

  // Answers: the wire text of the shard's own values.
  const stats = await both('/internal/v1/shard/0/corpusStats', { body: JSON.stringify({ terms: ['passport', 'licence'] }) });
  t.equal(stats.plain.status, 200);
  t.same(stats.plain, stats.app, 'an answer: the same status, headers and body');
  t.equal(stats.plain.headers['content-type'], 'application/json; charset=utf-8');
  t.match(JSON.parse(stats.plain.body), { docs: Number });
  const lookup = await both('/internal/v1/shard/1/lookup', {
    body: JSON.stringify({ domains: ['www.ontario.ca'], lang: null, titleTerms: [], terms: ['licence'] }),
  });
  t.equal(lookup.plain.status, 200);
  t.same(lookup.plain, lookup.app, 'a lookup: the same answer');

  // Failures read from the body: the app's problem documents.
  const problem = (r: { status: number; headers: Record<string, string>; body: string }, status: number, code: string) => {
    t.equal(r.status, status, code);
    t.equal(r.headers['content-type'], 'application/problem+json', `${code}: problem+json`);
    t.equal((JSON.parse(r.body) as { code: string }).code, code);
  };
  const notWire = await both('/internal/v1/shard/0/lookup', { body: 'not json' });
  problem(notWire.plain, 400, 'bad_request');
  t.same(notWire.plain, notWire.app, 'a body that is no wire value: the same 400');
  const unknown = await both('/internal/v1/shard/0/nosuchcall');
  problem(unknown.plain, 400, 'bad_request');
  t.same(unknown.plain, unknown.app, 'an unknown call: the same 400');
  const badArgs = await both('/internal/v1/shard/0/lookup', { body: JSON.stringify({ domains: 3 }) });
  problem(badArgs.plain, 400, 'bad_request');
  t.same(badArgs.plain, badArgs.app, 'malformed arguments: the same 400');
  const large = await both('/internal/v1/shard/0/corpusStats', { body: JSON.stringify({ terms: ['x'.repeat(5 * 2 ** 20)] }) });
  problem(large.plain, 413, 'payload_too_large');
  t.same(large.plain, large.app, 'a body over the bound: the same 413');

  // Refusals the plain handler leaves to the app's route: as they always were.
  problem(await call('/internal/v1/shard/0/status', { auth: 'Bearer not-the-secret' }), 401, 'unauthorized');
  problem(await call('/internal/v1/shard/0/status', { auth: '' }), 401, 'unauthorized');
  problem(await call('/internal/v1/shard/7/status'), 404, 'route_not_found');
  problem(await call('/internal/v1/shard/0/status', { method: 'GET' }), 405, 'method_not_allowed');

  t.same(
    taken,
    ['corpusStats', 'lookup', 'lookup', 'nosuchcall', 'lookup', 'corpusStats'].map((c, i) => `/internal/v1/shard/${i === 1 ? 1 : 0}/${c}`),
    'the plain handler took each call without a query string, and only those with the secret to a shard served here',
  );

  // Counted under the app route's pattern, whichever handler answered.
  const metrics = (await api(s, '/metrics')).text;
  const count = (status: number) =>
    Number(
      new RegExp(
        `^svc_http_requests_total\\{method="POST",route="/internal/v1/shard/:shard/:call",status="${status}"\\} (\\d+)$`,
        'm',
      ).exec(metrics)?.[1] ?? 0,
    );
  t.equal(count(200), 4, 'the answers, both handlers');
  t.equal(count(400), 6, 'the 400s, both handlers');
  t.equal(count(413), 2);
  t.equal(count(401), 2);
  t.same(writer.services.plainRoutes, [], 'a process serving no shard has no plain route');

  // A peer leaving mid-body: a client abort on the plain route as on the app route.
  const { host, port } = new URL(s.url);
  // `Expect: 100-continue`: once `100 Continue` arrives the request is the handler's; part of the body, then gone.
  const leave = (path: string) =>
    new Promise<void>((resolve, reject) => {
      const sock = connect(Number(port), '127.0.0.1');
      sock.on('error', reject);
      sock.once('data', (c: Buffer) => {
        if (!c.toString('latin1').startsWith('HTTP/1.1 100')) return reject(new Error(`expected 100 Continue: ${c.toString('latin1')}`));
        sock.write('{"terms":["pass', () => {
          sock.destroy();
          resolve();
        });
      });
      sock.write(
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\n` +
          'Expect: 100-continue\r\nContent-Length: 400\r\n\r\n',
      );
    });
  await leave('/internal/v1/shard/0/corpusStats');
  await leave('/internal/v1/shard/0/corpusStats?via=app');
  const scrape = async () => (await api(s, '/metrics')).text;
  const value = (text: string, line: RegExp) =>
    Number(
      text
        .split('\n')
        .find((l) => line.test(l))
        ?.split(' ')
        .pop() ?? 0,
    );
  await waitFor('two client aborts', async () => value(await scrape(), /^svc_client_aborts_total /) === 2, 10_000);
  const text = await scrape();
  t.equal(value(text, /^svc_http_requests_total\{method="POST",route="\/internal\/v1\/shard\/:shard\/:call",status="499"\}/), 2);
  t.equal(value(text, /^svc_errors_total\{code="internal"\}/), 0, 'no internal error counted');
  const lines = s.logLines.map((l) => JSON.parse(l) as { level: number; msg: string; status?: number });
  t.equal(lines.filter((l) => l.msg === 'request' && l.status === 499).length, 2, 'both logged as 499');
  t.ok(
    lines.every((l) => l.level < 50),
    'nothing logged at error level',
  );
});
