import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { createHttpHandler, type AppServices } from './rest/app.js';
import type { MetricFamily } from './rest/metrics.js';
import { answerClientError } from './rest/client-error.js';
import { startingHandler } from './rest/starting.js';
import { openStateDb, type StateDb } from './state/db.js';
import { Documents } from './state/documents.js';
import { createCrawler, type Crawler } from './crawler/crawler.js';
import { createResolver, type LookupFn } from './crawler/resolver.js';
import { createEmbedder, type Embedder } from './index/serving/embedder.js';
import { DEFAULT_MODEL, EMBEDDER_DTYPES, WEIGHTS_FILE, profileFor, type EmbedderDtype } from './index/serving/model-profiles.js';
import { PassageIndex, type ReembedProgress } from './index/engines/lance/store.js';
import {
  indexShardCount,
  indexVectorModel,
  openIndex,
  ShardedIndex,
  type ServedIndex,
  type ShardSource,
} from './index/shards/sharded-index.js';
import { RemoteShard, SearcherDirectory } from './index/shards/remote-shard.js';
import { mountShardRoute, shardPlainRoute } from './index/shards/searcher-route.js';
import { openSearcherShards, ShardListError } from './index/shards/searcher-shards.js';
import { defaultRowCacheBytes } from './index/engines/memory/row-cache.js';
import { indexLocation } from './index/engines/lance/location.js';
import { IndexThreadPriority } from './index/serving/thread-priority.js';
import { EntityStore } from './state/entities.js';
import { openRepositories, stateOptions } from './state/repos/open.js';
import { sqliteEntities } from './state/repos/sqlite.js';
import type { Repositories } from './state/repos/types.js';
import type { ToolDefinition } from './tools/define-tool.js';
import { RequestProcessor } from './tools/request-processor.js';
import { SearchPool } from './tools/search-pool.js';
import type { ServiceDeps } from './tools/deps.js';
import { inlineExecutor } from './tools/executor.js';
import { indexReadDeadlineMs, withIndexDeadline } from './tools/index-deadline.js';
import { allTools } from './tools/registry.js';
import { mountWebPages } from './web/pages.js';
import { OutboxDrainer, OutboxSink } from './crawler/outbox.js';
import { ShardFence } from './crawler/shard-fence.js';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';

export const VERSION = '0.1.0';

/** Everything one svc process runs on, built from the configuration. */
export interface Services extends AppServices {
  /** The crawler, when this process crawls (config.crawl). */
  readonly crawler: Crawler | null;
  /** The search threads (SVC_SEARCH_THREADS), when this process serves search with any. */
  readonly searchPool: SearchPool | null;
  /**
   * The SQLite state file in the data dir and its synchronous stores: the crawler, entities and the API work
   * through the repositories (PostgreSQL with SVC_DATABASE_URL). Tools, REST and the CLI never use these; tests and
   * benchmarks read through them on the embedded default, where `entities` is the same file the repositories use.
   */
  readonly local: { readonly db: StateDb; readonly documents: Documents; readonly entities: EntityStore };
  /** Starts the background work: the crawler loop and the URL-request processor. */
  start(): void;
  /** Stops background work, then closes every store (after the HTTP server has stopped). */
  close(): Promise<void>;
  /** Aborted when this process may no longer do its work (an indexer that lost its shards): `svc serve` then exits 1. */
  readonly failed?: AbortSignal;
}

export interface ServiceOptions {
  readonly log?: Logger;
  readonly now?: () => Date;
  readonly tools?: readonly ToolDefinition[];
  /** The embedder to use instead of the configured model (tests and evaluation with the hashing stand-in). */
  readonly embedder?: Embedder | null;
  /** DNS lookup for submission checks (tests inject one that never leaves the machine). @default dns.lookup */
  readonly lookup?: LookupFn;
  /** What this process does (`svc serve --role`; docs/deploy.md). @default 'all' */
  readonly role?: Role;
  /**
   * Lease of claimed work (ms): a frontier URL (how soon a killed worker's URLs come back, default the crawler's 40000)
   * and, for the indexer, an outbox batch (default the drainer's 30000).
   */
  readonly crawlLeaseMs?: number;
  /** Told each step of the start before it is taken (`svc serve` reports it on /readyz while starting). */
  readonly onStage?: (stage: StartupStage) => void;
  /**
   * The index shards this process takes: those an `indexer` writes (`svc serve --role indexer --shards 0-3`), taken
   * with a fenced lease (crawler/shard-fence.ts: the start fails with `ShardOwnedError` when another indexer holds
   * one), or those a `searcher` serves. @default every shard
   */
  readonly shards?: readonly number[];
  /** The address a searcher registers (SVC_SEARCHER_URL wins; `svc serve` passes the address it listens at). */
  readonly advertiseUrl?: string;
}

/** The steps of {@link createServices} that can take long: a database to reach, a model to load, tables to wait for. */
export type StartupStage = 'state database' | 'embedding model' | 'index tables';

