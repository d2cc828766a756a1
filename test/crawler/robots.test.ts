import t from 'tap';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  crawlDelay,
  escapePattern,
  isValidUserAgentToken,
  parseRobots,
  robotsAllows,
  robotsPathOf,
  robotsPatternMatches,
  RobotsCache,
  ROBOTS_PARSE_LIMIT,
  rulesFor,
  sitemaps,
} from '../../crawler/robots.js';
import type { Fetcher } from '../../crawler/fetcher.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { testFetcher } from '../fixtures/net-guard.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';

// The vectors live in ../shared beside the repository; they are read, never copied.
const VECTORS = resolve(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'robots');
const load = <T>(f: string): T => JSON.parse(readFileSync(join(VECTORS, f), 'utf8')) as T;

interface MatchVector {
  name: string;
  robots_txt: string;
  user_agent: string;
  url: string;
  allowed: boolean;
}

t.test('every Google robotstxt matcher vector', async (t) => {
  const vectors = load<MatchVector[]>('google_robots_vectors.json');
  t.equal(vectors.length, 145, 'all 145 vectors present');
  for (const v of vectors) t.equal(robotsAllows(parseRobots(v.robots_txt), v.user_agent, v.url).allowed, v.allowed, v.name);
});

t.test('every path and escape vector', async (t) => {
  const v = load<{
    get_path_params_query: { url: string; expected_path: string }[];
    maybe_escape_pattern: { input: string; expected: string }[];
  }>('google_robots_path_and_escape_vectors.json');
  for (const c of v.get_path_params_query) t.equal(robotsPathOf(c.url), c.expected_path, `path of ${JSON.stringify(c.url)}`);
  for (const c of v.maybe_escape_pattern) t.equal(escapePattern(c.input), c.expected, `escape ${c.input}`);
});

t.test('every user-agent validity vector', async (t) => {
  for (const c of load<{ user_agent: string; valid: boolean }[]>('google_robots_useragent_validity.json'))
    t.equal(isValidUserAgentToken(c.user_agent), c.valid, JSON.stringify(c.user_agent));
  t.equal(isValidUserAgentToken('SvcBot'), true, 'our own token is valid');
});

t.test('every parser vector (line endings, BOM, sitemaps, typos)', async (t) => {
  type P = {
    name: string;
    robots_txt?: string;
    robots_txt_hex?: string;
    valid_directives?: number;
    unknown_directives?: number;
    last_line_seen?: number;
    sitemap?: string;
    reporter_total_lines?: number;
  };
  const vectors = load<P[]>('google_robots_parse_vectors.json');
  t.equal(vectors.length, 13);
  for (const v of vectors) {
    const r = parseRobots(v.robots_txt_hex !== undefined ? Buffer.from(v.robots_txt_hex, 'hex') : (v.robots_txt as string));
    if (v.valid_directives !== undefined) t.equal(r.validDirectives, v.valid_directives, `${v.name} valid`);
    if (v.unknown_directives !== undefined) t.equal(r.unknownDirectives, v.unknown_directives, `${v.name} unknown`);
    if (v.last_line_seen !== undefined) t.equal(r.lastDirectiveLine, v.last_line_seen, `${v.name} last line`);
    if (v.reporter_total_lines !== undefined) t.equal(r.lineCount, v.reporter_total_lines, `${v.name} lines`);
    if (v.sitemap !== undefined) t.same(sitemaps(r), [v.sitemap], `${v.name} sitemap`);
  }
});

