import t from 'tap';
import { extractPage, decodeHtml, toIsoDate, parseLlmsTxt, normalizedTextForHash } from '../../crawler/extract.js';
import { parseJsonLdBlock, readJsonLd } from '../../crawler/extract-jsonld.js';
import { buildPassages, estimateTokens, PASSAGE_MAX_TOKENS } from '../../crawler/extract-passages.js';
import { isEntityType } from '../../crawler/extract-jsonld.js';
import { isSubtypeOf } from '../../schema-org-types.js';

const para = (n: number, word = 'library') =>
  `<p>${Array.from({ length: n }, (_, i) => `Sentence ${i} tells readers about the ${word} services, hours and programs offered in the city.`).join(' ')}</p>`;

const page = (head: string, body: string, lang = 'en') =>
  `<!doctype html><html lang="${lang}"><head>${head}</head><body>${body}</body></html>`;

t.test('metadata: title, description, Open Graph, canonical, lang', async (t) => {
  const p = extractPage(
    page(
      `<title> Ville  de Québec — Bibliothèques </title><meta name="description" content="Les bibliothèques de la ville">
       <meta property="og:title" content="OG title"><meta property="og:type" content="article">
       <link rel="canonical" href="/biblio/?utm=x#frag"><base href="https://www.ville.quebec.qc.ca/services/">`,
      `<main>${para(3)}</main>`,
      'fr-CA',
    ),
    { url: 'https://www.ville.quebec.qc.ca/a/b.html' },
  );
  t.equal(p.title, 'Ville de Québec — Bibliothèques');
  t.equal(p.description, 'Les bibliothèques de la ville');
  t.equal(p.lang, 'fr');
  t.equal(p.canonicalUrl, 'https://www.ville.quebec.qc.ca/biblio/?utm=x');
  t.same(p.openGraph, { 'og:title': 'OG title', 'og:type': 'article' });
  const fallback = extractPage(page('<meta property="og:title" content="From OG">', '<p>x</p>', ''), { url: 'https://a.ca/' });
  t.equal(fallback.title, 'From OG');
  t.equal(fallback.lang, null);
});

t.test('dates: schema.org first, then article:* meta, then <time>, then Last-Modified', async (t) => {
  const ld = `<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","datePublished":"2026-03-01T10:00:00-05:00","dateModified":"2026-03-02"}</script>`;
  const meta = `<meta property="article:published_time" content="2025-01-01T00:00:00Z"><meta property="article:modified_time" content="2025-02-01T00:00:00Z">`;
  const a = extractPage(page(ld + meta, para(2)), { url: 'https://a.ca/', headers: { 'last-modified': 'Wed, 01 Oct 2026 12:00:00 GMT' } });
  t.equal(a.publishedAt, '2026-03-01T15:00:00.000Z');
  t.equal(a.modifiedAt, '2026-03-02T00:00:00.000Z');
  t.equal(a.dateSource, 'schema.org');
  const b = extractPage(page(meta, para(2)), { url: 'https://a.ca/' });
  t.equal(b.publishedAt, '2025-01-01T00:00:00.000Z');
  t.equal(b.modifiedAt, '2025-02-01T00:00:00.000Z');
  t.equal(b.dateSource, 'article-meta');
  const c = extractPage(page('', `<article><time datetime="2024-05-06">May 6</time>${para(2)}</article>`), {
    url: 'https://a.ca/',
    headers: { 'last-modified': 'Wed, 01 Oct 2026 12:00:00 GMT' },
  });
  t.equal(c.publishedAt, '2024-05-06T00:00:00.000Z');
  t.equal(c.dateSource, 'time-element');
  t.equal(c.modifiedAt, '2026-10-01T12:00:00.000Z');
  const d = extractPage(page('', para(2)), { url: 'https://a.ca/', headers: { 'last-modified': 'Wed, 01 Oct 2026 12:00:00 GMT' } });
  t.equal(d.publishedAt, null);
  t.equal(d.modifiedAt, '2026-10-01T12:00:00.000Z');
  t.equal(d.dateSource, 'http-last-modified');
  const e = extractPage(page('', '<p>none</p>'), { url: 'https://a.ca/' });
  t.equal(e.dateSource, 'none');
  t.equal(toIsoDate('not a date'), null);
  t.equal(toIsoDate('1901-01-01'), null, 'implausible years are dropped');
});

