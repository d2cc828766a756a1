/**
 * A second process reading an index on object storage (store-in-bucket.test.ts): opens the configured location
 * (SVC_INDEX_URI and SVC_S3_* in its environment, nothing shared with the parent but the bucket), prints what it
 * sees as one JSON line, then waits until a search for argv[2] finds something (a page the parent writes after that
 * line) and prints how long that took.
 */
import { loadConfig } from '../../config.js';
import { indexLocation } from '../../index/engines/lance/location.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';

const waitFor = process.argv[2] ?? '';
const idx = await PassageIndex.open({ location: indexLocation(loadConfig()), embedder: null, refreshAfterMs: 0 });
const refs = async (query: string) =>
  (await retrieve(idx, { query, mode: 'bm25' })).passages.map((p) => p.row.page_ref).sort((a, b) => a - b);
const stats = await idx.stats();
process.stdout.write(
  `${JSON.stringify({ stats, passports: await refs('passports'), site: await refs('passports site:news.example.com'), page: await idx.getPage(7) })}\n`,
);
const started = Date.now();
let seen: number[] = [];
while (Date.now() - started < 30_000) {
  seen = await refs(waitFor);
  if (seen.length > 0) break;
  await new Promise((r) => setTimeout(r, 100));
}
process.stdout.write(`${JSON.stringify({ seen, afterMs: Date.now() - started })}\n`);
await idx.close();
