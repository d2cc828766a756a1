import { join, resolve } from 'node:path';
import { z } from 'zod';

const bool = z
  .union([z.boolean(), z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', ''])])
  .transform((v) => (typeof v === 'boolean' ? v : ['1', 'true', 'yes', 'on'].includes(v)));

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const list = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0));

/** Like `list`, but separated by white space or ';' (curl-style pins carry commas: HOST:PORT:ADDR1,ADDR2). */
const pinList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(/[\s;]+/)).map((s) => s.trim()).filter((s) => s.length > 0));

/**
 * The one configuration schema. Each key is bound to an `SVC_*` environment variable (see `envBindings`).
 * Precedence: CLI flag > environment > default.
 */
/** Ranking settings: `auto` = the best the index offers (hybrid when vectors exist); the others force one arm or both. */
export const RANKING_SETTINGS = ['auto', 'bm25', 'vector', 'hybrid'] as const;
export type RankingSetting = (typeof RANKING_SETTINGS)[number];

export const configSchema = z.object({
  /** Where LanceDB tables and the SQLite state file live. @default "./data" */
  dataDir: z.string().min(1).default('./data'),
  /** Listen address. @default "127.0.0.1" */
  host: z.string().min(1).default('127.0.0.1'),
  /** Listen port (0 = any free port). @default 8787 */
  port: int(0, 65535).default(8787),
  /** Folder holding embedding models in transformers.js layout (e.g. all-MiniLM-L6-v2/). None → BM25 only. */
  modelDir: z.string().min(1).optional(),
  /**
   * Embedding model: a folder name inside modelDir with a profile in index/serving/model-profiles.ts (`all-MiniLM-L6-v2`,
   * English; `multilingual-e5-small`, about 100 languages in one space), or a `<model>-<variant>` folder of one of them
   * (`multilingual-e5-small-int8`, bench/quantize-e5.sh). Another name is refused at start. Unset: the default, except
   * that an index whose vectors came from another model the folder holds keeps it (main.ts `chooseModel`).
   * @default "multilingual-e5-small"
   */
  modelName: z.string().min(1).optional(),
  /** Threads the embedder's ONNX runtime may use. @default the machine's cores */
  embedThreads: int(1, 64).optional(),
  /**
   * Embedding weights: q8 (int8 `model_quantized.onnx`), fp32 (`model.onnx`) or q4 (`model_q4.onnx`), among those
   * the model's profile lists. @default the first of those the folder's onnx/ holds (q8 for all-MiniLM-L6-v2, q4 for
   * multilingual-e5-small, q8 for multilingual-e5-small-int8)
   */
  embedDtype: z.enum(['q8', 'fp32', 'q4']).optional(),
  /**
   * What the index's writer does when the configured model is not the one of the stored vectors (or there are none):
   * `background` gives every passage a vector of the model while it serves (the vector arm starts once all have one);
   * `manual` leaves the vectors alone until `svc reindex --vectors` (ranking stays BM25, with a warning). @default "background"
   */
  reembed: z.enum(['background', 'manual']).default('background'),
  /** Milliseconds between the progress lines `svc ingest`, `svc crawl` and `svc reindex` print when stdout is not a terminal. @default 5000 */
  progressMs: int(0, 3_600_000).default(5000),
  /** Which retrieval arms svc_search and svc_context use (operators' setting; evaluation compares arms with it). @default "auto" */
  ranking: z.enum(RANKING_SETTINGS).default('auto'),
  /** Serve svc_images and GET /api/v1/images. @default false */
  images: bool.default(false),
  /** Origins allowed to call /mcp from a browser (exact match, e.g. "http://localhost:3000"). */
  allowedOrigins: list.default([]),
  /**
   * Host names (optionally `name:port`) this service answers to, besides the loopback names and the bind address.
   * Any other Host header gets 403 on every route (DNS-rebinding protection). Deployments behind a name set it,
   * e.g. "search.example.org". @default []
   */
  allowedHosts: list.default([]),
  /** Default per-minute quota of a new key. @default 60 */
  keyPerMinute: int(1, 1_000_000).default(60),
  /** Default per-day quota of a new key. @default 10000 */
  keyPerDay: int(1, 100_000_000).default(10_000),
  /** URL submissions a key may make per day. @default 100 */
  submissionsPerDay: int(0, 1_000_000).default(100),
  /** Largest accepted request body in bytes (REST and /mcp). @default 65536 */
  bodyLimit: int(1024, 10 * 1024 * 1024).default(64 * 1024),
  /** pino level. @default "info" */
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Run the crawler inside `svc serve`. @default true */
  crawl: bool.default(true),
  /** curl-style HOST:PORT:ADDR[,ADDR…] name pins for the crawler, separated by spaces or ';' in SVC_RESOLVE
   * (operators and tests only; never via the API). */
  resolve: pinList.default([]),
  /** Let the crawler reach loopback addresses (the local test web). Never settable through the API. @default false */
  crawlAllowLoopback: bool.default(false),
  /** Hosts fetched at once across the crawler. @default 8 */
  crawlConcurrency: int(1, 256).default(8),
  /** Minimum gap between two requests to one origin, in ms. @default 1000 */
  crawlGapMs: int(0, 3_600_000).default(1000),
  /** Fast-lane URL submissions per verified webmaster property and UTC day (planned, not exposed: docs/webmaster.md). @default 20 */
  webmasterFastLanePerDay: int(1, 100_000).default(20),
  /** Largest decoded body the crawler reads, in bytes. @default 5 MiB */
  crawlMaxBytes: int(1024, 100 * 1024 * 1024).default(5 * 1024 * 1024),
  /**
   * The address people reach this deployment at (e.g. "https://search.example.ca"): the crawler's User-Agent points
   * at its /webmasters page. @default "http://<host>:<port>", the listen address
   */
  publicUrl: z.string().url().optional(),
  /** Page the crawler's User-Agent points at. @default "<publicUrl>/webmasters" */
  crawlerInfoUrl: z.string().url().optional(),
  /**
   * Shared state on PostgreSQL (`postgres://user:password@host:5432/db`) instead of the SQLite file in dataDir.
   * Read by `svc migrate` and the state repositories (state/repos/); may carry a password, so it is never logged.
   * @default unset (embedded SQLite)
   */
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//i, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  /**
   * PostgreSQL only: statement timeout; the client gives up one second later (a stalled server cancels nothing).
   * Requests then get 503 `unavailable`; crawler and indexer back off. Migrations are not bounded.
   * @default 3000
   */
  databaseStatementTimeoutMs: int(100, 3_600_000).default(3000),
  /**
   * PostgreSQL only: opening a connection, or waiting for a free one of the pool, gives up after this long (503
   * `unavailable` with Retry-After). @default 3000
   */
  databaseConnectTimeoutMs: int(100, 600_000).default(3000),
  /**
   * Where the passage index lives: a local folder, or `s3://bucket/prefix` on S3-compatible object storage (then the
   * s3* keys say how to reach it; index/engines/lance/location.ts). Every role of a fleet names the same location.
   * @default "<dataDir>/lance"
   */
  indexUri: z.string().min(1).optional(),
  /**
   * Endpoint of an S3-compatible store (e.g. "http://127.0.0.1:8333" for SeaweedFS or MinIO); unset = AWS S3 itself.
   * Falls back to AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL.
   */
  s3Endpoint: z.string().url().optional(),
  /** Region of the bucket. Falls back to AWS_REGION, then AWS_DEFAULT_REGION. @default "us-east-1" */
  s3Region: z.string().min(1).optional(),
  /** Access key id for an s3:// index. Falls back to AWS_ACCESS_KEY_ID. Never logged. */
  s3AccessKeyId: z.string().min(1).optional(),
  /** Secret access key for an s3:// index. Falls back to AWS_SECRET_ACCESS_KEY. Never logged. */
  s3SecretAccessKey: z.string().min(1).optional(),
  /** Session token of temporary credentials. Falls back to AWS_SESSION_TOKEN. Never logged. */
  s3SessionToken: z.string().min(1).optional(),
  /**
   * Allow a plain-http endpoint that is not on loopback (credentials and data then cross the network unencrypted).
   * A loopback http endpoint is always allowed. @default false
   */
  s3AllowHttp: bool.default(false),
  /**
   * Virtual-hosted-style requests (bucket.endpoint/key) instead of path-style (endpoint/bucket/key).
   * @default true for AWS S3 (no endpoint), false with an endpoint (SeaweedFS, MinIO and most others want path-style)
   */
  s3VirtualHosted: bool.optional(),
  /**
   * How stale, in seconds, a reader's view of the index may get (LanceDB's read consistency interval); 0 = check on
   * every read. @default 5 for an s3:// index; unset for a local folder (one process writes and reads it)
   */
  indexReadConsistencyS: z.coerce.number().min(0).max(3600).optional(),
  /**
   * Seconds a non-writing process waits at start for the writer to create the index's tables before creating them
   * itself, since a concurrent create can overwrite the writer's (index/engines/lance/open-tables.ts). @default 30
   */
  indexWaitForWriterS: z.coerce.number().min(0).max(3600).default(30),
  /**
   * Deadline of a request's reads of the index (svc_search, svc_context, svc_page, svc_images): past it the request
   * gets 503 `unavailable` with Retry-After while the read finishes or fails in the background (/readyz: not ready;
   * /metrics: svc_state_up 0); 0 = none.
   * @default 4000 for an s3:// index; 0 for a local folder
   */
  indexReadTimeoutMs: z.coerce.number().int().min(0).max(600_000).optional(),
  /**
   * Shards of a new index (index/shards/): its pages split by a stable hash of their URL into this many datasets
   * under the index location, each with its own engine, answering exactly as one. Fixed when the index is created and
   * stored with it: an existing index keeps its own count (a different value here is logged and ignored). In one
   * process (role `all`) a sharded index is searched on the HTTP thread (no search threads yet). @default 1
   */
  indexShards: int(1, 64).optional(),
  /**
   * Lease of an indexer on its shards (`svc serve --role indexer`), renewed every third of it while it runs: a killed
   * indexer's shards can be taken by another after at most this long, and an indexer that could not renew for this
   * long stops writing (crawler/shard-fence.ts). @default 20
   */
  shardLeaseS: z.coerce.number().min(1).max(3600).default(20),
  /**
   * Build the in-process BM25 postings when a search-serving process opens the index; `false` defers the build to the
   * first search (memory cost: docs/bench-index.md). @default true
   */
  textPostings: bool.default(true),
  /**
   * Persisted engine segments (index/engines/lance/engine-segments.ts, a local index only): the writer publishes the postings as
   * segments beside the index and a reader loads them instead of scanning the table. @default true
   */
  engineSegments: bool.default(true),
  /**
   * MiB of whole result rows kept in memory (index/engines/memory/row-cache.ts): an index whose rows fit is served from memory (its
   * rows are read in while the postings are built), a larger one keeps the rows its results read, least recently used
   * out. 0 disables. @default 1/32 of the machine's memory, at least 64 and at most 1024
   */
  rowCacheMb: int(0, 65_536).optional(),
  /**
   * MiB of passages' snippet text kept in memory per reader with postings, so result rows come from memory
   * (index/engines/memory/snippet-store.ts). 0 disables. @default 1/32 of machine memory, clamped to 64–1024
   */
  snippetMb: int(0, 65_536).optional(),
  /**
   * Worker threads that run svc_search and svc_context (tools/search-pool.ts), each with its own reader of the index
   * (its own postings and row cache: memory grows with each), in the processes that serve search (roles all and api).
   * 0 runs them on the HTTP thread. @default the machine's cores, at most 4, when it has 2 or more; else 0
   */
  searchThreads: int(0, 64).optional(),
  /**
   * Nice value given to LanceDB's native threads (its CPU pool and tokio workers) in `svc serve`, so index
   * maintenance (an `optimize` can take both cores for tens of seconds at 1M passages) runs on what the threads answering
   * requests leave (index/serving/thread-priority.ts). Linux only; 0 leaves them at the process's own priority. @default 10
   */
  indexThreadNice: int(0, 19).default(10),
  /**
   * Shared secret of a fleet's internal routes (a searcher's shard route, index/shards/shard-wire.ts): sent by the
   * `api` replicas, compared in constant time. Unset: the internal route does not exist (404). Never logged.
   */
  fleetSecret: z.string().min(16).optional(),
  /** The address other processes reach this searcher at (`http://host:port`), registered with its shards. */
  searcherUrl: z.string().url().optional(),
  /** How often a searcher renews its registry entry (ms). @default 2000 */
  searcherHeartbeatMs: int(100, 600_000).default(2000),
  /** A registry entry older than this (ms) is a dead searcher: no query is sent to it. @default 10000 */
  searcherTtlMs: int(200, 3_600_000).default(10_000),
  /**
   * Per-shard deadline of a query (ms) on an `api` replica that asks searchers: the time a shard's calls of one query
   * may take in all; past it (or with no live searcher) the shard is left out and the answer carries `partial_results`.
   * @default 2000
   */
  shardDeadlineMs: int(10, 600_000).default(2000),
  /**
   * Where an `api` replica reads a sharded index: `local` opens every shard itself; `searchers` asks the registered
   * searcher processes; `auto` asks them when any is registered at start. @default auto
   */
  shardSource: z.enum(['auto', 'local', 'searchers']).default('auto'),
});