t.test('main text drops boilerplate: nav, header, footer, aside, scripts, styles, hidden, forms, cookie banners', async (t) => {
  const html = page(
    '<style>.x{color:red}</style><script>var tracking = 1;</script>',
    `<header><a href="/">Home</a> SITE-HEADER</header>
     <nav><ul><li><a href="/a">NAV-LINK-A</a></li><li><a href="/b">NAV-LINK-B</a></li></ul></nav>
     <div id="cookie-banner">We use cookies COOKIE-TEXT <button>Accept</button></div>
     <div class="content"><article><h1>Main title</h1>${para(4)}<p style="display:none">HIDDEN-STYLE</p><p hidden>HIDDEN-ATTR</p>
       <div aria-hidden="true">ARIA-HIDDEN</div><form><label>SEARCH-FORM</label><input name=q></form>${para(3, 'museum')}
       <script>document.write('SCRIPT-TEXT')</script><noscript>NOSCRIPT-TEXT</noscript></article>
       <aside>ASIDE-TEXT related stories</aside></div>
     <div class="related-links"><a href="/x">RELATED-1</a> <a href="/y">RELATED-2</a></div>
     <footer>FOOTER-TEXT © 2026</footer>`,
  );
  const p = extractPage(html, { url: 'https://a.ca/' });
  t.match(p.mainText, /library services/);
  t.match(p.mainText, /museum services/);
  t.match(p.mainText, /Main title/);
  for (const bad of [
    'SITE-HEADER',
    'NAV-LINK',
    'COOKIE-TEXT',
    'HIDDEN-STYLE',
    'HIDDEN-ATTR',
    'ARIA-HIDDEN',
    'SEARCH-FORM',
    'SCRIPT-TEXT',
    'NOSCRIPT-TEXT',
    'ASIDE-TEXT',
    'RELATED-1',
    'FOOTER-TEXT',
    'tracking',
    'color:red',
  ])
    t.notOk(p.mainText.includes(bad), `no ${bad}`);
});

t.test('link-dense blocks inside the content are dropped, prose with a few links kept', async (t) => {
  const links = Array.from({ length: 12 }, (_, i) => `<a href="/t/${i}">tag ${i}</a>`).join(' ');
  const p = extractPage(
    page(
      '',
      `<main>${para(4)}<div>${links}</div><p>Read the <a href="/guide">guide</a> before you visit the branch nearest to your home.</p></main>`,
    ),
    { url: 'https://a.ca/' },
  );
  t.notOk(p.mainText.includes('tag 3'));
  t.match(p.mainText, /Read the guide before you visit/);
});

t.test('passages: split on headings, heading path, ordinal, size bounds, data-nosnippet excluded from snippetText', async (t) => {
  const html = page(
    '',
    `<main><h1>Guide</h1><p>Intro paragraph about the guide for residents and visitors alike.</p>
     <h2>Hours</h2>${para(3)}<p data-nosnippet>SECRET opening notes for staff only, never in an excerpt.</p>
     <h3>Holidays</h3>${para(2)}
     <h2>Long section</h2>${para(60, 'pool')}</main>`,
  );
  const p = extractPage(html, { url: 'https://a.ca/' });
  t.ok(p.passages.length >= 4);
  t.same(
    p.passages.map((x) => x.ordinal),
    p.passages.map((_, i) => i),
  );
  t.same(p.passages[0]!.headingPath, ['Guide']);
  const hours = p.passages.find((x) => x.text.includes('SECRET'))!;
  t.same(hours.headingPath, ['Guide', 'Hours']);
  t.match(hours.text, /SECRET opening notes/);
  t.notOk(hours.snippetText.includes('SECRET'), 'data-nosnippet text is not in snippetText');
  t.match(hours.snippetText, /library services/);
  const holidays = p.passages.find((x) => x.headingPath.at(-1) === 'Holidays')!;
  t.same(holidays.headingPath, ['Guide', 'Hours', 'Holidays']);
  t.equal(holidays.snippetText, holidays.text, 'no nosnippet part: snippetText equals text');
  const long = p.passages.filter((x) => x.headingPath.at(-1) === 'Long section');
  t.ok(long.length >= 2, 'a long section is split');
  for (const x of long) t.ok(estimateTokens(x.text) <= PASSAGE_MAX_TOKENS + 40, `passage of ${estimateTokens(x.text)} tokens`);
  for (const x of long.slice(0, -1)) t.ok(estimateTokens(x.text) >= 100, 'non-final passages reach the minimum');
});

