// The search page: reads q/offset from the address bar, calls GET /api/v1/search with the tab's key and renders
// results. Everything that comes from the index is inserted as text (textContent / text nodes), never as HTML:
// titles and excerpts are untrusted web content.
import { apiFetch, clearProblem, el, getKey, initKeyPanel, isoDay, isoTime, showProblem } from './api-client.js';

/** Page size (the API allows 1–20) and the largest offset the API accepts (0–90). */
const LIMIT = 10;
const MAX_OFFSET = 90;

const form = document.getElementById('search-form');
const q = document.getElementById('q');
const language = document.getElementById('language');
const status = document.getElementById('search-status');
const errorBox = document.getElementById('search-error');
const warningsList = document.getElementById('search-warnings');
const list = document.getElementById('results');
const collapsedBox = document.getElementById('collapsed-hosts');
const pager = document.getElementById('pager');
const prev = document.getElementById('pager-prev');
const next = document.getElementById('pager-next');
const pagerInfo = document.getElementById('pager-info');

const DATE_SOURCES = {
  'schema.org': 'schema.org data',
  'article-meta': 'article metadata',
  'http-last-modified': 'the HTTP Last-Modified header',
  'time-element': 'a time element',
  corpus: 'the corpus import',
};
const SNIPPET_DECISIONS = {
  shown: 'excerpt shown',
  max_snippet: "excerpt shortened to the page's max-snippet",
  nosnippet: 'no excerpt: the page forbids snippets',
  unavailable: 'no quotable text',
};

/** Current query state: what the address bar says, plus the offsets of the pages before it (history state). */
let current = { q: '', offset: 0, language: '', trail: [] };
/** Sequence number of the latest search, so a slow older answer never overwrites a newer one. */
let seq = 0;

function clampOffset(n) {
  if (!Number.isFinite(n) || n < 0) return 0;
  return Math.min(MAX_OFFSET, Math.floor(n));
}

/** Language codes offered by the page's select (anything else in the address is ignored). */
const LANGUAGES = new Set([...language.options].map((o) => o.value).filter((v) => v !== ''));

function readLocation() {
  const p = new URLSearchParams(window.location.search);
  const lang = p.get('language') ?? '';
  return {
    // Not cut to the API's bound: an over-long query from an address is sent as is, and the API's 422 says why.
    q: (p.get('q') ?? '').trim(),
    offset: clampOffset(Number(p.get('offset') ?? '0')),
    language: LANGUAGES.has(lang) ? lang : '',
  };
}

function writeLocation(state, replace) {
  const p = new URLSearchParams();
  p.set('q', state.q);
  if (state.language) p.set('language', state.language);
  if (state.offset > 0) p.set('offset', String(state.offset));
  const url = `/?${p.toString()}`;
  if (replace) window.history.replaceState(state, '', url);
  else window.history.pushState(state, '', url);
}

