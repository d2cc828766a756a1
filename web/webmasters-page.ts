/**
 * /webmasters: how SvcBot crawls and what it reads, server-rendered. The directive table comes from
 * crawler/directives.ts DIRECTIVE_TABLE — the same constants the crawler applies — so the page cannot drift from
 * the crawler's behaviour. web/ imports crawler/ for these constants only.
 */
import type { Config } from '../config.js';
import { DIRECTIVE_TABLE, META_NAME, USER_AGENT_TOKEN, type DirectiveRow } from '../crawler/directives.js';
import { html, layout, type SafeHtml } from './html.js';

/** The directive table as an accessible HTML table, one row per DIRECTIVE_TABLE entry, in its order. */
export function renderDirectiveTable(rows: readonly DirectiveRow[] = DIRECTIVE_TABLE): SafeHtml {
  return html`<table id="directive-table" class="data-table">
  <caption>Page directives SvcBot honours (meta robots, meta ${META_NAME}, X-Robots-Tag)</caption>
  <thead><tr><th scope="col">Directive</th><th scope="col">Effect</th><th scope="col">Example</th><th scope="col">Defined by</th></tr></thead>
  <tbody>
${rows.map(
  (
    r,
  ) => html`    <tr><th scope="row"><code>${r.directive}</code></th><td>${r.effect}</td><td><code>${r.example}</code></td><td>${r.spec ? 'svc interface specification' : 'supported extension'}</td></tr>
`,
)}  </tbody>
</table>`;
}

/** The example robots.txt shown on the page (plain text, escaped on output). */
export const EXAMPLE_ROBOTS = `User-agent: ${USER_AGENT_TOKEN}
Disallow: /drafts/
Allow: /drafts/published-summary.html
Crawl-delay: 5

Sitemap: https://www.example.ca/sitemap.xml`;

