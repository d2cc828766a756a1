// Shared by the pages: the closed-beta key (sessionStorage only), calls to the REST API with
// `Authorization: Bearer`, and the display of problem+json errors. Plain ES module, no build step.
//
// The key never goes into a URL, a cookie or a log: it is read from sessionStorage for each call and sent only
// as a request header to this same origin (CSP connect-src 'self'; fetch with credentials: 'omit').

const STORAGE_KEY = 'svc.apiKey';

/** The key of this tab, or null. */
export function getKey() {
  try {
    const k = window.sessionStorage.getItem(STORAGE_KEY);
    return k && k.length > 0 ? k : null;
  } catch {
    return null; // storage disabled: behave as if no key was given
  }
}

/** Stores the key for this tab only. */
export function setKey(key) {
  window.sessionStorage.setItem(STORAGE_KEY, key);
}

/** Forgets the key. */
export function clearKey() {
  try {
    window.sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing stored
  }
}

/** An API call that did not succeed: HTTP status plus the problem+json body when there was one. */
export class ApiError extends Error {
  constructor(status, problem, retryAfter) {
    super(problem && typeof problem.detail === 'string' ? problem.detail : `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

/** Thrown before any request when the tab has no key yet. */
export class KeyMissingError extends Error {
  constructor() {
    super('enter your API key first');
    this.name = 'KeyMissingError';
  }
}

/**
 * Calls the API with the tab's key. Resolves to the parsed JSON body on 2xx; rejects with ApiError otherwise.
 * A 401 forgets the key and announces it ('svc:key-refused' on window) so the key panel can say so.
 */
export async function apiFetch(path, { method = 'GET', json, headers: extra } = {}) {
  const key = getKey();
  if (!key) throw new KeyMissingError();
  const headers = new Headers(extra);
  headers.set('Authorization', `Bearer ${key}`);
  headers.set('Accept', 'application/json, application/problem+json');
  let body;
  if (json !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(json);
  }
  let res;
  try {
    res = await fetch(path, { method, headers, body, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' });
  } catch {
    throw new ApiError(0, {
      title: 'Network error',
      detail: 'The service could not be reached. Check your connection and try again.',
      errors: [],
    });
  }
  const text = await res.text();
  let data = null;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (res.ok) return data;
  const retryAfter = Number(res.headers.get('Retry-After')) || undefined;
  const problem =
    data && typeof data === 'object' ? data : { title: `HTTP ${res.status}`, detail: res.statusText || 'Request failed', errors: [] };
  if (res.status === 401) {
    clearKey();
    window.dispatchEvent(new CustomEvent('svc:key-refused', { detail: problem }));
  }
  throw new ApiError(res.status, problem, retryAfter);
}

/** Creates an element with text content (never HTML). */
export function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (className) e.className = className;
  return e;
}

/**
 * Shows an API error in `box` (a role="alert" element): the problem's title, its `detail` and each entry of
 * `errors` as "field: issue". A 401 gets the key-refused wording.
 */
export function showProblem(box, err) {
  box.replaceChildren();
  if (err instanceof KeyMissingError) {
    box.append(el('p', 'Enter your API key above first.', 'problem-title'));
  } else if (err instanceof ApiError) {
    const p = err.problem || {};
    if (err.status === 401) {
      box.append(el('p', 'Key refused: the service did not accept this API key.', 'problem-title'));
      box.append(el('p', 'It has been removed from this tab. Enter a valid key above.', 'problem-detail'));
    } else {
      const title = typeof p.title === 'string' ? p.title : `HTTP ${err.status}`;
      box.append(el('p', err.status > 0 ? `${title} (${err.status}${p.code ? `, ${p.code}` : ''})` : title, 'problem-title'));
      const detail = typeof p.detail === 'string' && p.detail !== title ? p.detail : null;
      if (detail) box.append(el('p', detail, 'problem-detail'));
      // A field issue that only repeats the detail (`url: …` twice) is shown once.
      const lines = (Array.isArray(p.errors) ? p.errors : [])
        .map((e) => {
          const field = Array.isArray(e?.path) && e.path.length > 0 ? e.path.join('.') : 'input';
          const issue = typeof e?.issue === 'string' ? e.issue : 'invalid';
          return { line: `${field}: ${issue}`, issue };
        })
        .filter(({ line, issue }) => line !== detail && issue !== detail)
        .map(({ line }) => line);
      if (lines.length > 0) {
        const ul = el('ul', null, 'problem-errors');
        for (const line of lines) ul.append(el('li', line));
        box.append(ul);
      }
      if (err.retryAfter) box.append(el('p', `Try again in ${err.retryAfter} s.`, 'problem-detail'));
    }
  } else {
    box.append(el('p', 'Something went wrong in this page. Reload and try again.', 'problem-title'));
  }
  box.hidden = false;
}

/** Empties and hides an error box. */
export function clearProblem(box) {
  box.replaceChildren();
  box.hidden = true;
}

/**
 * Wires the key panel rendered by web/html.ts. `onKey` runs after a key is entered (e.g. to run a pending
 * search). Returns a function that tells whether a key is set.
 */
export function initKeyPanel({ onKey } = {}) {
  const missing = document.getElementById('key-missing');
  const present = document.getElementById('key-present');
  const form = document.getElementById('key-form');
  const input = document.getElementById('key-input');
  const forget = document.getElementById('key-forget');
  const message = document.getElementById('key-message');

  const refresh = () => {
    const has = getKey() !== null;
    missing.hidden = has;
    present.hidden = !has;
  };
  const say = (text) => {
    message.textContent = text;
    message.hidden = text === '';
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const value = input.value.trim();
    if (value === '') {
      say('Enter the API key first.');
      input.focus();
      return;
    }
    setKey(value);
    input.value = '';
    say('');
    refresh();
    if (onKey) onKey();
  });
  forget.addEventListener('click', () => {
    clearKey();
    say('');
    refresh();
    input.focus();
  });
  window.addEventListener('svc:key-refused', () => {
    refresh();
    say('Key refused: the service answered 401 (missing or invalid API key). The key was removed from this tab; enter a valid one.');
    input.focus();
  });
  refresh();
  return () => getKey() !== null;
}

/** Formats an ISO 8601 instant as YYYY-MM-DD (UTC), or null when absent or unparsable. */
export function isoDay(value) {
  if (typeof value !== 'string' || value === '') return null;
  const t = Date.parse(value);
  if (Number.isNaN(t)) return null;
  return new Date(t).toISOString().slice(0, 10);
}

/** Formats an ISO 8601 instant as "YYYY-MM-DD HH:MM:SS UTC". */
export function isoTime(value) {
  if (typeof value !== 'string' || value === '') return '';
  const t = Date.parse(value);
  if (Number.isNaN(t)) return value;
  return `${new Date(t).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
