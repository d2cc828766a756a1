/**
 * The crawler orchestrator: claims due URLs through the frontier repository and runs each through the pipeline
 * under a renewed lease. Host slots are shared in the database (FleetScheduler), so any number of crawler processes
 * keep per-host gaps together, and a killed worker's leases simply lapse.
 */
import type { Config } from '../config.js';
import { SvcError } from '../errors.js';
import type { EntitySink, PageInput, PageSink } from '../page-model.js';
import type { ClaimedItem, Repositories } from '../state/repos/types.js';
import { CrawlFrontier, type CrawlItem } from './crawl-frontier.js';
import { PdfExtractor } from './extract-pdf.js';
import { createFetcher, svcBotUserAgent, type Fetcher } from './fetcher.js';
import { PRIORITY, type EnqueueOptions, type EnqueueResult, type FrontierOptions } from './frontier.js';
import { politeFetcher, processItem, silentLog, type CrawlLog, type ItemOutcome, type PipelineDeps } from './pipeline.js';
import { createResolver, type Resolver } from './resolver.js';
import { RobotsCache } from './robots.js';
import { FleetScheduler, hostSlotToken, type PolitenessScheduler } from './scheduler.js';
import { hostOf, normalizeUrl } from './url.js';

/** The crawler's version in its User-Agent. */
export const CRAWLER_VERSION = '0.1.0';

/** Options of {@link createCrawler}. */
/**
 * The state the crawler works on, all of it through the repositories: the frontier and per-host
 * politeness it claims through, the document registry and the host facts it writes. The embedded default passes
 * the SQLite ones of the data dir's file; a fleet the PostgreSQL ones, so every worker shares one frontier.
 */
export type CrawlRepos = Pick<Repositories, 'frontier' | 'politeness' | 'robots' | 'documents' | 'hosts'>;

export interface CrawlerOptions {
  readonly config: Config;
  /** Frontier, politeness, the fleet's robots.txt files, documents and host facts (see CrawlRepos). */
  readonly repos: CrawlRepos;
  readonly sink: PageSink;
  readonly entities: EntitySink;
  /** @default a fetcher built from config (SvcBot UA, resolver pins, loopback per config, size cap) */
  readonly fetcher?: Fetcher;
  /** @default createResolver({ pins: config.resolve }) */
  readonly resolver?: Resolver;
  /** Clock (ms). @default Date.now */
  readonly now?: () => number;
  readonly log?: CrawlLog;
  /** Frontier tunables (retries, leases, recrawl bounds). */
  readonly frontier?: Omit<FrontierOptions, 'now'>;
  /** Largest robots Crawl-delay honoured, ms. @default 30000 */
  readonly maxCrawlDelayMs?: number;
  /** Scope rule for discovered links (e.g. stay on the seed hosts). @default admit everything */
  readonly admit?: (url: string, from: string) => boolean;
  /** Links deeper than this from a seed are not admitted. @default unlimited */
  readonly maxDepth?: number;
  /** Group concurrent page writes into batches (see BatchingSink). @default true */
  readonly batchWrites?: boolean;
  /** PDF text extraction. @default a PdfExtractor capped at config.crawlMaxBytes (its worker starts on the first PDF) */
  readonly pdf?: PdfExtractor;
  /** Fetcher timeouts (tests shorten them). */
  readonly fetchTimeouts?: { connectTimeoutMs?: number; headersTimeoutMs?: number; totalTimeoutMs?: number };
  /** Names this worker in lease tokens (logs, diagnosis). @default crawler-<pid> */
  readonly workerName?: string;
}

/**
 * Lease of a claimed item unless extended (ms). It is extended every third of it while the item runs, so it only
 * matters when a worker dies: its items come back after at most this long.
 */
export const DEFAULT_LEASE_MS = 40_000;