t.test('SvcBot-specific behaviour', async (t) => {
  const r = parseRobots(
    [
      'User-agent: *',
      'Disallow: /',
      'Crawl-delay: 9',
      '',
      'User-agent: svcbot',
      'Disallow: /private/',
      'Crawl-delay: 2',
      'Sitemap: https://a.test/s1.xml',
      'User-agent: OtherBot',
      'Disallow: /other/',
      '',
      'User-agent: SVCBOT',
      'Allow: /private/public-*.html$',
      'Sitemap: https://a.test/s2.xml.gz',
    ].join('\n'),
  );
  t.same(robotsAllows(r, 'SvcBot', '/'), { allowed: true, rule: null }, 'own group replaces *');
  t.same(robotsAllows(r, 'SvcBot', '/private/x'), { allowed: false, rule: 'Disallow: /private/' });
  t.same(robotsAllows(r, 'SvcBot', '/private/public-1.html'), { allowed: true, rule: 'Allow: /private/public-*.html$' }, 'merged groups');
  t.equal(robotsAllows(r, 'SvcBot', '/private/public-1.html?x').allowed, false, '$ anchors');
  t.equal(robotsAllows(r, 'SvcBot', '/other/x').allowed, true, 'a rule line closed our group: OtherBot rules are not ours');
  t.equal(robotsAllows(r, 'OtherBot', '/other/x').allowed, false);
  t.equal(robotsAllows(r, 'UnknownBot', '/anything').allowed, false, '* fallback');
  t.equal(robotsAllows(r, 'UnknownBot', '/robots.txt').allowed, true, '/robots.txt always allowed');
  t.equal(crawlDelay(r, 'SvcBot'), 2);
  t.equal(crawlDelay(r, 'UnknownBot'), 9);
  t.same(sitemaps(r), ['https://a.test/s1.xml', 'https://a.test/s2.xml.gz']);
  t.equal(rulesFor(r, 'SvcBot').group, 'specific');
  t.equal(rulesFor(parseRobots('User-agent: x\nDisallow: /'), 'SvcBot').group, 'none');
});

t.test('percent-encoding normalisation and patterns', async (t) => {
  const r = parseRobots('User-agent: SvcBot\nDisallow: /caf\u00e9\nDisallow: /a%2fb\nDisallow: /*.php$\n');
  t.equal(robotsAllows(r, 'SvcBot', '/caf%C3%A9').allowed, false, 'UTF-8 rule matches the encoded path');
  t.equal(robotsAllows(r, 'SvcBot', '/a%2Fb').allowed, false, 'escape case normalised');
  t.equal(robotsAllows(r, 'SvcBot', '/x/y.php').allowed, false);
  t.equal(robotsAllows(r, 'SvcBot', '/x/y.php?q').allowed, true);
  t.equal(robotsPatternMatches('/a/b/c', '/*/c'), true);
  t.equal(robotsPatternMatches('/a', '/a$b'), false, '$ inside a pattern is literal');
  t.equal(robotsPatternMatches('/', ''), true, 'empty pattern matches everything');
});

t.test('parse limit: 500 KiB, the rest ignored', async (t) => {
  const head = 'User-agent: *\nDisallow: /before/\n';
  const big = `${head}${'#'.repeat(ROBOTS_PARSE_LIMIT)}\nDisallow: /after/\n`;
  const r = parseRobots(big);
  t.equal(r.truncated, true);
  t.equal(robotsAllows(r, 'SvcBot', '/before/x').allowed, false);
  t.equal(robotsAllows(r, 'SvcBot', '/after/x').allowed, true);
  t.equal(ROBOTS_PARSE_LIMIT >= 500 * 1024, true, 'at least the RFC minimum');
});

t.test('pathological patterns stay fast enough to finish (bounded work)', async (t) => {
  const pattern = `/${'*a'.repeat(200)}`;
  const r = parseRobots(`User-agent: *\nDisallow: ${pattern}\n`);
  t.equal(robotsAllows(r, 'SvcBot', `/${'a'.repeat(2000)}b`).allowed, false);
});

