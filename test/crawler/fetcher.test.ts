import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  createConnector,
  createFetcher,
  defaultConnector,
  FETCH_ERROR_RETRYABLE,
  FetchError,
  parseRetryAfter,
  svcBotUserAgent,
  type Connector,
  type FetchErrorKind,
  type FetchResult,
} from '../../crawler/fetcher.js';
import { createResolver } from '../../crawler/resolver.js';
import { RobotsCache } from '../../crawler/robots.js';
import { refusedTargets } from '../../fixtures/loopback-only.js';
import { startCanary, startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { guardedConnector, offlineLookup, TEST_UA, testFetcher } from '../fixtures/net-guard.js';

// A real GC for the memory checks (rough numbers, no timing): expose it without a command-line flag.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Resolves to the FetchError kind, or fails the test if the fetch succeeded. */
async function kindOf(p: Promise<FetchResult>): Promise<FetchErrorKind | string> {
  try {
    const r = await p;
    return `succeeded with ${r.status}`;
  } catch (e) {
    return e instanceof FetchError ? e.kind : `non-fetch error: ${(e as Error).message}`;
  }
}

let web: TestWeb;
t.before(async () => {
  web = await startTestWeb({ generatedHosts: 0 });
});
t.teardown(() => web.close());

t.test('User-Agent, headers, no cookies, pinned address', async (t) => {
  const { fetcher, attempts } = testFetcher(web);
  const r = await fetcher.fetch(web.url('trap.test', '/echo-headers'));
  t.equal(r.status, 200);
  t.equal(r.address, '127.0.0.1');
  const sent = JSON.parse(r.body.toString()) as Record<string, string>;
  t.equal(sent['user-agent'], TEST_UA);
  t.equal(sent.host, `trap.test:${web.port}`, 'Host header is the name, not the address');
  t.equal(sent['accept-encoding'], 'gzip, deflate, br');
  t.notOk('cookie' in sent);
  t.notOk('authorization' in sent);
  t.equal(svcBotUserAgent('0.1.0', 'https://svc.invalid/webmasters'), TEST_UA);

  const c1 = await fetcher.fetch(web.url('trap.test', '/set-cookie'));
  t.notOk('set-cookie' in c1.headers, 'Set-Cookie dropped');
  const c2 = await fetcher.fetch(web.url('trap.test', '/set-cookie'));
  t.match(c2.body.toString(), /cookie header seen: none/, 'cookies are never sent back');
  t.ok(attempts.every((a) => a.address === '127.0.0.1' && a.port === web.port && !a.refused));
});

t.test('HEAD, conditional GET, non-HTML types', async (t) => {
  const { fetcher } = testFetcher(web);
  const before = web.accessLog.length;
  const h = await fetcher.fetch(web.url('trap.test', '/head-only'), { method: 'HEAD' });
  t.equal(h.status, 200);
  t.equal(h.body.length, 0);
  t.equal(web.accessLog[before]?.method, 'HEAD');
  const full = await fetcher.fetch(web.url('alpha.test', '/etag.html'));
  t.equal(full.headers.etag, '"v1"');
  const cond = await fetcher.fetch(web.url('alpha.test', '/etag.html'), { headers: { 'if-none-match': '"v1"' } });
  t.equal(cond.status, 304);
  t.equal(cond.body.length, 0);
  const ims = await fetcher.fetch(web.url('alpha.test', '/etag.html'), {
    headers: { 'if-modified-since': 'Wed, 01 Oct 2026 12:00:00 GMT' },
  });
  t.equal(ims.status, 304);
  const bin = await fetcher.fetch(web.url('trap.test', '/binary'));
  t.same([...bin.body], [0, 1, 2, 3, 255]);
  t.equal(bin.headers['content-type'], 'application/octet-stream');
  const json = await fetcher.fetch(web.url('alpha.test', '/data.json'));
  t.same(JSON.parse(json.body.toString()), { hello: 'world' });
  const nf = await fetcher.fetch(web.url('alpha.test', '/missing'));
  t.equal(nf.status, 404, 'HTTP errors are results, not exceptions');
  t.equal(await kindOf(fetcher.fetch(web.url('alpha.test', '/'), { method: 'POST' as never })), 'protocol', 'GET and HEAD only');
});

t.test('redirect chains across hosts: 5 followed, 6 refused', async (t) => {
  const { fetcher } = testFetcher(web);
  const r = await fetcher.fetch(web.url('trap.test', '/chain?n=5'));
  t.equal(r.status, 200);
  t.equal(r.redirects.length, 5);
  t.equal(r.url, web.url('trap2.test', '/chain?n=0'));
  t.equal(r.requestedUrl, web.url('trap.test', '/chain?n=5'));
  t.same(new Set(r.redirects.map((u) => new URL(u).hostname)), new Set(['trap.test', 'trap2.test']), 'hops alternate hosts');
  const before = web.accessLog.length;
  t.equal(await kindOf(fetcher.fetch(web.url('trap.test', '/chain?n=6'))), 'too_many_redirects');
  t.equal(web.accessLog.length - before, 6, 'the 7th request is never sent');
  const manual = await fetcher.fetch(web.url('trap.test', '/chain?n=2'), { followRedirects: false });
  t.ok([301, 302, 303, 307, 308].includes(manual.status));
  t.equal(manual.headers.location, web.url('trap.test', '/chain?n=1'));
});

t.test('redirect loops', async (t) => {
  const { fetcher } = testFetcher(web);
  t.equal(await kindOf(fetcher.fetch(web.url('trap.test', '/loop/a'))), 'redirect_loop');
  t.equal(await kindOf(fetcher.fetch(web.url('trap.test', '/loop/self'))), 'redirect_loop');
  t.equal(await kindOf(fetcher.fetch(web.url('trap.test', '/loop/cross'))), 'redirect_loop');
  const err = await fetcher.fetch(web.url('trap.test', '/loop/a')).catch((e: FetchError) => e);
  t.equal((err as FetchError).retryable, false);
});

t.test('beforeRedirect sees every hop; robots of the new origin can refuse it', async (t) => {
  const { fetcher } = testFetcher(web);
  const seen: string[] = [];
  const r = await fetcher.fetch(web.url('alpha.test', '/redirect/to-beta'), {
    beforeRedirect: async (next) => {
      seen.push(next.href);
    },
  });
  t.equal(r.url, web.url('beta.test', '/landing.html'));
  t.same(seen, [web.url('beta.test', '/landing.html')]);

  const robots = new RobotsCache({ fetcher });
  class RobotsRefusal extends Error {}
  const before = web.requests('gamma.test', '/blocked-by-robots.html').length;
  const refusal = await fetcher
    .fetch(web.url('beta.test', '/to-gamma'), {
      beforeRedirect: async (next) => {
        const c = await robots.check(next.href);
        if (!c.allowed) throw new RobotsRefusal(`robots: ${c.rule}`);
      },
    })
    .catch((e: unknown) => e);
  t.ok(refusal instanceof RobotsRefusal, "the hook's own error propagates unchanged");
  t.equal((refusal as Error).message, 'robots: Disallow: /blocked-by-robots.html');
  t.equal(web.requests('gamma.test', '/blocked-by-robots.html').length, before, 'the disallowed target was never requested');
  t.equal(web.requests('gamma.test', '/robots.txt').length, 1, "only the target's robots.txt was");
});

t.test('SSRF: redirects to blocked addresses, bad schemes and credentials are refused before any connection', async (t) => {
  const { fetcher, attempts } = testFetcher(web);
  const cases: [string, FetchErrorKind][] = [
    ['/to-private', 'blocked_address'],
    ['/to-metadata', 'blocked_address'],
    ['/to-decimal', 'blocked_address'],
    ['/to-octal', 'blocked_address'],
    ['/to-hex', 'blocked_address'],
    ['/to-short', 'blocked_address'],
    ['/to-mapped', 'blocked_address'],
    ['/to-nat64', 'blocked_address'],
    ['/to-6to4', 'blocked_address'],
    ['/to-ula', 'blocked_address'],
    ['/to-link-local', 'blocked_address'],
    ['/to-cgnat', 'blocked_address'],
    ['/to-unspecified', 'blocked_address'],
    ['/to-private-name', 'blocked_address'],
    ['/to-file', 'bad_scheme'],
    ['/to-gopher', 'bad_scheme'],
    ['/to-credentials', 'credentials'],
  ];
  // What each blocked redirect target is, once decoded and classified (the hostile spellings are 10.0.0.1 or
  // 169.254.169.254 in disguise; the IPv6 forms embed private or metadata addresses): the refusal names it, so it came
  // from the classifier, before any connection. Every blocked target of the fixture is listed.
  const classified: Record<string, RegExp> = {
    '/to-private': /10\.0\.0\.1 \(private\)/,
    '/to-metadata': /169\.254\.169\.254 \(metadata\)/,
    '/to-decimal': /10\.0\.0\.1 \(private\)/,
    '/to-octal': /10\.0\.0\.1 \(private\)/,
    '/to-hex': /169\.254\.169\.254 \(metadata\)/,
    '/to-short': /10\.0\.0\.1 \(private\)/,
    '/to-mapped': /::ffff:a00:1 \(private\)/,
    '/to-nat64': /64:ff9b::a9fe:a9fe \(metadata\)/,
    '/to-6to4': /2002:c0a8:101::1 \(private\)/,
    '/to-ula': /fd00::1 \(private\)/,
    '/to-link-local': /fe80::1 \(link-local\)/,
    '/to-cgnat': /100\.64\.0\.1 \(cgnat\)/,
    '/to-unspecified': /0\.0\.0\.0 \(unspecified\)/,
    '/to-private-name': /intranet\.test resolves to 10\.0\.0\.2 \(private\)/,
  };
  for (const [path, kind] of cases) {
    const connections = attempts.length;
    const refusedBefore = refusedTargets.length;
    const err = await fetcher.fetch(web.url('trap.test', path)).then(
      (r) => r.status,
      (e: unknown) => e,
    );
    t.equal(err instanceof FetchError ? err.kind : String(err), kind, path);
    if (kind === 'blocked_address')
      t.match((err as FetchError).message, classified[path] ?? /no classification listed/, `${path}: refused as what it decodes to`);
    t.equal(attempts.length - connections, 1, `${path}: one connection, to the redirecting page on loopback`);
    t.equal(refusedTargets.length, refusedBefore, `${path}: the process-wide guard saw no attempt at its target`);
  }
  t.equal(attempts.length, cases.length, 'one connection per case: the redirecting page only');
  t.ok(
    attempts.every((a) => a.address === '127.0.0.1' && a.port === web.port),
    'never any other address',
  );
  t.equal(web.requests('intranet.test').length, 0);
  t.same(refusedTargets, [], 'the process-wide guard saw no attempt at 10.0.0.1, 012.0.0.1, 100.64.0.1 or any other');
});

t.test('SSRF corpus with loopback blocked: the canary receives zero connections', async (t) => {
  const canary = await startCanary();
  t.teardown(() => canary.close());
  const { lookup } = offlineLookup();
  // The REAL connector: if the fetcher were wrong it would reach the canary (loopback, so still safe).
  const fetcher = createFetcher({
    userAgent: TEST_UA,
    resolver: createResolver({ pins: [`canary.test:${canary.port}:127.0.0.1`, `canary6.test:${canary.port}:::1`], lookup }),
    allowLoopback: false,
    totalTimeoutMs: 3000,
  });
  const p = canary.port;
  const urls = [
    `http://127.0.0.1:${p}/`,
    `http://2130706433:${p}/`,
    `http://0177.0.0.1:${p}/`,
    `http://0x7f.1:${p}/`,
    `http://0x7f000001:${p}/`,
    `http://127.1:${p}/`,
    `http://127.0.0.1.:${p}/`,
    `http://[::1]:${p}/`,
    `http://[::ffff:127.0.0.1]:${p}/`,
    `http://[::ffff:7f00:1]:${p}/`,
    `http://canary.test:${p}/`,
    `http://CANARY.test.:${p}/`,
    `http://canary6.test:${p}/`,
    `https://canary.test:${p}/`,
  ];
  for (const u of urls) t.equal(await kindOf(fetcher.fetch(u)), 'blocked_address', u);
  t.equal(await kindOf(fetcher.fetch(`http://user:pw@canary.test:${p}/`)), 'credentials');
  t.equal(await kindOf(fetcher.fetch(`http://user@127.0.0.1:${p}/`)), 'credentials');
  t.equal(await kindOf(fetcher.fetch(`ftp://canary.test:${p}/`)), 'bad_scheme');
  t.equal(await kindOf(fetcher.fetch(`file:///etc/passwd`)), 'bad_scheme');
  t.equal(await kindOf(fetcher.fetch('not a url')), 'protocol');
  t.equal(canary.connections, 0, 'canary: zero connections');
});

t.test('a resolver that answers an allowed address and then a blocked one is refused', async (t) => {
  const { connector, attempts } = guardedConnector([web.port]);
  const answers = [
    ['127.0.0.2', '10.0.0.1'],
    ['127.0.0.1', '169.254.169.254'],
    ['127.0.0.1', '::ffff:192.168.0.1'],
    ['::1', 'fd00:ec2::254'],
  ];
  for (const list of answers) {
    const fetcher = createFetcher({
      userAgent: TEST_UA,
      allowLoopback: true,
      connector,
      resolver: createResolver({ lookup: async () => list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) }),
    });
    t.equal(await kindOf(fetcher.fetch(`http://rebind.test:${web.port}/`)), 'blocked_address', list.join(' + '));
  }
  t.equal(attempts.length, 0, 'no connection attempted');
});

