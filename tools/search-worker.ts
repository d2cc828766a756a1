/**
 * A search thread (search-pool.ts): its own read-only reader of the index, running svc_search and svc_context.
 * It catches up to the version each request names, so callers see the same index from any thread; real-model query
 * embeddings are asked of the HTTP thread, keeping one model in memory per process.
 */
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import type { Config } from '../config.js';
import { isSvcError } from '../errors.js';
import { createHashingEmbedder, type Embedder } from '../index/serving/embedder.js';
import type { IndexLocation } from '../index/engines/lance/location.js';
import type { PassageCommit } from '../index/engines/lance/passage-changes.js';
import type { EngineImage } from '../index/engines/lance/engine-image.js';
import type { HostSnapshot } from '../index/engines/lance/host-ids.js';
import { PassageIndex } from '../index/engines/lance/store.js';
import { createLogger } from '../logger.js';
import { contextTool } from './context.js';
import type { ServiceDeps } from './deps.js';
import type { Caller, ToolDefinition } from './define-tool.js';
import { searchTool } from './search.js';

/**
 * The tools a search thread runs, by name: those that declare `runsOn: 'search-thread'` (the HTTP thread hands it
 * these only). Listed here rather than taken from the registry, so a thread loads no crawler or state code.
 */
export const POOLED_TOOLS: ReadonlyMap<string, ToolDefinition> = new Map(
  ([searchTool, contextTool] as readonly ToolDefinition[]).filter((t) => t.runsOn === 'search-thread').map((t) => [t.name, t]),
);

/** What a search thread is started with. */
export interface SearchWorkerData {
  /** Marks a search thread's data (this module is imported by other threads too: only a search thread runs it). */
  readonly searchThread: true;
  readonly config: Config;
  readonly location: IndexLocation;
  /**
   * The process's embedder: its kind, dimension and vector space, and whether it is the hashing stand-in itself
   * (rebuilt here; any other is asked through the HTTP thread); null when the index is BM25 only.
   */
  readonly embedder: { readonly kind: Embedder['kind']; readonly dim: number; readonly modelId: string; readonly hashing: boolean } | null;
  readonly rowCacheBytes: number;
  /**
   * The pool owner's engine image to start from (index/engines/lance/engine-image.ts: shared memory, read by every thread), 'await'
   * one the owner is still building, or null: this thread builds its own.
   */
  readonly engineImage: EngineImage | 'await' | null;
  /** The hosts and languages the owner's index knows (with an engine image): this thread reads no page's host row for them. */
  readonly hosts: HostSnapshot | null;
}

/** HTTP thread → search thread. */
export type ToWorker =
  | { op: 'run'; id: number; tool: string; input: unknown; caller: Caller; nowMs: number; minVersion: number }
  | { op: 'embedded'; id: number; vectors?: Float32Array[]; error?: string }
  | { op: 'stats'; id: number }
  | { op: 'settle'; id: number; minVersion: number }
  /** The writer's commits to the passages table (index/engines/lance/passage-changes.ts). */
  | { op: 'commits'; commits: PassageCommit[] }
  /** A newer engine image of the pool's owner: the postings move to it (index/engines/lance/engine-image.ts). */
  | { op: 'image'; image: EngineImage }
  | { op: 'close' };

/** What a thread reports of its index (the HTTP thread's /metrics). */
export interface WorkerStats {
  readonly postingsVersion: number | null;
  readonly postingsLive: number;
  readonly flatVectors: number;
  readonly rowCacheRows: number;
  readonly rowCacheBytes: number;
  /** Passages whose snippet text this thread holds in memory, and the store's bytes (index/engines/memory/snippet-store.ts). */
  readonly snippetPassages: number;
  readonly snippetBytes: number;
  /** This thread's JS heap in use now, and right after its latest major collection (0: none yet). */
  readonly heapUsedBytes: number;
  readonly heapAfterMajorGcBytes: number;
  /** Full builds (table scans) and image loads of this thread's postings; the bytes of the shared image they are views of (0: none). */
  readonly engineBuilds: number;
  readonly engineLoads: number;
  readonly engineSharedBytes: number;
  /** Work this thread's postings' load did that grows with the index (0: read in place from the shared image). */
  readonly engineLoadWork: number;
  /** Rows of the pages table this thread read at its start (0: its hosts and languages came from the pool's owner). */
  readonly pageRowsAtOpen: number;
}

/** Search thread → HTTP thread. */
export type FromWorker =
  | { op: 'ready' }
  | { op: 'failed'; error: string }
  | { op: 'done'; id: number; ok: true; output: unknown }
  | { op: 'done'; id: number; ok: false; code: string | null; message: string; retryAfter?: number }
  | { op: 'embed'; id: number; texts: readonly string[]; interactive: boolean }
  | { op: 'stats'; id: number; stats: WorkerStats }
  | { op: 'settled'; id: number }
  | { op: 'log'; line: string }
  | { op: 'closed' };

