/**
 * Crawls one frontier item: robots → polite fetch with each redirect hop re-validated → status handling →
 * directives → extraction → index, state and frontier. Side effects come first and frontier completion last, so a
 * crash re-runs the item (all writes are idempotent) and never loses its discovered links.
 */
import { createHash } from 'node:crypto';
import { LoopBudget, yieldToLoop } from '../event-loop.js';
import type { EntitySink, JsonLdNode, JsonLdParseErrors, PageInput, PageSink } from '../page-model.js';
import type { DocumentsRepo, HostFactsRepo } from '../state/repos/types.js';
import { classifyAddress, ipLiteralOf } from './address.js';
import { parseDirectives, type Directives } from './directives.js';
import { decodeHtml, extractPage, normalizedTextForHash, parseLlmsTxt } from './extract.js';
import type { PdfExtractor } from './extract-pdf.js';
import { plainDocument } from './extract-plain.js';
import { FetchError, parseRetryAfter, type FetchOptions, type FetchResult, type Fetcher } from './fetcher.js';
import type { CrawlFrontier, CrawlItem as FrontierItem } from './crawl-frontier.js';
import { inScope, PRIORITY, type CrawlScope } from './frontier.js';
import type { RobotsCache } from './robots.js';
import type { PolitenessScheduler } from './scheduler.js';
import { gunzipIfNeeded, parseSitemap } from './sitemaps.js';
import { hostOf, normalizeUrl } from './url.js';

