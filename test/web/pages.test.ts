// Server-rendered parts of the web pages, through the real HTTP app on loopback: headers (CSP without inline
// code), the webmasters directive table generated from crawler/directives.ts, escaping, assets, and the static
// guarantees about the key (never named in a form, never in a cookie or localStorage).
import { parse } from 'node-html-parser';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig } from '../../config.js';
import { DIRECTIVE_TABLE, META_NAME, USER_AGENT_TOKEN } from '../../crawler/directives.js';
import { createLogger } from '../../logger.js';
import { createServices, startServer } from '../../main.js';
import { REQUEST_TYPES } from '../../state/requests.js';
import { escapeHtml, html } from '../../web/html.js';
import { REQUEST_CHOICES } from '../../web/manage-url-page.js';
import { loadAssets, PAGE_CSP, staticDir } from '../../web/pages.js';
import { OPERATOR_HELP } from '../../web/search-page.js';
import { renderDirectiveTable, renderWebmastersPage } from '../../web/webmasters-page.js';

const PAGES = ['/', '/manage-url', '/webmasters'] as const;

async function startPagesService(t: Test) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-web-pages-'));
  const config = loadConfig({
    env: {},
    flags: { dataDir, host: '127.0.0.1', port: 0, crawl: false, crawlerInfoUrl: 'https://svc.invalid/webmasters?a=1&b=<2>' },
  });
  const base = await createServices(config, { log: createLogger({ level: 'silent' }) });
  t.ok(base.mountExtra, 'main.ts mounts the pages');
  const running = await startServer(base);
  t.teardown(async () => {
    await running.close();
    await base.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return running.url;
}

t.test('html helper escapes every interpolation and keeps nested markup', async (t) => {
  t.equal(escapeHtml(`<a href="x" title='y'>&</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  const inner = html`<b>${'<i>'}</b>`;
  t.equal(html`<p>${inner}${['<', 1, null, false, undefined]}</p>`.toString(), '<p><b>&lt;i&gt;</b>&lt;1</p>');
});

t.test('webmasters directive table is generated from DIRECTIVE_TABLE, in order, escaped', async (t) => {
  const doc = parse(renderWebmastersPage({ crawlerInfoUrl: 'https://svc.invalid/webmasters' }));
  const rows = doc.querySelectorAll('#directive-table tbody tr');
  t.equal(rows.length, DIRECTIVE_TABLE.length, 'one row per directive');
  DIRECTIVE_TABLE.forEach((d, i) => {
    const row = rows[i]!;
    t.equal(row.querySelector('th')!.text, d.directive, `row ${i} directive`);
    const cells = row.querySelectorAll('td');
    t.equal(cells[0]!.text, d.effect, `row ${i} effect`);
    t.equal(cells[1]!.text, d.example, `row ${i} example`);
    t.equal(cells[2]!.text, d.spec ? 'svc interface specification' : 'supported extension', `row ${i} source`);
  });
  // The spec's four rows are there with their exact words.
  for (const [directive, effect] of <[string, string][]>[
    ['noindex or none', 'excludes the page and its entities'],
    ['nofollow', "stops admission of the page's links"],
    ['nosnippet or max-snippet:0', 'removes the excerpt'],
    ['canonical', 'a grouping hint only, never permission'],
  ]) {
    t.ok(
      rows.some((r) => r.querySelector('th')!.text === directive && r.querySelectorAll('td')[0]!.text === effect),
      directive,
    );
  }
  t.equal(doc.querySelector('#ua-token')!.text, USER_AGENT_TOKEN);
  t.match(doc.querySelector('#ua-header')!.text, new RegExp(`^${USER_AGENT_TOKEN}/`));
  t.ok(doc.querySelector('#directives')!.text.includes(`<meta name="${META_NAME}"`), 'meta svcbot named');
  t.match(doc.querySelector('#robots')!.text, /RFC 9309/);
  t.match(doc.querySelector('#robots')!.text, /Crawl-delay is honoured as a floor/);
  t.match(
    doc.querySelector('#robots pre')!.text,
    new RegExp(`User-agent: ${USER_AGENT_TOKEN}\\nDisallow: /drafts/\\nAllow: .*\\nCrawl-delay: 5\\n\\nSitemap: `),
  );
  t.match(doc.querySelector('#structured-data')!.text, /application\/ld\+json/);
  t.match(doc.querySelector('#structured-data')!.text, /Microdata and RDFa are not supported/);
  t.match(doc.querySelector('#snippets')!.text, /data-nosnippet/);
  t.ok(doc.querySelector('#changes a[href="/manage-url"]'), 'links to /manage-url');

  const hostile = renderDirectiveTable([
    { directive: '<script>alert(1)</script>', effect: '"&', spec: false, example: "<img src=x onerror='x'>" },
  ]).toString();
  t.notMatch(hostile, /<script>|<img/);
  t.match(hostile, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  t.match(hostile, /&quot;&amp;/);
});

t.test('search page lists every operator of spec §1.1; manage-url offers exactly the request types', async (t) => {
  t.same(
    OPERATOR_HELP.map((o) => o.operator),
    ['exact phrase', 'exclude word', 'title contains', 'domain', 'URL contains', 'file type'],
  );
  t.same(
    REQUEST_CHOICES.map((c) => c.value),
    [...REQUEST_TYPES],
    'one choice per request type of the API',
  );
});

t.test('pages over HTTP: headers, no inline code, same-origin assets, key never a form field', async (t) => {
  const base = await startPagesService(t);
  t.notMatch(PAGE_CSP, /unsafe-inline|unsafe-eval|\*/);
  for (const path of PAGES) {
    const res = await fetch(base + path);
    const body = await res.text();
    t.equal(res.status, 200, `${path} 200`);
    t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    t.equal(res.headers.get('content-security-policy'), PAGE_CSP, `${path} CSP`);
    for (const d of [
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "img-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ]) {
      t.ok(res.headers.get('content-security-policy')!.includes(d), `${path}: ${d}`);
    }
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    t.equal(res.headers.get('referrer-policy'), 'no-referrer');
    t.equal(res.headers.get('x-frame-options'), 'DENY');
    t.equal(res.headers.get('set-cookie'), null, 'no cookie');

    const doc = parse(body);
    for (const s of doc.querySelectorAll('script')) {
      t.match(s.getAttribute('src') ?? '', /^\/assets\/[a-z-]+\.js$/, `${path}: script has a same-origin src`);
      t.equal(s.text.trim(), '', `${path}: no inline script body`);
    }
    t.equal(doc.querySelectorAll('style').length, 0, `${path}: no <style>`);
    t.equal(doc.querySelectorAll('[style]').length, 0, `${path}: no style attributes`);
    const handlers = doc.querySelectorAll('*').filter((e) => Object.keys(e.attributes).some((a) => /^on/i.test(a)));
    t.equal(handlers.length, 0, `${path}: no inline event handlers`);
    for (const e of doc.querySelectorAll('link[href], script[src], img[src]')) {
      const u = e.getAttribute('href') ?? e.getAttribute('src') ?? '';
      t.match(u, /^\/[^/]/, `${path}: ${u} is same-origin`);
      const r = await fetch(base + u);
      t.equal(r.status, 200, `${u} served`);
      t.equal(r.headers.get('x-content-type-options'), 'nosniff');
      await r.arrayBuffer();
    }
    // The key input is never a named form field, so no form submission can carry it into a URL.
    const keyInput = doc.querySelector('#key-input');
    if (path === '/webmasters') t.equal(keyInput, null, 'webmasters needs no key');
    else {
      t.ok(keyInput, `${path} has the key panel`);
      t.equal(keyInput!.getAttribute('name'), undefined, 'key input has no name');
      t.equal(keyInput!.getAttribute('type'), 'password');
    }
  }
  const home = parse(await (await fetch(base + '/')).text());
  t.same(
    home.querySelectorAll('#search-form [name]').map((e) => e.getAttribute('name')),
    ['q', 'language'],
    'the search form submits only q and the language filter',
  );
  t.equal(home.querySelector('#search-status')!.getAttribute('aria-live'), 'polite', 'results announce politely');
  t.equal(home.querySelector('label[for="q"]')!.text.trim(), 'Search the svc index');

  // The info URL from the configuration is escaped into the page.
  const wm = await (await fetch(base + '/webmasters')).text();
  t.ok(wm.includes('https://svc.invalid/webmasters?a=1&amp;b=&lt;2&gt;'), 'config value escaped');

  const manage = parse(await (await fetch(base + '/manage-url')).text());
  t.match(manage.querySelector('#guarantee-note')!.text, /guarantees neither indexing nor position/);
  t.match(manage.querySelector('#guarantee-note')!.text, /404 or 410/);
  t.match(manage.querySelector('#guarantee-note')!.text, /noindex/);
  t.equal(manage.querySelector('#manage-form')!.getAttribute('novalidate'), '', 'the API validates, not the browser');
});

t.test('assets: fixed names only, right types; anything else is the API 404', async (t) => {
  const base = await startPagesService(t);
  const assets = loadAssets();
  t.same([...assets.keys()].sort(), ['api-client.js', 'icon.svg', 'manage-url.js', 'search.js', 'style.css']);
  const types: Record<string, string> = {
    'api-client.js': 'text/javascript; charset=utf-8',
    'style.css': 'text/css; charset=utf-8',
    'icon.svg': 'image/svg+xml',
  };
  for (const [name, type] of Object.entries(types)) {
    const r = await fetch(`${base}/assets/${name}`);
    t.equal(r.headers.get('content-type'), type, name);
    t.equal(Buffer.from(await r.arrayBuffer()).toString('utf8'), readFileSync(join(staticDir(), name), 'utf8'), `${name} body`);
  }
  for (const bad of ['/assets/nope.js', '/assets/..%2Fpages.ts', '/assets/%2e%2e%2fhtml.ts', '/assets/API-CLIENT.JS', '/assets/']) {
    const r = await fetch(base + bad);
    t.equal(r.status, 404, `${bad} → 404`);
    const body = (await r.json()) as { code: string };
    t.equal(body.code, 'route_not_found');
  }
});

t.test('static scripts keep the key in sessionStorage only and never log it', async (t) => {
  const assets = loadAssets();
  for (const [name, a] of assets) {
    if (!name.endsWith('.js')) continue;
    const src = a.body.toString('utf8');
    t.notMatch(src, /localStorage|document\.cookie|console\./, `${name}: no localStorage, cookie or console`);
    t.notMatch(src, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, `${name}: never parses text as HTML`);
  }
  const client = assets.get('api-client.js')!.body.toString('utf8');
  t.match(client, /sessionStorage\.setItem\(STORAGE_KEY/);
  t.match(client, /headers\.set\('Authorization', `Bearer \$\{key\}`\)/);
  t.match(client, /credentials: 'omit'/);
});