t.test('blocked ranges proven through the classifier and a connector that records and refuses', async (t) => {
  const blocked = [
    '10.1.2.3',
    '172.20.0.1',
    '192.168.0.10',
    '169.254.169.254',
    '169.254.10.10',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.251',
    '240.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '::',
    'fc00::1',
    'fe80::1',
    'ff02::1',
    'fd00:ec2::254',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:a00:1::',
    '2001:db8::1',
    '127.0.0.1',
    '::1',
  ];
  const { connector, attempts } = guardedConnector([]);
  const pins = blocked.map((ip, i) => `h${i}.test:80:${ip}`);
  const fetcher = createFetcher({
    userAgent: TEST_UA,
    allowLoopback: false,
    connector,
    resolver: createResolver({ pins, lookup: offlineLookup().lookup }),
  });
  for (let i = 0; i < blocked.length; i++)
    t.equal(await kindOf(fetcher.fetch(`http://h${i}.test/`)), 'blocked_address', String(blocked[i]));
  t.equal(attempts.length, 0, 'no blocked address ever reached the connector');
  // A public address does reach the connector (the guard refuses it, so nothing leaves the machine).
  const pub = createFetcher({
    userAgent: TEST_UA,
    allowLoopback: false,
    connector,
    resolver: createResolver({ pins: ['pub.test:80:93.184.216.34'] }),
  });
  t.equal(await kindOf(pub.fetch('http://pub.test/')), 'connect');
  t.same(attempts, [{ address: '93.184.216.34', port: 80, servername: 'pub.test', refused: true }]);
});

