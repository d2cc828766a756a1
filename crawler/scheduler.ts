/**
 * Per-host politeness: every request to a host takes its single slot ({@link PolitenessScheduler.acquire}).
 * The gap (max of crawlGapMs and capped Crawl-delay) counts from when the previous request finished, so it holds at
 * the server whatever the latency; 429/503 back the host off.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { PolitenessRepo } from '../state/repos/types.js';
import { parseRetryAfter } from './fetcher.js';

/** Options of {@link PolitenessScheduler}. */
export interface SchedulerOptions {
  /** Minimum gap between two requests to one host (ms). @default 1000 */
  readonly gapMs?: number;
  /** Largest robots Crawl-delay honoured (ms); longer ones are capped. @default 30000 */
  readonly maxCrawlDelayMs?: number;
  /** Requests in flight across all hosts. @default 8 */
  readonly concurrency?: number;
  /** Longest back-off after 429/503 (ms), Retry-After included. @default 1 h */
  readonly maxBackoffMs?: number;
  /** Clock (ms). @default Date.now */
  readonly now?: () => number;
  /** Timer (tests may pass a fake). @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

interface HostState {
  busy: boolean;
  /** The host may be contacted again from this instant. */
  readyAt: number;
  crawlDelayMs: number;
  /** When the last request to the host finished (ms), null before the first. */
  lastFinishedAt: number | null;
  /** Consecutive 429/503 answers. */
  backoffLevel: number;
  waiters: (() => void)[];
}

/** How a request ended, for {@link PolitenessScheduler.release}. */
export interface RequestOutcome {
  /** HTTP status, or null when the request failed before one arrived. */
  readonly status: number | null;
  /** Retry-After header value, if any. */
  readonly retryAfter?: string | null;
}

/** A held slot: call `release` exactly once. */
export interface HostSlot {
  readonly host: string;
  release(outcome: RequestOutcome): void;
}

/** This process's slot of a host, which a fleet worker may also give back unused (`abandon`) exactly once instead. */
interface LocalSlot extends HostSlot {
  /** Gives the slot back with no request made: the host's gap and back-off stay as they were. */
  abandon(): void;
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class PolitenessScheduler {
  readonly gapMs: number;
  readonly maxCrawlDelayMs: number;
  readonly concurrency: number;
  readonly maxBackoffMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #hosts = new Map<string, HostState>();
  #active = 0;
  #globalWaiters: (() => void)[] = [];

  constructor(opts: SchedulerOptions = {}) {
    this.gapMs = opts.gapMs ?? 1000;
    this.maxCrawlDelayMs = opts.maxCrawlDelayMs ?? 30_000;
    this.concurrency = opts.concurrency ?? 8;
    this.maxBackoffMs = opts.maxBackoffMs ?? 3600_000;
    this.#now = opts.now ?? Date.now;
    this.#sleep = opts.sleep ?? realSleep;
  }

  #state(host: string): HostState {
    const h = host.toLowerCase();
    let s = this.#hosts.get(h);
    if (!s) {
      s = { busy: false, readyAt: 0, crawlDelayMs: 0, lastFinishedAt: null, backoffLevel: 0, waiters: [] };
      this.#hosts.set(h, s);
    }
    return s;
  }

  /** Robots Crawl-delay in seconds (null: none). Honoured as a floor on the gap, capped at maxCrawlDelayMs. */
  setCrawlDelay(host: string, seconds: number | null): void {
    const s = this.#state(host);
    s.crawlDelayMs = seconds === null || !(seconds > 0) ? 0 : Math.min(this.maxCrawlDelayMs, Math.round(seconds * 1000));
    // Learnt from the robots.txt just fetched: the gap after that very request is the new one already.
    if (s.lastFinishedAt !== null) s.readyAt = Math.max(s.readyAt, s.lastFinishedAt + this.gapFor(host));
  }

