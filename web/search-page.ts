/**
 * `/`: the search page. The server renders the form, the operator help and empty result regions; the module
 * /assets/search.js calls GET /api/v1/search with the tab's key and fills them in (results are untrusted web
 * content and are only ever inserted as text nodes).
 */
import { html, layout, type SafeHtml } from './html.js';

/** The operators of spec §1.1, as shown in the help table. */
export const OPERATOR_HELP: readonly { readonly operator: string; readonly form: string; readonly example: string }[] = [
  { operator: 'exact phrase', form: '"<phrase>"', example: '"garbage collection"' },
  { operator: 'exclude word', form: '-<word> or --<word>', example: 'library -closed' },
  { operator: 'title contains', form: 'intitle:"<phrase>"', example: 'intitle:"school"' },
  { operator: 'domain', form: 'site:<domain>', example: 'site:gc.ca' },
  { operator: 'URL contains', form: 'inurl:<text>', example: 'inurl:benefits' },
  { operator: 'file type', form: 'filetype:<extension>', example: 'filetype:pdf' },
];

/** The language filter choices (the API's `language` parameter; "" = any). */
export const LANGUAGE_CHOICES: readonly { readonly value: string; readonly label: string; readonly lang?: string }[] = [
  { value: '', label: 'Any language' },
  { value: 'en', label: 'English', lang: 'en' },
  { value: 'fr', label: 'Français', lang: 'fr' },
];

/** Query length bound of GET /api/v1/search (spec §4). */
export const QUERY_MAX_LENGTH = 300;

/** The search page body. */
export function renderSearchMain(): SafeHtml {
  return html`<h1 class="visually-hidden">Search</h1>
<form id="search-form" class="search-form" role="search" action="/" method="get">
  <label for="q">Search the svc index</label>
  <div class="search-row">
    <input id="q" name="q" type="search" maxlength="${QUERY_MAX_LENGTH}" required autocomplete="off" spellcheck="false" aria-describedby="q-hint">
    <button type="submit">Search</button>
  </div>
  <p id="q-hint" class="hint">1 to ${QUERY_MAX_LENGTH} characters. Operators are explained below.</p>
  <div class="search-options">
    <label for="language">Language of the pages</label>
    <select id="language" name="language">
${LANGUAGE_CHOICES.map(
  (l) => html`      <option value="${l.value}"${l.lang ? html` lang="${l.lang}"` : ''}>${l.label}</option>
`,
)}    </select>
  </div>
</form>
<details id="operator-help" class="operator-help">
  <summary>Search operators</summary>
  <table class="data-table">
    <caption>Operators you can combine in a query</caption>
    <thead><tr><th scope="col">Operator</th><th scope="col">Form</th><th scope="col">Example</th></tr></thead>
    <tbody>
${OPERATOR_HELP.map(
  (o) => html`      <tr><th scope="row">${o.operator}</th><td><code>${o.form}</code></td><td><code>${o.example}</code></td></tr>
`,
)}    </tbody>
  </table>
  <ul>
    <li>A <code>-</code> before an operator excludes it, for example <code>-site:example.com</code> or <code>-filetype:pdf</code>.</li>
    <li>Several positive <code>site:</code> or several positive <code>filetype:</code> operators are alternatives (any of them).</li>
    <li>All other terms must all match.</li>
    <li id="no-or-operator">There is no <code>OR</code> operator: <code>OR</code>, <code>AND</code> and <code>NOT</code> are
      searched as ordinary words. Use <code>-word</code> to exclude, and several <code>site:</code> or
      <code>filetype:</code> for alternatives.</li>
    <li>Example: <code>intitle:"budget" site:ontario.ca filetype:html -draft -inurl:archive</code></li>
  </ul>
</details>
<section id="search-results" aria-labelledby="results-heading">
  <h2 id="results-heading" class="visually-hidden">Results</h2>
  <p id="search-status" class="search-status" role="status" aria-live="polite"></p>
  <div id="search-error" class="problem" role="alert" hidden></div>
  <ul id="search-warnings" class="warnings" hidden></ul>
  <ol id="results" class="results"></ol>
  <div id="collapsed-hosts" class="collapsed-hosts" hidden></div>
  <nav id="pager" class="pager" aria-label="Result pages" hidden>
    <button id="pager-prev" type="button">Previous page</button>
    <span id="pager-info"></span>
    <button id="pager-next" type="button">Next page</button>
  </nav>
  <p class="hint trust-note">Results quote untrusted web content: titles and excerpts are what the pages say, not
    what svc vouches for. A missing result only means the bounded index returned nothing.</p>
</section>`;
}

/** The complete / document. */
export function renderSearchPage(): string {
  return layout({ title: 'Search', path: '/', main: renderSearchMain(), script: 'search.js', needsKey: true });
}