/** Counters for progress displays and svc status. */
export interface CrawlStats {
  /** Items that got an HTTP response. */
  readonly fetched: number;
  readonly indexed: number;
  readonly excluded: number;
  /** Items that ended in a network error, a 5xx/429 or a dead letter. */
  readonly errors: number;
  /** Items queued, leased or retrying in the frontier. */
  readonly queued: number;
  readonly dead: number;
  /** Hosts held back by their gap or a back-off right now. */
  readonly waitingHosts: number;
  readonly inFlight: number;
}

export interface RunOptions {
  /** Stop dispatching after this many page items. @default unlimited */
  readonly maxPages?: number;
  /** Give up waiting after this long (ms). @default unlimited */
  readonly timeoutMs?: number;
  /**
   * Idle means "nothing due within this horizon" (ms): when nothing is in flight and the next unfinished item is
   * due later than this (a robots.txt 503's retry, a long back-off), the run ends and leaves it queued for a later
   * run or for svc serve. @default unlimited: wait for every unfinished item
   */
  readonly idleHorizonMs?: number;
}

/** The crawler handle main.ts, the CLI and URL requests use. */
export interface Crawler {
  /** The frontier (its rows in the repositories). */
  readonly frontier: CrawlFrontier;
  /** Host facts as the crawler records them (svc_site reads the same). */
  readonly hosts: CrawlRepos['hosts'];
  readonly robots: RobotsCache;
  readonly scheduler: PolitenessScheduler;
  /** Runs in the background until stop(). */
  start(): void;
  /** Stops dispatching, lets in-flight items finish (those waiting for politeness go back to the queue). */
  stop(): Promise<void>;
  /** Crawls until nothing is pending (or maxPages items were dispatched, or the timeout passed). */
  runUntilIdle(opts?: RunOptions): Promise<CrawlStats>;
  /** Admits a URL (idempotent). Null when the URL is not crawlable. */
  enqueue(url: string, opts: EnqueueOptions): Promise<EnqueueResult | null>;
  /** Fetches and processes one URL now through the same robots / politeness / redirect path. */
  processNow(url: string, opts: { reason: string; requestId?: string }): Promise<ItemOutcome>;
  stats(): Promise<CrawlStats>;
  /** Called after every processed item (progress displays, tests). */
  onItem(fn: (o: ItemOutcome) => void): void;
}

/** A sink that can also write several pages in one go (index/store's PassageIndex can). */
export type BatchCapableSink = PageSink & { upsertPages?(pages: readonly PageInput[]): Promise<void> };

/**
 * Groups concurrent upserts into one write: each call resolves when its batch is written (or rejects with the
 * batch's error). A removal first flushes what is pending, so writes stay in order per page. A store with a high
 * per-write cost (LanceDB versions every write) thus pays it once per batch, not per page.
 */
export class BatchingSink implements PageSink {
  readonly #inner: BatchCapableSink;
  readonly #maxBatch: number;
  readonly #maxDelayMs: number;
  #pending: { page: PageInput; resolve: () => void; reject: (e: unknown) => void }[] = [];
  #timer: NodeJS.Timeout | null = null;
  /** The write in progress (upserts or a removal); pages arriving meanwhile wait and go in the next batch. */
  #writing: Promise<void> | null = null;

  constructor(inner: BatchCapableSink, opts: { maxBatch?: number; maxDelayMs?: number } = {}) {
    this.#inner = inner;
    this.#maxBatch = opts.maxBatch ?? 64;
    this.#maxDelayMs = opts.maxDelayMs ?? 20;
  }

