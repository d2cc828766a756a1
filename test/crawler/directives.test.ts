import t from 'tap';
import { parse as parseHtml } from 'node-html-parser';
import {
  DIRECTIVE_TABLE,
  META_NAME,
  NO_DIRECTIVES,
  parseDirectives,
  relForbidsFollow,
  USER_AGENT_TOKEN,
  type MetaTag,
} from '../../crawler/directives.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { testFetcher } from '../fixtures/net-guard.js';

const NOW = new Date('2026-11-21T00:00:00Z');
const meta = (content: string, name = 'robots'): MetaTag[] => [{ name, content }];

t.test('names', async (t) => {
  t.equal(USER_AGENT_TOKEN, 'SvcBot');
  t.equal(META_NAME, 'svcbot');
});

t.test('DIRECTIVE_TABLE carries spec §1.3 verbatim first', async (t) => {
  const spec = DIRECTIVE_TABLE.filter((r) => r.spec).map((r) => [r.directive, r.effect]);
  t.same(spec, [
    ['noindex or none', 'excludes the page and its entities'],
    ['nofollow', "stops admission of the page's links"],
    ['nosnippet or max-snippet:0', 'removes the excerpt'],
    ['canonical', 'a grouping hint only, never permission'],
  ]);
  t.same(
    DIRECTIVE_TABLE.slice(0, 4).map((r) => r.spec),
    [true, true, true, true],
  );
});

t.test('every directive row, from each source (meta robots, meta svcbot, X-Robots-Tag plain and svcbot:)', async (t) => {
  // row directive token(s) → expected effect on the combined Directives
  const rows: [string, Partial<typeof NO_DIRECTIVES>][] = [
    ['noindex', { noindex: true, nofollow: false }],
    ['none', { noindex: true, nofollow: true }],
    ['nofollow', { nofollow: true, noindex: false }],
    ['nosnippet', { nosnippet: true, maxSnippet: null }],
    ['max-snippet:0', { nosnippet: true, maxSnippet: null }],
    ['max-snippet:50', { nosnippet: false, maxSnippet: 50 }],
    ['max-snippet:-1', { nosnippet: false, maxSnippet: null }],
    ['unavailable_after: 2001-01-01T00:00:00Z', { noindex: true, unavailableAfter: '2001-01-01T00:00:00.000Z' }],
    ['unavailable_after: 2999-01-01T00:00:00Z', { noindex: false, unavailableAfter: '2999-01-01T00:00:00.000Z' }],
    ['noimageindex', { noimageindex: true, noindex: false }],
    ['all', { noindex: false, nofollow: false, nosnippet: false }],
    ['index, follow', { noindex: false, nofollow: false }],
  ];
  for (const [tok, want] of rows) {
    t.match(parseDirectives({ metas: meta(tok), now: NOW }), want, `meta robots ${tok}`);
    t.match(parseDirectives({ metas: meta(tok, 'SvcBot'), now: NOW }), want, `meta svcbot ${tok}`);
    t.match(parseDirectives({ xRobotsTag: tok, now: NOW }), want, `X-Robots-Tag ${tok}`);
    t.match(parseDirectives({ xRobotsTag: `svcbot: ${tok}`, now: NOW }), want, `X-Robots-Tag svcbot: ${tok}`);
    t.match(parseDirectives({ headers: { 'x-robots-tag': `SvcBot: ${tok}` }, now: NOW }), want, `headers map ${tok}`);
  }
});

t.test('the DIRECTIVE_TABLE examples produce their effect', async (t) => {
  const byDirective = new Map(DIRECTIVE_TABLE.map((r) => [r.directive, r]));
  const ex = (d: string) => byDirective.get(d)?.example ?? t.fail(`missing row ${d}`);
  t.equal(parseDirectives({ metas: meta(String(ex('noindex or none'))) }).noindex, true);
  t.equal(parseDirectives({ metas: meta(String(ex('nofollow'))) }).nofollow, true);
  t.equal(parseDirectives({ metas: meta(String(ex('nosnippet or max-snippet:0'))) }).nosnippet, true);
  t.equal(parseDirectives({ metas: meta(String(ex('max-snippet:N'))) }).maxSnippet, 50);
  t.equal(parseDirectives({ metas: meta(String(ex('unavailable_after:DATE'))), now: NOW }).noindex, true);
  t.equal(parseDirectives({ metas: meta(String(ex('noimageindex'))) }).noimageindex, true);
  t.same(parseDirectives({ metas: meta(String(ex('all'))) }), { ...NO_DIRECTIVES, applied: ['all'] });
  // canonical is no directive at all: a canonical link never changes permissions.
  t.same(parseDirectives({ metas: [{ name: 'canonical', content: 'https://elsewhere.test/' }] }), NO_DIRECTIVES);
  t.equal(relForbidsFollow('nofollow'), true);
  t.equal(relForbidsFollow('NoFollow noopener'), true);
  t.equal(relForbidsFollow('sponsored ugc'), false);
  t.equal(relForbidsFollow(undefined), false);
});