t.test('DNS failure', async (t) => {
  const { fetcher, lookups } = testFetcher(web);
  const err = (await fetcher.fetch(`http://unknown.test:${web.port}/`).catch((e: unknown) => e)) as FetchError;
  t.equal(err.kind, 'dns');
  t.equal(err.retryable, true);
  t.same(lookups, ['unknown.test']);
});

t.test('decoding: gzip, br, layers, broken streams', async (t) => {
  const { fetcher } = testFetcher(web);
  t.match((await fetcher.fetch(web.url('trap.test', '/gzip-ok'))).body.toString(), /compressed page/);
  t.match((await fetcher.fetch(web.url('trap.test', '/br-ok'))).body.toString(), /brotli page/);
  t.equal(await kindOf(fetcher.fetch(web.url('trap.test', '/three-layers'))), 'decompression');
  t.equal(await kindOf(fetcher.fetch(web.url('trap.test', '/bad-gzip'))), 'decompression');
  t.equal(await kindOf(fetcher.fetch(web.url('trap.test', '/unknown-encoding'))), 'decompression');
  const oneLayer = testFetcher(web, { maxDecodeLayers: 1 }).fetcher;
  t.equal(await kindOf(oneLayer.fetch(web.url('trap.test', '/gzip-bomb-2layers'))), 'decompression');
  const three = testFetcher(web, { maxDecodeLayers: 3 }).fetcher;
  t.equal((await three.fetch(web.url('trap.test', '/three-layers'))).body.toString(), 'three layers');
  // A real page served gzip-encoded.
  const index = (await fetcher.fetch(web.url('articles.test', '/'))).body.toString();
  const first = /href="(\/a\/[0-9a-f]{64}\.html)"/.exec(index)?.[1];
  if (first) t.match((await fetcher.fetch(web.url('articles.test', first))).body.toString('utf8'), /<html|<!doctype/i);
  else t.comment('shared article corpus missing; skipped the real gzip page');
});

