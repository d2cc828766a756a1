/**
 * `--shards` of `svc serve` (indexer and searcher roles): a list of shard numbers and ranges, `0-3` or `0,2` or
 * `0-1,4`. Returned sorted without repeats; a number outside `[0, count)` is the caller's to refuse, since the count is
 * the index's (stored at creation) and not known when the flag is read.
 */
export function parseShardList(text: string): number[] {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^\s*(\d{1,4})\s*(?:-\s*(\d{1,4})\s*)?$/.exec(part);
    if (!m) throw new Error(`--shards: ${JSON.stringify(part.trim())} is not a shard number or range (e.g. 0-3 or 0,2)`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw new Error(`--shards: the range ${lo}-${hi} is empty (write the lower number first)`);
    for (let i = lo; i <= hi; i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}
