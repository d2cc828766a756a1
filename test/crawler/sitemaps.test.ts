import t from 'tap';
import { gzipSync } from 'node:zlib';
import { gunzipIfNeeded, parseSitemap, SITEMAP_MAX_ENTRIES } from '../../crawler/sitemaps.js';

t.test('urlset: locs resolved and normalised, lastmod parsed, other hosts dropped', async (t) => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> https://ville.test/a?x=1&amp;y=2 </loc><lastmod>2026-10-01</lastmod></url>
  <url><loc><![CDATA[https://ville.test/b#frag]]></loc></url>
  <url><loc>https://other.test/c</loc></url>
  <url><loc>javascript:alert(1)</loc></url>
</urlset>`;
  const s = parseSitemap(xml, 'https://ville.test/sitemap.xml');
  t.equal(s.kind, 'urlset');
  t.same(s.entries, [
    { url: 'https://ville.test/a?x=1&y=2', lastmod: '2026-10-01T00:00:00.000Z' },
    { url: 'https://ville.test/b', lastmod: null },
  ]);
  t.equal(s.skipped, 2);
  const allowed = parseSitemap(xml, 'https://cdn.test/sitemap.xml', ['other.test']);
  t.same(
    allowed.entries.map((e) => e.url),
    ['https://other.test/c'],
    'robots.txt host may be allowed explicitly',
  );
});

t.test('sitemap index and namespaced tags', async (t) => {
  const xml = `<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sm:sitemap><sm:loc>https://a.test/s1.xml</sm:loc></sm:sitemap>
  <sm:sitemap><sm:loc>https://cdn.test/s2.xml.gz</sm:loc><sm:lastmod>2026-01-02T03:04:05Z</sm:lastmod></sm:sitemap>
</sm:sitemapindex>`;
  const s = parseSitemap(xml, 'https://a.test/sitemap.xml');
  t.equal(s.kind, 'index');
  t.same(
    s.entries.map((e) => e.url),
    ['https://a.test/s1.xml', 'https://cdn.test/s2.xml.gz'],
  );
  t.equal(s.entries[1]!.lastmod, '2026-01-02T03:04:05.000Z');
});

t.test('text sitemaps, unknown formats, the 50,000 entry limit', async (t) => {
  t.same(
    parseSitemap('https://a.test/1\n\nhttps://a.test/2\nnot a url\n', 'https://a.test/s.txt').entries.map((e) => e.url),
    ['https://a.test/1', 'https://a.test/2'],
  );
  t.equal(parseSitemap('<html><body>nope</body></html>', 'https://a.test/s.xml').kind, 'unknown');
  const many = `<urlset>${Array.from({ length: SITEMAP_MAX_ENTRIES + 3 }, (_, i) => `<url><loc>https://a.test/${i}</loc></url>`).join('')}</urlset>`;
  const s = parseSitemap(many, 'https://a.test/s.xml');
  t.equal(s.entries.length, SITEMAP_MAX_ENTRIES);
  t.equal(s.skipped, 3);
});

t.test('gzip sitemaps are undone under a cap; plain bodies pass through', async (t) => {
  const xml = Buffer.from('<urlset><url><loc>https://a.test/x</loc></url></urlset>');
  t.same(gunzipIfNeeded(gzipSync(xml), 1024), xml);
  t.same(gunzipIfNeeded(xml, 1024), xml);
  t.throws(() => gunzipIfNeeded(gzipSync(Buffer.alloc(1 << 20)), 64 * 1024), 'a bomb stops at the cap');
});