t.test('buildPassages merges a tiny trailing piece and splits an over-long paragraph on sentences', async (t) => {
  const long = Array.from({ length: 80 }, (_, i) => `Statement ${i} is a complete sentence with several words.`).join(' ');
  const ps = buildPassages([
    { kind: 'text', text: long, snippetText: long },
    { kind: 'text', text: 'Tail.', snippetText: 'Tail.' },
  ]);
  t.ok(ps.length >= 2);
  for (const x of ps) t.ok(estimateTokens(x.text) <= PASSAGE_MAX_TOKENS + 10);
  t.match(ps.at(-1)!.text, /Tail\.$/);
  t.same(buildPassages([]), []);
});

t.test('links: absolute, normalised, deduplicated, rel=nofollow flagged, non-http dropped', async (t) => {
  const p = extractPage(
    page(
      '',
      `<p><a href="/a/./b?x=1#f">one</a> <a href="HTTPS://Other.CA:443/%7euser">two</a> <a rel="nofollow" href="/nf">nf</a>
       <a rel="ugc nofollow" href="/a/b?x=1">dup nofollow</a> <a href="mailto:a@b.c">m</a> <a href="javascript:void(0)">j</a>
       <a href="http://user:pw@evil.ca/">cred</a> <a href="ftp://x.ca/">ftp</a></p>`,
    ),
    { url: 'https://site.ca/dir/page.html' },
  );
  t.same(
    p.links.map((l) => [l.url, l.nofollow]),
    [
      ['https://site.ca/a/b?x=1', false],
      ['https://other.ca/~user', false],
      ['https://site.ca/nf', true],
    ],
  );
});

t.test('images: absolute src, alt, declared size', async (t) => {
  const p = extractPage(
    page(
      '',
      '<img src="/i/a.png" alt=" A  canoe " width="640" height="480px"><img src="data:image/png;base64,xx" alt="inline"><img srcset="/i/b.png 1x, /i/b2.png 2x" alt="b"><img src="/i/a.png">',
    ),
    { url: 'https://a.ca/x/' },
  );
  t.same(p.images, [
    { src: 'https://a.ca/i/a.png', alt: 'A canoe', width: 640, height: 480 },
    { src: 'https://a.ca/i/b.png', alt: 'b', width: null, height: null },
  ]);
});

t.test('JSON-LD: @graph, arrays, nesting, IRIs, in-scope types, broken JSON tolerated', async (t) => {
  const graph = JSON.stringify({
    '@context': 'https://schema.org',
    '@graph': [
      {
        '@type': 'WebPage',
        name: 'x',
        about: {
          '@type': 'GovernmentOrganization',
          name: 'Ville de Québec',
          address: { '@type': 'PostalAddress', addressRegion: 'QC', addressCountry: 'CA' },
        },
      },
      {
        '@type': ['Restaurant', 'Thing'],
        name: 'Chez Nous',
        address: { '@type': 'PostalAddress', addressRegion: 'ON', addressCountry: { '@type': 'Country', name: 'Canada' } },
        parentOrganization: { '@type': 'Organization', name: 'Parent Co' },
      },
      { '@type': 'Article', headline: 'h', datePublished: '2026-01-01' },
    ],
  });
  const arr = JSON.stringify([
    { '@type': 'http://schema.org/School', name: 'École' },
    { '@type': 'Person', name: 'Not kept' },
  ]);
  const broken = `{ "@context": "https://schema.org", "@type": "Library", "name": "Bibliothèque
    Gabrielle-Roy", // a comment
    "telephone": "418-641-6789", }`;
  const two = '{"@type":"Park","name":"Parc A"}{"@type":"Museum","name":"Musée B"}';
  const r = readJsonLd([graph, arr, broken, two, 'not json at all {']);
  t.same(
    r.entities.map((e) => e['name']),
    ['Ville de Québec', 'Chez Nous', 'École', 'Bibliothèque\n    Gabrielle-Roy', 'Parc A', 'Musée B'],
  );
  t.equal(r.parseErrors, 1);
  t.ok(r.declaredTypes.includes('GovernmentOrganization') && r.declaredTypes.includes('Restaurant') && r.declaredTypes.includes('School'));
  t.same([...r.addressRegions].sort(), ['ON', 'QC']);
  t.same([...r.addressCountries].sort(), ['CA', 'Canada']);
  t.equal(r.datePublished, '2026-01-01');
  const nested = r.entities.find((e) => e['name'] === 'Chez Nous')!;
  t.same((nested['parentOrganization'] as Record<string, unknown>)['name'], 'Parent Co', 'nested in-scope nodes stay inside their parent');
  t.same(parseJsonLdBlock('<!-- {"@type":"Store","name":"S"} -->'), [{ '@type': 'Store', name: 'S' }]);
  t.equal(parseJsonLdBlock('   '), null);
});

