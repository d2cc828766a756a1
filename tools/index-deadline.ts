/**
 * The deadline of a request's reads of the passage index. On object storage a stalled store leaves a read waiting
 * for the client's own timeouts (index/engines/lance/location.ts) and retries; a request does not wait that long: past the deadline
 * it answers 503 `unavailable` with Retry-After, and the read finishes or fails on its own, its result dropped.
 */
import type { Config } from '../config.js';
import { SvcError } from '../errors.js';

/** Seconds a client is told to wait when the index store did not answer in time (Retry-After). */
export const INDEX_RETRY_AFTER_S = 5;

/** Default deadline of an s3:// index's reads: the 503 comes within 5 s of the request. */
export const S3_INDEX_READ_TIMEOUT_MS = 4000;

/**
 * The deadline in ms of a request's index reads under `config`; 0 = none (a local folder, unless configured). An
 * index answered by searcher processes (`remote`) is read by them, not here: each shard's calls are bounded by the
 * per-shard deadline (a late shard is left out, `partial_results`), which a whole-request 503 must not pre-empt.
 */
export function indexReadDeadlineMs(
  config: Pick<Config, 'indexUri' | 'indexReadTimeoutMs'>,
  index?: { readonly remote?: boolean } | object,
): number {
  if (index && 'remote' in index && index.remote) return 0;
  return config.indexReadTimeoutMs ?? (config.indexUri.startsWith('s3://') ? S3_INDEX_READ_TIMEOUT_MS : 0);
}

/** The error a request gets when the index did not answer within its deadline. */
export function indexUnavailable(): SvcError {
  return new SvcError('unavailable', 'the index store did not answer in time; retry shortly', { retryAfter: INDEX_RETRY_AFTER_S });
}

/**
 * Runs `work` with a deadline of `ms` (none when 0): its answer, or `indexUnavailable()` once the deadline passes.
 * `work` is given a signal aborted at the deadline, so what waits for a turn (a search thread's room) gives it up.
 */
export async function withIndexDeadline<T>(ms: number, work: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (ms <= 0) return work(undefined);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(indexUnavailable());
    }, ms);
  });
  try {
    // The work is not cancelled (LanceDB reads cannot be): its late answer or failure is dropped here.
    return await Promise.race([work(controller.signal), late]);
  } finally {
    clearTimeout(timer);
  }
}