/** The parsed configuration; `crawlerInfoUrl` is always resolved (see loadConfig). */
export type Config = Omit<z.output<typeof configSchema>, 'crawlerInfoUrl' | 'indexUri'> & {
  readonly crawlerInfoUrl: string;
  /** Always resolved: an absolute folder, or an `s3://` URI. */
  readonly indexUri: string;
};
export type ConfigInput = z.input<typeof configSchema>;

/** Environment variable for each key. */
export const envBindings = {
  dataDir: 'SVC_DATA_DIR',
  host: 'SVC_HOST',
  port: 'SVC_PORT',
  modelDir: 'SVC_MODEL_DIR',
  modelName: 'SVC_MODEL',
  embedThreads: 'SVC_EMBED_THREADS',
  embedDtype: 'SVC_EMBED_DTYPE',
  ranking: 'SVC_RANKING',
  reembed: 'SVC_REEMBED',
  progressMs: 'SVC_PROGRESS_MS',
  images: 'SVC_IMAGES',
  allowedOrigins: 'SVC_ALLOWED_ORIGINS',
  allowedHosts: 'SVC_ALLOWED_HOSTS',
  keyPerMinute: 'SVC_KEY_PER_MINUTE',
  keyPerDay: 'SVC_KEY_PER_DAY',
  submissionsPerDay: 'SVC_SUBMISSIONS_PER_DAY',
  bodyLimit: 'SVC_BODY_LIMIT',
  logLevel: 'SVC_LOG_LEVEL',
  crawl: 'SVC_CRAWL',
  resolve: 'SVC_RESOLVE',
  crawlAllowLoopback: 'SVC_CRAWL_ALLOW_LOOPBACK',
  crawlConcurrency: 'SVC_CRAWL_CONCURRENCY',
  crawlGapMs: 'SVC_CRAWL_GAP_MS',
  webmasterFastLanePerDay: 'SVC_WEBMASTER_FAST_LANE_PER_DAY',
  crawlMaxBytes: 'SVC_CRAWL_MAX_BYTES',
  publicUrl: 'SVC_PUBLIC_URL',
  crawlerInfoUrl: 'SVC_CRAWLER_INFO_URL',
  databaseUrl: 'SVC_DATABASE_URL',
  databaseStatementTimeoutMs: 'SVC_DATABASE_STATEMENT_TIMEOUT_MS',
  databaseConnectTimeoutMs: 'SVC_DATABASE_CONNECT_TIMEOUT_MS',
  indexUri: 'SVC_INDEX_URI',
  s3Endpoint: 'SVC_S3_ENDPOINT',
  s3Region: 'SVC_S3_REGION',
  s3AccessKeyId: 'SVC_S3_ACCESS_KEY_ID',
  s3SecretAccessKey: 'SVC_S3_SECRET_ACCESS_KEY',
  s3SessionToken: 'SVC_S3_SESSION_TOKEN',
  s3AllowHttp: 'SVC_S3_ALLOW_HTTP',
  s3VirtualHosted: 'SVC_S3_VIRTUAL_HOSTED',
  indexReadConsistencyS: 'SVC_INDEX_READ_CONSISTENCY_S',
  indexWaitForWriterS: 'SVC_INDEX_WAIT_FOR_WRITER_S',
  indexReadTimeoutMs: 'SVC_INDEX_READ_TIMEOUT_MS',
  indexShards: 'SVC_INDEX_SHARDS',
  shardLeaseS: 'SVC_SHARD_LEASE_S',
  textPostings: 'SVC_TEXT_POSTINGS',
  engineSegments: 'SVC_ENGINE_SEGMENTS',
  rowCacheMb: 'SVC_ROW_CACHE_MB',
  snippetMb: 'SVC_SNIPPET_MB',
  searchThreads: 'SVC_SEARCH_THREADS',
  indexThreadNice: 'SVC_INDEX_THREAD_NICE',
  fleetSecret: 'SVC_FLEET_SECRET',
  searcherUrl: 'SVC_SEARCHER_URL',
  searcherHeartbeatMs: 'SVC_SEARCHER_HEARTBEAT_MS',
  searcherTtlMs: 'SVC_SEARCHER_TTL_MS',
  shardDeadlineMs: 'SVC_SHARD_DEADLINE_MS',
  shardSource: 'SVC_SHARD_SOURCE',
} as const satisfies Record<keyof Config, string>;