  /** The gap applied to a host now (ms). */
  gapFor(host: string): number {
    return Math.max(this.gapMs, this.#state(host).crawlDelayMs);
  }

  /** When the host may next be contacted (ms; ≤ now means now), ignoring the global limit. */
  readyAt(host: string): number {
    return this.#state(host).readyAt;
  }

  /** True when a request to this host could start right now (not busy, gap elapsed, a global slot free). */
  canStart(host: string): boolean {
    const s = this.#state(host);
    return !s.busy && s.readyAt <= this.#now() && this.#active < this.concurrency;
  }

  isBusy(host: string): boolean {
    return this.#state(host).busy;
  }

  /** Requests in flight across hosts. */
  get active(): number {
    return this.#active;
  }

  /** Hosts currently held back by their gap or a back-off (for progress displays). */
  waitingHosts(): number {
    const now = this.#now();
    let n = 0;
    for (const s of this.#hosts.values()) if (!s.busy && s.readyAt > now) n++;
    return n;
  }

  /**
   * Waits for the host's slot (its gap, its back-off, one connection per host, the global limit) and takes it.
   * `signal` aborts the wait (shutdown).
   */
  acquire(host: string, signal?: AbortSignal): Promise<HostSlot> {
    return this.acquireLocal(host, signal);
  }

  /** {@link acquire} as this process sees it: the slot may also be given back unused. */
  protected async acquireLocal(host: string, signal?: AbortSignal): Promise<LocalSlot> {
    const key = host.toLowerCase();
    const s = this.#state(key);
    for (;;) {
      if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
      if (s.busy) {
        await new Promise<void>((r) => s.waiters.push(r));
        continue;
      }
      const wait = s.readyAt - this.#now();
      if (wait > 0) {
        // Reserve nothing while sleeping: re-check everything after the sleep.
        await this.#sleep(Math.min(wait, 1000));
        continue;
      }
      if (this.#active >= this.concurrency) {
        await new Promise<void>((r) => this.#globalWaiters.push(r));
        continue;
      }
      break;
    }
    s.busy = true;
    this.#active++;
    let released = false;
    return {
      host: key,
      release: (outcome: RequestOutcome) => {
        if (released) return;
        released = true;
        this.#finish(key, s, outcome);
      },
      abandon: () => {
        if (released) return;
        released = true;
        this.#free(s);
      },
    };
  }

  /** The slot is free again: the next waiter of the host, and every waiter for a global slot, may go. */
  #free(s: HostState): void {
    s.busy = false;
    this.#active--;
    const w = s.waiters.shift();
    if (w) w();
    const g = this.#globalWaiters;
    this.#globalWaiters = [];
    for (const f of g) f();
  }

  #finish(host: string, s: HostState, outcome: RequestOutcome): void {
    const now = this.#now();
    let delay = this.gapFor(host);
    if (outcome.status === 429 || outcome.status === 503) {
      s.backoffLevel++;
      const retryAfter = parseRetryAfter(outcome.retryAfter ?? null, now);
      const exp = Math.min(this.maxBackoffMs, delay * 2 ** s.backoffLevel);
      delay = Math.max(delay, Math.min(this.maxBackoffMs, retryAfter ?? exp));
    } else if (outcome.status !== null && outcome.status < 500) {
      s.backoffLevel = Math.max(0, s.backoffLevel - 1);
    }
    s.readyAt = Math.max(s.readyAt, now + delay);
    s.lastFinishedAt = now;
    this.#free(s);
  }

  /**
   * Resolves once every write to shared state this scheduler has started (slot releases, gaps) has landed. In one
   * process there is none; a fleet's crawler awaits this before it claims or asks when the next claim is due, so it
   * reads the host times its own requests just set, not the hold they replaced.
   */
  async settled(): Promise<void> {}

  /** Pushes a host back until `at` (ms) at least (e.g. a Retry-After learnt elsewhere). */
  deferUntil(host: string, at: number): void {
    const s = this.#state(host);
    s.readyAt = Math.max(s.readyAt, at);
  }
}

/**
 * The frontier lease token of the item whose requests run in this async context (crawler.ts sets it around each
 * item): a claim reserves the host for that token, so the item's first request may start at once.
 */
export const hostSlotToken = new AsyncLocalStorage<string>();

/** Options of {@link FleetScheduler}. */
export interface FleetSchedulerOptions extends SchedulerOptions {
  /** The shared per-host state (next_fetch_at, gap, holder) every worker of the fleet uses. */
  readonly politeness: PolitenessRepo;
  /**
   * How long a host slot is held unless renewed (ms); it is renewed every third of it while the request runs, so
   * only a worker killed mid-request leaves its host blocked, for at most this long.
   */
  readonly holdMs: number;
  /** Errors of the shared state that are not fatal (a failed release only delays the host until its hold lapses). */
  readonly onError?: (err: unknown) => void;
}

/**
 * Politeness for a fleet of crawler processes: {@link PolitenessScheduler}'s rules plus the host's slot in the shared
 * database, taken per request and returned with the next allowed start, so gap and Crawl-delay hold fleet-wide.
 */
export class FleetScheduler extends PolitenessScheduler {
  readonly #repo: PolitenessRepo;
  readonly #holdMs: number;
  readonly #clock: () => number;
  readonly #pause: (ms: number) => Promise<void>;
  readonly #onError: (err: unknown) => void;
  /** Shared-state writes started and not yet finished (see {@link settled}). */
  readonly #writes = new Set<Promise<void>>();