t.test('JSON-LD in a page, microdata and RDFa ignored', async (t) => {
  const p = extractPage(
    page(
      `<script type="application/ld+json">{"@type":"LocalBusiness","name":"Dépanneur"}</script><script type="application/json">{"@type":"Store","name":"not ld"}</script>`,
      `<div itemscope itemtype="https://schema.org/Store"><span itemprop="name">Micro</span></div><div vocab="https://schema.org/" typeof="Store"><span property="name">Rdfa</span></div>`,
    ),
    { url: 'https://a.ca/' },
  );
  t.same(
    p.jsonLd.entities.map((e) => e['name']),
    ['Dépanneur'],
  );
});

t.test('the extractor keeps the public types and their subtypes, nothing else', async (t) => {
  for (const ty of [
    'LocalBusiness',
    'Organization',
    'Place',
    'School',
    'GovernmentOrganization',
    'CivicStructure',
    'Library',
    'Hospital',
    'CityHall',
    'Restaurant',
    'CollegeOrUniversity',
  ])
    t.ok(isEntityType([ty]), ty);
  t.ok(isSubtypeOf('Restaurant', 'LocalBusiness') && isSubtypeOf('Restaurant', 'Organization') && isSubtypeOf('Restaurant', 'Place'));
  t.notOk(isEntityType(['Person']));
  t.notOk(isEntityType(['Article', 'WebPage']));
  t.ok(isEntityType(['WebPage', 'Library']), 'one in-scope type among several is enough');
});

t.test('llms.txt: title, summary, link count', async (t) => {
  const l = parseLlmsTxt(
    '\uFEFF# Ville de Québec\n\n> Services municipaux\n> et loisirs.\n\nDetails.\n\n## Docs\n- [Guide](https://x.ca/guide.md): guide\n- [FAQ](/faq.md "FAQ")\n\n## Optional\n- [Old](/old)\n',
  );
  t.same(l, { title: 'Ville de Québec', summary: 'Services municipaux et loisirs.', linkCount: 3, sections: ['Docs', 'Optional'] });
  t.same(parseLlmsTxt('no heading here [a](b)'), { title: null, summary: null, linkCount: 1, sections: [] });
});

t.test('decodeHtml honours header charset, BOM and meta charset', async (t) => {
  const latin1 = Buffer.from('<p>caf\xe9</p>', 'latin1');
  t.equal(decodeHtml(latin1, 'text/html; charset=ISO-8859-1'), '<p>café</p>');
  t.equal(decodeHtml(Buffer.concat([Buffer.from('<meta charset="windows-1252">'), latin1])), '<meta charset="windows-1252"><p>café</p>');
  t.equal(decodeHtml(Buffer.from('\uFEFF<p>é</p>', 'utf8')), '<p>é</p>');
  t.equal(decodeHtml(Buffer.from('<p>é</p>'), 'text/html; charset=bogus-charset'), '<p>é</p>');
});

t.test('content hash text ignores whitespace and case only', async (t) => {
  t.equal(normalizedTextForHash('A  b\n\nC'), normalizedTextForHash('a b c'));
  t.not(normalizedTextForHash('a b c'), normalizedTextForHash('a b d'));
});

t.test('pathological nesting degrades to flat text and still carries the meta directives', async (t) => {
  const n = 20_000;
  const html = `<html><head><title>Deep &amp; hostile</title><meta name="robots" content="noindex, nofollow"><meta content='x' name=svcbot></head><body>${'<div>'.repeat(n)}<p>Deep text survives.</p>${'</div>'.repeat(n)}<script>var hidden = 1;</script></body></html>`;
  const p = extractPage(html, { url: 'https://a.ca/', headers: { 'last-modified': 'Wed, 01 Oct 2026 12:00:00 GMT' } });
  t.equal(p.title, 'Deep & hostile');
  t.equal(p.mainText, 'Deep text survives.');
  t.same(p.metas, [
    { name: 'robots', content: 'noindex, nofollow' },
    { name: 'svcbot', content: 'x' },
  ]);
  t.equal(p.passages.length, 1);
  t.equal(p.dateSource, 'http-last-modified');
});