/**
 * Variables read when the SVC_ one is unset: a key's earlier name, and the AWS SDKs' standard variables (an operator
 * with AWS_* already exported need not repeat them). First non-empty one wins.
 */
export const envFallbacks = {
  modelName: ['SVC_MODEL_NAME'],
  s3Endpoint: ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'],
  s3Region: ['AWS_REGION', 'AWS_DEFAULT_REGION'],
  s3AccessKeyId: ['AWS_ACCESS_KEY_ID'],
  s3SecretAccessKey: ['AWS_SECRET_ACCESS_KEY'],
  s3SessionToken: ['AWS_SESSION_TOKEN'],
} as const satisfies Partial<Record<keyof Config, readonly string[]>>;

/** Keys holding secrets: their values never appear in logs, errors or status output. */
export const SECRET_KEYS = [
  'databaseUrl',
  's3AccessKeyId',
  's3SecretAccessKey',
  's3SessionToken',
  'fleetSecret',
] as const satisfies readonly (keyof Config)[];

/** Raised when configuration does not parse; the message names the variable or flag. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Builds the configuration: flags (already parsed by the CLI, keyed like the schema) override the environment,
 * which overrides the defaults. Empty environment values count as unset.
 */
export function loadConfig(opts: { env?: NodeJS.ProcessEnv; flags?: Partial<Record<keyof Config, unknown>> } = {}): Config {
  const env = opts.env ?? process.env;
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(envBindings)) {
    const v = env[name];
    if (v !== undefined && v !== '') raw[key] = v;
  }
  for (const [key, names] of Object.entries(envFallbacks)) {
    if (raw[key] !== undefined) continue;
    const v = names.map((n) => env[n]).find((x) => x !== undefined && x !== '');
    if (v !== undefined) raw[key] = v;
  }
  for (const [key, v] of Object.entries(opts.flags ?? {})) if (v !== undefined) raw[key] = v;
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const msg = parsed.error.issues
      .map((i) => {
        const key = String(i.path[0] ?? '');
        const bound = envBindings[key as keyof Config];
        return `${key}${bound ? ` (${bound})` : ''}: ${i.message}`;
      })
      .join('; ');
    throw new ConfigError(`invalid configuration: ${msg}`);
  }
  const cfg = parsed.data;
  // The crawler names a page webmasters can actually open: this deployment's own /webmasters, never a placeholder.
  const listen = cfg.host === '0.0.0.0' || cfg.host === '::' ? 'localhost' : cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  const base = (cfg.publicUrl ?? `http://${listen}:${cfg.port}`).replace(/\/+$/, '');
  const dataDir = resolve(cfg.dataDir);
  return {
    ...cfg,
    dataDir,
    indexUri: resolveIndexUri(cfg.indexUri, dataDir),
    ...(cfg.modelDir ? { modelDir: resolve(cfg.modelDir) } : {}),
    crawlerInfoUrl: cfg.crawlerInfoUrl ?? `${base}/webmasters`,
  };
}