async function main(data: SearchWorkerData): Promise<void> {
  const port = parentPort!;
  // This thread's live heap: what is left right after each major collection (its isolate's own; /metrics and the soak
  // of bench/load.ts read it through `stats`).
  let heapAfterMajorGc = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if ((e as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR)
        heapAfterMajorGc = process.memoryUsage().heapUsed;
  }).observe({ entryTypes: ['gc'] });
  const post = (m: FromWorker, transfer?: ArrayBuffer[]): void => port.postMessage(m, transfer ?? []);
  // Log lines go to the HTTP thread's logger (its level, destination and redaction), not to this thread's stdout.
  const log = createLogger({
    level: data.config.logLevel,
    destination: { write: (line: string) => post({ op: 'log', line }) },
  }).child({ part: 'search-thread', thread: threadId });

  const pendingEmbeds = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
  let nextEmbed = 1;
  const e = data.embedder;
  const embedder: Embedder | null = !e
    ? null
    : e.hashing
      ? createHashingEmbedder(e.dim)
      : {
          dim: e.dim,
          modelId: e.modelId,
          kind: e.kind,
          embed: (texts, opts) =>
            new Promise<Float32Array[]>((resolve, reject) => {
              const id = nextEmbed++;
              pendingEmbeds.set(id, { resolve, reject });
              post({ op: 'embed', id, texts: [...texts], interactive: opts?.interactive ?? false });
            }),
          async close() {},
        };

  let index: PassageIndex;
  try {
    index = await PassageIndex.open({
      location: data.location,
      embedder,
      log,
      writes: false,
      // The writer's hosts are learned when a request's version is ahead (catchUp), not on a timer: this thread's
      // tables move only then.
      followHostsMs: 0,
      textEngine: data.config.textPostings,
      rowCacheBytes: data.rowCacheBytes,
      ...(data.engineImage ? { engineImage: data.engineImage } : {}),
      ...(data.hosts ? { hosts: data.hosts } : {}),
      // Each thread holds its own (index/engines/memory/snippet-store.ts): the bound is per thread, not shared out.
      ...(data.config.snippetMb !== undefined ? { snippetBytes: data.config.snippetMb * 2 ** 20 } : {}),
    });
  } catch (err) {
    post({ op: 'failed', error: err instanceof Error ? err.message : String(err) });
    return;
  }
  // Only what a search and a context call use: the index, the clock of the request and the ranking setting.
  const deps = { config: data.config, index, log } as Omit<ServiceDeps, 'now' | 'repos' | 'entities' | 'crawler'>;
  let closing = false;
  let running = 0;
  let drained: (() => void) | null = null;

  const run = async (m: Extract<ToWorker, { op: 'run' }>): Promise<void> => {
    running++;
    try {
      const tool = POOLED_TOOLS.get(m.tool);
      if (!tool) throw new Error(`search thread: ${m.tool} is not run here`);
      await index.catchUp(m.minVersion);
      const now = new Date(m.nowMs);
      const output = await tool.run(m.input as never, { deps: { ...deps, now: () => now } as ServiceDeps, caller: m.caller });
      post({ op: 'done', id: m.id, ok: true, output });
    } catch (err) {
      post(
        isSvcError(err)
          ? {
              op: 'done',
              id: m.id,
              ok: false,
              code: err.code,
              message: err.message,
              ...(err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter }),
            }
          : { op: 'done', id: m.id, ok: false, code: null, message: err instanceof Error ? err.message : String(err) },
      );
    } finally {
      running--;
      if (running === 0) drained?.();
    }
  };

  port.on('message', (m: ToWorker) => {
    switch (m.op) {
      case 'run':
        if (closing) post({ op: 'done', id: m.id, ok: false, code: 'unavailable', message: 'search thread closing' });
        else void run(m);
        return;
      case 'embedded': {
        const p = pendingEmbeds.get(m.id);
        pendingEmbeds.delete(m.id);
        if (m.vectors) p?.resolve(m.vectors);
        else p?.reject(new Error(m.error ?? 'embedding failed'));
        return;
      }
      case 'stats': {
        const tp = index.textPostingsStats();
        const rc = index.rowCacheStats();
        post({
          op: 'stats',
          id: m.id,
          stats: {
            postingsVersion: tp?.version ?? null,
            postingsLive: tp?.live ?? 0,
            flatVectors: tp?.vectors ?? 0,
            rowCacheRows: rc.rows,
            rowCacheBytes: rc.bytes,
            snippetPassages: tp?.snippets.docs ?? 0,
            snippetBytes: tp?.snippets.bytes ?? 0,
            heapUsedBytes: process.memoryUsage().heapUsed,
            heapAfterMajorGcBytes: heapAfterMajorGc,
            engineBuilds: tp?.syncs.builds ?? 0,
            engineLoads: tp?.syncs.loads ?? 0,
            engineSharedBytes: tp?.image?.shared ? tp.image.bytes : 0,
            engineLoadWork: tp?.loadWork ?? 0,
            pageRowsAtOpen: index.pageRowsAtOpen,
          },
        });
        return;
      }
      case 'commits':
        index.notePassageCommits(m.commits);
        return;
      case 'image':
        index.offerEngineImage(m.image);
        return;
      case 'settle':
        // Caught up to the version and the postings at it (tests, benchmarks, warm-up: PassageIndex.textEngineReady).
        void index
          .catchUp(m.minVersion)
          .then(() => index.textEngineReady())
          .catch((err: unknown) => log.warn({ err }, 'search thread: settling failed'))
          .finally(() => post({ op: 'settled', id: m.id }));
        return;
      case 'close':
        if (closing) return;
        closing = true;
        void (async () => {
          if (running > 0) await new Promise<void>((resolve) => (drained = resolve));
          for (const p of pendingEmbeds.values()) p.reject(new Error('search thread closing'));
          await index.close().catch(() => {});
          post({ op: 'closed' });
          port.close();
        })();
        return;
    }
  });
  post({ op: 'ready' });
}

const data = workerData as Partial<SearchWorkerData> | null;
if (!isMainThread && parentPort && data?.searchThread === true) await main(data as SearchWorkerData);