t.test('size caps: huge, endless, gzip and brotli bombs stop at the cap with bounded memory', async (t) => {
  const cap = 1024 * 1024;
  const { fetcher } = testFetcher(web, { maxBytes: cap });
  // Warm up: the server builds its bombs lazily (64 MiB of zeros, in this same process).
  t.equal(await kindOf(fetcher.fetch(web.url('trap.test', '/gzip-bomb'))), 'too_large');
  await fetcher.fetch(web.url('trap.test', '/br-bomb')).catch(() => {});
  await fetcher.fetch(web.url('trap.test', '/huge')).catch(() => {}); // its 8 MiB body is cached server-side
  const mem = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const settle = async () => {
    // External (Buffer) memory is released after the collection; give it a turn, twice.
    for (let i = 0; i < 2; i++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
  };
  await settle();
  const base = mem();
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, mem())), 2);
  const rounds = 4;
  for (let i = 0; i < rounds; i++) {
    for (const path of ['/gzip-bomb', '/gzip-bomb-2layers', '/br-bomb', '/endless', '/huge']) {
      t.equal(await kindOf(fetcher.fetch(web.url('trap.test', path))), 'too_large', `${path} round ${i}`);
      peak = Math.max(peak, mem());
    }
  }
  clearInterval(sampler);
  // Fully decoded, these would be 4 × (3 × 64 MiB + endless + 8 MiB). Stopping at 1 MiB each keeps growth small.
  const growthMiB = (peak - base) / 1024 / 1024;
  t.ok(growthMiB < 64, `peak growth ${growthMiB.toFixed(1)} MiB stays well below one decoded bomb (64 MiB)`);
  await settle();
  const retainedMiB = (mem() - base) / 1024 / 1024;
  t.ok(retainedMiB < 8, `retained after GC: ${retainedMiB.toFixed(1)} MiB (nothing kept from the bodies)`);
  const def = testFetcher(web).fetcher;
  t.equal(await kindOf(def.fetch(web.url('trap.test', '/huge'))), 'too_large', '8 MiB over the 5 MiB default');
  const trunc = await fetcher.fetch(web.url('trap.test', '/gzip-bomb'), { maxBytes: 1000, truncate: true });
  t.equal(trunc.truncated, true);
  t.equal(trunc.body.length, 1000);
  t.equal(
    trunc.body.every((b) => b === 0),
    true,
  );
  const notRaised = await fetcher.fetch(web.url('trap.test', '/huge'), { maxBytes: 64 * 1024 * 1024 }).catch((e: FetchError) => e.kind);
  t.equal(notRaised, 'too_large', 'a per-request cap cannot raise the fetcher cap');
});