/**
 * SVC_INDEX_URI → what LanceDB connects to: unset = `<dataDir>/lance` (today's layout), a path = that folder made
 * absolute, `s3://bucket[/prefix]` as given (without a trailing slash). Other schemes are refused here rather than
 * handed to LanceDB, which would accept gs:// or az:// with credentials this configuration cannot carry.
 */
function resolveIndexUri(uri: string | undefined, dataDir: string): string {
  if (uri === undefined) return join(dataDir, 'lance');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(uri)?.[1]?.toLowerCase();
  if (scheme === undefined) return resolve(uri);
  if (scheme === 'file') return resolve(new URL(uri).pathname);
  if (scheme !== 's3')
    throw new ConfigError(
      `invalid configuration: indexUri (SVC_INDEX_URI): only a local path or s3://bucket/prefix is supported, not ${scheme}://`,
    );
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/[^?#]*)?$/i.exec(uri);
  if (!m)
    throw new ConfigError(
      'invalid configuration: indexUri (SVC_INDEX_URI): expected s3://bucket or s3://bucket/prefix (bucket: 3-63 letters, digits, dots, hyphens)',
    );
  const prefix = (m[2] ?? '').replace(/\/+$/, '').replace(/^\/+/, '');
  return prefix ? `s3://${m[1]}/${prefix}` : `s3://${m[1]}`;
}