/** Minimal logger interface (pino fits). */
export interface CrawlLog {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export const silentLog: CrawlLog = { debug: () => {}, info: () => {}, warn: () => {} };

/** What processing one item did. `outcome` is also stored on the frontier row (tools/request-processor reads it). */
export interface ItemOutcome {
  /** The URL of the item. */
  readonly url: string;
  /** The URL whose content was used (after redirects), when a response arrived. */
  readonly finalUrl: string | null;
  /** Final HTTP status, null when there was no response (robots refusal, network error). */
  readonly status: number | null;
  /**
   * indexed | unchanged | excluded:noindex | excluded:unavailable_after | excluded:robots | excluded:unsupported_type |
   * excluded:too_large | excluded:encrypted | excluded:no_text_layer | excluded:parse_error | excluded:http_<status> |
   * gone | redirected | sitemap | llms | retry:<why> | error:<kind> | dead:<why>.
   */
  readonly outcome: string;
  /** True when the response carried noindex (meta robots, meta svcbot, X-Robots-Tag, unavailable_after passed). */
  readonly noindex: boolean;
  readonly pageRef: number | null;
  /** Links admitted to the frontier (new or already known). */
  readonly linksAdmitted: number;
  /** A network/HTTP error happened (for the error counter). */
  readonly error: boolean;
  /** An HTTP response was received for the item itself. */
  readonly fetched: boolean;
}

/** Everything the pipeline works with. Built by crawler.ts. */
export interface PipelineDeps {
  readonly fetcher: Fetcher;
  readonly robots: RobotsCache;
  readonly scheduler: PolitenessScheduler;
  /** The shared frontier (its rows in the state repositories: the SQLite file or PostgreSQL). */
  readonly frontier: CrawlFrontier;
  readonly documents: DocumentsRepo;
  /** Host facts (robots, llms.txt, crawl counts, change intervals, link aggregates) written for svc_site. */
  readonly hosts: HostFactsRepo;
  readonly sink: PageSink;
  readonly entities: EntitySink;
  readonly now: () => number;
  readonly log: CrawlLog;
  readonly allowLoopback: boolean;
  /** Redirect hops followed per item. @default 5 */
  readonly maxRedirects: number;
  /** Largest decoded sitemap (after gunzip). */
  readonly maxBytes: number;
  /** Extra admission rule for discovered links (scope). */
  readonly admit?: (url: string, from: string) => boolean;
  /** Links deeper than this from a seed are not admitted. */
  readonly maxDepth?: number;
  /** Origins whose robots facts were already written to state in this process (with the fetch time). */
  readonly robotsSeen: Map<string, number>;
  /** PDF text extraction (worker thread, capped); without it PDFs are excluded as an unsupported type. */
  readonly pdf?: PdfExtractor;
  readonly signal?: AbortSignal;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;
const DAY = 24 * 3600_000;
/** Recrawl delay of URLs that are gone or excluded: they may come back, but rarely. */
const RECRAWL_GONE_MS = 7 * DAY;
/** llms.txt is read once per host and refreshed weekly. */
const RECRAWL_LLMS_MS = 7 * DAY;
/** Sitemap index depth followed (index → index → urlset). */
const MAX_SITEMAP_DEPTH = 3;

/** A fetch to one host under its politeness slot. Redirects are not followed here. */
export async function politeFetch(
  deps: Pick<PipelineDeps, 'fetcher' | 'scheduler' | 'signal'>,
  url: string,
  opts: FetchOptions = {},
): Promise<FetchResult> {
  const slot = await deps.scheduler.acquire(hostOf(url), deps.signal);
  try {
    const res = await deps.fetcher.fetch(url, { ...opts, followRedirects: opts.followRedirects ?? false });
    slot.release({ status: res.status, retryAfter: res.headers['retry-after'] ?? null });
    return res;
  } catch (err) {
    slot.release({ status: null });
    throw err;
  }
}

/** A fetcher whose every request (robots.txt included) takes the target host's politeness slot. */
export function politeFetcher(deps: Pick<PipelineDeps, 'fetcher' | 'scheduler' | 'signal'>): Fetcher {
  return { fetch: (url, opts) => politeFetch(deps, url, { ...opts, followRedirects: false }).then((r) => followForRobots(deps, r, opts)) };
}

/**
 * robots.txt redirects (RFC 9309 §2.3.1.2: follow at least five) are followed hop by hop here, each under the
 * politeness slot of its host; the fetcher still validates every hop's scheme and address.
 */
async function followForRobots(
  deps: Pick<PipelineDeps, 'fetcher' | 'scheduler' | 'signal'>,
  first: FetchResult,
  opts: FetchOptions | undefined,
): Promise<FetchResult> {
  if (opts?.followRedirects === false) return first;
  let res = first;
  const redirects: string[] = [];
  const seen = new Set([res.url]);
  for (let hop = 0; REDIRECTS.has(res.status) && res.headers['location']; hop++) {
    if (hop >= 5) throw new FetchError('too_many_redirects', 'robots.txt: more than 5 redirects', { url: res.url });
    const next = normalizeUrl(res.headers['location'], res.url);
    if (next === null) throw new FetchError('bad_scheme', 'robots.txt: redirect to a refused URL', { url: res.url });
    if (seen.has(next)) throw new FetchError('redirect_loop', 'robots.txt: redirect loop', { url: next });
    seen.add(next);
    redirects.push(next);
    const { followRedirects: _f, beforeRedirect: _b, ...rest } = opts ?? {};
    res = await politeFetch(deps, next, { ...rest, headers: { accept: rest.headers?.accept ?? 'text/plain' } });
  }
  return { ...res, requestedUrl: first.requestedUrl, redirects: [...first.redirects, ...redirects] };
}

type RobotsVerdict = { allowed: true } | { allowed: false; retry: boolean; reason: string };

/**
 * Robots check of one URL, recording the origin's robots facts (and admitting its sitemaps and llms.txt) the
 * first time this process sees a fresh copy.
 */
async function robotsCheck(deps: PipelineDeps, url: string, scope: CrawlScope = null): Promise<RobotsVerdict> {
  const literal = ipLiteralOf(new URL(url).hostname);
  if (literal !== null && !classifyAddress(literal).allowed({ allowLoopback: deps.allowLoopback })) {
    return { allowed: false, retry: false, reason: 'error:blocked_address' };
  }
  const check = await deps.robots.check(url);
  const origin = new URL(url).origin;
  const info = deps.robots.peek(origin);
  const host = hostOf(url);
  deps.scheduler.setCrawlDelay(host, check.crawlDelaySec);
  if (info && deps.robotsSeen.get(origin) !== info.fetchedAt) {
    deps.robotsSeen.set(origin, info.fetchedAt);
    await deps.hosts.recordRobots(host, {
      status: info.status,
      httpStatus: info.httpStatus,
      fetchedAt: new Date(info.fetchedAt).toISOString(),
      rules: info.rules,
      sitemaps: info.sitemaps,
      crawlDelaySec: info.crawlDelaySec,
    });
    if (info.status === 'ok' || info.status === 'not_found') {
      for (const sm of info.sitemaps)
        await deps.frontier.enqueue(sm, { priority: PRIORITY.sitemap + 1, reason: 'robots-sitemap', kind: 'sitemap', scope });
      await deps.frontier.enqueue(`${origin}/llms.txt`, { priority: PRIORITY.sitemap, reason: 'llms', kind: 'llms' });
    }
  }
  if (check.allowed) return { allowed: true };
  if (check.status === 'ok' || check.status === 'not_found') return { allowed: false, retry: false, reason: 'excluded:robots' };
  if (info?.error === 'blocked_address') return { allowed: false, retry: false, reason: 'error:blocked_address' };
  // 5xx / unreachable robots.txt: disallow for now, try again later (RFC 9309 §2.3.1.4).
  return { allowed: false, retry: true, reason: `retry:robots_${check.status}` };
}

type FetchChain =
  | { kind: 'response'; res: FetchResult; finalUrl: string }
  | { kind: 'refused'; at: string; verdict: Exclude<RobotsVerdict, { allowed: true }> };

/** Fetches `url` following redirects by hand: robots and politeness of every hop's host are honoured. */
async function fetchFollowing(
  deps: PipelineDeps,
  url: string,
  headers: FetchOptions['headers'],
  accept: string,
  renew: () => Promise<void>,
  scope: CrawlScope = null,
): Promise<FetchChain> {
  let current = url;
  const seen = new Set([url]);
  for (let hop = 0; ; hop++) {
    if (hop > 0) {
      const v = await robotsCheck(deps, current, scope);
      if (!v.allowed) return { kind: 'refused', at: current, verdict: v };
    }
    // Politeness waits and slow hops add up: keep the lease ahead of them so the item is never handed out twice.
    await renew();
    const res = await politeFetch(deps, current, { headers: { ...(hop === 0 ? headers : {}), accept } });
    const location = res.headers['location'];
    if (!REDIRECTS.has(res.status) || !location) return { kind: 'response', res, finalUrl: current };
    if (hop >= deps.maxRedirects) throw new FetchError('too_many_redirects', `more than ${deps.maxRedirects} redirects`, { url: current });
    const next = normalizeUrl(location, current);
    if (next === null) {
      // file:, gopher:, user@host …: never followed.
      const scheme = /^\s*([a-z][a-z0-9+.-]*):/i.exec(location)?.[1]?.toLowerCase();
      throw new FetchError(scheme && scheme !== 'http' && scheme !== 'https' ? 'bad_scheme' : 'credentials', `redirect to a refused URL`, {
        url: current,
      });
    }
    if (seen.has(next)) throw new FetchError('redirect_loop', 'redirect loop', { url: next });
    seen.add(next);
    current = next;
  }
}

function contentHash(mainText: string): string {
  return createHash('sha256').update(normalizedTextForHash(mainText)).digest('hex');
}

/** Lower-case extension of the URL path's last segment ("html" when none). */
export function extensionOf(url: string): string {
  const seg = new URL(url).pathname.split('/').pop() ?? '';
  const m = /\.([a-z0-9]{1,8})$/i.exec(seg);
  return m ? m[1]!.toLowerCase() : 'html';
}

/** Media types the crawler indexes, and the filetype each is indexed as. */
const INDEXED_TYPES: Readonly<Record<string, IndexedType>> = {
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/x-markdown': 'md',
};
/** Extensions that stand for an indexed type when the server names none (or only a generic binary type). */
const EXTENSION_TYPES: Readonly<Record<string, IndexedType>> = {
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  pdf: 'pdf',
  txt: 'txt',
  text: 'txt',
  md: 'md',
  markdown: 'md',
};
/** Content-Types that say nothing about the document (the URL's extension decides then). */
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/x-download', 'application/download']);

/** The document types the crawler indexes (also their `filetype`). */
export type IndexedType = 'html' | 'pdf' | 'txt' | 'md';

/**
 * The document's real type: its Content-Type first, the URL's extension when the type is missing or generic
 * (application/octet-stream). `indexed` is null for a type the crawler does not index; `filetype` is what the
 * `filetype:` operator matches (the indexed type, else the URL's extension).
 */
export function documentType(contentType: string, url: string): { mime: string; indexed: IndexedType | null; filetype: string } {
  const mime = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  const ext = extensionOf(url);
  const indexed = GENERIC_TYPES.has(mime) ? (EXTENSION_TYPES[ext] ?? (mime === '' ? 'html' : null)) : (INDEXED_TYPES[mime] ?? null);
  return { mime, indexed, filetype: indexed ?? ext };
}

/** Takes a page out of every surface (index, entities, host link aggregates) and records why. */
async function withdraw(
  deps: PipelineDeps,
  url: string,
  status: 'excluded' | 'removed' | 'gone',
  reason: string,
  at: string,
  allocate: boolean,
): Promise<number | null> {
  const doc = await deps.documents.byUrl(url);
  let pageRef = doc?.pageRef ?? null;
  if (doc && doc.status === 'indexed') {
    await deps.sink.removePage(doc.pageRef, doc.url);
    await deps.entities.withdrawPage(doc.pageRef);
    await deps.hosts.withdrawPageLinks(doc.pageRef);
  }
  if (!doc && allocate) pageRef = await deps.documents.allocate(url, hostOf(url));
  if (pageRef !== null) await deps.documents.recordExcluded(pageRef, status, reason, at);
  return pageRef;
}

const outcome = (o: Partial<ItemOutcome> & Pick<ItemOutcome, 'url' | 'outcome'>): ItemOutcome => ({
  finalUrl: null,
  status: null,
  noindex: false,
  pageRef: null,
  linksAdmitted: 0,
  error: false,
  fetched: false,
  ...o,
});

/**
 * Processes one leased item to the end: the frontier row is completed, retried or dead-lettered before this
 * returns (unless the lease was lost, which throws LeaseLostError).
 */
export async function processItem(deps: PipelineDeps, item: FrontierItem, hooks: { networkDone?: () => void } = {}): Promise<ItemOutcome> {
  const { frontier } = deps;
  // Tells the orchestrator this item makes no more requests, so its host may get the next item while this one is
  // still being extracted and written (politeness is the scheduler's job; this only keeps hosts busy).
  let networkDone = hooks.networkDone;
  const doneWithNetwork = (): void => {
    const f = networkDone;
    networkDone = undefined;
    f?.();
  };
  const fail = async (
    why: string,
    retryable: boolean,
    o: Partial<ItemOutcome>,
    retryAfterMs?: number | null,
    status?: number | null,
  ): Promise<ItemOutcome> => {
    const r = await frontier.fail(item, { error: why, retryable, retryAfterMs: retryAfterMs ?? null, status: status ?? null });
    return outcome({ url: item.url, ...o, outcome: r.state === 'dead' ? `dead:${why}` : `retry:${why}`, error: true });
  };

  try {
    const v = await robotsCheck(deps, item.url, item.scope);
    if (!v.allowed) {
      if (v.retry) return fail(v.reason.replace(/^retry:/, ''), true, {});
      if (v.reason === 'error:blocked_address') return fail('blocked_address', false, { outcome: v.reason });
      const at = new Date(deps.now()).toISOString();
      const pageRef = item.kind === 'page' ? await withdraw(deps, item.url, 'excluded', 'robots', at, false) : null;
      await frontier.complete(item, { outcome: 'excluded:robots', status: null, changed: null, recrawlInMs: RECRAWL_GONE_MS });
      return outcome({ url: item.url, outcome: 'excluded:robots', pageRef });
    }

    const doc = item.kind === 'page' ? await deps.documents.byUrl(item.url) : undefined;
    const conditional = item.kind === 'page' && doc?.status === 'indexed' && item.fetchedBefore;
    const headers: FetchOptions['headers'] = conditional
      ? { ...(item.etag ? { 'if-none-match': item.etag } : {}), ...(item.lastModified ? { 'if-modified-since': item.lastModified } : {}) }
      : {};
    // Pages: every type the crawler indexes (docs/api-crawler.md, Documents), HTML first.
    const accept =
      item.kind === 'page'
        ? 'text/html,application/xhtml+xml;q=0.9,application/pdf;q=0.8,text/markdown;q=0.7,text/plain;q=0.7,*/*;q=0.1'
        : item.kind === 'sitemap'
          ? 'application/xml,text/xml;q=0.9,text/plain;q=0.5,*/*;q=0.1'
          : 'text/plain,text/markdown;q=0.9,*/*;q=0.1';
    let chain: FetchChain;
    try {
      chain = await fetchFollowing(deps, item.url, headers, accept, () => frontier.renew(item), item.scope);
    } finally {
      doneWithNetwork();
    }
    const at = new Date(deps.now()).toISOString();
    if (chain.kind === 'refused') {
      if (chain.verdict.retry) return fail(chain.verdict.reason.replace(/^retry:/, ''), true, {});
      if (chain.verdict.reason === 'error:blocked_address') return fail('blocked_address', false, { finalUrl: chain.at });
      // The redirect target is off limits: the source URL is not indexed under the target's content.
      const pageRef =
        item.kind === 'page' ? await withdraw(deps, item.url, 'excluded', 'redirect to a robots-disallowed URL', at, false) : null;
      await frontier.complete(item, { outcome: 'excluded:robots', status: null, recrawlInMs: RECRAWL_GONE_MS });
      return outcome({ url: item.url, finalUrl: chain.at, outcome: 'excluded:robots', pageRef });
    }
    const { res, finalUrl } = chain;
    const status = res.status;
    const etag = res.headers['etag'] ?? null;
    const lastModified = res.headers['last-modified'] ?? null;
    const base = { url: item.url, finalUrl, status, fetched: true };

    if (status === 304) {
      let pageRef: number | null = null;
      if (doc && doc.status === 'indexed' && doc.contentHash !== null) {
        await deps.documents.recordIndexed(doc.pageRef, { contentHash: doc.contentHash, title: doc.title, at });
        pageRef = doc.pageRef;
      }
      await deps.hosts.recordCrawl(hostOf(finalUrl), at);
      await frontier.complete(item, {
        outcome: 'unchanged',
        status,
        changed: false,
        etag: etag ?? item.etag,
        lastModified: lastModified ?? item.lastModified,
      });
      return outcome({ ...base, outcome: 'unchanged', pageRef });
    }
    if (status === 429 || status === 503) {
      return fail(`http_${status}`, true, base, parseRetryAfter(res.headers['retry-after'] ?? null, deps.now()), status);
    }
    if (status >= 500) return fail(`http_${status}`, true, base, null, status);
    if (status === 404 || status === 410) {
      const pageRef = item.kind === 'page' ? await withdraw(deps, item.url, 'gone', `http_${status}`, at, false) : null;
      if (item.kind === 'llms')
        await deps.hosts.recordLlms(hostOf(item.url), { present: false, fetchedAt: at, title: null, summary: null, linkCount: 0 });
      await frontier.complete(item, {
        outcome: 'gone',
        status,
        changed: null,
        recrawlInMs: item.kind === 'llms' ? RECRAWL_LLMS_MS : RECRAWL_GONE_MS,
      });
      return outcome({ ...base, outcome: 'gone', pageRef });
    }
    if ((status >= 300 && status < 400) || status < 200 || (status < 300 && status !== 200 && status !== 203)) {
      // A 3xx without Location, an odd 3xx, or a 2xx without a full representation (204, 206 …): nothing to read.
      await frontier.complete(item, { outcome: `excluded:http_${status}`, status, recrawlInMs: RECRAWL_GONE_MS });
      return outcome({ ...base, outcome: `excluded:http_${status}` });
    }
    if (status >= 400) {
      const pageRef = item.kind === 'page' ? await withdraw(deps, item.url, 'excluded', `http_${status}`, at, false) : null;
      if (item.kind === 'llms')
        await deps.hosts.recordLlms(hostOf(item.url), { present: false, fetchedAt: at, title: null, summary: null, linkCount: 0 });
      await frontier.complete(item, { outcome: `excluded:http_${status}`, status, recrawlInMs: RECRAWL_GONE_MS });
      return outcome({ ...base, outcome: `excluded:http_${status}`, pageRef });
    }

    // 2xx.
    if (item.kind === 'sitemap') return handleSitemap(deps, item, res, finalUrl);
    if (item.kind === 'llms') {
      const type = res.headers['content-type'] ?? '';
      const text = decodeHtml(res.body, type);
      const present = !HTML_TYPES.test(type) && /^\s*#\s/m.test(text);
      const l = parseLlmsTxt(text);
      await deps.hosts.recordLlms(hostOf(item.url), {
        present,
        fetchedAt: at,
        title: present ? l.title : null,
        summary: present ? l.summary : null,
        linkCount: present ? l.linkCount : 0,
      });
      await frontier.complete(item, { outcome: 'llms', status, recrawlInMs: RECRAWL_LLMS_MS });
      return outcome({ ...base, outcome: 'llms' });
    }
    return await handlePage(deps, item, res, finalUrl, at);
  } catch (err) {
    if (err instanceof FetchError && err.kind === 'too_large' && item.kind === 'page') {
      // A document over the byte cap is a fact about the document, not a failure to retry: excluded, seen again
      // at the slow recrawl pace (it may shrink).
      const at = new Date(deps.now()).toISOString();
      const pageRef = await withdraw(deps, item.url, 'excluded', 'too_large', at, true);
      await frontier.complete(item, { outcome: 'excluded:too_large', status: null, recrawlInMs: RECRAWL_GONE_MS });
      return outcome({ url: item.url, outcome: 'excluded:too_large', pageRef, fetched: true });
    }
    if (err instanceof FetchError) return fail(err.kind, err.retryable, { outcome: `error:${err.kind}` });
    if ((err as Error)?.name === 'LeaseLostError') throw err;
    if (deps.signal?.aborted) {
      // Shutdown while waiting for politeness: give the item back untouched.
      await frontier.release(item);
      return outcome({ url: item.url, outcome: 'retry:shutdown' });
    }
    deps.log.warn({ err, url: item.url }, 'crawler: item failed');
    return fail(`internal:${(err as Error)?.message ?? String(err)}`.slice(0, 200), true, {});
  } finally {
    doneWithNetwork();
  }
}

async function handleSitemap(deps: PipelineDeps, item: FrontierItem, res: FetchResult, finalUrl: string): Promise<ItemOutcome> {
  let text: string;
  try {
    text = gunzipIfNeeded(res.body, deps.maxBytes).toString('utf8');
  } catch {
    await deps.frontier.complete(item, { outcome: 'excluded:sitemap_unreadable', status: res.status });
    return outcome({ url: item.url, finalUrl, status: res.status, outcome: 'excluded:sitemap_unreadable', fetched: true, error: true });
  }
  // robots.txt may list a sitemap on another host for its own host: entries of the item's host are accepted too.
  const parsed = parseSitemap(text, finalUrl, [hostOf(item.url)]);
  let admitted = 0;
  // A sitemap lists up to 50,000 URLs and each admission is a write (synchronous on SQLite): the loop gets turns.
  const budget = new LoopBudget();
  for (const e of parsed.entries) {
    await budget.tick();
    if (parsed.kind === 'index') {
      if (item.depth + 1 > MAX_SITEMAP_DEPTH) continue;
      if (
        await deps.frontier.enqueue(e.url, {
          priority: PRIORITY.sitemap + 1,
          reason: 'sitemap-index',
          kind: 'sitemap',
          depth: item.depth + 1,
          scope: item.scope,
        })
      )
        admitted++;
    } else {
      // The entry's stored scope and the operator's rule apply to sitemap entries as they do to links.
      if (!inScope(item.scope, e.url)) continue;
      if (deps.admit && !deps.admit(e.url, finalUrl)) continue;
      if (await deps.frontier.enqueue(e.url, { priority: 'sitemap', reason: 'sitemap', depth: 0, scope: item.scope })) admitted++;
    }
  }
  await deps.frontier.complete(item, {
    outcome: 'sitemap',
    status: res.status,
    etag: res.headers['etag'] ?? null,
    lastModified: res.headers['last-modified'] ?? null,
  });
  return outcome({ url: item.url, finalUrl, status: res.status, outcome: 'sitemap', linksAdmitted: admitted, fetched: true });
}

async function handlePage(deps: PipelineDeps, item: FrontierItem, res: FetchResult, finalUrl: string, at: string): Promise<ItemOutcome> {
  const { frontier } = deps;
  const status = res.status;
  const base = { url: item.url, finalUrl, status, fetched: true };
  const host = hostOf(finalUrl);
  await deps.hosts.recordCrawl(host, at);
  const redirected = finalUrl !== item.url;
  if (redirected) {
    // The source URL is not a page of its own any more.
    await withdraw(deps, item.url, 'removed', `redirected to ${finalUrl}`, at, false);
  }
  const type = res.headers['content-type'] ?? '';
  const etag = res.headers['etag'] ?? null;
  const lastModified = res.headers['last-modified'] ?? null;
  const finish = async (o: ItemOutcome, changed: boolean | null, recrawlInMs?: number, recrawlBy?: number | null): Promise<ItemOutcome> => {
    const c = {
      outcome: o.outcome,
      status,
      changed,
      etag,
      lastModified,
      ...(recrawlInMs === undefined ? {} : { recrawlInMs }),
      recrawlBy: recrawlBy ?? null,
    };
    if (redirected) await frontier.markFetched(finalUrl, { ...c, reason: 'redirect', scope: item.scope });
    await frontier.complete(
      item,
      redirected ? { ...c, outcome: o.outcome === 'indexed' || o.outcome === 'unchanged' ? 'redirected' : o.outcome } : c,
    );
    return o;
  };

  const doctype = documentType(type, finalUrl);
  if (doctype.indexed === null || (doctype.indexed === 'pdf' && !deps.pdf)) {
    const pageRef = await withdraw(deps, finalUrl, 'excluded', `unsupported_type:${doctype.mime || 'unknown'}`, at, true);
    return finish(outcome({ ...base, outcome: 'excluded:unsupported_type', pageRef }), null, RECRAWL_GONE_MS);
  }
  if (doctype.indexed !== 'html') {
    // PDFs wait their turn for the one extraction worker and can take long to write: the item's lease is kept alive
    // until it completes, so the dispatcher never hands the same URL out again while it is still being worked on.
    const keepAlive = setInterval(
      () => {
        // Lost anyway: completing the item reports it.
        frontier.renew(item).catch(() => undefined);
      },
      Math.max(250, frontier.leaseMs / 3),
    );
    try {
      return await handleDocument(deps, res, { base, host, at, finish, type, doctype: doctype.indexed, filetype: doctype.filetype });
    } finally {
      clearInterval(keepAlive);
    }
  }

  // Decoding and extraction are the pipeline's largest synchronous step. Pages whose bodies arrive in the same turn
  // of the event loop would be extracted back to back in it: each waits for a turn of its own.
  await yieldToLoop();
  const html = decodeHtml(res.body, type);
  const page = extractPage(html, { url: finalUrl, headers: res.headers });
  await deps.hosts.recordExtraction(host, { url: finalUrl, ...page.extraction, at });
  const directives: Directives = parseDirectives({ metas: page.metas, headers: res.headers, now: new Date(deps.now()) });

  // Links first (nofollow: none; rel=nofollow: that one), so a crash later never loses them.
  let linksAdmitted = 0;
  const linkHosts = new Map<string, number>();
  const budget = new LoopBudget();
  for (const l of page.links) {
    await budget.tick();
    const h = hostOf(l.url);
    linkHosts.set(h, (linkHosts.get(h) ?? 0) + 1);
    if (directives.nofollow || l.nofollow) continue;
    if (deps.maxDepth !== undefined && item.depth + 1 > deps.maxDepth) continue;
    if (!inScope(item.scope, l.url)) continue;
    if (deps.admit && !deps.admit(l.url, finalUrl)) continue;
    if (await frontier.enqueue(l.url, { priority: 'discovered', reason: 'link', depth: item.depth + 1, scope: item.scope }))
      linksAdmitted++;
  }

  if (directives.noindex) {
    const why =
      directives.unavailableAfter !== null && Date.parse(directives.unavailableAfter) <= deps.now() ? 'unavailable_after' : 'noindex';
    const pageRef = await withdraw(deps, finalUrl, 'excluded', why, at, true);
    return finish(outcome({ ...base, outcome: `excluded:${why}`, noindex: true, pageRef, linksAdmitted }), null);
  }

  return commitPage(
    deps,
    { base, host, at, finish },
    {
      canonicalUrl: page.canonicalUrl,
      title: page.title,
      description: page.description,
      lang: page.lang,
      publishedAt: page.publishedAt,
      modifiedAt: page.modifiedAt,
      dateSource: page.dateSource,
      mainText: page.mainText,
      snippet: { nosnippet: directives.nosnippet, maxSnippet: directives.maxSnippet },
      filetype: doctype.filetype,
      signals: {
        declaredTypes: page.jsonLd.declaredTypes,
        addressCountries: page.jsonLd.addressCountries,
        addressRegions: page.jsonLd.addressRegions,
      },
      passages: page.passages,
      images: directives.noimageindex ? [] : page.images,
    },
    {
      entities: page.jsonLd.entities,
      parseErrors: page.jsonLd.parseErrorReasons,
      linkHosts,
      linksAdmitted,
      recrawlBy: directives.unavailableAfter !== null ? Date.parse(directives.unavailableAfter) + 1000 : null,
    },
  );
}

/** PDF, text and Markdown: X-Robots-Tag, extraction, then the same commit as a page (no links are followed). */
async function handleDocument(
  deps: PipelineDeps,
  res: FetchResult,
  c: {
    base: Pick<ItemOutcome, 'url' | 'finalUrl' | 'status' | 'fetched'>;
    host: string;
    at: string;
    finish: Finish;
    type: string;
    doctype: Exclude<IndexedType, 'html'>;
    filetype: string;
  },
): Promise<ItemOutcome> {
  const { base, host, at, finish, type, filetype } = c;
  const kind = c.doctype;
  const finalUrl = base.finalUrl!;
  // PDF, text and Markdown have one directive channel: the X-Robots-Tag header. No links are followed from them.
  const directives = parseDirectives({ headers: res.headers, now: new Date(deps.now()) });
  if (directives.noindex) {
    const why =
      directives.unavailableAfter !== null && Date.parse(directives.unavailableAfter) <= deps.now() ? 'unavailable_after' : 'noindex';
    const pageRef = await withdraw(deps, finalUrl, 'excluded', why, at, true);
    return finish(outcome({ ...base, outcome: `excluded:${why}`, noindex: true, pageRef }), null);
  }
  let doc: {
    title: string;
    description: string;
    lang: string | null;
    publishedAt: string | null;
    modifiedAt: string | null;
    dateSource: PageInput['dateSource'];
    mainText: string;
    passages: PageInput['passages'];
  };
  if (kind === 'pdf') {
    const got = await deps.pdf!.extract(res.body, res.headers);
    if (!got.ok) {
      deps.log.info({ url: finalUrl, reason: got.reason, detail: got.detail }, 'crawler: PDF not indexed');
      const pageRef = await withdraw(deps, finalUrl, 'excluded', got.reason, at, true);
      return finish(outcome({ ...base, outcome: `excluded:${got.reason}`, pageRef }), null, RECRAWL_GONE_MS);
    }
    const { numPages: _n, pagesRead: _p, ...fields } = got.doc;
    doc = { ...fields, description: '' };
  } else {
    const text = plainDocument(decodeHtml(res.body, type), kind === 'md');
    const lm = res.headers['last-modified'] ? Date.parse(res.headers['last-modified']) : NaN;
    const modifiedAt = Number.isFinite(lm) ? new Date(lm).toISOString() : null;
    const lang = /^\s*([a-z]{2,3})\b/i.exec(res.headers['content-language'] ?? '')?.[1]?.toLowerCase() ?? null;
    doc = { ...text, description: '', lang, publishedAt: null, modifiedAt, dateSource: modifiedAt ? 'http-last-modified' : 'none' };
  }
  if (doc.passages.length === 0) {
    const pageRef = await withdraw(deps, finalUrl, 'excluded', 'empty', at, true);
    return finish(outcome({ ...base, outcome: 'excluded:empty', pageRef }), null, RECRAWL_GONE_MS);
  }
  return commitPage(
    deps,
    { base, host, at, finish },
    {
      canonicalUrl: null,
      ...doc,
      snippet: { nosnippet: directives.nosnippet, maxSnippet: directives.maxSnippet },
      filetype,
      signals: { declaredTypes: [], addressCountries: [], addressRegions: [] },
      images: [],
    },
    {
      entities: [],
      linkHosts: new Map(),
      linksAdmitted: 0,
      recrawlBy: directives.unavailableAfter !== null ? Date.parse(directives.unavailableAfter) + 1000 : null,
    },
  );
}

type Finish = (o: ItemOutcome, changed: boolean | null, recrawlInMs?: number, recrawlBy?: number | null) => Promise<ItemOutcome>;

/** Indexes one document (HTML page, PDF, text): PageInput to the sink, registry, entities, host facts, frontier. */
async function commitPage(
  deps: PipelineDeps,
  at: { base: Pick<ItemOutcome, 'url' | 'finalUrl' | 'status' | 'fetched'>; host: string; at: string; finish: Finish },
  content: Omit<PageInput, 'pageRef' | 'url' | 'host' | 'fetchedAt' | 'contentHash'> & { mainText: string },
  extra: {
    entities: readonly JsonLdNode[];
    parseErrors?: JsonLdParseErrors;
    linkHosts: ReadonlyMap<string, number>;
    linksAdmitted: number;
    recrawlBy: number | null;
  },
): Promise<ItemOutcome> {
  const { documents } = deps;
  const { base, host, finish } = at;
  const finalUrl = base.finalUrl!;
  const pageRef = await documents.allocate(finalUrl, host);
  const hash = contentHash(content.mainText);
  const { mainText: _m, ...fields } = content;
  const input: PageInput = { ...fields, pageRef, url: finalUrl, host, fetchedAt: at.at, contentHash: hash };
  const before = await documents.get(pageRef);
  await deps.sink.upsertPage(input);
  // The index writes pages in batches, and a batch's write settles every page of it at once: each page's remaining
  // bookkeeping (a few synchronous SQLite writes) takes its own turn of the event loop, not one turn for all of them.
  await yieldToLoop();
  const change = await documents.recordIndexed(pageRef, { contentHash: hash, title: content.title, at: at.at });
  await deps.entities.observePage({ pageRef, url: finalUrl, host, lang: content.lang }, extra.entities, at.at, extra.parseErrors);
  await deps.hosts.recordPageLinks(pageRef, host, extra.linkHosts);
  if (change === 'changed' && before?.lastChanged)
    await deps.hosts.recordChangeInterval(host, Date.parse(at.at) - Date.parse(before.lastChanged), at.at);
  return finish(
    outcome({ ...base, outcome: change === 'unchanged' ? 'unchanged' : 'indexed', pageRef, linksAdmitted: extra.linksAdmitted }),
    change === 'unchanged' ? false : change === 'changed' ? true : null,
    undefined,
    extra.recrawlBy,
  );
}