t.test('RobotsCache against the test web', async (t) => {
  const web = await startTestWeb({ generatedHosts: 0 });
  t.teardown(() => web.close());
  const { fetcher, attempts } = testFetcher(web, { totalTimeoutMs: 2500, headersTimeoutMs: 2000 });
  const cache = new RobotsCache({ fetcher });
  const check = (host: string, path: string) => cache.check(web.url(host, path));

  t.match(await check('alpha.test', '/page-1.html'), { allowed: true, status: 'ok', crawlDelaySec: 1 });
  t.match(await check('alpha.test', '/no-svcbot/x.html'), { allowed: false, rule: 'Disallow: /no-svcbot/', status: 'ok' });
  t.match(await check('alpha.test', '/no-svcbot/except.html'), { allowed: true, rule: 'Allow: /no-svcbot/except.html' });
  t.match(await check('alpha.test', '/file.pdf'), { allowed: false, rule: 'Disallow: /*.pdf$' });
  t.equal(web.requests('alpha.test', '/robots.txt').length, 1, 'fetched once, then cached');

  t.match(await check('beta.test', '/anything'), { allowed: true, status: 'not_found' }, '404 → allow all');
  t.match(await check('robots-410.test', '/page.html'), { allowed: true, status: 'not_found' }, '410 → allow all');
  t.match(await check('robots-500.test', '/page.html'), { allowed: false, status: 'error_disallow_all' }, '5xx → disallow all');
  t.match(await check('robots-503.test', '/page.html'), { allowed: false, status: 'error_disallow_all' });
  t.match(await check('robots-429.test', '/page.html'), { allowed: false, status: 'error_disallow_all' }, '429 → come back later');
  t.match(await check('robots-timeout.test', '/page.html'), { allowed: false, status: 'unreachable' }, 'timeout → disallow all');
  t.match(await check('robots-500.test', '/robots.txt'), { allowed: true }, '/robots.txt itself stays allowed');
  t.match(await check('robots-disallow-all.test', '/page.html'), { allowed: false, rule: 'Disallow: /' });
  t.match(await check('robots-html.test', '/page.html'), { allowed: true, status: 'ok' }, 'HTML answer parses to no rules');
  t.match(await check('robots-gzip.test', '/page.html'), { allowed: false }, 'gzip-encoded robots.txt decoded');

  // Redirects: 5 hops (across hosts) are followed and the target's rules apply; 6 hops → unreachable.
  t.match(await check('robots-redirect.test', '/page.html'), { allowed: false, rule: 'Disallow: /page.html', status: 'ok' });
  const info = await cache.info(web.origin('robots-redirect.test'));
  t.equal(info.url, web.url('robots-target.test', '/shared-robots.txt'));
  t.match(await check('robots-redirect-long.test', '/page.html'), { allowed: false, status: 'unreachable' });
  t.equal((await cache.info(web.origin('robots-redirect-long.test'))).error, 'too_many_redirects');

  // > 500 KiB: rules in the first 500 KiB apply, later ones are ignored.
  t.match(await check('robots-huge.test', '/before-limit/page.html'), { allowed: false });
  t.match(await check('robots-huge.test', '/after-limit/page.html'), { allowed: true });
  t.equal((await cache.info(web.origin('robots-huge.test'))).truncated, true);

  const alpha = await cache.info(web.origin('alpha.test'));
  t.match(alpha, { status: 'ok', httpStatus: 200, group: 'specific', crawlDelaySec: 1 });
  t.same(alpha.sitemaps, [web.url('alpha.test', '/sitemap.xml'), web.url('alpha.test', '/sitemap-gz.xml.gz')]);
  t.ok(alpha.rules.includes('Disallow: /no-svcbot/'));
  t.equal(attempts.filter((a) => a.refused).length, 0, 'only the test web was contacted');
  t.ok(
    web.accessLog.every((e) => e.ua.startsWith('SvcBot/')),
    'SvcBot user agent on every request',
  );
});

t.test('RobotsCache TTL, shared in-flight fetches, stale copy kept when unreachable', async (t) => {
  let clock = 1_000_000;
  let calls = 0;
  let mode: 'ok' | 'down' = 'ok';
  const fetcher: Fetcher = {
    async fetch(url) {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      if (mode === 'down')
        return {
          requestedUrl: url,
          url,
          status: 503,
          headers: {},
          body: Buffer.alloc(0),
          redirects: [],
          address: '127.0.0.1',
          truncated: false,
        };
      return {
        requestedUrl: url,
        url,
        status: 200,
        headers: {},
        body: Buffer.from('User-agent: *\nDisallow: /x\n'),
        redirects: [],
        address: '127.0.0.1',
        truncated: false,
      };
    },
  };
  const cache = new RobotsCache({ fetcher, ttlMs: 48 * 3600_000, errorTtlMs: 60_000, now: () => clock });
  const [a, b] = await Promise.all([cache.check('http://s.test/x'), cache.check('http://s.test/y')]);
  t.equal(calls, 1, 'concurrent checks share one fetch');
  t.equal(a.allowed, false);
  t.equal(b.allowed, true);
  clock += 23 * 3600_000;
  await cache.check('http://s.test/x');
  t.equal(calls, 1, 'still cached at 23 h');
  clock += 2 * 3600_000;
  mode = 'down';
  const c = await cache.check('http://s.test/x');
  t.equal(calls, 2, 'ttl capped at 24 h even when 48 h was asked');
  t.match(c, { allowed: false, status: 'ok' }, 'unreachable refresh keeps the last good copy');
  t.equal((await cache.check('http://s.test/y')).allowed, true);
  t.equal(calls, 2, 'error result cached for errorTtlMs');
  const fresh = new RobotsCache({ fetcher, now: () => clock });
  t.match(await fresh.check('http://t.test/y'), { allowed: false, status: 'error_disallow_all' });
});

