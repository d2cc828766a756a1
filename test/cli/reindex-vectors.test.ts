/**
 * `svc reindex --vectors`, `svc ingest` with a model on an index without its vectors, and `svc status` while a
 * re-embedding is pending: run as a person runs them, with stdout piped (not a terminal), so progress comes as lines.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ingestCommand } from '../../cli/ingest.js';
import { main } from '../../cli/main.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

const io = (env: NodeJS.ProcessEnv = {}) => {
  const out = new PassThrough();
  const err = new PassThrough();
  let o = '';
  let e = '';
  out.on('data', (c: Buffer) => (o += c.toString()));
  err.on('data', (c: Buffer) => (e += c.toString()));
  return { io: { stdout: out, stderr: err, env }, out: () => o, err: () => e };
};

const corpus = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({ _id: `${tag}${i}`, title: `Record ${tag}${i}`, text: `Text of record ${tag}${i} about topic ${i}.` }),
  ).join('\n') + '\n';

/** A re-embedding progress line: done/total passages (percent), rate, time left. */
const REEMBED_LINE = /^re-embedding: \d+\/\d+ passages \(\d+%\), [\d.]+ passages\/s, (\d+ s|\d+ min \d+ s|unknown) left$/;

t.test('svc reindex --vectors with stdout piped: progress lines, a summary, then vectors and hybrid ranking', async (t) => {
  const dir = t.testdir();
  const file = join(dir, 'c.jsonl');
  writeFileSync(file, corpus(12, 'a'));
  const dataDir = join(dir, 'data');
  const a = io();
  t.equal(await ingestCommand(['--jsonl', file, '--data-dir', dataDir, '--embedder', 'none'], a.io), 0);
  t.match(a.out(), /index: 12 pages, 12 passages, 0 vectors, ranking bm25\n/, 'ingested without vectors: nothing to rank by meaning yet');

  // A real process with its stdout a pipe (the progress lines are for logs and CI).
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'cli/run.ts', 'reindex', '--vectors', '--embedder', 'hashing', '--batch', '3', '--data-dir', dataDir],
    { cwd: REPO, encoding: 'utf8', env: { ...process.env, SVC_PROGRESS_MS: '0', SVC_LOG_LEVEL: 'warn' } },
  );
  t.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  t.match(lines[0], /^re-embedding: the passages get vectors of hashing-stand-in-256 \(0\/12 done\)/);
  const progress = lines.filter((l) => l.startsWith('re-embedding: ') && /passages\/s/.test(l) && !/finished/.test(l));
  t.ok(progress.length >= 4, 'a line per batch of 3 passages with SVC_PROGRESS_MS=0');
  for (const l of progress) t.match(l, REEMBED_LINE);
  t.match(progress.at(-1), /^re-embedding: 12\/12 passages \(100%\)/);
  t.match(r.stdout, /\nre-embedding: finished, 12 passages in \d+ s, [\d.]+ passages\/s, 12\/12 done\n/);
  t.match(r.stdout, /index: 12 pages, 12 passages, 12 vectors, ranking hybrid-rrf-hashing\n$/);
  t.notOk(r.stdout.includes('\r'), 'no carriage returns off a terminal');

  const again = io();
  t.equal(await main(['reindex', '--vectors', '--embedder', 'hashing', '--data-dir', dataDir], again.io), 0);
  t.match(again.out(), /every passage has a vector of hashing-stand-in-256 already; nothing to do/);

  const bad = io();
  t.equal(await main(['reindex', '--data-dir', dataDir], bad.io), 2, 'without --vectors: usage');
  t.match(bad.err(), /give --vectors/);
  const none = io();
  t.equal(await main(['reindex', '--vectors', '--data-dir', dataDir], none.io), 2, 'no model configured: usage');
  t.match(none.err(), /needs a model/);
});