/**
 * Roles of a fleet: `all` is the one-process default (crawler writes the index directly); `api` only serves;
 * `crawler` fetches and extracts into the outbox; `indexer` is the index's only writer and drains the outbox;
 * `searcher` serves some shards of a sharded index to the `api` replicas over an internal route (docs/deploy.md).
 */
export const ROLES = ['all', 'api', 'crawler', 'indexer', 'searcher'] as const;
export type Role = (typeof ROLES)[number];

/** Search threads when SVC_SEARCH_THREADS is unset: one per core, at most 4, on a machine with 2 or more cores. */
export function defaultSearchThreads(cores = availableParallelism()): number {
  return cores >= 2 ? Math.min(4, cores) : 0;
}

/** The SQLite state file inside the data dir. */
export const stateFile = (config: Config): string => join(config.dataDir, 'state.sqlite');
/** The LanceDB folder inside the data dir (the default index location; SVC_INDEX_URI may name another). */
export const lanceDir = (config: Config): string => join(config.dataDir, 'lance');

/** Which model (and weights) this process embeds with, and what an operator should hear about the choice. */
export interface ModelChoice {
  readonly name: string;
  readonly dtype?: EmbedderDtype;
  /** Set when an unset `SVC_MODEL` kept an index's older model rather than the default: how to switch. */
  readonly notice?: string;
}

/**
 * The model an embedder loads. An explicit `SVC_MODEL` is obeyed (an index whose vectors came from another model is
 * re-embedded, as ever). An unset one means the default, except that an index whose vectors came from a model the
 * model folder still holds keeps it: an upgrade that changed the default must not start a surprise re-embedding of
 * every passage. The stored weights are kept too unless `SVC_EMBED_DTYPE` says otherwise.
 */
export async function chooseModel(config: Config & { readonly modelDir: string }): Promise<ModelChoice> {
  if (config.modelName !== undefined) return { name: config.modelName, ...(config.embedDtype ? { dtype: config.embedDtype } : {}) };
  const fallback: ModelChoice = { name: DEFAULT_MODEL, ...(config.embedDtype ? { dtype: config.embedDtype } : {}) };
  let stored: string | null;
  try {
    stored = await indexVectorModel(indexLocation(config));
  } catch {
    return fallback; // an unreadable index is reported when it is opened
  }
  const slash = stored?.lastIndexOf('/') ?? -1;
  if (stored === null || slash <= 0) return fallback;
  const name = stored.slice(0, slash);
  const known = profileFor(name);
  if (!known || !existsSync(join(config.modelDir, name))) return fallback;
  const storedDtype = EMBEDDER_DTYPES.find((d) => d === stored.slice(slash + 1));
  const keepDtype =
    storedDtype !== undefined &&
    known.profile.dtypes.includes(storedDtype) &&
    existsSync(join(config.modelDir, name, 'onnx', WEIGHTS_FILE[storedDtype]));
  const dtype = config.embedDtype ?? (keepDtype ? storedDtype : undefined);
  const notice =
    known.family === DEFAULT_MODEL
      ? undefined
      : `this index's vectors came from ${stored}, kept because SVC_MODEL is unset; the default model is now ${DEFAULT_MODEL}: ` +
        `set SVC_MODEL=${DEFAULT_MODEL} to re-embed every passage with it (in the background; BM25 serves meanwhile), ` +
        `or SVC_MODEL=${name} to keep this one and silence this`;
  return { name, ...(dtype ? { dtype } : {}), ...(notice ? { notice } : {}) };
}

/**
 * The embedder for this configuration: the local model when its weights are present, else null (BM25 only). The
 * model is `choice`'s, else {@link chooseModel}'s (whose notice is logged).
 */
export async function openEmbedder(config: Config, log: Logger, choice?: ModelChoice): Promise<Embedder | null> {
  if (!config.modelDir) {
    log.info('no SVC_MODEL_DIR: ranking is BM25 only');
    return null;
  }
  const model = choice ?? (await chooseModel({ ...config, modelDir: config.modelDir }));
  if (!choice && model.notice) log.warn({ model: model.name }, model.notice);
  return createEmbedder({
    modelDir: config.modelDir,
    modelName: model.name,
    threads: config.embedThreads,
    ...(model.dtype ? { dtype: model.dtype } : {}),
    log,
  });
}

/**
 * Opens the stores in the data dir (creating them on first run) and wires the services. The embedded default
 * needs no other server: SQLite and LanceDB are files under `config.dataDir`.
 */