t.test('properties: a pattern without wildcards is a prefix match; parsing never throws', async (t) => {
  const fc = (await import('fast-check')).default;
  const seg = fc.stringMatching(/^[a-z0-9/._-]{0,12}$/);
  fc.assert(
    fc.property(seg, seg, (path, pattern) => robotsPatternMatches(`/${path}`, `/${pattern}`) === `/${path}`.startsWith(`/${pattern}`)),
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 400 }), fc.string({ maxLength: 40 }), (bytes, path) => {
      const r = parseRobots(bytes);
      const d = robotsAllows(r, 'SvcBot', `/${path}`);
      return typeof d.allowed === 'boolean';
    }),
    { numRuns: 500 },
  );
  t.pass('properties hold');
});

t.test('robots.txt once per fleet: workers on one shared store fetch each file once per validity period', async (t) => {
  const dir = t.testdir();
  let clock = 5_000_000;
  let calls = 0;
  let status = 200;
  const fetcher: Fetcher = {
    async fetch(url) {
      calls++;
      await new Promise((r) => setTimeout(r, 30));
      return {
        requestedUrl: url,
        url,
        status,
        headers: {},
        body: status === 200 ? Buffer.from('User-agent: *\nCrawl-delay: 2\nDisallow: /x\n') : Buffer.alloc(0),
        redirects: [],
        address: '127.0.0.1',
        truncated: false,
      };
    },
  };
  // Three workers, each with its own handle on the state file (as separate processes would have).
  const dbs = [0, 1, 2].map(() => openStateDb(join(dir, 'state.sqlite')));
  t.teardown(() => dbs.forEach((d) => d.close()));
  const shared = dbs.map((d) => sqliteRepositories(d).robots);
  const worker = (i: number, leaseMs = 5000) =>
    new RobotsCache({ fetcher, now: () => clock, shared: shared[i]!, leaseToken: `w${i}`, leaseMs, pollMs: 10, errorTtlMs: 60_000 });
  const ws = [worker(0), worker(1), worker(2)];

  const first = await Promise.all(ws.map((w, i) => w.check(`http://f.test/${i === 0 ? 'x' : 'y'}`)));
  t.equal(calls, 1, 'three workers asking at once: one fetch for the fleet');
  t.match(first, [
    { allowed: false, crawlDelaySec: 2, status: 'ok' },
    { allowed: true, crawlDelaySec: 2 },
    { allowed: true, crawlDelaySec: 2 },
  ]);
  t.equal((await worker(1).check('http://f.test/x')).allowed, false, 'a worker started later reads the stored file, no fetch');
  t.equal(calls, 1);

  clock += 25 * 3600_000;
  await Promise.all(ws.map((w) => w.check('http://f.test/y')));
  t.equal(calls, 2, 'past its validity: fetched again, once for all');

  // A worker died holding the lease of an origin: the others wait for it, then take over when it lapses.
  await shared[0]!.lease('http://g.test', 'dead', 200, clock);
  setTimeout(() => (clock += 300), 50).unref();
  const late = await Promise.all([worker(1, 200).check('http://g.test/x'), worker(2, 200).check('http://g.test/y')]);
  t.equal(calls, 3, "the dead worker's lease lapsed: one fetch by a survivor");
  t.match(late, [{ allowed: false }, { allowed: true }]);

  // Unreachable at its next refresh: the fleet keeps the last good copy (RFC 9309 §2.4) for errorTtlMs.
  clock += 25 * 3600_000;
  status = 503;
  const kept = await Promise.all([worker(0).check('http://f.test/x'), worker(2).check('http://f.test/y')]);
  t.equal(calls, 4, 'one refresh attempt for the fleet');
  t.match(kept, [
    { allowed: false, status: 'ok' },
    { allowed: true, status: 'ok' },
  ]);
  t.match(await shared[1]!.get('http://f.test'), { status: 'ok', expiresAt: clock + 60_000 }, 'stored with the short error validity');

  status = 200;
  await ws[0]!.invalidate('http://f.test/anything');
  t.equal(await shared[2]!.get('http://f.test'), null, 'invalidated for the fleet');
  await worker(2).check('http://f.test/y');
  t.equal(calls, 5);
});
