/**
 * `/manage-url`: the "Manage a URL" form (discovery, recrawl, correction with a note, exact removal). The module
 * /assets/manage-url.js posts to POST /api/v1/requests with the tab's key, shows the request id and follows the
 * status by polling GET /api/v1/requests/{id} until it is final.
 */
import { html, layout, type SafeHtml } from './html.js';

/** The four request types with the words the form shows. */
export const REQUEST_CHOICES: readonly { readonly value: string; readonly label: string; readonly help: string }[] = [
  { value: 'discovery', label: 'Discovery', help: 'Suggest a public URL the crawler may not know yet.' },
  { value: 'recrawl', label: 'Recrawl', help: 'Ask for a known URL to be fetched again soon (for example after an update).' },
  {
    value: 'correction',
    label: 'Correction',
    help: 'Something svc shows for this URL is wrong: say what in the note. The URL is recrawled with priority.',
  },
  {
    value: 'removal',
    label: 'Exact removal',
    help: 'Remove exactly this URL. Done only when a fresh fetch shows 404 or 410, or noindex.',
  },
];

/** The /manage-url page body. */
export function renderManageUrlMain(): SafeHtml {
  return html`<h1>Manage a URL</h1>
<p>Ask svc to discover a URL, crawl it again, correct what it shows, or remove it. Requests are processed by
  SvcBot through its normal path: robots.txt, noindex and politeness always apply.</p>
<div class="notice" id="who-note">
  <p><strong>This form needs an API key.</strong> svc is a closed beta: the operators issue keys to the people and
    programs they work with, and every request counts against that key's daily quota. There is no public,
    key-less form, because one would need abuse protection svc does not have yet. Without a key, a webmaster does not
    need this form: SvcBot finds pages through links and sitemaps, reads your robots.txt, and drops a page whose
    fetch answers 404, 410 or <code>noindex</code> (see <a href="/webmasters#changes">the webmaster guide</a>).</p>
</div>
<div class="notice" id="guarantee-note">
  <p><strong>A submission guarantees neither indexing nor position.</strong> It asks SvcBot to look at the URL; what
    the page allows and contains decides the rest.</p>
  <p><strong>Exact removal</strong> removes only the exact URL you give, and only when a fresh fetch of it shows it is
    gone (HTTP 404 or 410) or that it asks not to be indexed (<code>noindex</code>). A live, indexable page is never
    removed on request: make it answer 404/410 or add noindex first. See <a href="/webmasters">the webmaster guide</a>.</p>
</div>
<form id="manage-form" class="manage-form" method="post" novalidate>
  <fieldset>
    <legend>Request type</legend>
${REQUEST_CHOICES.map(
  (c, i) => html`    <div class="choice">
      <input type="radio" id="type-${c.value}" name="type" value="${c.value}"${i === 0 ? html` checked` : ''} aria-describedby="type-${c.value}-help">
      <label for="type-${c.value}">${c.label}</label>
      <p id="type-${c.value}-help" class="hint">${c.help}</p>
    </div>
`,
)}  </fieldset>
  <label for="url">URL</label>
  <input id="url" name="url" type="text" inputmode="url" autocomplete="off" spellcheck="false" autocapitalize="off" aria-describedby="url-hint">
  <p id="url-hint" class="hint">The absolute address, starting with http:// or https://, at most 2048 characters.</p>
  <label for="note">Note <span id="note-optional">(optional; for a correction, say what is wrong)</span></label>
  <textarea id="note" name="note" rows="3" maxlength="1000" aria-describedby="note-hint"></textarea>
  <p id="note-hint" class="hint">At most 1000 characters. Kept with the request, never published.</p>
  <button id="manage-submit" type="submit">Send request</button>
</form>
<div id="manage-error" class="problem" role="alert" hidden></div>
<section id="request-panel" class="request-panel" aria-labelledby="request-heading" hidden>
  <h2 id="request-heading">Your request</h2>
  <dl class="request-facts">
    <dt>Request id</dt><dd><code id="request-id"></code></dd>
    <dt>Type</dt><dd id="request-type"></dd>
    <dt>URL</dt><dd id="request-url" class="break"></dd>
    <dt>Status</dt><dd id="request-status" data-status=""></dd>
    <dt>Outcome</dt><dd id="request-outcome">—</dd>
    <dt>Reason</dt><dd id="request-reason">—</dd>
  </dl>
  <p id="request-live" role="status" aria-live="polite"></p>
  <button id="request-refresh" type="button" hidden>Check the status again</button>
  <h3>History</h3>
  <ol id="request-history" class="request-history"></ol>
  <p id="request-notice" class="hint"></p>
</section>`;
}

/** The complete /manage-url document. */
export function renderManageUrlPage(): string {
  return layout({ title: 'Manage a URL', path: '/manage-url', main: renderManageUrlMain(), script: 'manage-url.js', needsKey: true });
}