export async function createServices(config: Config, opts: ServiceOptions = {}): Promise<Services> {
  const log = opts.log ?? createLogger({ level: config.logLevel });
  const now = opts.now ?? (() => new Date());
  const role = opts.role ?? 'all';
  opts.onStage?.('state database');
  const db = openStateDb(stateFile(config));
  // The API state (keys, usage counters, documents, host facts, requests) is the repositories': on PostgreSQL with
  // SVC_DATABASE_URL, shared by every replica; otherwise on the very SQLite handle the crawler uses (one file, one
  // connection, as before). The URL may hold a password: it is never logged.
  let repos: Repositories;
  try {
    // On the embedded default one process owns the counters: decided in memory, reserved in blocks; on PostgreSQL
    // every decision is the database's, exact for the fleet.
    repos = await openRepositories({
      ...stateOptions(config),
      defaultGapMs: config.crawlGapMs,
      embedded: { db, inProcessUsage: true },
    });
  } catch (err) {
    db.close();
    throw err;
  }
  if (repos.backend === 'postgres') {
    log.warn(
      'SVC_DATABASE_URL: API and crawl state (keys, usage counters, URL requests, frontier, politeness, documents, host facts, outbox) and entities are on PostgreSQL (see docs/deploy.md)',
    );
  }
  const writesIndex = role === 'all' || role === 'indexer';
  const servesSearch = role === 'all' || role === 'api';
  let searchThreads = servesSearch ? (config.searchThreads ?? defaultSearchThreads()) : 0;
  const rowCacheBytes = config.rowCacheMb !== undefined ? config.rowCacheMb * 2 ** 20 : defaultRowCacheBytes();
  let embedder: Embedder | null = null;
  let modelChoice: ModelChoice | null = null;
  let index: ServedIndex;
  let pool: SearchPool | null = null;
  let fence: ShardFence | null = null;
  // A searcher's own shards (by shard number), served on its internal route; an api replica's view of the searchers.
  let served: Map<number, PassageIndex> | null = null;
  let shardCount = 1;
  let directory: SearcherDirectory | null = null;
  try {
    opts.onStage?.('embedding model');
    if (opts.embedder === undefined && config.modelDir) {
      modelChoice = await chooseModel({ ...config, modelDir: config.modelDir });
      if (modelChoice.notice) log.warn({ model: modelChoice.name }, modelChoice.notice);
    }
    embedder = opts.embedder !== undefined ? opts.embedder : await openEmbedder(config, log, modelChoice ?? undefined);
    opts.onStage?.('index tables');
    const location = indexLocation(config);
    // A process that does not write the index must look for the writer's new versions (every second unless
    // SVC_INDEX_READ_CONSISTENCY_S says otherwise). Its search threads need no interval of their own: each request
    // tells them the version this thread serves, and they re-read the location when they trail it (catchUp).
    const readerLocation = { ...location, readConsistencyS: location.readConsistencyS ?? 1 };
    const followHostsMs = Math.max(1000, (location.readConsistencyS ?? 1) * 1000);
    // A sharded index is searched on this thread: a search thread reads one dataset.
    const mayAskSearchers = role === 'api' && config.shardSource !== 'local';
    if (
      (searchThreads > 0 || role === 'searcher' || mayAskSearchers) &&
      (shardCount = await indexShardCount(location, config.indexShards)) > 1
    )
      searchThreads = 0;
    const overSearchers =
      mayAskSearchers &&
      shardCount > 1 &&
      (config.shardSource === 'searchers' || (await repos.searchers.live(config.searcherTtlMs)).length > 0);
    if (overSearchers && !config.fleetSecret)
      throw new Error('an api replica that asks searchers needs SVC_FLEET_SECRET (the secret the searchers were started with)');
    // The indexer takes its shards (all or none) before it opens anything: one writer per shard.
    if (role === 'indexer') {
      shardCount = await indexShardCount(location, config.indexShards);
      const mine = opts.shards ?? Array.from({ length: shardCount }, (_, i) => i);
      const bad = mine.find((i) => i >= shardCount);
      if (bad !== undefined)
        throw new ShardListError(`--shards: shard ${bad} does not exist (the index has ${shardCount}, 0 to ${shardCount - 1})`);
      fence = await ShardFence.take({
        repo: repos.shardWriters,
        owner: `indexer-${hostname()}-${process.pid}`,
        shards: mine,
        leaseMs: config.shardLeaseS * 1000,
        log: log.child({ part: 'indexer' }),
      });
    }
    // Persisted engine segments (beside a local index, in a table of a bucket's): the writer publishes them, so it keeps
    // postings even when it serves no search; with search threads this process builds or loads them once in shared
    // memory for all of its threads.
    const segments = config.textPostings && config.engineSegments;
    const shareEngine = segments && searchThreads > 0;
    // Host ids from the state database, given only to the writer.
    if (role === 'searcher') {
      const held = (served = await openSearcherShards({
        location: readerLocation,
        count: shardCount,
        only: opts.shards,
        embedder,
        log,
        followHostsMs,
        textEngine: config.textPostings,
        engineSegments: config.textPostings && config.engineSegments,
        waitForWriterMs: config.indexWaitForWriterS * 1000,
        rowCacheBytes: Math.floor(rowCacheBytes / Math.max(1, opts.shards?.length ?? shardCount)),
        ...(config.snippetMb !== undefined ? { snippetBytes: config.snippetMb * 2 ** 20 } : {}),
      }));
      index = ShardedIndex.ofShards([...held.values()], location);
    } else if (overSearchers) {
      // The index is the searchers': this replica opens none of it, it asks one live searcher per shard and merges.
      const dir = (directory = new SearcherDirectory(() => repos.searchers.live(config.searcherTtlMs), shardCount));
      const sources: ShardSource[] = Array.from(
        { length: shardCount },
        (_, shard) => new RemoteShard({ shard, directory: dir, embedder, secret: config.fleetSecret!, timeoutMs: config.shardDeadlineMs }),
      );
      await dir.refresh().catch((err: unknown) => log.warn({ err: (err as Error).name }, 'searchers: the registry could not be read'));
      dir.start(config.searcherHeartbeatMs);
      index = ShardedIndex.over(sources, location, { deadlineMs: config.shardDeadlineMs, onClose: async () => dir.stop() });
    } else
      index = await openIndex({
        shards: config.indexShards,
        location: writesIndex ? location : readerLocation,
        embedder,
        log,
        ...(writesIndex ? { hostIds: repos.hostIds } : { followHostsMs }),
        // Postings where search is served (crawler and indexer roles answer no query) and where segments are published
        // (the writer). With search threads: here only when shared with them (one build), else each thread holds its own.
        textEngine: config.textPostings && ((servesSearch && (searchThreads === 0 || shareEngine)) || (writesIndex && segments)),
        engineSegments: segments,
        shareEngine,
        writes: writesIndex,
        ...(fence && opts.shards ? { onlyShards: opts.shards } : {}),
        // The writer gives the passages vectors of the configured model when they have none, or another's (index/engines/lance/reembed.ts).
        reembed: writesIndex && config.reembed === 'background',
        waitForWriterMs: config.indexWaitForWriterS * 1000,
        rowCacheBytes: searchThreads > 0 ? Math.min(rowCacheBytes, 64 * 2 ** 20) : rowCacheBytes,
        ...(config.snippetMb !== undefined ? { snippetBytes: config.snippetMb * 2 ** 20 } : {}),
      });
    if (searchThreads > 0 && index instanceof PassageIndex) {
      const one = index;
      pool = new SearchPool({
        size: searchThreads,
        config,
        location: { ...location, readConsistencyS: undefined },
        embedder,
        rowCacheBytes: Math.floor(rowCacheBytes / searchThreads),
        log: log.child({ part: 'search-pool' }),
        commits: (fn) => one.onPassageCommit(fn),
        ...(shareEngine
          ? {
              engineImages: { current: () => one.engineImage(), subscribe: (fn) => one.onEngineImage(fn) },
              hosts: () => one.hostSnapshot(),
            }
          : {}),
      });
    }
  } catch (err) {
    // A refused index location (bad path, unreachable object store) must not leave the state stores open.
    // (The pool is started last: nothing after it throws.)
    if (opts.embedder === undefined) await embedder?.close();
    await fence?.release().catch(() => undefined);
    await repos.close();
    db.close();
    throw err;
  }
  const documents = new Documents(db);
  const entities = new EntityStore(db);
  // Entities are the repositories' (PostgreSQL with SVC_DATABASE_URL: shared by the fleet); the crawler's entity
  // sink writes there too, so every replica answers svc_entities from the same store.
  const entityRepo = repos.entities ?? sqliteEntities(entities);
  // A crawler worker hands its pages to the indexer through the outbox; in `all` the crawler writes the index
  // itself (one process: the outbox would only add a round trip; docs/deploy.md).
  const crawler =
    config.crawl && (role === 'all' || role === 'crawler')
      ? createCrawler({
          config,
          repos,
          sink: role === 'crawler' ? new OutboxSink(repos.outbox) : index,
          entities: entityRepo,
          log: log.child({ part: 'crawler' }),
          ...(opts.crawlLeaseMs !== undefined ? { frontier: { leaseMs: opts.crawlLeaseMs } } : {}),
        })
      : null;
  const drainer =
    role === 'indexer'
      ? new OutboxDrainer({
          outbox: repos.outbox,
          sink: index,
          log: log.child({ part: 'indexer' }),
          ...(opts.crawlLeaseMs !== undefined ? { leaseMs: opts.crawlLeaseMs } : {}),
          // Only its shards' pages, and never a commit once its lease on them is gone.
          ...(opts.shards ? { shards: { count: shardCount, mine: opts.shards } } : {}),
          ...(fence ? { beforeWrite: () => fence.check() } : {}),
        })
      : null;
  const processor = crawler
    ? new RequestProcessor({
        requests: repos.requests,
        documents: repos.documents,
        crawler,
        now: () => now().getTime(),
        log: log.child({ part: 'requests' }),
      })
    : null;
  const resolver = createResolver({ pins: config.resolve, ...(opts.lookup ? { lookup: opts.lookup } : {}) });
  // Where each tool runs is the tool's own word (`runsOn`); the pool is the executor of `search-thread` tools.
  const deps: ServiceDeps = { config, repos, log, now, index, entities: entityRepo, crawler, resolver, executor: pool ?? inlineExecutor };
  let closed = false;
  let started = false;
  let priority: IndexThreadPriority | null = null;
  // A searcher registers its shards and address, renewed every heartbeat (an entry older than the TTL is dead).
  const registration =
    served && opts.advertiseUrl !== undefined
      ? {
          id: randomUUID(),
          url: config.searcherUrl ?? opts.advertiseUrl,
          shards: [...served.keys()],
          shardCount,
          index: indexLocation(config).label,
        }
      : null;
  let heartbeat: NodeJS.Timeout | null = null;
  const beat = (): Promise<void> =>
    registration
      ? repos.searchers
          .heartbeat(registration)
          .catch((err: unknown) => log.warn({ err: (err as Error).name }, 'searcher: heartbeat failed'))
      : Promise.resolve();
  /** Shard coverage for /readyz and /metrics on an api replica over searchers: live searchers per shard. */
  const shardCoverage = (): { live: number[]; covered: number } | null => {
    if (!directory) return null;
    const live = directory.liveCounts();
    return { live, covered: live.filter((n) => n > 0).length };
  };
  // Over searchers, a scrape or a probe reads the shards that answer (a missing shard is what coverage says).
  const indexRead = <T>(fn: () => Promise<T>): Promise<T> =>
    index instanceof ShardedIndex && index.remote ? index.covered(fn).then((r) => r.value) : fn();
  // Search threads opened the index before the re-embedding finished: new ones read the new vectors.
  const unwatch = index.onVectorsReady((e) => {
    if (!pool) return;
    pool.renew().then(
      () => log.info({ model: e.modelId }, 'search threads replaced: they read the new vectors'),
      (err: unknown) => log.warn({ err }, 'search threads: replacing them after the re-embedding failed'),
    );
  });
  return {
    deps,
    keys: repos.keys,
    usage: repos.usage,
    local: { db, documents, entities },
    // A searcher serves no tool: its shards are only the api replicas' to ask, on the internal route.
    tools: role === 'searcher' ? [] : (opts.tools ?? allTools),
    searchPool: pool,
    version: VERSION,
    mountExtra: (router) => {
      if (served) mountShardRoute(router, { shards: served, secret: config.fleetSecret });
      else mountWebPages(router, { config });
    },
    // The shard calls of a query skip the app's middleware; what they leave (wrong secret, shard, method) it answers.
    plainRoutes: (() => {
      const r = served ? shardPlainRoute({ shards: served, secret: config.fleetSecret }) : null;
      return r ? [r] : [];
    })(),
    crawler,
    ...(fence ? { failed: fence.lost } : {}),
    start: () => {
      if (started || closed) return;
      started = true;
      // Index maintenance yields the cores to the threads answering requests (index/serving/thread-priority.ts).
      priority = new IndexThreadPriority(config.indexThreadNice).start(); // nice 0: does nothing
      crawler?.start();
      processor?.start();
      drainer?.start();
      if (registration) {
        void beat();
        heartbeat = setInterval(() => void beat(), config.searcherHeartbeatMs);
        heartbeat.unref();
      }
      // At indexing priority (the embedder serves queries first), a line in the log every SVC_PROGRESS_MS; the pass
      // logs its own summary when it ends.
      let lastLog = -Infinity;
      index.startReembed({
        onProgress: (p) => {
          if (performance.now() - lastLog < config.progressMs) return;
          lastLog = performance.now();
          log.info({ reembed: p }, `index: re-embedding ${reembedText({ ...p, state: 'running' })}`);
        },
      });
    },
    readiness: async () => {
      const checks: Record<string, string> = {};
      let ok = true;
      try {
        await repos.ping();
        checks.state = 'ok';
      } catch {
        checks.state = 'unavailable';
        ok = false;
      }
      checks.state_backend = repos.backend;
      try {
        // Bounded as a request's reads are: a stalled store makes the process not ready, it does not hang the probe.
        const { stats, version } = await withIndexDeadline(indexReadDeadlineMs(config), () =>
          indexRead(async () => ({ stats: await index.stats(), version: await index.version() })),
        );
        checks.index = 'ok';
        checks.ranking = stats.rankingMode;
        checks.index_version = String(version);
        checks.embedder = stats.embedder ? `${stats.embedder.kind}:${stats.embedder.modelId}` : 'none (BM25 only)';
        if (modelChoice?.notice && embedder) checks.embedder_default = modelChoice.notice;
        // A re-embedding in progress is reported, never a failed readiness: BM25 serves meanwhile.
        const re = await index.reembedProgress();
        if (re) checks.reembedding = reembedText(re);
      } catch {
        checks.index = 'unavailable';
        ok = false;
      }
      checks.role = role;
      if (fence) {
        // The indexer's shards: not ready once it lost them (it stops).
        checks.shards = `${(opts.shards ?? []).join(',') || 'all'} of ${shardCount}${fence.lost.aborted ? ', lost' : ''}`;
        if (fence.lost.aborted) ok = false;
      }
      if (served) checks.shards_served = `${[...served.keys()].join(',')} of ${shardCount}`;
      const cov = shardCoverage();
      if (cov) {
        // Partial answers are still answers: not ready only when no shard has a live searcher.
        checks.shards = `${cov.covered}/${cov.live.length} shards have a live searcher (per shard: ${cov.live.join(',')})`;
        if (cov.covered === 0) ok = false;
      }
      if (crawler) {
        try {
          const c = await repos.frontier.counts();
          checks.frontier = `${c.queued} queued, ${c.leased} leased, ${c.retrying} retrying, ${c.dead} dead`;
        } catch {
          checks.frontier = 'unavailable';
          ok = false;
        }
      }
      if (role !== 'all' && role !== 'api') {
        try {
          const o = await repos.outbox.stats();
          checks.outbox = `${o.pending} pending, ${o.leased} leased, lag ${o.oldestAt === null ? 0 : Math.max(0, Date.now() - o.oldestAt)} ms`;
        } catch {
          checks.outbox = 'unavailable';
          ok = false;
        }
      }
      return { ok: ok && !closed, checks };
    },
    role,
    // /metrics (rest/metrics.ts): what docs/deploy.md says each role reports. The frontier and outbox are the
    // fleet's shared state, so only the roles that work them report them (one crawler's scrape is the fleet's depth).
    gauges: async () => {
      const families: MetricFamily[] = [];
      const gauge = (name: string, help: string, samples: MetricFamily['samples']): void => {
        const at = families.findIndex((f) => f.name === name);
        // The pool owner's own postings (shared with its threads) beside the threads': one family, its samples labelled.
        if (at >= 0) {
          const own = samples.map((s) => ({ ...s, labels: { ...s.labels, thread: 'owner' } }));
          families[at] = { ...families[at]!, samples: [...families[at]!.samples, ...own] };
        } else families.push({ name, help, type: 'gauge', samples });
      };
      const cov = shardCoverage();
      if (cov) {
        gauge('svc_shards_total', 'Shards of the index this api replica asks searchers for.', [{ value: cov.live.length }]);
        gauge('svc_shards_covered', 'Shards with at least one live searcher (the rest are left out of answers: partial_results).', [
          { value: cov.covered },
        ]);
        gauge(
          'svc_shard_live_searchers',
          'Live searchers (heartbeat within SVC_SEARCHER_TTL_MS) per shard.',
          cov.live.map((value, shard) => ({ labels: { shard: String(shard) }, value })),
        );
      }
      const { st, version } = await withIndexDeadline(indexReadDeadlineMs(config), () =>
        indexRead(async () => ({ st: await index.stats(), version: await index.version() })),
      );
      gauge('svc_index_passages', 'Passages in the index this process reads.', [{ value: st.passages }]);
      gauge('svc_index_pages', 'Pages in the index this process reads.', [{ value: st.pages }]);
      gauge('svc_index_vectors', 'Passages with an embedding.', [{ value: st.vectors }]);
      gauge('svc_index_version', 'Version of the passages table this process reads (one per index commit).', [{ value: version }]);
      if (pool) {
        gauge('svc_search_threads', 'Search threads ready (svc_search and svc_context run there; SVC_SEARCH_THREADS).', [
          { value: pool.ready },
        ]);
        const threads = await pool.stats();
        const perThread: [string, string, (s: (typeof threads)[number]) => number | null][] = [
          [
            'svc_text_postings_version',
            'Index version the in-process BM25 postings are at (-1: not built yet; behind: queries wait for them)',
            (s) => s.postingsVersion,
          ],
          ['svc_text_postings_passages', 'Live passages in the in-process BM25 postings', (s) => s.postingsLive],
          ['svc_flat_vectors_rows', 'Passage vectors held in memory for the vector arm', (s) => s.flatVectors],
          ['svc_search_thread_row_cache_bytes', 'Estimated bytes of result rows held in memory', (s) => s.rowCacheBytes],
          ['svc_search_thread_snippet_passages', 'Passages whose snippet text is held in memory', (s) => s.snippetPassages],
          ['svc_search_thread_snippet_bytes', "Bytes of the snippet store (passages' snippet text in memory)", (s) => s.snippetBytes],
          ['svc_search_thread_heap_bytes', 'JS heap in use', (s) => s.heapUsedBytes],
          ['svc_text_engine_builds', 'Full builds (table scans) of the in-process postings', (s) => s.engineBuilds],
          ['svc_text_engine_loads', 'Engine images the in-process postings were loaded from', (s) => s.engineLoads],
          [
            'svc_text_engine_shared_bytes',
            'Bytes of the shared engine image the postings are views of (0: none, or not shared)',
            (s) => s.engineSharedBytes,
          ],
          [
            'svc_text_engine_load_work',
            'Terms and rows the postings load put in maps or copied (0: read in place from the engine image)',
            (s) => s.engineLoadWork,
          ],
          [
            'svc_search_thread_page_rows_read_at_open',
            "Rows of the pages table read at the thread's start (0: hosts and languages taken from this process's index)",
            (s) => s.pageRowsAtOpen,
          ],
          [
            'svc_search_thread_heap_after_major_gc_bytes',
            'JS heap right after the latest major collection (0: none yet)',
            (s) => s.heapAfterMajorGcBytes,
          ],
        ];
        for (const [name, help, pick] of perThread) {
          gauge(
            name,
            `${help}, per search thread.`,
            threads.map((s) => ({ labels: { thread: String(s.slot) }, value: pick(s) ?? -1 })),
          );
        }
      }
      const tp = index.textPostingsStats();
      if (tp) {
        gauge(
          'svc_text_postings_version',
          'Index version the in-process BM25 postings are at (-1: not built yet; behind: queries wait for them).',
          [{ value: tp.version ?? -1 }],
        );
        gauge('svc_text_postings_passages', 'Live passages in the in-process BM25 postings.', [{ value: tp.live }]);
        gauge('svc_flat_vectors_rows', 'Passage vectors held in memory for the vector arm (a small index; 0: LanceDB answers it).', [
          { value: tp.vectors },
        ]);
        gauge('svc_snippet_passages', 'Passages whose snippet text is held in memory (their result rows are read from it).', [
          { value: tp.snippets.docs },
        ]);
        gauge('svc_snippet_bytes', "Bytes of the snippet store (the passages' snippet text in memory).", [{ value: tp.snippets.bytes }]);
        gauge('svc_text_engine_builds', 'Full builds (table scans) of the in-process postings since start.', [{ value: tp.syncs.builds }]);
        gauge('svc_text_engine_loads', 'Engine images (persisted segments) the in-process postings were loaded from since start.', [
          { value: tp.syncs.loads },
        ]);
        gauge('svc_text_engine_images', 'Engine images made since start, and of those the segments published (the writer).', [
          { labels: { kind: 'made' }, value: tp.images.made },
          { labels: { kind: 'published' }, value: tp.images.written },
          { labels: { kind: 'deltas' }, value: tp.images.deltas },
        ]);
        gauge('svc_text_engine_shared_bytes', 'Bytes of the shared engine image the postings are views of (0: none, or not shared).', [
          { value: tp.image?.shared ? tp.image.bytes : 0 },
        ]);
        gauge(
          'svc_text_engine_load_work',
          'Terms and rows the postings load put in maps or copied (0: read in place from the engine image).',
          [{ value: tp.loadWork }],
        );
        // The writer's publication lag: what a reader that opens now (a restarted replica) must catch up from the table.
        // One sample per shard this process writes (labelled when it holds more than one).
        const held = index instanceof ShardedIndex ? index.shards : [index];
        const pubs = held.map((s, i) => ({
          labels: held.length > 1 && index instanceof ShardedIndex ? { shard: String(index.heldShards[i]) } : undefined,
          p: s.textPostingsStats()?.publication,
        }));
        const writer = pubs.filter((x) => x.p);
        if (writer.length > 0) {
          gauge(
            'svc_text_engine_published_version',
            'Index version of the newest engine segment this writer published (-1: none yet).',
            writer.map((x) => ({ ...(x.labels ? { labels: x.labels } : {}), value: x.p!.version ?? -1 })),
          );
          gauge(
            'svc_text_engine_unpublished_seconds',
            "Seconds the writer's postings have held changes no published engine segment has (0: all published).",
            writer.map((x) => ({
              ...(x.labels ? { labels: x.labels } : {}),
              value: x.p!.unpublishedSince === null ? 0 : Math.max(0, Date.now() - x.p!.unpublishedSince) / 1000,
            })),
          );
        }
      }
      const re = await index.reembedProgress();
      gauge(
        'svc_reembed_pending',
        'Whether the passages are being given vectors of the configured model (1), the vector arm off meanwhile.',
        [{ value: re ? 1 : 0 }],
      );
      if (re) {
        gauge('svc_reembed_passages_done', 'Passages given a vector of the configured model so far.', [{ value: re.done }]);
        gauge('svc_reembed_passages_total', 'Passages the re-embedding covers in all (an estimate while pages are written).', [
          { value: re.total },
        ]);
        gauge('svc_reembed_passages_per_second', 'Re-embedding rate in this process (0: not running here, or no batch yet).', [
          { value: re.ratePerS ?? 0 },
        ]);
        gauge('svc_reembed_eta_seconds', 'Seconds left at that rate (-1: unknown).', [{ value: re.etaS ?? -1 }]);
      }
      const rc = index.rowCacheStats();
      gauge('svc_row_cache_rows', 'Result rows held in memory (a small index: all of them; else the recently read).', [{ value: rc.rows }]);
      gauge('svc_row_cache_bytes', 'Estimated bytes of the result rows held in memory.', [{ value: rc.bytes }]);
      if (crawler) {
        const c = await repos.frontier.counts();
        gauge(
          'svc_frontier_items',
          'Frontier URLs by state (fleet-wide when the state is shared).',
          Object.entries(c).map(([state, value]) => ({ labels: { state }, value })),
        );
        gauge('svc_frontier_leases', 'Frontier URLs leased to a crawler worker now.', [{ value: c.leased }]);
        const cs = await crawler.stats();
        families.push({
          name: 'svc_crawl_items_total',
          help: "This process's crawled items by outcome since it started.",
          type: 'counter',
          samples: (['fetched', 'indexed', 'excluded', 'errors'] as const).map((outcome) => ({ labels: { outcome }, value: cs[outcome] })),
        });
        gauge('svc_crawl_in_flight', 'Items this process is fetching or extracting now.', [{ value: cs.inFlight }]);
      }
      if (role === 'crawler' || role === 'indexer') {
        const o = await repos.outbox.stats();
        gauge('svc_outbox_pending', 'Extracted pages waiting for the indexer.', [{ value: o.pending }]);
        gauge('svc_outbox_leased', 'Extracted pages claimed by the indexer, not yet written.', [{ value: o.leased }]);
        gauge('svc_outbox_lag_seconds', 'Age of the oldest page waiting in the outbox (0 when empty).', [
          { value: o.oldestAt === null ? 0 : Math.max(0, Date.now() - o.oldestAt) / 1000 },
        ]);
      }
      return families;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      priority?.stop();
      unwatch();
      if (heartbeat) clearInterval(heartbeat);
      if (registration) await repos.searchers.remove(registration.id).catch(() => undefined);
      await processor?.stop();
      await crawler?.stop();
      await drainer?.stop();
      await pool?.close();
      await index.close();
      await embedder?.close();
      await fence?.release().catch((err: unknown) => log.warn({ err }, 'indexer: releasing its shards failed (they lapse)'));
      await repos.close();
      db.close();
    },
  };
}