t.test('svc ingest with a model on an index without vectors embeds what it writes, then what was there', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  writeFileSync(join(dir, 'old.jsonl'), corpus(5, 'o'));
  writeFileSync(join(dir, 'new.jsonl'), corpus(4, 'n'));
  t.equal(await ingestCommand(['--jsonl', join(dir, 'old.jsonl'), '--data-dir', dataDir, '--embedder', 'none'], io().io), 0);

  // SVC_REEMBED=manual: the model is left unused, and the summary says why.
  const manual = io({ SVC_REEMBED: 'manual' });
  t.equal(await ingestCommand(['--jsonl', join(dir, 'new.jsonl'), '--data-dir', dataDir, '--embedder', 'hashing'], manual.io), 0);
  t.match(manual.out(), /index: 9 pages, 9 passages, 0 vectors, ranking bm25\n/);
  t.match(
    manual.out(),
    /ranking: The index was built without vectors, not of the configured model hashing-stand-in-256: ranking is BM25 only/,
  );

  const b = io({ SVC_PROGRESS_MS: '0' });
  t.equal(
    await ingestCommand(['--jsonl', join(dir, 'new.jsonl'), '--data-dir', dataDir, '--embedder', 'hashing', '--batch', '1'], b.io),
    0,
  );
  const out = b.out();
  const ingestLines = out.split('\n').filter((l) => l.startsWith('ingest: '));
  t.equal(ingestLines.length, 4, 'an ingest line per batch of one record with SVC_PROGRESS_MS=0');
  for (const l of ingestLines) t.match(l, /^ingest: \d+ docs \(\d+%\), [\d.]+ docs\/s, (\d+ s|\d+ min \d+ s|unknown) left, \d+ passages$/);
  t.match(ingestLines.at(-1), /^ingest: 4 docs \(100%\)/, 'the last line: the whole file read');
  t.match(out, /\n4 docs, 4 passages, \d+ docs\/s\n/, 'the summary of the ingest');
  // The 4 records written now had their vectors on write: the pass embeds the 5 that were there.
  t.match(out, /re-embedding: the passages get vectors of hashing-stand-in-256 \(0\/\d+ done\)/);
  t.match(out, /re-embedding: finished, 5 passages in/);
  t.match(out, /index: 9 pages, 9 passages, 9 vectors, ranking hybrid-rrf-hashing\n/);
});

t.test('svc status: a pending re-embedding and the vectors model', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  writeFileSync(join(dir, 'c.jsonl'), corpus(6, 's'));
  t.equal(await ingestCommand(['--jsonl', join(dir, 'c.jsonl'), '--data-dir', dataDir, '--embedder', 'none'], io().io), 0);
  // A writer with the model prepares the pass and stops after its first batch of 2.
  const model = createHashingEmbedder(16);
  const idx = await PassageIndex.open({ dir: join(dataDir, 'lance'), embedder: model, reembed: true, textEngine: false });
  const stop = new AbortController();
  t.equal(await idx.reembed({ batchPassages: 2, signal: stop.signal, onProgress: (p) => p.done >= 2 && stop.abort() }), 'stopped');
  await idx.close();

  const s = io();
  t.equal(await main(['status', '--data-dir', dataDir], s.io), 0);
  t.match(s.out(), /\nvectors +re-embedding with hashing-stand-in-16: 2\/6 passages \(33%\)/);
  const j = io();
  t.equal(await main(['status', '--json', '--data-dir', dataDir], j.io), 0);
  t.match(JSON.parse(j.out()), {
    index: { pages: 6, passages: 6, vector_model: null, reembedding: { model: 'hashing-stand-in-16', done: 2, total: 6 } },
  });

  const finish = io();
  t.equal(await main(['reindex', '--vectors', '--embedder', 'hashing', '--data-dir', dataDir], finish.io), 0);
  t.match(
    finish.out(),
    /the passages get vectors of hashing-stand-in-256 \(0\/6 done\)/,
    'another model than the pending pass: it starts again',
  );
  const after = io();
  t.equal(await main(['status', '--json', '--data-dir', dataDir], after.io), 0);
  t.match(JSON.parse(after.out()), { index: { vectors: 6, vector_model: 'hashing-stand-in-256', reembedding: null } });
});