t.test('time limits: headers, total deadline on a trickle, minimum rate, connect', async (t) => {
  const slowHeaders = testFetcher(web, { headersTimeoutMs: 300 }).fetcher;
  t.equal(await kindOf(slowHeaders.fetch(web.url('trap.test', '/slow-headers?ms=5000'))), 'timeout');

  const deadline = testFetcher(web, { totalTimeoutMs: 800, minBytesPerSec: 0 }).fetcher;
  const e1 = (await deadline.fetch(web.url('trap.test', '/trickle?every=50')).catch((e: unknown) => e)) as FetchError;
  t.equal(e1.kind, 'timeout', 'trickle cut at the total deadline');
  t.equal(e1.retryable, true);

  const rate = testFetcher(web, { totalTimeoutMs: 20_000, minBytesPerSec: 1000, slowWindowMs: 400 }).fetcher;
  t.equal(await kindOf(rate.fetch(web.url('trap.test', '/trickle?every=100'))), 'slow_transfer');

  let aborted = false;
  const hanging: Connector = ({ signal }) =>
    new Promise((_ok, fail) => {
      signal.addEventListener('abort', () => {
        aborted = true;
        fail(new Error('aborted'));
      });
    });
  const connectSlow = createFetcher({
    userAgent: TEST_UA,
    allowLoopback: true,
    connector: hanging,
    connectTimeoutMs: 200,
    resolver: createResolver({ pins: [`slow.test:80:127.0.0.1`] }),
  });
  t.equal(await kindOf(connectSlow.fetch('http://slow.test/')), 'timeout');
  t.equal(aborted, true, 'the connector was told to give up');
});

