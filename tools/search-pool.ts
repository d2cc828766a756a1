/**
 * Search threads: svc_search and svc_context run on a pool of worker threads (search-worker.ts), least-busy first.
 * Each request carries the passages version it must see, so the answer never depends on the thread; a custom pool,
 * not piscina/tinypool, because it needs ordered broadcasts and per-thread control (see docs/architecture.md#search-thread-pool).
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { SvcError, errorTable, type ErrorCode } from '../errors.js';
import { isHashingEmbedder, type Embedder } from '../index/serving/embedder.js';
import type { IndexLocation } from '../index/engines/lance/location.js';
import { startModuleWorker } from '../worker-thread.js';
import type { ToolContext, ToolDefinition } from './define-tool.js';
import type { RunnableTool, ToolExecutor } from './deps.js';
import type { PassageCommit } from '../index/engines/lance/passage-changes.js';
import type { EngineImage } from '../index/engines/lance/engine-image.js';
import type { HostSnapshot } from '../index/engines/lance/host-ids.js';
import { indexUnavailable } from './index-deadline.js';
import { POOLED_TOOLS, type FromWorker, type SearchWorkerData, type ToWorker, type WorkerStats } from './search-worker.js';

export interface SearchPoolOptions {
  /**
   * The owner's engine images (PassageIndex.engineImage / onEngineImage with `shareEngine`): each thread starts from
   * the current one (or waits for the first) and moves to each new one, so the postings are built once per process
   * and read from shared memory. Absent: every thread builds its own.
   */
  readonly engineImages?: {
    readonly current: () => EngineImage | null;
    readonly subscribe: (fn: (image: EngineImage) => void) => () => void;
  };
  /**
   * The hosts and languages the owner's index knows now (PassageIndex.hostSnapshot), given to each thread that starts
   * from an engine image: it reads no page's host row at its start. Absent: each thread reads them.
   */
  readonly hosts?: () => HostSnapshot;
  /** Threads to start (≥ 1). */
  readonly size: number;
  readonly config: Config;
  /**
   * The index location the threads read, without a read consistency interval: each request tells a thread the
   * version to catch up to (PassageIndex.catchUp), so it never polls LanceDB for one.
   */
  readonly location: IndexLocation;
  /** The process's embedder; the threads ask it for query vectors (the hashing stand-in they compute themselves). */
  readonly embedder: Embedder | null;
  /** Bytes of result rows each thread keeps in memory (row-cache.ts). */
  readonly rowCacheBytes: number;
  readonly log: Logger;
  /**
   * The writer's passage commits and maintenance marks (PassageIndex.onPassageCommit), forwarded to every thread so
   * their postings follow writes by page and compactions by re-keying instead of scanning. Absent: the threads scan.
   */
  readonly commits?: (fn: (c: PassageCommit) => void) => () => void;
}

/** A thread's answer to one message (`done`, `stats`, `settled`), by the message's id. */
type Reply = Extract<FromWorker, { id: number }>;

interface Waiting {
  answer: (m: Reply) => void;
  /** The thread stopped before answering. */
  gone: () => void;
}

interface Thread {
  readonly worker: Worker;
  ready: boolean;
  /** Out of service (exited or killed); never answers again. */
  retired: boolean;
  inFlight: number;
  /** Messages awaiting the thread's reply, by id (one map for runs, stats and settles). */
  readonly waiting: Map<number, Waiting>;
  closed: Promise<void>;
}