  upsertPage(page: PageInput): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ page, resolve, reject });
      if (this.#writing) return; // picked up when the current write ends
      if (this.#pending.length >= this.#maxBatch) this.#kick();
      else this.#timer ??= setTimeout(() => this.#kick(), this.#maxDelayMs);
    });
  }

  async removePage(pageRef: number, url?: string): Promise<void> {
    await this.flush();
    // Exclusive: no batch may start while the removal runs.
    const run = this.#inner.removePage(pageRef, url);
    this.#writing = run.then(
      () => undefined,
      () => undefined,
    );
    try {
      await run;
    } finally {
      this.#writing = null;
      if (this.#pending.length > 0) this.#kick();
    }
  }

  /** Resolves when everything queued so far is written. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.#writing) await this.#writing;
      else if (this.#pending.length > 0) this.#kick();
      else return;
    }
  }

  #kick(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#writing || this.#pending.length === 0) return;
    const batch = this.#pending.splice(0, this.#maxBatch);
    // The same page twice in one batch: the later version wins.
    const last = new Map<number, PageInput>();
    for (const b of batch) last.set(b.page.pageRef, b.page);
    const pages = [...last.values()];
    const write = (async () => {
      if (this.#inner.upsertPages) await this.#inner.upsertPages(pages);
      else for (const p of pages) await this.#inner.upsertPage(p);
    })();
    this.#writing = write
      .then(
        () => {
          for (const b of batch) b.resolve();
        },
        (e: unknown) => {
          for (const b of batch) b.reject(e);
        },
      )
      .finally(() => {
        this.#writing = null;
        if (this.#pending.length > 0) this.#kick();
      });
  }
}

/** Builds a crawler. Nothing runs until start(), runUntilIdle() or processNow(). */
export function createCrawler(opts: CrawlerOptions): Crawler {
  const { config, repos } = opts;
  const now = opts.now ?? Date.now;
  const log = opts.log ?? silentLog;
  const resolver = opts.resolver ?? createResolver({ pins: config.resolve });
  const fetcher =
    opts.fetcher ??
    createFetcher({
      userAgent: svcBotUserAgent(CRAWLER_VERSION, config.crawlerInfoUrl),
      resolver,
      allowLoopback: config.crawlAllowLoopback,
      maxBytes: config.crawlMaxBytes,
      ...(opts.fetchTimeouts ?? {}),
    });
  const pdf = opts.pdf ?? new PdfExtractor({ maxBytes: config.crawlMaxBytes });
  const leaseMs = opts.frontier?.leaseMs ?? DEFAULT_LEASE_MS;
  const owner = opts.workerName ?? `crawler-${process.pid}`;
  const frontier = new CrawlFrontier(repos.frontier, { ...(opts.frontier ?? {}), leaseMs, now, owner });
  const hosts = repos.hosts;
  const scheduler = new FleetScheduler({
    gapMs: config.crawlGapMs,
    concurrency: config.crawlConcurrency,
    maxCrawlDelayMs: opts.maxCrawlDelayMs ?? 30_000,
    now,
    politeness: repos.politeness,
    // Renewed while a request runs; lapses with a dead worker's leases.
    holdMs: leaseMs,
    onError: (err) => log.warn({ err }, 'crawler: shared politeness state'),
  });
  // Aborted by stop() (waits for politeness end at once); a fresh one for every run, so a crawler can run again.
  let abort = new AbortController();
  const polite = politeFetcher({
    fetcher,
    scheduler,
    get signal() {
      return abort.signal;
    },
  });
  // One robots.txt fetch per origin and validity period for every worker sharing the repositories.
  const robots = new RobotsCache({
    fetcher: polite,
    now,
    shared: repos.robots,
    leaseToken: `${owner}-${Math.random().toString(36).slice(2, 10)}`,
    leaseMs,
    onSharedError: (err) => log.warn({ err }, 'crawler: shared robots.txt state'),
  });

  const batching = opts.batchWrites === false ? null : new BatchingSink(opts.sink);
  const deps: PipelineDeps = {
    fetcher,
    robots,
    scheduler,
    frontier,
    documents: repos.documents,
    hosts,
    sink: batching ?? opts.sink,
    entities: opts.entities,
    now,
    log,
    allowLoopback: config.crawlAllowLoopback,
    maxRedirects: 5,
    maxBytes: config.crawlMaxBytes,
    robotsSeen: new Map(),
    pdf,
    get signal() {
      return abort.signal;
    },
    ...(opts.admit ? { admit: opts.admit } : {}),
    ...(opts.maxDepth !== undefined ? { maxDepth: opts.maxDepth } : {}),
  };

  const counters = { fetched: 0, indexed: 0, excluded: 0, errors: 0 };
  const listeners: ((o: ItemOutcome) => void)[] = [];
  /** Hosts with an item in its network phase (one per host), with that item's id. */
  const busyHosts = new Map<string, number>();
  /** Items extracted and written after their fetch, at most this many in flight. */
  const maxInflight = config.crawlConcurrency * 4;
  const inflight = new Map<number, Promise<ItemOutcome>>();
  let kick: (() => void) | null = null;
  let loop: Promise<void> | null = null;
  let stopping = false;

  /** Counts wake() calls: one that comes while the loop is between claims (not asleep) must not be lost. */
  let pokes = 0;
  const wake = (): void => {
    pokes++;
    const k = kick;
    kick = null;
    k?.();
  };

  const account = (o: ItemOutcome): void => {
    if (o.fetched) counters.fetched++;
    if (o.error) counters.errors++;
    if (o.outcome === 'indexed' || o.outcome === 'unchanged') counters.indexed++;
    else if (o.outcome.startsWith('excluded') || o.outcome === 'gone') counters.excluded++;
    for (const l of listeners) l(o);
  };

  const freeHost = (item: CrawlItem): void => {
    if (busyHosts.get(item.host) === item.id) busyHosts.delete(item.host);
  };

  const run = (item: ClaimedItem): Promise<ItemOutcome> => {
    busyHosts.set(item.host, item.id);
    // The lease is time-based: kept alive while the item runs (long fetches, PDF extraction, slow writes), so it
    // lapses only when this worker is gone.
    const keepAlive = setInterval(
      () => {
        repos.frontier.extend(item, leaseMs, now()).catch(() => undefined); // lost: completing the item says so
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    const p = hostSlotToken
      .run(item.lease, () =>
        processItem(deps, item, {
          networkDone: () => {
            freeHost(item);
            wake();
          },
        }),
      )
      .catch((err: unknown): ItemOutcome => {
        log.warn({ err, url: item.url }, 'crawler: item aborted');
        return {
          url: item.url,
          finalUrl: null,
          status: null,
          outcome: 'error:internal',
          noindex: false,
          pageRef: null,
          linksAdmitted: 0,
          error: true,
          fetched: false,
        };
      })
      .then((o) => {
        account(o);
        return o;
      })
      .finally(() => {
        clearInterval(keepAlive);
        freeHost(item);
        inflight.delete(item.id);
        wake();
      });
    inflight.set(item.id, p);
    return p;
  };

  async function mainLoop(untilIdle: boolean, ro: RunOptions): Promise<void> {
    if (abort.signal.aborted) abort = new AbortController();
    const deadline = ro.timeoutMs === undefined ? Infinity : now() + ro.timeoutMs;
    let pages = 0;
    const budgetLeft = (): boolean => ro.maxPages === undefined || pages < ro.maxPages;
    while (!stopping) {
      if (now() >= deadline) break;
      const poked = pokes;
      const canDispatch = (): boolean => budgetLeft() && inflight.size < maxInflight && busyHosts.size < config.crawlConcurrency;
      // The repository picks the best due URL whose host's shared next_fetch_at has passed, and reserves that host:
      // fairness among hosts and the gap come from the database, for every worker sharing it.
      // Our own requests' slot releases first: until they land, their hosts read as held (for the hold's length).
      await scheduler.settled();
      let wakeAt = now() + 1000;
      try {
        while (canDispatch() && !stopping) {
          const c = await repos.frontier.claim({ owner, leaseMs, now: now() });
          if (!c) break;
          if (c.kind === 'page') pages++;
          void run(c);
        }
        if (untilIdle && inflight.size === 0 && ((await repos.frontier.unfinished()) === 0 || !budgetLeft())) break;
        if (untilIdle && inflight.size === 0 && ro.idleHorizonMs !== undefined) {
          // When the next item can be claimed, host gaps included (a host answering 429 Retry-After is work for later),
          // but a host's ordinary politeness gap still running (say another run's last request a moment ago) is part of
          // crawling, not a reason to stop: the horizon is never shorter than that gap.
          const next = await repos.frontier.nextClaimAt({ unfinished: true });
          if (next === null || next > now() + Math.max(ro.idleHorizonMs, config.crawlGapMs)) break;
        }
        if (!budgetLeft() && inflight.size === 0) break;
        // Sleep until something may be claimed (a host's gap ends, an item becomes due, a lease lapses), an item
        // finishes or something is enqueued; at most a second, since other workers change the shared state too.
        if (canDispatch()) {
          const next = await repos.frontier.nextClaimAt();
          if (next !== null) wakeAt = Math.min(wakeAt, Math.max(next, now() + 1));
        }
      } catch (err) {
        // The state database is unreachable or stalled: wait as long as it asks, then carry on where we were.
        if (!(err instanceof SvcError && err.code === 'unavailable')) throw err;
        log.warn({ err }, 'crawler: state database unavailable; backing off');
        wakeAt = now() + (err.retryAfter ?? 1) * 1000;
      }
      wakeAt = Math.min(wakeAt, deadline);
      if (pokes !== poked) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, wakeAt - now()));
        kick = () => {
          clearTimeout(t);
          resolve();
        };
      });
      kick = null;
    }
    await Promise.allSettled([...inflight.values()]);
    await batching?.flush();
  }

  const stats = async (): Promise<CrawlStats> => {
    const c = await frontier.counts();
    return {
      ...counters,
      queued: c.queued + c.leased + c.retrying,
      dead: c.dead,
      waitingHosts: scheduler.waitingHosts(),
      inFlight: inflight.size,
    };
  };

  return {
    frontier,
    hosts,
    robots,
    scheduler,
    start() {
      if (loop) return;
      stopping = false;
      loop = mainLoop(false, {}).finally(() => (loop = null));
    },
    async stop() {
      stopping = true;
      abort.abort(new Error('crawler stopping'));
      wake();
      await loop;
      await Promise.allSettled([...inflight.values()]);
      // The PDF worker is idle now; a later run starts a new one.
      if (!opts.pdf) await pdf.close();
    },
    async runUntilIdle(ro: RunOptions = {}) {
      if (loop) throw new Error('crawler is already running');
      stopping = false;
      loop = mainLoop(true, ro).finally(() => (loop = null));
      await loop;
      return stats();
    },
    async enqueue(url, eo) {
      const r = await frontier.enqueue(url, eo);
      wake();
      return r;
    },
    async processNow(url, po) {
      if (abort.signal.aborted && !loop) abort = new AbortController();
      const norm = normalizeUrl(url);
      if (norm === null)
        return {
          url,
          finalUrl: null,
          status: null,
          outcome: 'error:bad_url',
          noindex: false,
          pageRef: null,
          linksAdmitted: 0,
          error: true,
          fetched: false,
        };
      // A URL this brings into the frontier stays on its own host (like a URL request); a known one keeps its scope.
      const e = await frontier.enqueue(norm, {
        priority: PRIORITY.submitted,
        reason: po.reason,
        refresh: true,
        scope: [hostOf(norm)],
        ...(po.requestId ? { requestId: po.requestId } : {}),
      });
      if (e === null)
        return {
          url,
          finalUrl: null,
          status: null,
          outcome: 'excluded:frontier_full',
          noindex: false,
          pageRef: null,
          linksAdmitted: 0,
          error: false,
          fetched: false,
        };
      for (let i = 0; i < 100; i++) {
        // Already being processed by the crawl loop (after the refresh above): that run is the fresh fetch.
        const running = inflight.get(e.id);
        if (running) return running;
        const item = await frontier.claimUrl(norm);
        if (item) return run(item);
        await new Promise((r) => setTimeout(r, 50));
      }
      return {
        url,
        finalUrl: null,
        status: null,
        outcome: 'retry:busy',
        noindex: false,
        pageRef: null,
        linksAdmitted: 0,
        error: false,
        fetched: false,
      };
    },
    stats,
    onItem(fn) {
      listeners.push(fn);
    },
  };
}
