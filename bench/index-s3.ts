/**
 * The index on object storage: the same synthetic passages written to a local folder and to an
 * S3-compatible bucket (SeaweedFS, the test harness's: loopback, temp dir, stopped at the end), then svc_search's
 * retrieval (`searchPages`: first stage, strict checks, grouping, hydration) timed on both with the same queries.
 * Prints write time, then p50/p95 per engine and query kind, and the S3 / local ratio.
 *
 *   node --import tsx bench/index-s3.ts [--passages 20000] [--queries 100]
 *
 * SeaweedFS on loopback has no network latency: the S3 column is the object-store protocol's own cost (HTTP
 * requests, no page cache of the files, LanceDB's object-store reader), a floor for a remote bucket.
 */
import '../fixtures/loopback-only.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { readQueries } from '../cli/eval.js';
import { createHashingEmbedder } from '../index/serving/embedder.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { indexLocation, localIndexLocation, type IndexLocation } from '../index/engines/lance/location.js';
import { searchPages } from '../index/retrieval/retrieval.js';
import { PassageIndex } from '../index/engines/lance/store.js';
import { startSeaweedfs } from '../test/helpers/seaweedfs-server.js';
import { SCIFACT, pct, sentencePool, shortQuery, syntheticPages } from './synthetic.js';

setLanceCpuThreads();

const { values } = parseArgs({
  options: {
    passages: { type: 'string', default: '20000' },
    queries: { type: 'string', default: '100' },
  },
});
const N = Math.max(1000, Math.min(200_000, Number(values.passages)));
const NQ = Math.max(10, Math.min(300, Number(values.queries)));

const claims = [...readQueries(join(SCIFACT, 'queries.jsonl')).values()].slice(0, NQ);
const shorts = claims.map(shortQuery).filter((q) => q.split(' ').length >= 2);

async function build(location: IndexLocation): Promise<{ idx: PassageIndex; seconds: number }> {
  const t0 = performance.now();
  const idx = await PassageIndex.open({
    location,
    embedder: createHashingEmbedder(384),
    optimizeEvery: Number.MAX_SAFE_INTEGER,
    refreshAfterMs: 0,
  });
  const pool = await sentencePool();
  let batch = [];
  for (const page of syntheticPages(N, pool)) {
    batch.push(page);
    if (batch.length === 2000) {
      await idx.upsertPages(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await idx.upsertPages(batch);
  await idx.optimize(); // full-text and key indexes built, as a serving index has them
  // The in-process postings (an `api` replica's BM25 arm) built at this version, as a served index has them.
  await idx.textEngineReady();
  return { idx, seconds: (performance.now() - t0) / 1000 };
}

async function time(idx: PassageIndex, queries: string[], mode: 'bm25' | 'hybrid'): Promise<{ p50: number; p95: number }> {
  for (const q of queries.slice(0, 10)) await searchPages(idx, { query: q, mode, limit: 10, offset: 0 }); // warm-up
  const lat: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    await searchPages(idx, { query: q, mode, limit: 10, offset: 0 });
    lat.push(performance.now() - t0);
  }
  return { p50: pct(lat, 50), p95: pct(lat, 95) };
}

const s3 = await startSeaweedfs();
const localDir = mkdtempSync(join(tmpdir(), 'svc-bench-s3-local-'));
const rows: string[] = [];
try {
  const locations: [string, IndexLocation][] = [
    ['local folder', localIndexLocation(join(localDir, 'lance'))],
    ['S3 (SeaweedFS, loopback)', indexLocation(loadConfig({ env: { ...s3.env('bench'), SVC_DATA_DIR: localDir } }))],
  ];
  const p95: Record<string, number[]> = {};
  for (const [label, location] of locations) {
    const { idx, seconds } = await build(location);
    const st = await idx.stats();
    rows.push(`| ${label} | write ${st.passages.toLocaleString('en-US')} passages + optimize | ${seconds.toFixed(1)} s | | |`);
    for (const [kind, qs, mode] of [
      ['bm25, 3 words', shorts, 'bm25'],
      ['bm25, claims', claims, 'bm25'],
      ['hybrid (hashing vectors), claims', claims, 'hybrid'],
    ] as [string, string[], 'bm25' | 'hybrid'][]) {
      const r = await time(idx, qs, mode);
      (p95[kind] ??= []).push(r.p95);
      rows.push(`| ${label} | ${kind} (${qs.length} queries) | | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} |`);
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    }
    await idx.close();
  }
  console.log(
    `\n${N.toLocaleString('en-US')} synthetic passages (SciFact sentences), SciFact claims as queries; node ${process.version}; shared 2-core machine\n`,
  );
  console.log('| location | step | time | p50 ms | p95 ms |');
  console.log('|---|---|---:|---:|---:|');
  for (const r of rows) console.log(r);
  console.log('\n| query kind | S3 p95 / local p95 |');
  console.log('|---|---:|');
  for (const [kind, [local, remote]] of Object.entries(p95)) console.log(`| ${kind} | ${(remote! / local!).toFixed(2)} |`);
} finally {
  await s3.stop();
  rmSync(localDir, { recursive: true, force: true });
}