/** Resolves when thread `t` has exited, or after `ms`, whichever comes first. */
function exitedWithin(t: Thread, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([t.closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

const LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** How long to wait before replacing a thread that died, doubling up to a minute while they keep dying. */
const RESPAWN_MS = 1000;
const RESPAWN_MAX_MS = 60_000;
/**
 * Requests a thread holds at once: the one it runs and the next ones, already on its port (so it never waits for one,
 * and requests waiting for the same catch-up to a newer version of the index, beside a crawl, wait together).
 */
export const SEARCH_THREAD_ROOM = 4;

export class SearchPool implements ToolExecutor {
  readonly #opts: SearchPoolOptions;
  readonly #threads: (Thread | null)[];
  #nextId = 1;
  #turn = 0;
  #closing = false;
  #respawnMs = RESPAWN_MS;
  readonly #readyWaiters = new Set<() => void>();
  /** Threads asked to close that have not exited yet (`#stop`: `kill` and `close`); `close` waits for them all. */
  readonly #stopping = new Set<Thread>();
  /** Threads `renew` retires: replaced at once, without the respawn delay or a warning. */
  readonly #planned = new Set<Thread>();
  #terminated = 0;
  /** Requests waiting for a thread with room (`#slot`), in arrival order; each is handed its thread (`#handOut`). */
  readonly #waitingForRoom: ((thread: Thread | null) => void)[] = [];
  readonly #unsubscribe: (() => void) | null;
  readonly #unsubscribeImages: (() => void) | null;

  constructor(opts: SearchPoolOptions) {
    this.#opts = opts;
    this.#threads = Array.from({ length: Math.max(1, opts.size) }, () => null);
    for (let i = 0; i < this.#threads.length; i++) this.#spawn(i);
    // Posted as the write commits, on the same port as the requests: a request naming the version is normally behind
    // it. One that read the new version in the moment between the commit and this post gets there first; its thread
    // then scans for that version once (the postings stay right either way).
    this.#unsubscribe =
      opts.commits?.((c) => {
        for (const t of this.#threads) if (t && !t.retired) t.worker.postMessage({ op: 'commits', commits: [c] } satisfies ToWorker);
      }) ?? null;
    this.#unsubscribeImages =
      opts.engineImages?.subscribe((image) => {
        for (const t of this.#threads) if (t && !t.retired) t.worker.postMessage({ op: 'image', image } satisfies ToWorker);
      }) ?? null;
  }

  /** Threads stopped by termination (closing took over 10 s) since the pool started: 0 when every stop was clean. */
  get terminated(): number {
    return this.#terminated;
  }

  #terminate(t: Thread): void {
    this.#terminated++;
    void t.worker.terminate();
  }

  /** Threads ready to answer now. */
  get ready(): number {
    return this.#threads.filter((t) => t?.ready).length;
  }

  /** Requests waiting for a thread with room, and each thread's requests in flight, by slot (tests, diagnostics). */
  get queued(): number {
    return this.#waitingForRoom.length;
  }

  get inFlight(): number[] {
    return this.#threads.map((t) => t?.inFlight ?? 0);
  }

  get size(): number {
    return this.#threads.length;
  }

  /** Resolves once every thread is ready (tests, benchmarks), or after `timeoutMs` (then false). */
  async whenReady(timeoutMs = 60_000): Promise<boolean> {
    const until = performance.now() + timeoutMs;
    while (this.ready < this.size) {
      const left = until - performance.now();
      if (left <= 0 || this.#closing) return false;
      await new Promise<void>((resolve) => {
        const waiters = this.#readyWaiters;
        const t = setTimeout(done, Math.min(left, 1000));
        function done(): void {
          clearTimeout(t);
          waiters.delete(done); // a waiter that timed out is not kept until the next thread is ready
          resolve();
        }
        waiters.add(done);
      });
    }
    return true;
  }

  /**
   * The executor of a process with search threads (tools/executor.ts): a `search-thread` tool runs on this pool, any
   * other here. Only the very definition the threads run goes to them (a test's own tool of the same name runs here).
   */
  run<In, Out>(tool: RunnableTool<In, Out>, input: In, ctx: ToolContext): Promise<Out> {
    const definition = POOLED_TOOLS.get(tool.name);
    const pooled = tool.runsOn === 'search-thread' && definition !== undefined && definition === (tool as unknown);
    return pooled ? this.call(definition, input, ctx) : tool.run(input, ctx);
  }

  /**
   * Runs a pooled tool's handler on the least busy ready thread, or here when none is ready. Each thread holds at most
   * `SEARCH_THREAD_ROOM`; the rest wait here FIFO, because queueing on a thread left requests behind slow searches
   * while the other thread idled.
   */
  async call(tool: ToolDefinition, input: unknown, ctx: ToolContext): Promise<never> {
    const here = () => tool.run(input as never, ctx) as Promise<never>;
    // The version the answer must include is the one served when the request arrived, not when a thread had room: a
    // request that waited asks no thread to catch up further than it needs (beside a crawl, each catch-up is a wait).
    const minVersion = await ctx.deps.index.servingVersion();
    const thread = await this.#slot(ctx.signal);
    // The caller stopped waiting (the index read deadline): its answer would be dropped, so no thread runs it.
    if (ctx.signal?.aborted && !thread) throw indexUnavailable();
    if (!thread) return here();
    try {
      if (ctx.signal?.aborted) throw indexUnavailable();
      // The thread may have stopped since it was chosen: its pending requests were already handed back, so this one
      // would never be answered there.
      if (thread.retired || this.#closing) return here();
      const m = await this.#ask(thread, (id) => ({
        op: 'run',
        id,
        tool: tool.name,
        input,
        caller: ctx.caller,
        nowMs: ctx.deps.now().getTime(),
        minVersion,
      }));
      // Not answered (the thread stopped first): a search is read-only, so running it here again is safe.
      if (m?.op !== 'done') return here();
      if (m.ok) return m.output as never;
      if (m.code !== null && m.code in errorTable)
        throw new SvcError(m.code as ErrorCode, m.message, m.retryAfter === undefined ? {} : { retryAfter: m.retryAfter });
      throw new Error(m.message);
    } finally {
      thread.inFlight--;
      this.#handOut();
    }
  }

  /**
   * A ready thread with room for one more request, counted in its `inFlight`; null when no thread is ready (or the
   * pool is closing, or `signal` aborted: the caller stopped waiting). A newcomer does not pass those already waiting:
   * it waits at the end of the line.
   */
  #slot(signal?: AbortSignal): Thread | null | Promise<Thread | null> {
    const best = this.#leastBusy();
    if (!best || this.#closing || signal?.aborted) return null;
    if (best.inFlight < SEARCH_THREAD_ROOM && this.#waitingForRoom.length === 0) {
      best.inFlight++;
      return best;
    }
    return new Promise<Thread | null>((resolve) => {
      // A request whose caller stopped waiting leaves the line: while the threads are held by reads of a stalled
      // store, the line would otherwise grow by every request given up on, each run once room frees.
      const giveUp = (): void => {
        const i = this.#waitingForRoom.indexOf(take);
        if (i >= 0) this.#waitingForRoom.splice(i, 1);
        resolve(null);
      };
      const take = (thread: Thread | null): void => {
        signal?.removeEventListener('abort', giveUp);
        resolve(thread);
      };
      signal?.addEventListener('abort', giveUp, { once: true });
      this.#waitingForRoom.push(take);
    });
  }

  /** The least busy ready thread; ties taken in turn, so every thread's caches warm up. */
  #leastBusy(): Thread | null {
    let best: Thread | null = null;
    const n = this.#threads.length;
    const start = this.#turn++ % n;
    for (let i = 0; i < n; i++) {
      const t = this.#threads[(start + i) % n];
      if (t?.ready && (!best || t.inFlight < best.inFlight)) best = t;
    }
    return best;
  }

  /**
   * Hands threads with room to the requests waiting, first in line first (a slot freed, a thread became ready or
   * stopped). With no thread ready, or the pool closing, every waiting request is told to run on this thread.
   */
  #handOut(): void {
    while (this.#waitingForRoom.length > 0) {
      const best = this.#closing ? null : this.#leastBusy();
      if (best && best.inFlight >= SEARCH_THREAD_ROOM) return;
      if (best) best.inFlight++;
      this.#waitingForRoom.shift()!(best);
    }
  }

  /** Posts the message `make(id)` to the thread and resolves with its reply; null when the thread stops first. */
  #ask(thread: Thread, make: (id: number) => Extract<ToWorker, { id: number }>, timeoutMs?: number): Promise<Reply | null> {
    return new Promise<Reply | null>((resolve) => {
      const id = this.#nextId++;
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => done(null), timeoutMs);
      function done(m: Reply | null): void {
        clearTimeout(timer);
        thread.waiting.delete(id);
        resolve(m);
      }
      thread.waiting.set(id, { answer: done, gone: () => done(null) });
      thread.worker.postMessage(make(id));
    });
  }

  /** Each ready thread's postings and row cache (for /metrics); a thread that does not answer within 1 s is left out. */
  async stats(): Promise<(WorkerStats & { readonly slot: number })[]> {
    const replies = await Promise.all(this.#threads.map((t) => (t?.ready ? this.#ask(t, (id) => ({ op: 'stats', id }), 1000) : null)));
    return replies.flatMap((m, slot) => (m?.op === 'stats' ? [{ ...m.stats, slot }] : []));
  }

  /**
   * Waits until every thread is ready, has caught up to the version this process serves (`index`'s) and has its
   * postings at it: what PassageIndex.textEngineReady is for one index (tests, benchmarks, warm-up).
   */
  async textEngineReady(index: { servingVersion(): Promise<number> }): Promise<void> {
    await this.whenReady();
    const minVersion = await index.servingVersion();
    await Promise.all(this.#threads.map((t) => (t?.ready ? this.#ask(t, (id) => ({ op: 'settle', id, minVersion })) : null)));
  }

  /**
   * Takes thread `slot` out of service as if it had crashed (tests; dropping a thread's memory). The thread is closed,
   * not terminated, because terminating inside LanceDB calls makes napi-rs abort the process at exit; terminated only
   * after 10 s. Returns once it has exited, or after at most 5 s.
   */
  async kill(slot: number): Promise<void> {
    const t = this.#threads[slot];
    if (!t) return;
    this.#retire(slot, t, null);
    this.#stop(t);
    await exitedWithin(t, 5000);
  }

  /**
   * Replaces every thread, one at a time, by a new one that opens the index afresh (the writer switched the vector arm
   * on after a re-embedding: a thread opened before reads no vectors). The others serve meanwhile; resolves once all
   * are replaced and ready, or the pool closes.
   */
  async renew(): Promise<void> {
    for (let slot = 0; slot < this.#threads.length; slot++) {
      const t = this.#threads[slot];
      if (this.#closing) return;
      if (!t) continue;
      this.#planned.add(t);
      this.#retire(slot, t, null);
      this.#stop(t);
      await exitedWithin(t, 5000);
      await this.whenReady();
    }
  }

  /**
   * Asks thread `t` to close (finish its requests, close its index, exit), terminated if it has not exited 10 s later;
   * in `#stopping` until it exits.
   */
  #stop(t: Thread): void {
    if (this.#stopping.has(t)) return;
    this.#stopping.add(t);
    t.worker.postMessage({ op: 'close' } satisfies ToWorker);
    const terminate = setTimeout(() => this.#terminate(t), 10_000);
    void t.closed.then(() => {
      clearTimeout(terminate);
      this.#stopping.delete(t);
    });
  }

  /** Lets the threads finish their requests, closes their indexes and stops them (bounded: 10 s, then terminated). */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#unsubscribe?.();
    this.#unsubscribeImages?.();
    for (const w of this.#readyWaiters) w();
    this.#handOut();
    for (const t of this.#threads) if (t) this.#stop(t);
    // Every thread closing, those `kill` stopped before too: given up on 5 s after their termination.
    await Promise.all([...this.#stopping].map((t) => exitedWithin(t, 15_000)));
  }

  #spawn(slot: number): void {
    const o = this.#opts;
    const data: SearchWorkerData = {
      searchThread: true,
      config: o.config,
      location: o.location,
      embedder: o.embedder
        ? { kind: o.embedder.kind, dim: o.embedder.dim, modelId: o.embedder.modelId, hashing: isHashingEmbedder(o.embedder) }
        : null,
      rowCacheBytes: o.rowCacheBytes,
      engineImage: o.engineImages ? (o.engineImages.current() ?? 'await') : null,
      hosts: o.engineImages && o.hosts ? o.hosts() : null,
    };
    const worker = startModuleWorker(import.meta.url, 'search-worker', { workerData: data, name: `svc-search-${slot}` });
    let exited!: () => void;
    const thread: Thread = {
      worker,
      ready: false,
      retired: false,
      inFlight: 0,
      waiting: new Map(),
      closed: new Promise<void>((resolve) => (exited = resolve)),
    };
    this.#threads[slot] = thread;
    worker.on('message', (m: FromWorker) => this.#onMessage(thread, m));
    worker.on('error', (err) => o.log.error({ err, thread: slot }, 'search thread failed'));
    worker.on('exit', (code) => {
      exited();
      this.#retire(slot, thread, code);
    });
  }

  /**
   * Takes a thread out of service (it exited, or `kill` stops it): requests it had not answered are answered here (a
   * search is read-only, so running it again is safe), and a new thread is started in its slot after the respawn
   * delay. Once per thread.
   */
  #retire(slot: number, thread: Thread, code: number | null): void {
    if (thread.retired) return;
    thread.retired = true;
    thread.ready = false;
    // Its runs not answered are answered here (`call`); its stats and settles count for nothing.
    for (const w of [...thread.waiting.values()]) w.gone();
    if (this.#threads[slot] === thread) this.#threads[slot] = null;
    this.#handOut();
    if (this.#closing) return;
    // A planned replacement (`renew`) starts its successor at once, and is no failure to back off from.
    if (this.#planned.delete(thread)) return this.#spawn(slot);
    this.#opts.log.warn(
      { thread: slot, code, retryInMs: this.#respawnMs },
      'search thread stopped; its searches run on the HTTP thread until it is replaced',
    );
    const wait = this.#respawnMs;
    this.#respawnMs = Math.min(RESPAWN_MAX_MS, this.#respawnMs * 2);
    setTimeout(() => {
      if (!this.#closing && this.#threads[slot] === null) this.#spawn(slot);
    }, wait).unref();
  }

  #onMessage(thread: Thread, m: FromWorker): void {
    // A stopped thread's late messages (an answer already given here, a 'ready' of a thread being terminated) count
    // for nothing; its log lines still go to the log.
    if (thread.retired && m.op === 'embed') {
      // A stopped thread still finishing its runs (`kill`) is not embedded for: told so at once, they end.
      thread.worker.postMessage({ op: 'embedded', id: m.id, error: 'search thread stopped' } satisfies ToWorker);
      return;
    }
    if (thread.retired && m.op !== 'log') return;
    switch (m.op) {
      case 'ready':
        thread.ready = true;
        this.#respawnMs = RESPAWN_MS;
        for (const w of this.#readyWaiters) w();
        this.#readyWaiters.clear();
        this.#handOut();
        return;
      case 'failed':
        this.#opts.log.warn({ reason: m.error }, 'search thread could not open the index');
        void thread.worker.terminate();
        return;
      case 'done':
      case 'stats':
      case 'settled':
        thread.waiting.get(m.id)?.answer(m);
        return;
      case 'embed': {
        const embedder = this.#opts.embedder;
        const reply = (r: Omit<Extract<ToWorker, { op: 'embedded' }>, 'op' | 'id'>): void =>
          thread.worker.postMessage({ op: 'embedded', id: m.id, ...r } satisfies ToWorker);
        if (!embedder) return reply({ error: 'no embedder' });
        embedder.embed(m.texts, { interactive: m.interactive }).then(
          (vectors) => reply({ vectors }),
          (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
        );
        return;
      }
      case 'log': {
        try {
          const {
            level,
            time: _time,
            svc: _svc,
            msg,
            ...fields
          } = JSON.parse(m.line) as Record<string, unknown> & { level: number; msg?: string };
          this.#opts.log[LEVELS[level] ?? 'info'](fields, msg ?? '');
        } catch {
          // not a pino line: dropped rather than written raw (it could hold anything)
        }
        return;
      }
      case 'closed':
        return;
    }
  }
}
