/**
 * Search threads (issue 14 item 3): svc_search and svc_context run on a pool of worker threads, each with its own
 * reader of the index (search-worker.ts), so searches use every core while the HTTP thread only parses, checks keys
 * and limits, and writes answers. One search holds one thread for its whole run (a few ms at SciFact's size);
 * requests go to the thread with the fewest in flight.
 *
 * What a caller sees does not depend on the thread: each request carries the version of the passages table this
 * process serves when it arrives (the writer's newest commit in role `all`), and the thread catches up to it before
 * the query runs (PassageIndex.catchUp). Until a thread is ready, or when every thread has failed, the HTTP thread
 * answers itself from its own index; a thread that dies is replaced (its requests in flight are answered here).
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { SvcError, errorTable, type ErrorCode } from '../errors.js';
import { isHashingEmbedder, type Embedder } from '../index/embedder.js';
import type { IndexLocation } from '../index/location.js';
import { startModuleWorker } from '../worker-thread.js';
import type { AnyObjectSchema, ToolContext, ToolDefinition } from './define-tool.js';
import { POOLED_TOOLS, type FromWorker, type SearchWorkerData, type ToWorker, type WorkerStats } from './search-worker.js';

export interface SearchPoolOptions {
  /** Threads to start (≥ 1). */
  readonly size: number;
  readonly config: Config;
  /** The index location the threads read (with a read consistency interval: they are readers). */
  readonly location: IndexLocation;
  /** The process's embedder; the threads ask it for query vectors (the hashing stand-in they compute themselves). */
  readonly embedder: Embedder | null;
  /** Bytes of result rows each thread keeps in memory (row-cache.ts). */
  readonly rowCacheBytes: number;
  /** How often a thread looks for the writer's new hosts besides catching up on requests (ms). */
  readonly followHostsMs: number;
  readonly log: Logger;
}

interface Pending {
  resolve: (output: unknown) => void;
  reject: (err: unknown) => void;
  /** Runs the request on the HTTP thread instead (its thread died before answering). */
  fallback: () => void;
}

interface Thread {
  readonly worker: Worker;
  ready: boolean;
  /** Out of service (exited or killed); never answers again. */
  retired: boolean;
  inFlight: number;
  readonly pending: Map<number, Pending>;
  readonly stats: Map<number, (s: WorkerStats | null) => void>;
  readonly settles: Map<number, () => void>;
  closed: Promise<void>;
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

export class SearchPool {
  readonly #opts: SearchPoolOptions;
  readonly #threads: (Thread | null)[];
  #nextId = 1;
  #turn = 0;
  #closing = false;
  #respawnMs = RESPAWN_MS;
  readonly #readyWaiters = new Set<() => void>();

