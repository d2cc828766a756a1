/**
 * Where the passage index lives (SVC_INDEX_URI): a local folder or an S3-compatible prefix.
 * Index metadata lives in the location itself so every process reads the same; the write journal stays local
 * because only the writer reads it. Credentials never reach logs or errors (`IndexOpenError`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as lancedb from '@lancedb/lancedb';
import { makeArrowTable } from '@lancedb/lancedb';
import { Field, Schema, Utf8 } from './arrow.js';
import { ConfigError, type Config } from '../../../config.js';
import { writeDurably } from './durable-file.js';

/** Default staleness bound of a reader on object storage, in seconds (config `indexReadConsistencyS`). */
export const S3_READ_CONSISTENCY_S = 5;

/** A resolved index location. Holds credentials in `storageOptions`: log `label`, never the object. */
export interface IndexLocation {
  readonly kind: 'local' | 's3';
  /** What LanceDB connects to: an absolute folder, or `s3://bucket[/prefix]`. */
  readonly uri: string;
  /** LanceDB / object_store storage options (endpoint, region, credentials…). Secret: never logged. */
  readonly storageOptions: Readonly<Record<string, string>>;
  /**
   * LanceDB's read consistency interval in seconds: how long a reader may serve a table version before it checks the
   * location for a newer one. undefined = never (a single process that does its own writes).
   */
  readonly readConsistencyS: number | undefined;
  /** Local folder of the write journal. */
  readonly journalDir: string;
  /** What may be logged or shown: the URI, plus the endpoint for a bucket. */
  readonly label: string;
  /** Values that must never appear in a message (the credentials). */
  readonly secrets: readonly string[];
}

/** An index in a local folder (tests, tools and the embedded default). */
export function localIndexLocation(dir: string, readConsistencyS?: number): IndexLocation {
  return { kind: 'local', uri: dir, storageOptions: {}, readConsistencyS, journalDir: dir, label: dir, secrets: [] };
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The configured location. Refuses (ConfigError, naming the variables, never their values) an s3:// index without
 * credentials — the AWS credential chain would otherwise fall back to the cloud metadata endpoint, a network call
 * this service never makes — and a plain-http endpoint off loopback unless SVC_S3_ALLOW_HTTP says so.
 */
export function indexLocation(config: Config): IndexLocation {
  const uri = config.indexUri;
  if (!uri.startsWith('s3://')) return localIndexLocation(uri, config.indexReadConsistencyS);
  if (!config.s3AccessKeyId || !config.s3SecretAccessKey) {
    throw new ConfigError(
      'invalid configuration: an s3:// index (SVC_INDEX_URI) needs credentials: set SVC_S3_ACCESS_KEY_ID and SVC_S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)',
    );
  }
  const options: Record<string, string> = {
    aws_access_key_id: config.s3AccessKeyId,
    aws_secret_access_key: config.s3SecretAccessKey,
    aws_region: config.s3Region ?? 'us-east-1',
    // A store that does not answer, or stalls mid-answer, fails the read within seconds instead of retrying for
    // minutes (object_store's own defaults: 30 s per request, retried for up to 3 min), and lance retries a failed
    // download once on top, not 3 times. A request's wait is bounded apart from these (tools/index-deadline.ts).
    connect_timeout: '5s',
    timeout: '5s',
    client_max_retries: '3',
    client_retry_timeout: '5',
    download_retry_count: '1',
  };
  if (config.s3SessionToken) options.aws_session_token = config.s3SessionToken;
  let endpointLabel = 'AWS S3';
  if (config.s3Endpoint) {
    const endpoint = new URL(config.s3Endpoint);
    if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
      throw new ConfigError('invalid configuration: s3Endpoint (SVC_S3_ENDPOINT): must be an http:// or https:// URL');
    }
    if (endpoint.protocol === 'http:') {
      if (!LOOPBACK.test(endpoint.hostname) && !config.s3AllowHttp) {
        throw new ConfigError(
          'invalid configuration: s3Endpoint (SVC_S3_ENDPOINT): plain http off loopback sends credentials unencrypted; use https, or set SVC_S3_ALLOW_HTTP=1',
        );
      }
      options.allow_http = 'true';
    }
    // No credentials or path in a label: the endpoint's origin only.
    endpointLabel = endpoint.origin;
    options.aws_endpoint = endpoint.origin + endpoint.pathname.replace(/\/+$/, '');
  }
  options.aws_virtual_hosted_style_request = String(config.s3VirtualHosted ?? !config.s3Endpoint);
  const path = uri.slice('s3://'.length);
  const secrets = [config.s3SecretAccessKey, config.s3AccessKeyId, ...(config.s3SessionToken ? [config.s3SessionToken] : [])];
  return {
    kind: 's3',
    uri,
    storageOptions: options,
    readConsistencyS: config.indexReadConsistencyS ?? S3_READ_CONSISTENCY_S,
    journalDir: join(config.dataDir, 'index-journal', ...path.split('/').map((s) => s.replace(/[^A-Za-z0-9._-]/g, '_'))),
    label: `${uri} (${endpointLabel})`,
    secrets,
  };
}

