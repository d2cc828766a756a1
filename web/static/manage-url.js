// "Manage a URL": submits POST /api/v1/requests with the tab's key, shows the request id and follows its status by
// polling GET /api/v1/requests/{id} until it is final (completed or failed). API errors are shown with the
// problem+json `detail` and each `errors` entry. The form does no validation of its own: the API is the one judge.
import { apiFetch, clearProblem, el, initKeyPanel, isoTime, showProblem } from './api-client.js';

const form = document.getElementById('manage-form');
const urlInput = document.getElementById('url');
const noteInput = document.getElementById('note');
const submit = document.getElementById('manage-submit');
const errorBox = document.getElementById('manage-error');
const panel = document.getElementById('request-panel');
const heading = document.getElementById('request-heading');
const fields = {
  id: document.getElementById('request-id'),
  type: document.getElementById('request-type'),
  url: document.getElementById('request-url'),
  status: document.getElementById('request-status'),
  outcome: document.getElementById('request-outcome'),
  reason: document.getElementById('request-reason'),
};
const live = document.getElementById('request-live');
const refresh = document.getElementById('request-refresh');
const history = document.getElementById('request-history');
const notice = document.getElementById('request-notice');

const FINAL = new Set(['completed', 'failed']);
const STATUS_WORDS = {
  received: 'received',
  queued: 'queued for the crawler',
  in_progress: 'being crawled',
  completed: 'completed',
  failed: 'failed',
};
const OUTCOME_WORDS = {
  indexed: 'indexed (new in the index)',
  updated: 'updated (the content changed)',
  unchanged: 'unchanged',
  removed: 'removed',
  excluded_by_robots: 'excluded by robots.txt',
  excluded_by_noindex: 'excluded by noindex',
  not_found: 'not found (404/410)',
  rejected: 'rejected',
};
const TYPE_WORDS = { discovery: 'Discovery', recrawl: 'Recrawl', correction: 'Correction', removal: 'Exact removal' };

/** Polling: first check after 1 s, then slower (×1.5) up to 5 s; give up following after 10 minutes. */
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 5000;
const FOLLOW_FOR_MS = 10 * 60 * 1000;

let timer = null;
/** Incremented for every new request followed, so an old poll loop stops itself. */
let followSeq = 0;

/** A random Idempotency-Key: a double click or a retried POST returns the same request instead of a second one. */
function idempotencyKey() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

function showRequest(r) {
  fields.id.textContent = r.id;
  fields.type.textContent = TYPE_WORDS[r.type] ?? r.type;
  fields.url.textContent = r.url;
  fields.status.textContent = STATUS_WORDS[r.status] ?? r.status;
  fields.status.dataset.status = r.status;
  fields.outcome.textContent = r.outcome ? (OUTCOME_WORDS[r.outcome] ?? r.outcome) : '—';
  fields.outcome.dataset.outcome = r.outcome ?? '';
  fields.reason.textContent = r.reason ?? '—';
  history.replaceChildren(
    ...(Array.isArray(r.history) ? r.history : []).map((h) => {
      const li = el('li');
      const t = el('time', isoTime(h.at));
      t.dateTime = h.at;
      li.append(t, ` — ${STATUS_WORDS[h.status] ?? h.status}`);
      if (h.outcome) li.append(`: ${OUTCOME_WORDS[h.outcome] ?? h.outcome}`);
      if (h.reason) li.append(` (${h.reason})`);
      return li;
    }),
  );
  if (typeof r.notice === 'string') notice.textContent = r.notice;
  panel.hidden = false;
}

function stopFollowing() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

/** Polls the request until a final status, an error, or FOLLOW_FOR_MS; the first check comes after `firstDelay` ms. */
function follow(id, firstDelay = FIRST_DELAY_MS) {
  stopFollowing();
  const mine = ++followSeq;
  const started = Date.now();
  refresh.hidden = true;
  const tick = async (delay) => {
    timer = setTimeout(async () => {
      if (mine !== followSeq) return;
      try {
        const data = await apiFetch(`/api/v1/requests/${encodeURIComponent(id)}`);
        if (mine !== followSeq) return;
        const r = data.request;
        showRequest(r);
        if (FINAL.has(r.status)) {
          live.textContent = `Final status: ${STATUS_WORDS[r.status]}${r.outcome ? ` — ${OUTCOME_WORDS[r.outcome] ?? r.outcome}` : ''}${r.reason ? ` (${r.reason})` : ''}.`;
          return;
        }
        if (Date.now() - started > FOLLOW_FOR_MS) {
          live.textContent = `Still ${STATUS_WORDS[r.status] ?? r.status}. Stopped checking automatically; use the button to check again.`;
          refresh.hidden = false;
          return;
        }
        live.textContent = `Status: ${STATUS_WORDS[r.status] ?? r.status}. Checking again shortly…`;
        void tick(Math.min(MAX_DELAY_MS, Math.round(delay * 1.5)));
      } catch (err) {
        if (mine !== followSeq) return;
        if (err?.status === 429 && err.retryAfter) {
          live.textContent = `Rate limit reached; checking again in ${err.retryAfter} s.`;
          void tick(err.retryAfter * 1000);
          return;
        }
        showProblem(errorBox, err);
        live.textContent = 'Could not check the status.';
        refresh.hidden = err?.status === 401;
      }
    }, delay);
  };
  void tick(firstDelay);
}

refresh.addEventListener('click', () => {
  clearProblem(errorBox);
  const id = fields.id.textContent;
  if (id) follow(id);
});

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  clearProblem(errorBox);
  const type = form.querySelector('input[name="type"]:checked')?.value ?? 'discovery';
  const body = { type, url: urlInput.value.trim() };
  const note = noteInput.value.trim();
  if (note !== '') body.note = note;
  submit.disabled = true;
  try {
    const data = await apiFetch('/api/v1/requests', { method: 'POST', json: body, headers: { 'Idempotency-Key': idempotencyKey() } });
    const r = data.request;
    showRequest(r);
    // The request id (not the key) goes into the address, so a reload or a bookmark follows the same request.
    window.history.replaceState(null, '', `/manage-url?request=${encodeURIComponent(r.id)}`);
    live.textContent = data.deduplicated
      ? `You already had this request open: showing request ${r.id}, status ${STATUS_WORDS[r.status] ?? r.status}.`
      : `Request ${r.id} recorded, status ${STATUS_WORDS[r.status] ?? r.status}. Following it…`;
    heading.focus();
    if (FINAL.has(r.status))
      live.textContent = `Final status: ${STATUS_WORDS[r.status]}${r.outcome ? ` — ${OUTCOME_WORDS[r.outcome] ?? r.outcome}` : ''}.`;
    else follow(r.id);
  } catch (err) {
    showProblem(errorBox, err);
    // A refused key moves the focus to the key field (api-client); any other error to its explanation.
    if (err?.status !== 401) errorBox.focus();
  } finally {
    submit.disabled = false;
  }
});

/** A request id from the address (`?request=req_…`), shown again after a reload; null when absent or malformed. */
function requestFromAddress() {
  const id = new URLSearchParams(window.location.search).get('request');
  return id !== null && /^req_[A-Za-z0-9_-]{1,60}$/.test(id) ? id : null;
}

heading.tabIndex = -1;
errorBox.tabIndex = -1;
const hasKey = initKeyPanel({
  onKey: () => {
    const id = requestFromAddress();
    if (id && fields.id.textContent === '') follow(id, 0);
    else urlInput.focus();
  },
});
const resumeId = requestFromAddress();
if (resumeId && hasKey()) follow(resumeId, 0);
