/**
 * Issue 46 item 2: every edge answers problem+json or is a documented close. Raw sockets on loopback: slow bodies,
 * broken chunked framing, missing, invalid and duplicate Host headers, absolute-form targets, and clients that
 * leave mid-body (counted as client aborts, never as internal errors).
 */
import { connect, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { errorTable } from '../../errors.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { waitFor } from '../helpers/wait-for.js';

interface Answer {
  status: number;
  head: string;
  body: string;
}

function parse(bytes: Buffer): Answer {
  const text = bytes.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: split < 0 ? '' : text.slice(split + 4) };
}

function open(s: TestService): Socket {
  const u = new URL(s.url);
  return connect(Number(u.port), u.hostname);
}

/** Writes raw bytes, then reads until the server closes the connection. */
function exchange(s: TestService, bytes: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sock = open(s);
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => resolve(parse(Buffer.concat(chunks))));
    sock.write(bytes);
  });
}

/** Sends the head, then one body byte every `everyMs` until the server answers and closes. */
function trickle(s: TestService, head: string, everyMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sock = open(s);
    const chunks: Buffer[] = [];
    const timer = setInterval(() => sock.writable && sock.write('a'), everyMs);
    sock.on('data', (c: Buffer) => chunks.push(c));
    // A byte written after the server answered and closed draws a TCP reset: the answer is already here, so the
    // reset ends the exchange like a close; a reset before any answer is still a failure.
    sock.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET' || chunks.length === 0) reject(err);
    });
    sock.on('close', () => {
      clearInterval(timer);
      resolve(parse(Buffer.concat(chunks)));
    });
    sock.write(head);
  });
}

/**
 * Starts a request with `Expect: 100-continue`, waits for `100 Continue` (the request has reached the app), sends
 * part of the body, then leaves: with a FIN (`end`) or a TCP reset.
 */
function leaveMidBody(s: TestService, head: string, how: 'end' | 'reset'): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = open(s);
    sock.on('error', reject);
    sock.once('data', (c: Buffer) => {
      if (!c.toString('latin1').startsWith('HTTP/1.1 100')) return reject(new Error(`expected 100 Continue, got ${c.toString('latin1')}`));
      sock.write('{"query":"par', () => {
        if (how === 'end') sock.destroy();
        else sock.resetAndDestroy();
        resolve();
      });
    });
    sock.write(head);
  });
}

function assertProblem(t: Test, r: Answer, status: number, code: string, what: string): void {
  t.equal(r.status, status, `${what}: status`);
  t.match(r.head, /\r\nContent-Type: application\/problem\+json\r\n/i, `${what}: problem+json`);
  t.match(r.head, /\r\nConnection: close(\r\n|$)/i, `${what}: closes`);
  let body: { code?: string; status?: number } = {};
  try {
    body = JSON.parse(r.body) as typeof body;
  } catch {
    t.fail(`${what}: a JSON body, got ${JSON.stringify(r.body.slice(0, 80))}`);
  }
  t.equal(body.code, code, `${what}: code`);
  t.equal(body.status, status, `${what}: body status`);
  t.equal(errorTable[code as keyof typeof errorTable]?.status, status, `${what}: a documented code`);
}

const metric = async (s: TestService, line: RegExp): Promise<number> => {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const m = text.split('\n').find((l) => line.test(l));
  return m === undefined ? 0 : Number(m.split(' ').pop());
};

t.test('issue 46 item 2: a body sent too slowly gets 408 problem+json, not a silent close', async (t) => {
  const s = await startTestService({ timeouts: { headersTimeoutMs: 400, requestTimeoutMs: 800, checkIntervalMs: 100 } });
  t.teardown(s.close);
  const h = new URL(s.url).host;
  for (const path of ['/api/v1/requests', '/api/v1/context', '/mcp']) {
    const r = await trickle(
      s,
      `POST ${path} HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\n` +
        'Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n',
      150,
    );
    assertProblem(t, r, 408, 'request_timeout', `slow body on ${path}`);
  }
  // A request answered before its body ended (a bad key) gets that one answer: no 408 to nothing after it.
  const early = await trickle(
    s,
    `POST /api/v1/requests HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer nope\r\nContent-Type: application/json\r\n` +
      'Content-Length: 1000\r\n\r\n',
    150,
  );
  t.equal(early.status, 401, 'the answer sent first');
  t.equal((early.head + early.body).match(/HTTP\/1\.1 \d{3}/g)?.length, 1, 'and no other status line after it');
  t.notOk(
    s.logLines.some((l) => l.includes('"level":50')),
    'nothing logged at error level',
  );
  t.equal(await metric(s, /^svc_errors_total\{code="request_timeout"\}/), 3, 'each 408 counted by its code');
  t.equal(await metric(s, /^svc_errors_total\{code="internal"\}/), 0, 'none counted as internal');
});