/** A link target is shown as a link only when it is an http(s) URL; anything else stays text. */
function safeHref(url) {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** The excerpt as text nodes with <mark> around the API's [start, end) highlight offsets. */
function excerptNode(text, highlights) {
  const p = el('p', null, 'excerpt');
  const spans = (Array.isArray(highlights) ? highlights : [])
    .filter((h) => Array.isArray(h) && h.length === 2)
    .map(([a, b]) => [Math.max(0, Math.trunc(a)), Math.min(text.length, Math.trunc(b))])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let pos = 0;
  for (const [a, b] of spans) {
    if (b <= pos) continue; // overlaps an earlier highlight
    const start = Math.max(a, pos);
    if (start > pos) p.append(document.createTextNode(text.slice(pos, start)));
    p.append(el('mark', text.slice(start, b)));
    pos = b;
  }
  if (pos < text.length) p.append(document.createTextNode(text.slice(pos)));
  return p;
}

function timeNode(label, value) {
  const day = isoDay(value);
  if (!day) return null;
  const span = el('span', null, 'date');
  span.append(`${label} `);
  const t = el('time', day);
  t.dateTime = value;
  t.title = isoTime(value);
  span.append(t);
  return span;
}

function renderResult(r, index, warnings) {
  const li = el('li', null, 'result');
  li.dataset.host = r.host;
  const article = el('article');
  const titleId = `result-${index}-title`;
  article.setAttribute('aria-labelledby', titleId);

  const h3 = el('h3', null, 'result-title');
  h3.id = titleId;
  const href = safeHref(r.url);
  const titleText = r.title && r.title.trim() !== '' ? r.title : r.url;
  if (href) {
    const a = el('a', titleText);
    a.href = href;
    a.rel = 'noopener noreferrer nofollow';
    h3.append(a);
  } else {
    h3.append(titleText);
  }
  article.append(h3);

  const meta = el('p', null, 'result-meta');
  meta.append(el('span', r.host, 'result-host'), ' · ', el('span', r.url, 'result-url'));
  article.append(meta);

  const decision = r.provenance?.snippet;
  if (r.excerpt && typeof r.excerpt.text === 'string') article.append(excerptNode(r.excerpt.text, r.excerpt.highlights));
  else
    article.append(
      el(
        'p',
        decision === 'nosnippet' ? 'No excerpt: this page does not allow snippets.' : 'No quotable text for this page.',
        'excerpt-none',
      ),
    );

  // A corpus document (svc ingest) was imported, never fetched: its provenance says so instead of naming the crawler.
  const fromCorpus = r.provenance?.date_source === 'corpus';
  const dates = el('p', null, 'result-dates');
  const parts = [
    timeNode('Published', r.dates?.published),
    timeNode('Modified', r.dates?.modified),
    timeNode(fromCorpus ? 'Imported' : 'Fetched', r.dates?.fetched),
  ].filter(Boolean);
  parts.forEach((p, i) => {
    if (i > 0) dates.append(' · ');
    dates.append(p);
  });
  if (parts.length > 0) article.append(dates);

  const prov = el('p', null, 'provenance');
  const pv = r.provenance ?? {};
  prov.append(el('span', 'Provenance:', 'provenance-label'), ' ');
  // A record's URL is corpus:<name>/<id> (its host, <id>.<name>.corpus.invalid, is the record's own source identity).
  const corpusName = fromCorpus
    ? (/^corpus:([^/]+)\//.exec(String(r.url ?? ''))?.[1] ?? String(r.host ?? '').replace(/\.corpus\.invalid$/, ''))
    : '';
  const facts = [
    fromCorpus
      ? `from the corpus ${corpusName}${pv.fetched_at ? `, imported ${isoTime(pv.fetched_at)}` : ''} (not crawled; no page dates)`
      : pv.fetched_at
        ? `fetched by SvcBot ${isoTime(pv.fetched_at)}`
        : null,
    fromCorpus
      ? null
      : pv.date_source === 'none'
        ? 'no date found on the page'
        : pv.date_source
          ? `dates from ${DATE_SOURCES[pv.date_source] ?? pv.date_source}`
          : null,
    decision ? (SNIPPET_DECISIONS[decision] ?? decision) : null,
    Number.isInteger(pv.passage_ordinal) ? `best passage #${pv.passage_ordinal + 1}` : null,
    Number.isInteger(r.page_ref) ? `page_ref ${r.page_ref}` : null,
    r.content_trust === 'untrusted_web_content' ? 'untrusted web content' : null,
  ].filter(Boolean);
  prov.append(facts.join(' · '));
  article.append(prov);
  // Typed warnings about this very result (snippet_restricted, instruction_like_text …) sit under it.
  for (const w of warnings) {
    const p = el('p', w.message ?? w.code, 'result-warning');
    p.dataset.code = String(w.code ?? '');
    article.append(p);
  }
  li.append(article);
  return li;
}

/**
 * "Show n more from host": a link that repeats the query restricted to that host (a positive site: lifts the cap).
 * Worded as an action, so a short page ("Results 1–2") reads as "2 per site here, the rest one click away".
 */
function moreFromHostNode(state, host, n) {
  const p = el('p', null, 'more-from-host');
  const a = el('a', `Show ${n} more from ${host}`);
  const params = new URLSearchParams({ q: `${state.q} site:${host}`.slice(0, 300) });
  if (state.language) params.set('language', state.language);
  a.href = `/?${params.toString()}`;
  p.append(a);
  return p;
}

function render(state, data) {
  const results = Array.isArray(data?.results) ? data.results : [];
  const allWarnings = (Array.isArray(data?.warnings) ? data.warnings : []).filter((w) => w && typeof w === 'object');
  const shownUrls = new Set(results.map((r) => r.url));
  const forResult = (url) => allWarnings.filter((w) => w.source === url);
  list.replaceChildren(...results.map((r, i) => renderResult(r, state.offset + i, forResult(r.url))));
  list.start = state.offset + 1;

  // Other warnings (typed {code, message}) above the list; no_results is said by the status line already.
  const warnings = allWarnings.filter((w) => w.code !== 'no_results' && !(typeof w.source === 'string' && shownUrls.has(w.source)));
  warningsList.replaceChildren(
    ...warnings.map((w) => {
      const li = el('li', w.message ?? w.code, 'warning');
      li.dataset.code = String(w.code ?? '');
      return li;
    }),
  );
  warningsList.hidden = warnings.length === 0;

  // Host-diversity collapse: attach "n more from host" after that host's last result on this page.
  collapsedBox.replaceChildren();
  const collapsed = data?.collapsed_per_host && typeof data.collapsed_per_host === 'object' ? data.collapsed_per_host : {};
  const collapsedTotal = Object.values(collapsed).reduce((a, n) => a + (Number.isInteger(n) && n > 0 ? n : 0), 0);
  for (const [host, n] of Object.entries(collapsed)) {
    if (!Number.isInteger(n) || n <= 0) continue;
    const items = [...list.querySelectorAll('li.result')].filter((li) => li.dataset.host === host);
    const last = items[items.length - 1];
    const node = moreFromHostNode(state, host, n);
    if (last) last.querySelector('article').append(node);
    else collapsedBox.append(node);
  }
  collapsedBox.hidden = collapsedBox.childElementCount === 0;

  if (results.length === 0) {
    status.textContent =
      state.offset > 0
        ? `No more results for “${state.q}”.`
        : `No results for “${state.q}”. The index is bounded: an empty answer only means nothing matched.`;
  } else {
    const dup =
      Number.isInteger(data.duplicates_collapsed) && data.duplicates_collapsed > 0
        ? ` · ${data.duplicates_collapsed} near-duplicate pages left out`
        : '';
    const lang = state.language ? ` · pages in ${language.selectedOptions[0]?.textContent ?? state.language}` : '';
    // A page lists at most 2 results per site: say so, or "Results 1–2" next to "7 more from …" looks broken.
    const capped = collapsedTotal > 0 ? ` · at most 2 per site on a page: ${collapsedTotal} more one click away` : '';
    status.textContent = `Results ${state.offset + 1}–${state.offset + results.length} for “${state.q}”${lang} · ranking: ${data.ranking ?? 'unknown'}${dup}${capped}`;
  }

  // The API fills a page with at most 2 results per host, so a page can be shorter than LIMIT while more results
  // follow: the next page starts after the results shown, and exists while this page was full or hosts were capped.
  const nextOffset = state.offset + results.length;
  const hasPrev = state.offset > 0;
  const hasNext = results.length > 0 && (results.length >= LIMIT || collapsedTotal > 0) && nextOffset <= MAX_OFFSET;
  pager.hidden = !hasPrev && !hasNext;
  prev.disabled = !hasPrev;
  next.disabled = !hasNext;
  pager.dataset.nextOffset = String(nextOffset);
  pagerInfo.textContent = results.length > 0 ? `Results ${state.offset + 1}–${nextOffset}` : '';
}

function clearResults() {
  list.replaceChildren();
  warningsList.replaceChildren();
  warningsList.hidden = true;
  collapsedBox.replaceChildren();
  collapsedBox.hidden = true;
  pager.hidden = true;
}

async function run(state, { focusResults = false } = {}) {
  current = state;
  if (state.q === '') return;
  if (!getKey()) {
    clearResults();
    status.textContent = 'Enter your API key above to search.';
    return;
  }
  const mine = ++seq;
  clearProblem(errorBox);
  list.setAttribute('aria-busy', 'true');
  status.textContent = 'Searching…';
  try {
    // detail=full: the page shows highlights, all dates and provenance (an agent's default answer omits them).
    const params = new URLSearchParams({ q: state.q, limit: String(LIMIT), offset: String(state.offset), detail: 'full' });
    if (state.language) params.set('language', state.language);
    const data = await apiFetch(`/api/v1/search?${params.toString()}`);
    if (mine !== seq) return;
    render(state, data);
    if (focusResults) status.focus(); // keyboard users land on the new page's summary
  } catch (err) {
    if (mine !== seq) return;
    clearResults();
    status.textContent = err?.status === 401 ? 'Key refused.' : 'The search failed.';
    showProblem(errorBox, err);
  } finally {
    if (mine === seq) list.removeAttribute('aria-busy');
  }
}

form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const state = { q: q.value.trim(), offset: 0, language: language.value, trail: [] };
  if (state.q === '') {
    status.textContent = 'Type a query first.';
    q.focus();
    return;
  }
  writeLocation(state, false);
  void run(state);
});