  constructor(opts: FleetSchedulerOptions) {
    super(opts);
    this.#repo = opts.politeness;
    this.#holdMs = opts.holdMs;
    this.#clock = opts.now ?? Date.now;
    this.#pause = opts.sleep ?? realSleep;
    this.#onError = opts.onError ?? (() => undefined);
  }

  #track(write: Promise<void>): void {
    const p: Promise<void> = write.catch(this.#onError).finally(() => this.#writes.delete(p));
    this.#writes.add(p);
  }

  override async settled(): Promise<void> {
    while (this.#writes.size > 0) await Promise.all([...this.#writes]);
  }

  override setCrawlDelay(host: string, seconds: number | null): void {
    super.setCrawlDelay(host, seconds);
    // Shared: a worker that never read this robots.txt still keeps the delay (release uses the stored gap).
    this.#track(this.#repo.setGap(host.toLowerCase(), this.gapFor(host)));
  }

  override async acquire(host: string, signal?: AbortSignal): Promise<HostSlot> {
    const token = hostSlotToken.getStore() ?? `request:${randomUUID()}`;
    let slot: LocalSlot;
    for (;;) {
      // The local slot first (one connection per host from this process, this process's gap), then the shared one.
      slot = await this.acquireLocal(host, signal);
      let r: Awaited<ReturnType<PolitenessRepo['acquire']>>;
      try {
        if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
        r = await this.#repo.acquire(slot.host, token, this.#holdMs, this.#clock());
      } catch (err) {
        slot.abandon();
        throw err;
      }
      if (r.acquired) break;
      // Another worker's request or gap, or the host reserved for another item's claim (perhaps of this very
      // process): the local slot is given back while waiting, so that item is not kept from its reserved turn.
      slot.abandon();
      await this.#pause(Math.min(Math.max(1, r.retryAt - this.#clock()), 250));
    }
    const held = slot;
    // Kept while the request runs, so a hold can be short: a killed worker blocks its host only until it lapses.
    const keep = setInterval(
      () => {
        this.#repo.acquire(held.host, token, this.#holdMs, this.#clock()).catch(this.#onError);
      },
      Math.max(50, Math.floor(this.#holdMs / 3)),
    );
    let released = false;
    return {
      host: held.host,
      release: (outcome: RequestOutcome) => {
        if (released) return;
        released = true;
        clearInterval(keep);
        held.release(outcome);
        // Until this lands the host's shared row still says "held" (until the hold lapses): settled() waits for it.
        this.#track(this.#repo.release(held.host, token, this.readyAt(held.host), this.#clock()));
      },
    };
  }
}
