/**
 * A second process reading an index on object storage with persisted engine segments
 * (engine-segments-in-bucket.test.ts): opens the configured location (SVC_INDEX_URI and SVC_S3_* in its environment,
 * nothing shared with the parent but the bucket) as a reader, waits for its postings, and prints one JSON line: the
 * postings' sync counts and every passage they hold. Not a test file.
 */
import { loadConfig } from '../../config.js';
import { indexLocation } from '../../index/engines/lance/location.js';
import { PassageIndex } from '../../index/engines/lance/store.js';

const idx = await PassageIndex.open({ location: indexLocation(loadConfig()), embedder: null, writes: false, engineSegments: true });
await idx.textEngineReady();
const keys = (await idx.scanCandidates({}, 1_000_000)).map((h) => `${h.page_ref}:${h.ordinal}`).sort();
process.stdout.write(`${JSON.stringify({ syncs: idx.textPostingsStats()!.syncs, keys })}\n`);
await idx.close();