t.test('issue 46 item 2: malformed chunked framing in a body gets 400 problem+json', async (t) => {
  const s = await startTestService();
  t.teardown(s.close);
  const h = new URL(s.url).host;
  const head = (path: string) =>
    `POST ${path} HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\n` +
    'Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
  const bodies: [string, string][] = [
    ['a huge chunk size', `FFFFFFFFFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n`],
    ['a 20 KB chunk extension', `2;${'x'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`],
    ['bare-LF chunk lines', `2\n{}\n0\n\n`],
    ['a chunk size that is not hex', `zz\r\n{}\r\n0\r\n\r\n`],
  ];
  for (const path of ['/api/v1/requests', '/api/v1/context', '/mcp']) {
    for (const [what, body] of bodies) assertProblem(t, await exchange(s, head(path) + body), 400, 'bad_request', `${what} on ${path}`);
  }
  // A route that never reads its body: the edge's answer is still the one sent, logged and counted.
  const healthz = await exchange(s, `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`);
  assertProblem(t, healthz, 400, 'bad_request', 'a broken body on a route that ignores it');
  const lines = s.logLines.map((l) => JSON.parse(l) as { msg: string; route?: string; status?: number });
  t.same(
    lines.filter((l) => l.msg === 'request' && l.route === '/healthz').map((l) => l.status),
    [400],
    'logged with the status sent',
  );
  t.equal(await metric(s, /^svc_errors_total\{code="bad_request"\}/), 13, 'every framing answer counted as bad_request');
  t.notOk(
    s.logLines.some((l) => l.includes('"level":50')),
    'nothing logged at error level',
  );
  t.equal(await metric(s, /^svc_errors_total\{code="internal"\}/), 0, 'none counted as internal');
  const ok = await exchange(s, `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`);
  t.equal(ok.status, 200, 'the server still answers');
});

t.test('issue 46 item 2: missing, invalid or duplicate Host and an absolute-form host mismatch get 400 problem+json', async (t) => {
  const s = await startTestService();
  t.teardown(s.close);
  const h = new URL(s.url).host;
  const port = new URL(s.url).port;
  const cases: [string, string][] = [
    ['no Host (HTTP/1.1)', `GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n`],
    ['no Host (HTTP/1.0)', `GET /healthz HTTP/1.0\r\n\r\n`],
    ['Host with a port out of range', `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:99999\r\nConnection: close\r\n\r\n`],
    ['Host that is not a host', `GET /healthz HTTP/1.1\r\nHost: a b/c\r\nConnection: close\r\n\r\n`],
    ['empty Host', `GET /healthz HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n`],
    ['two identical Host headers', `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nHost: ${h}\r\nConnection: close\r\n\r\n`],
    ['two different Host headers', `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`],
    ['absolute-form naming another host', `GET http://evil.example/healthz HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`],
    ['absolute-form naming another port', `GET http://127.0.0.1:1/healthz HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`],
    ['absolute-form that is not http', `GET ftp://${h}/healthz HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`],
  ];
  for (const [what, bytes] of cases) assertProblem(t, await exchange(s, bytes), 400, 'bad_request', what);
  // Well-formed requests still pass, in origin-form and in absolute-form naming the Host.
  t.equal((await exchange(s, `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`)).status, 200);
  t.equal((await exchange(s, `GET http://${h}/healthz HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`)).status, 200);
  t.equal(
    (await exchange(s, `GET http://LOCALHOST:${port}/healthz HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`)).status,
    200,
  );
  // A well-formed name this service is not served under stays 403 forbidden_host (DNS-rebinding protection).
  assertProblem(
    t,
    await exchange(s, `GET /healthz HTTP/1.1\r\nHost: evil.example:${port}\r\nConnection: close\r\n\r\n`),
    403,
    'forbidden_host',
    'a name not served',
  );
});

t.test('issue 46 item 2: clients leaving mid-body are counted as client aborts, logged below error level', async (t) => {
  const s = await startTestService();
  t.teardown(s.close);
  const h = new URL(s.url).host;
  const paths = ['/api/v1/context', '/api/v1/requests', '/mcp'];
  for (const path of paths) {
    for (const how of ['end', 'reset'] as const) {
      await leaveMidBody(
        s,
        `POST ${path} HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\n` +
          'Accept: application/json, text/event-stream\r\nExpect: 100-continue\r\nContent-Length: 400\r\n\r\n',
        how,
      );
    }
  }
  await waitFor('six client aborts', async () => (await metric(s, /^svc_client_aborts_total /)) === 6, 10_000);
  t.equal(await metric(s, /^svc_errors_total\{code="internal"\}/), 0, 'no internal error counted');
  const levels = s.logLines.map((l) => (JSON.parse(l) as { level: number }).level);
  t.ok(
    levels.every((l) => l < 50),
    'nothing logged at error level',
  );
  for (const path of paths) {
    const lines = s.logLines.map((l) => JSON.parse(l) as { route?: string; status?: number; msg: string });
    t.equal(lines.filter((l) => l.msg === 'request' && l.route === path && l.status === 499).length, 2, `${path}: logged as 499`);
    t.equal(await metric(s, new RegExp(`^svc_http_requests_total\\{method="POST",route="${path}",status="499"\\}`)), 2);
  }
});