/** Next page: starts after the results shown; remembers where this page started so "Previous" returns to it. */
next.addEventListener('click', () => {
  const state = {
    ...current,
    offset: clampOffset(Number(pager.dataset.nextOffset ?? '0')),
    trail: [...(current.trail ?? []), current.offset],
  };
  writeLocation(state, false);
  void run(state, { focusResults: true });
});
/** Previous page: where the earlier page started (known from the trail), else one full page back. */
prev.addEventListener('click', () => {
  const trail = [...(current.trail ?? [])];
  const back = trail.length > 0 ? trail.pop() : Math.max(0, current.offset - LIMIT);
  const state = { ...current, offset: clampOffset(back), trail };
  writeLocation(state, false);
  void run(state, { focusResults: true });
});

window.addEventListener('popstate', (ev) => {
  const state = { ...readLocation(), trail: Array.isArray(ev.state?.trail) ? ev.state.trail : [] };
  q.value = state.q;
  language.value = state.language;
  if (state.q === '') {
    clearResults();
    status.textContent = '';
    return;
  }
  void run(state);
});

status.tabIndex = -1;
initKeyPanel({
  onKey: () => {
    const same = current.q === q.value.trim() && current.language === language.value;
    const state = { q: q.value.trim(), offset: same ? current.offset : 0, language: language.value, trail: same ? current.trail : [] };
    if (state.q !== '') void run(state);
    else q.focus();
  },
});

const initial = { ...readLocation(), trail: Array.isArray(window.history.state?.trail) ? window.history.state.trail : [] };
q.value = initial.q;
language.value = initial.language;
current = initial;
if (initial.q !== '') void run(initial);
