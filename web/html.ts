/**
 * A tiny escaping HTML builder for the server-rendered pages. Every interpolated value is escaped unless it is
 * already {@link SafeHtml} (built by this module), so a page cannot forget to escape: there is no "raw string"
 * path except `trustedHtml`, which only the page modules use for constant markup.
 */

/** Markup that has been escaped (or is a constant written by us). */
export class SafeHtml {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  toString(): string {
    return this.#value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for use in HTML element content and double- or single-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A value `html` accepts: text (escaped), numbers, SafeHtml (kept), arrays of these (joined), null/undefined/false (nothing). */
export type HtmlValue = string | number | SafeHtml | null | undefined | false | readonly HtmlValue[];

function render(v: HtmlValue): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.toString();
  if (Array.isArray(v)) return (v as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(v));
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`; nested `html` results are kept as markup. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i] as HtmlValue) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** Navigation entries of every page, in order. */
const NAV = [
  { href: '/', label: 'Search' },
  { href: '/manage-url', label: 'Manage a URL' },
  { href: '/webmasters', label: 'Webmasters' },
] as const;

export interface LayoutOptions {
  /** Document title (escaped). */
  readonly title: string;
  /** Path of the current page, to mark the navigation entry with aria-current. */
  readonly path: string;
  /** Main content. */
  readonly main: SafeHtml;
  /** ES module under /assets/ to load, e.g. "search.js"; none for pure server-rendered pages. */
  readonly script?: string;
  /** Whether the page needs the API key (shows the key panel). */
  readonly needsKey?: boolean;
}

/**
 * The closed-beta key panel. The input has no `name`, so even if the script did not run the key could never be
 * submitted with a form (and so never land in a URL); the script keeps it in sessionStorage only.
 */
export const keyPanel = html`<section id="key-panel" class="key-panel" aria-labelledby="key-heading">
  <h2 id="key-heading">API key</h2>
  <div id="key-missing">
    <p>svc is a closed beta: enter the API key the operators gave you. It stays in this browser tab only
      (sessionStorage, cleared when the tab closes), is sent as <code>Authorization: Bearer</code> to this site,
      and never goes into a URL, a cookie or a log.</p>
    <form id="key-form" class="inline-form" method="post">
      <label for="key-input">API key</label>
      <input id="key-input" type="password" autocomplete="off" spellcheck="false" autocapitalize="off" required>
      <button type="submit">Use this key</button>
    </form>
  </div>
  <div id="key-present" hidden>
    <p>An API key is set for this tab. <button id="key-forget" type="button" class="link-button">Forget the key</button></p>
  </div>
  <p id="key-message" class="notice notice-error" role="alert" hidden></p>
</section>`;

/** The full HTML document of a page: skip link, navigation, main, footer; no inline script or style. */
export function layout(o: LayoutOptions): string {
  const nav = NAV.map((n) => html`<li><a href="${n.href}"${o.path === n.href ? html` aria-current="page"` : ''}>${n.label}</a></li>`);
  const doc = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${o.title} · svc</title>
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/style.css">
${o.script ? html`<script type="module" src="/assets/${o.script}"></script>` : ''}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <a class="brand" href="/">svc</a>
  <nav aria-label="Main"><ul>${nav}</ul></nav>
</header>
<main id="main" tabindex="-1">
${
  o.needsKey
    ? html`<noscript><p class="notice notice-error">This page calls the svc API with your key from the browser and needs JavaScript.</p></noscript>
${keyPanel}`
    : ''
}
${o.main}
</main>
<footer class="site-footer">
  <p>svc searches its own index of the public Web, crawled by SvcBot. No trackers, no third-party assets, no cookies.
    Search text, addresses and keys are not logged.</p>
</footer>
</body>
</html>
`;
  return doc.toString();
}