/** The /webmasters page body. */
export function renderWebmastersMain(config: Pick<Config, 'crawlerInfoUrl'>): SafeHtml {
  const ua = `${USER_AGENT_TOKEN}/<version> (+${config.crawlerInfoUrl})`;
  return html`<h1>For webmasters: how SvcBot crawls and what svc shows</h1>
<nav aria-label="On this page" class="toc"><ul>
  <li><a href="#crawler">The crawler</a></li>
  <li><a href="#robots">robots.txt</a></li>
  <li><a href="#directives">Page directives</a></li>
  <li><a href="#structured-data">Structured data</a></li>
  <li><a href="#snippets">How excerpts are built</a></li>
  <li><a href="#changes">Asking for changes</a></li>
</ul></nav>

<section id="crawler" aria-labelledby="h-crawler">
<h2 id="h-crawler">The crawler: ${USER_AGENT_TOKEN}</h2>
<p>svc answers from its own index, filled by its own crawler. The crawler identifies itself with the
  user-agent token <strong><code id="ua-token">${USER_AGENT_TOKEN}</code></strong>; its full User-Agent header reads
  <code id="ua-header">${ua}</code>.</p>
<ul>
  <li>It reads only public resources, with unauthenticated <code>GET</code> or <code>HEAD</code> requests.</li>
  <li>It honours robots.txt, <code>&lt;meta name="robots"&gt;</code>, <code>&lt;meta name="${META_NAME}"&gt;</code>,
    the <code>X-Robots-Tag</code> header, per-origin politeness, <code>Retry-After</code> and only safe redirects
    (each hop is checked again).</li>
  <li>It never fetches private or internal addresses, and it bounds the size and duration of every fetch.</li>
</ul>
</section>

<section id="robots" aria-labelledby="h-robots">
<h2 id="h-robots">robots.txt</h2>
<p>SvcBot follows the Robots Exclusion Protocol, <a href="https://www.rfc-editor.org/rfc/rfc9309">RFC 9309</a>.</p>
<ul>
  <li>Groups are chosen by the product token <code>${USER_AGENT_TOKEN}</code> (case-insensitive); when no group
    names it, the <code>User-agent: *</code> group applies.</li>
  <li><code>Allow</code> and <code>Disallow</code> lines are understood, with <code>*</code> and <code>$</code>
    patterns; the longest matching rule wins and, on a tie, <code>Allow</code> wins.</li>
  <li><code>Sitemap</code> lines are read and the listed sitemaps (sitemap indexes and gzip files included) are used
    for discovery.</li>
  <li><code>/llms.txt</code> is read once per host (refreshed weekly), under the same robots.txt rules, as evidence about the site.</li>
  <li><code>Crawl-delay</code> is honoured as a floor: SvcBot never requests pages from your origin faster than the
    larger of its own per-origin gap and your Crawl-delay (values above 30 seconds count as 30 seconds).</li>
  <li>A robots.txt answered with 4xx means no restriction; a 5xx answer, a 429 or no answer at all means SvcBot
    fetches nothing else from the origin until robots.txt can be read again. robots.txt is cached for at most a day.</li>
</ul>
<p>Example:</p>
<pre class="code-block"><code>${EXAMPLE_ROBOTS}</code></pre>
</section>

<section id="directives" aria-labelledby="h-directives">
<h2 id="h-directives">Page directives</h2>
<p>Directives can be given in <code>&lt;meta name="robots" content="…"&gt;</code>, in
  <code>&lt;meta name="${META_NAME}" content="…"&gt;</code> (SvcBot only), or in the <code>X-Robots-Tag</code>
  HTTP header, plain or prefixed <code>${META_NAME}:</code> (directives prefixed for other crawlers are ignored).
  When several apply, they are combined most restrictively: any noindex wins and the smallest max-snippet wins.
  This table is generated from the constants the crawler itself uses.</p>
${renderDirectiveTable()}
</section>

<section id="structured-data" aria-labelledby="h-structured">
<h2 id="h-structured">Structured data</h2>
<ul>
  <li>svc reads schema.org JSON-LD: a <code>&lt;script type="application/ld+json"&gt;</code> element. Its content
    should match what the page visibly says.</li>
  <li>Types read: <code>LocalBusiness</code> and its subtypes, <code>Organization</code>, <code>Place</code>,
    <code>School</code> and related public types. These feed the entity records (Canadian establishments,
    organizations and places).</li>
  <li>Microdata and RDFa are not supported.</li>
  <li>The HTML title, the description, schema.org dates and Open Graph data can improve the excerpt and the dates
    shown with a result.</li>
  <li>Declared data remains an observation of its source: svc records where and when it saw it, and does not
    guarantee it.</li>
</ul>
</section>

<section id="snippets" aria-labelledby="h-snippets">
<h2 id="h-snippets">How excerpts are built</h2>
<ul>
  <li>Pages are split into passages. A result's excerpt is taken from the passage that best matches the query,
    with the query terms highlighted.</li>
  <li><code>nosnippet</code> or <code>max-snippet:0</code> removes the excerpt: the result shows title, address and
    dates only, and passages of the page are not quoted.</li>
  <li><code>max-snippet:N</code> limits an excerpt to N characters.</li>
  <li>Text inside an element carrying the <code>data-nosnippet</code> attribute never appears in an excerpt.</li>
  <li>Every excerpt is labelled as untrusted web content: svc quotes pages, it does not vouch for them.</li>
</ul>
</section>

<section id="changes" aria-labelledby="h-changes">
<h2 id="h-changes">Asking for changes</h2>
<p><strong>Without an API key</strong> you need no form: list your pages in a sitemap (named in robots.txt), and
  SvcBot finds them and comes back to them; to keep a page out, disallow it in robots.txt or answer 404, 410 or
  <code>noindex</code>, and it is dropped at its next fetch.</p>
<p><strong>With an API key</strong> (svc is a closed beta: the operators issue keys; there is no sign-up and no
  key-less form), use the <a href="/manage-url">Manage a URL</a> form or the request API to ask for the discovery of
  a new URL, a recrawl, a correction (with a note saying what is wrong) or the exact removal of a URL, within the
  key's daily quota. A submission guarantees neither indexing nor position: the URL goes through the same
  robots.txt, noindex and politeness rules as any other.</p>
<p>An exact removal is carried out only when a fresh fetch of that exact URL shows it is gone (HTTP 404 or 410) or
  asks not to be indexed (noindex). A page that is still live and indexable is never removed on request. To keep
  a page out for good, answer 404/410 or add noindex.</p>
<p>A webmaster console with verified site ownership is planned but not open during the beta.</p>
</section>`;
}

/** The complete /webmasters document. */
export function renderWebmastersPage(config: Pick<Config, 'crawlerInfoUrl'>): string {
  return layout({ title: 'For webmasters', path: '/webmasters', main: renderWebmastersMain(config) });
}