  constructor(opts: SearchPoolOptions) {
    this.#opts = opts;
    this.#threads = Array.from({ length: Math.max(1, opts.size) }, () => null);
    for (let i = 0; i < this.#threads.length; i++) this.#spawn(i);
  }

  /** Threads ready to answer now. */
  get ready(): number {
    return this.#threads.filter((t) => t?.ready).length;
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
        const t = setTimeout(done, Math.min(left, 1000));
        function done(): void {
          clearTimeout(t);
          resolve();
        }
        this.#readyWaiters.add(done);
      });
    }
    return true;
  }

  /**
   * The tools with the pooled ones (svc_search, svc_context) running on this pool; the others unchanged. A tool is
   * pooled only when it is the very definition the threads run (a test's own tool of the same name is not).
   */
  wrap(tools: readonly ToolDefinition[]): ToolDefinition[] {
    return tools.map((t) =>
      POOLED_TOOLS.get(t.name) === t
        ? ({ ...t, run: (input: unknown, ctx: ToolContext) => this.call(t, input, ctx) } as ToolDefinition<
            AnyObjectSchema,
            AnyObjectSchema
          >)
        : t,
    );
  }

  /** Runs a pooled tool's handler on the least busy ready thread; on this thread when none is ready. */
  async call(tool: ToolDefinition, input: unknown, ctx: ToolContext): Promise<never> {
    const here = () => tool.run(input as never, ctx) as Promise<never>;
    // The least busy ready thread; ties taken in turn, so every thread's caches warm up.
    let best: Thread | null = null;
    const n = this.#threads.length;
    const start = this.#turn++ % n;
    for (let i = 0; i < n; i++) {
      const t = this.#threads[(start + i) % n];
      if (t?.ready && (!best || t.inFlight < best.inFlight)) best = t;
    }
    if (!best || this.#closing) return here();
    const thread = best;
    const minVersion = await ctx.deps.index.servingVersion();
    // The thread may have stopped during that await: its pending requests were already handed back, so this one
    // would never be answered there.
    if (thread.retired || this.#closing) return here();
    const id = this.#nextId++;
    thread.inFlight++;
    try {
      return (await new Promise<unknown>((resolve, reject) => {
        thread.pending.set(id, { resolve, reject, fallback: () => here().then(resolve, reject) });
        const msg: ToWorker = { op: 'run', id, tool: tool.name, input, caller: ctx.caller, nowMs: ctx.deps.now().getTime(), minVersion };
        thread.worker.postMessage(msg);
      })) as never;
    } finally {
      thread.inFlight--;
    }
  }

  /** Each ready thread's postings and row cache (for /metrics); a thread that does not answer within 1 s is left out. */
  async stats(): Promise<WorkerStats[]> {
    const asked = this.#threads.flatMap((t) =>
      t?.ready
        ? [
            new Promise<WorkerStats | null>((resolve) => {
              const id = this.#nextId++;
              const timer = setTimeout(() => {
                t.stats.delete(id);
                resolve(null);
              }, 1000);
              t.stats.set(id, (s) => {
                clearTimeout(timer);
                resolve(s);
              });
              t.worker.postMessage({ op: 'stats', id } satisfies ToWorker);
            }),
          ]
        : [],
    );
    return (await Promise.all(asked)).filter((s): s is WorkerStats => s !== null);
  }

  /**
   * Waits until every thread is ready, has caught up to the version this process serves (`index`'s) and has its
   * postings at it: what PassageIndex.textEngineReady is for one index (tests, benchmarks, warm-up).
   */
  async textEngineReady(index: { servingVersion(): Promise<number> }): Promise<void> {
    await this.whenReady();
    const minVersion = await index.servingVersion();
    await Promise.all(
      this.#threads.map((t) =>
        t?.ready
          ? new Promise<void>((resolve) => {
              const id = this.#nextId++;
              t.settles.set(id, resolve);
              t.worker.postMessage({ op: 'settle', id, minVersion } satisfies ToWorker);
            })
          : undefined,
      ),
    );
  }

  /**
   * Stops thread `slot` at once, as if it had crashed: its requests in flight are answered on the HTTP thread and a new
   * thread replaces it after the respawn delay (tests; an operator's way to drop a thread's memory).
   */
  async kill(slot: number): Promise<void> {
    const t = this.#threads[slot];
    if (!t) return;
    // Out of service at once, without waiting for the thread to exit (a termination can take a while when the
    // thread is inside native code); its exit is awaited for at most 5 s.
    this.#retire(slot, t, null);
    void t.worker.terminate();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([t.closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 5000)))]);
    clearTimeout(timer);
  }

  /** Lets the threads finish their requests, closes their indexes and stops them (bounded: 10 s, then terminated). */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    for (const w of this.#readyWaiters) w();
    await Promise.all(
      this.#threads.map(async (t) => {
        if (!t) return;
        t.worker.postMessage({ op: 'close' } satisfies ToWorker);
        // 10 s to finish its requests and close its index, then terminated; given up on 5 s after that.
        const terminate = setTimeout(() => void t.worker.terminate(), 10_000);
        let giveUp: NodeJS.Timeout | undefined;
        await Promise.race([t.closed, new Promise<void>((resolve) => (giveUp = setTimeout(resolve, 15_000)))]);
        clearTimeout(terminate);
        clearTimeout(giveUp);
      }),
    );
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
      followHostsMs: o.followHostsMs,
    };
    const worker = startModuleWorker(import.meta.url, 'search-worker', { workerData: data, name: `svc-search-${slot}` });
    let exited!: () => void;
    const thread: Thread = {
      worker,
      ready: false,
      retired: false,
      inFlight: 0,
      pending: new Map(),
      stats: new Map(),
      settles: new Map(),
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
    for (const p of thread.pending.values()) p.fallback();
    thread.pending.clear();
    for (const s of thread.stats.values()) s(null);
    thread.stats.clear();
    for (const s of thread.settles.values()) s();
    thread.settles.clear();
    if (this.#threads[slot] === thread) this.#threads[slot] = null;
    if (this.#closing) return;
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
    if (thread.retired && m.op !== 'log') return;
    switch (m.op) {
      case 'ready':
        thread.ready = true;
        this.#respawnMs = RESPAWN_MS;
        for (const w of this.#readyWaiters) w();
        this.#readyWaiters.clear();
        return;
      case 'failed':
        this.#opts.log.warn({ reason: m.error }, 'search thread could not open the index');
        void thread.worker.terminate();
        return;
      case 'done': {
        const p = thread.pending.get(m.id);
        if (!p) return;
        thread.pending.delete(m.id);
        if (m.ok) p.resolve(m.output);
        else if (m.code !== null && m.code in errorTable)
          p.reject(new SvcError(m.code as ErrorCode, m.message, m.retryAfter === undefined ? {} : { retryAfter: m.retryAfter }));
        else p.reject(new Error(m.message));
        return;
      }
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
      case 'stats': {
        const s = thread.stats.get(m.id);
        thread.stats.delete(m.id);
        s?.(m.stats);
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
      case 'settled': {
        const s = thread.settles.get(m.id);
        thread.settles.delete(m.id);
        s?.();
        return;
      }
      case 'closed':
        return;
    }
  }
}