/** A re-embedding's progress as one line (/readyz, the log). */
export function reembedText(p: ReembedProgress): string {
  const pct = p.total > 0 ? Math.floor((100 * p.done) / p.total) : 100;
  const rate = p.ratePerS !== null ? `, ${p.ratePerS.toFixed(1)} passages/s` : '';
  const eta = p.etaS !== null ? `, about ${p.etaS} s left` : '';
  return `${p.state} with ${p.modelId}: ${p.done}/${p.total} passages (${pct}%)${rate}${eta}; BM25 serves until every passage has its vector`;
}

export interface RunningServer {
  readonly server: Server;
  /** Base URL, e.g. http://127.0.0.1:8787 */
  readonly url: string;
  /** Stops accepting, lets in-flight requests finish (bounded), then resolves. */
  close(): Promise<void>;
}

/** HTTP timeouts (tests shorten them). */
export interface ServerTimeouts {
  /** Whole request (headers and body) must arrive within this. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** Headers must arrive within this. @default 10000 */
  readonly headersTimeoutMs?: number;
  /** How often Node checks those two timeouts. @default 1000 */
  readonly checkIntervalMs?: number;
}

/** A server listening before the services exist: it answers as a starting process until {@link Listening.serve}. */
export interface Listening extends RunningServer {
  /** Hands every request from now on to the service's app (REST, /mcp, pages, health). */
  serve(services: Services): void;
}

