import { connect } from 'node:net';
import t from 'tap';
import { errorTable } from '../../errors.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** Writes raw bytes, then reads until the server closes (or `waitMs` passes); returns status, headers, body. */
function exchange(s: TestService, bytes: Buffer | string, waitMs = 5_000): Promise<{ status: number; head: string; body: string }> {
  const u = new URL(s.url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => sock.destroy(), waitMs);
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: split < 0 ? '' : text.slice(split + 4) });
    });
    if (bytes !== '') sock.write(bytes);
  });
}

const host = (s: TestService) => new URL(s.url).host;

t.test('issue 12 item 4: requests Node refuses get a problem+json body and the connection closes', async (t) => {
  const s = await startTestService({ timeouts: { headersTimeoutMs: 400, requestTimeoutMs: 800, checkIntervalMs: 100 } });
  t.teardown(s.close);
  const h = host(s);
  const cases: [string, Buffer | string, number, string][] = [
    ['NUL in the request line', `GET /healthz\0x HTTP/1.1\r\nHost: ${h}\r\n\r\n`, 400, 'bad_request'],
    ['control byte in a header value', `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nX-A: a\x01b\r\n\r\n`, 400, 'bad_request'],
    ['NUL in a header name', `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nX\0A: b\r\n\r\n`, 400, 'bad_request'],
    [
      'Content-Length with Transfer-Encoding',
      `POST /api/v1/requests HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      400,
      'bad_request',
    ],
    [
      'duplicate Content-Length',
      `POST /api/v1/requests HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab`,
      400,
      'bad_request',
    ],
    ['a garbage method', `G@RB<>GE /healthz HTTP/1.1\r\nHost: ${h}\r\n\r\n`, 400, 'bad_request'],
    ['a 40 KB URL', `GET /api/v1/search?q=${'a'.repeat(40_000)} HTTP/1.1\r\nHost: ${h}\r\n\r\n`, 431, 'headers_too_large'],
    ['headers that never finish (slow client)', `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nX-Slow: `, 408, 'request_timeout'],
  ];
  for (const [what, bytes, status, code] of cases) {
    const r = await exchange(s, bytes);
    t.equal(r.status, status, `${what}: status`);
    t.match(r.head, /\r\nContent-Type: application\/problem\+json\r\n/i, `${what}: problem+json`);
    t.match(r.head, /\r\nConnection: close(\r\n|$)/i, `${what}: closes`);
    const body = JSON.parse(r.body) as { code: string; status: number; detail: string };
    t.equal(body.code, code, `${what}: code`);
    t.equal(body.status, status);
    t.equal(errorTable[body.code as keyof typeof errorTable]?.status, status, `${what}: a documented code`);
    t.notMatch(body.detail, /aaaa|X-Slow|x-a/i, `${what}: the detail quotes no request bytes`);
  }
  // The server is still healthy afterwards, on a fresh connection.
  const ok = await exchange(s, `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`);
  t.equal(ok.status, 200);
});