t.test('other crawlers are ignored', async (t) => {
  t.same(parseDirectives({ metas: meta('noindex', 'googlebot') }), NO_DIRECTIVES);
  t.same(parseDirectives({ xRobotsTag: 'googlebot: noindex, nofollow' }), NO_DIRECTIVES);
  t.same(parseDirectives({ xRobotsTag: 'bingbot: none' }), NO_DIRECTIVES);
  t.match(parseDirectives({ xRobotsTag: 'googlebot: noindex, svcbot: nofollow' }), { noindex: false, nofollow: true });
  t.match(
    parseDirectives({ xRobotsTag: ['googlebot: noindex', 'nofollow'] }),
    { noindex: false, nofollow: true },
    'a new header resets the prefix',
  );
  t.match(parseDirectives({ xRobotsTag: 'svcbot: noindex, otherbot: nofollow' }), { noindex: true, nofollow: false });
});

t.test('most restrictive combination across sources', async (t) => {
  const d = parseDirectives({
    metas: [
      { name: 'robots', content: 'max-snippet:120, noimageindex' },
      { name: 'svcbot', content: 'max-snippet:40' },
      { name: 'description', content: 'noindex' },
    ],
    xRobotsTag: ['max-snippet:80', 'svcbot: unavailable_after: 2999-06-01T00:00:00Z', 'unavailable_after: 2998-01-01T00:00:00Z'],
    now: NOW,
  });
  t.match(d, { noindex: false, maxSnippet: 40, noimageindex: true, unavailableAfter: '2998-01-01T00:00:00.000Z' });
  t.match(parseDirectives({ metas: meta('max-snippet:40'), xRobotsTag: 'nosnippet' }), { nosnippet: true, maxSnippet: null });
  t.match(parseDirectives({ metas: meta('index'), xRobotsTag: 'noindex' }), { noindex: true }, 'index never overrides noindex');
  t.match(parseDirectives({ metas: meta('max-snippet:-1'), xRobotsTag: 'max-snippet:10' }), { maxSnippet: 10 }, '-1 never loosens');
});

t.test('unavailable_after with RFC 850 dates containing commas', async (t) => {
  const d = parseDirectives({ xRobotsTag: 'unavailable_after: Monday, 25-Jun-2010 15:00:00 GMT, noarchive', now: NOW });
  t.match(d, { noindex: true, noarchive: true, unavailableAfter: '2010-06-25T15:00:00.000Z' });
  t.match(
    parseDirectives({ xRobotsTag: 'unavailable_after: not a date' }),
    { noindex: false, unavailableAfter: null },
    'unparsable date ignored',
  );
  t.match(parseDirectives({ xRobotsTag: 'max-snippet: lots' }), { maxSnippet: null }, 'malformed max-snippet ignored');
});

/** Meta tags of a page, the way the extractor hands them over. */
const metasOf = (html: string): MetaTag[] =>
  parseHtml(html)
    .querySelectorAll('meta[name]')
    .map((m) => ({ name: m.getAttribute('name') ?? '', content: m.getAttribute('content') ?? '' }));

t.test('directive pages on the test web', async (t) => {
  const web = await startTestWeb({ generatedHosts: 0 });
  t.teardown(() => web.close());
  const { fetcher } = testFetcher(web);
  const get = async (path: string) => {
    const r = await fetcher.fetch(web.url('alpha.test', path));
    t.equal(r.status, 200, path);
    return parseDirectives({ metas: metasOf(r.body.toString('utf8')), headers: r.headers, now: NOW });
  };
  const expect: Record<string, Partial<typeof NO_DIRECTIVES>> = {
    '/meta/noindex.html': { noindex: true, nofollow: false },
    '/meta/nofollow.html': { noindex: false, nofollow: true },
    '/meta/none.html': { noindex: true, nofollow: true },
    '/meta/nosnippet.html': { nosnippet: true },
    '/meta/max-snippet-0.html': { nosnippet: true },
    '/meta/max-snippet-50.html': { nosnippet: false, maxSnippet: 50 },
    '/meta/svcbot-noindex.html': { noindex: true },
    '/meta/svcbot-nofollow.html': { nofollow: true },
    '/meta/googlebot-noindex.html': { noindex: false },
    '/meta/unavailable-after-past.html': { noindex: true },
    '/meta/unavailable-after-future.html': { noindex: false },
    '/meta/noimageindex.html': { noimageindex: true },
    '/meta/robots-and-svcbot.html': { maxSnippet: 40, nofollow: true },
    '/header/noindex.html': { noindex: true },
    '/header/nofollow.html': { nofollow: true },
    '/header/none.html': { noindex: true, nofollow: true },
    '/header/nosnippet.html': { nosnippet: true },
    '/header/max-snippet-0.html': { nosnippet: true },
    '/header/svcbot-noindex.html': { noindex: true },
    '/header/svcbot-nofollow.html': { nofollow: true },
    '/header/googlebot-noindex.html': { noindex: false },
    '/header/unavailable-after-past.html': { noindex: true },
    '/header/noindex.pdf': { noindex: true },
    '/page-1.html': { noindex: false, nofollow: false, nosnippet: false },
    '/canonical-to-noindex.html': { noindex: false },
    '/noindex-with-canonical.html': { noindex: true },
  };
  for (const [path, want] of Object.entries(expect)) t.match(await get(path), want, path);

  // A page switched to noindex at run time.
  t.match(await get('/switchable.html'), { noindex: false });
  web.setPage('alpha.test', '/switchable.html', {
    body: '<html><head><meta name="robots" content="noindex"></head><body>gone soon</body></html>',
  });
  t.match(await get('/switchable.html'), { noindex: true });
  web.setPage('alpha.test', '/switchable.html', { status: 200, headers: { 'x-robots-tag': 'svcbot: none' }, body: '<p>x</p>' });
  t.match(await get('/switchable.html'), { noindex: true, nofollow: true });
});