/**
 * Listens on the configured host and port at once, answering as a starting process (rest/starting.ts: /healthz 200,
 * /readyz 503 with `waitingFor()`, the rest 503) until `serve` hands it the app: liveness from the first second.
 */
export async function listen(config: Config, o: { role: Role; waitingFor: () => string; timeouts?: ServerTimeouts }): Promise<Listening> {
  const starting = startingHandler({
    bindHost: config.host,
    allowedHosts: config.allowedHosts,
    allowedOrigins: config.allowedOrigins,
    role: o.role,
    waitingFor: o.waitingFor,
  });
  const timeouts = o.timeouts ?? {};
  // A missing Host is answered by the app with problem+json (rest/served-host.ts), not by Node with an empty 400.
  const server = createServer({ connectionsCheckingInterval: timeouts.checkIntervalMs ?? 1000, requireHostHeader: false }, starting);
  server.requestTimeout = timeouts.requestTimeoutMs ?? 30_000;
  server.headersTimeout = timeouts.headersTimeoutMs ?? 10_000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${host}:${addr.port}`,
    serve: (services) => {
      server.removeListener('request', starting);
      server.on('request', createHttpHandler(services));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      }),
  };
}

/** Starts the HTTP server (REST, /mcp, pages, health) on the configured host and port, serving `services` at once. */
export async function startServer(services: Services, timeouts: ServerTimeouts = {}): Promise<RunningServer> {
  const l = await listen(services.deps.config, { role: (services.role ?? 'all') as Role, waitingFor: () => 'nothing', timeouts });
  l.serve(services);
  return l;
}