/** Raised when the index location cannot be opened: says where and why, never with credentials. */
export class IndexOpenError extends Error {
  override readonly name = 'IndexOpenError';
}

/** Removes every secret of `location` from a message. */
export function scrubSecrets(message: string, location: IndexLocation): string {
  let out = message;
  for (const s of location.secrets) if (s.length > 0) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * A readable reason for a failed open on object storage (the store's error code when there is one), then the
 * error's own first line, scrubbed.
 */
export function openError(err: unknown, location: IndexLocation): IndexOpenError {
  const raw = err instanceof Error ? err.message : String(err);
  const code = /<Code>([A-Za-z]+)<\/Code>/.exec(raw)?.[1];
  let reason: string;
  if (code === 'SignatureDoesNotMatch' || code === 'InvalidAccessKeyId' || code === 'AccessDenied') {
    reason = `the store refused the credentials (${code}): check SVC_S3_ACCESS_KEY_ID / SVC_S3_SECRET_ACCESS_KEY`;
  } else if (code === 'NoSuchBucket') {
    reason = 'the bucket does not exist (NoSuchBucket): create it first';
  } else if (/connect|connection refused|dns error|tcp/i.test(raw)) {
    reason = 'the endpoint cannot be reached: check SVC_S3_ENDPOINT';
  } else {
    reason = code ?? (raw.split('\n')[0] ?? '').slice(0, 300);
  }
  return new IndexOpenError(scrubSecrets(`cannot open the index at ${location.label}: ${reason}`, location));
}

const META_FILE = 'svc-index-meta.json';
const META_TABLE = 'svc_meta';
const META_ROW = 'index-meta';
const metaSchema = new Schema([new Field('name', new Utf8(), false), new Field('body', new Utf8(), false)]);

/** Whether opening a LanceDB table failed because it has no committed version (yet): a table listed mid-creation. */
export function notCommittedYet(err: unknown): boolean {
  return /not found/i.test(err instanceof Error ? err.message : String(err));
}

/** The index metadata stored at `location` (see the module comment), or null when there is none yet. */
export async function readIndexMeta<T>(
  db: lancedb.Connection,
  location: IndexLocation,
  tableNames: ReadonlySet<string>,
): Promise<T | null> {
  if (location.kind === 'local') {
    const file = join(location.uri, META_FILE);
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : null;
  }
  if (!tableNames.has(META_TABLE)) return null;
  let table: lancedb.Table;
  try {
    table = await db.openTable(META_TABLE);
  } catch (err) {
    // Listed but not yet committed: the writer is creating it (object storage lists the table's first objects before
    // its first version is written). Not there yet, as for a reader that waits for the writer.
    if (notCommittedYet(err)) return null;
    throw err;
  }
  try {
    const rows = (await table.query().where(`name = '${META_ROW}'`).limit(1).toArray()) as { body: string }[];
    return rows[0] ? (JSON.parse(rows[0].body) as T) : null;
  } finally {
    table.close();
  }
}

/** Writes the index metadata at `location` (one commit on object storage). */
export async function writeIndexMeta(db: lancedb.Connection, location: IndexLocation, meta: unknown): Promise<void> {
  const body = JSON.stringify(meta);
  if (location.kind === 'local') {
    // Replaced whole (a kill mid-write leaves the previous file, never half of one): a re-embedding saves it often.
    await writeDurably(join(location.uri, META_FILE), body);
    return;
  }
  const table = await db.createEmptyTable(META_TABLE, metaSchema, { existOk: true });
  try {
    await table
      .mergeInsert('name')
      .whenMatchedUpdateAll()
      .whenNotMatchedInsertAll()
      .execute(makeArrowTable([{ name: META_ROW, body }], { schema: metaSchema }));
  } finally {
    table.close();
  }
}