t.test('429 and 503 with Retry-After', async (t) => {
  const { fetcher } = testFetcher(web);
  const r429 = await fetcher.fetch(web.url('trap.test', '/429'));
  t.equal(r429.status, 429);
  t.equal(parseRetryAfter(r429.headers['retry-after']), 7000);
  const r503 = await fetcher.fetch(web.url('trap.test', '/503-date'));
  t.equal(r503.status, 503);
  const ms = parseRetryAfter(r503.headers['retry-after']);
  t.ok(ms !== null && ms > 0 && ms <= 30_000, `HTTP-date ≈ 30 s ahead (${ms})`);
});

t.test('parseRetryAfter', async (t) => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  t.equal(parseRetryAfter('120', now), 120_000);
  t.equal(parseRetryAfter(' 0 ', now), 0);
  t.equal(parseRetryAfter('Sat, 21 Nov 2026 12:01:30 GMT', now), 90_000);
  t.equal(parseRetryAfter('Saturday, 21-Nov-26 12:00:10 GMT', now), 10_000);
  t.equal(parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', now), 0, 'past date → now');
  t.equal(parseRetryAfter('Sat, 21 Nov 2026 12:00:05 GMT', new Date(now)), 5000);
  for (const bad of [undefined, null, '', '-1', '1.5', 'soon', '12abc']) t.equal(parseRetryAfter(bad as string, now), null, String(bad));
});

t.test('retry policy per error kind', async (t) => {
  t.same(
    Object.entries(FETCH_ERROR_RETRYABLE)
      .filter(([, v]) => v)
      .map(([k]) => k)
      .sort(),
    ['connect', 'dns', 'protocol', 'slow_transfer', 'timeout'],
  );
  t.equal(new FetchError('blocked_address', 'x').retryable, false);
  t.equal(new FetchError('timeout', 'x').retryable, true);
});

t.test('default connector really connects to the pinned address only', async (t) => {
  const fetcher = createFetcher({
    userAgent: TEST_UA,
    allowLoopback: true,
    connector: defaultConnector,
    resolver: createResolver({ pins: web.pins, lookup: offlineLookup().lookup }),
  });
  const before = web.connections;
  const r = await fetcher.fetch(web.url('beta.test', '/'));
  t.equal(r.status, 200);
  t.equal(web.connections - before, 1);
});

t.test('https: connects to the pinned address, SNI and certificate check use the name', async (t) => {
  const dir = t.testdir();
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=secure.test',
        '-addext',
        'subjectAltName=DNS:secure.test',
      ],
      { stdio: 'ignore' },
    );
  } catch {
    t.comment('openssl not available: https test skipped');
    return;
  }
  const cert = readFileSync(join(dir, 'cert.pem'));
  const seen: { servername: string | false | null; host: string | undefined }[] = [];
  const server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    seen.push({ servername: (req.socket as TLSSocket).servername, host: req.headers.host });
    res.end('secure hello');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  t.teardown(() => new Promise<void>((ok) => server.close(() => ok())));
  const port = (server.address() as AddressInfo).port;
  const connector = createConnector({ ca: cert });
  const fetcher = createFetcher({
    userAgent: TEST_UA,
    allowLoopback: true,
    connector,
    resolver: createResolver({ pins: [`secure.test:${port}:127.0.0.1`, `other.test:${port}:127.0.0.1`], lookup: offlineLookup().lookup }),
  });
  const r = await fetcher.fetch(`https://secure.test:${port}/`);
  t.equal(r.status, 200);
  t.equal(r.body.toString(), 'secure hello');
  t.equal(r.address, '127.0.0.1');
  t.same(seen, [{ servername: 'secure.test', host: `secure.test:${port}` }]);
  // Same address, another name: the certificate does not match that name → refused.
  t.equal(await kindOf(fetcher.fetch(`https://other.test:${port}/`)), 'connect');
  // Without the test CA the self-signed certificate is not trusted.
  const strict = createFetcher({
    userAgent: TEST_UA,
    allowLoopback: true,
    resolver: createResolver({ pins: [`secure.test:${port}:127.0.0.1`] }),
  });
  t.equal(await kindOf(strict.fetch(`https://secure.test:${port}/`)), 'connect');
  t.equal(seen.length, 1, 'no request reached the server over an untrusted connection');
});
