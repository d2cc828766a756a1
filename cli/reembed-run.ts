/**
 * The re-embedding of a CLI command (`svc reindex --vectors`, and after `svc ingest` / `svc crawl` writes), run to
 * completion in the foreground with progress lines (progress.ts).
 */
import type { ServedIndex } from '../index/shards/sharded-index.js';
import type { CliIo } from './io.js';
import { ProgressLines } from './progress.js';

/**
 * Runs the re-embedding `index` has prepared to completion (or until `signal`), with progress lines on `io`: a line
 * every `everyMs` off a terminal, a live one on it, and a summary. `none` when the vectors are the model's already.
 */
export async function reembedWithProgress(
  index: ServedIndex,
  io: CliIo,
  opts: { everyMs: number; signal?: AbortSignal; batchPassages?: number },
): Promise<'done' | 'stopped' | 'none'> {
  const start = await index.reembedProgress();
  if (!start) return 'none';
  io.stdout.write(
    `re-embedding: the passages get vectors of ${start.modelId} (${start.done}/${start.total} done); the vector arm serves once all have one\n`,
  );
  const lines = new ProgressLines({ io, label: 're-embedding', unit: 'passages', everyMs: opts.everyMs, tty: 'live', from: start.done });
  let last = start;
  const result = await index.reembed({
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.batchPassages !== undefined ? { batchPassages: opts.batchPassages } : {}),
    onProgress: (p) => {
      last = p;
      lines.update(p.done, { total: p.total });
    },
  });
  lines.finish(result === 'done' ? 'finished' : 'stopped', last.done, `${last.done}/${Math.max(last.total, last.done)} done`);
  return result;
}
