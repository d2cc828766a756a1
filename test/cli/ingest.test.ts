import t from 'tap';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { corpusName, ingestCommand, splitPassages } from '../../cli/ingest.js';
import { hydrate } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { openStateDb } from '../../state/db.js';
import { Documents } from '../../state/documents.js';

const io = () => {
  const out = new PassThrough();
  const err = new PassThrough();
  let o = '';
  let e = '';
  out.on('data', (c: Buffer) => (o += c.toString()));
  err.on('data', (c: Buffer) => (e += c.toString()));
  return { io: { stdout: out, stderr: err, env: {} }, out: () => o, err: () => e };
};

const docs = [
  { _id: 'd1', title: 'Vitamin D and bone density', text: 'Vitamin D supplements improved bone density in older adults.' },
  { _id: 'd2', title: 'Sleep and memory', text: 'Sleep deprivation impairs memory consolidation in students.' },
  { _id: 42, title: '', text: 'A document without a title about coffee consumption.' },
];

t.test('splitPassages keeps sentences together under the word cap', async (t) => {
  t.same(splitPassages('One two three. Four five six. Seven.', 4), ['One two three.', 'Four five six. Seven.']);
  t.same(splitPassages('a b c d e f g h i j', 4), ['a b c d', 'e f g h', 'i j']);
  t.same(splitPassages('', 4), []);
  t.equal(corpusName('/x/beir/scifact/corpus.jsonl.gz'), 'scifact');
  t.equal(corpusName('/x/My Corpus.jsonl'), 'my-corpus');
});

t.test('svc ingest: BEIR JSONL (.gz) through the index path, ids kept, idempotent', async (t) => {
  const dir = t.testdir({ data: {} });
  const file = join(dir, 'tiny.jsonl.gz');
  writeFileSync(file, gzipSync(docs.map((d) => JSON.stringify(d)).join('\n') + '\n\n'));
  const dataDir = join(dir, 'data');
  const a = io();
  t.equal(await ingestCommand(['--jsonl', file, '--data-dir', dataDir, '--embedder', 'hashing'], a.io), 0);
  t.match(a.out(), /3 docs, 3 passages/);
  t.match(a.out(), /ranking hybrid-rrf-hashing/);
  const b = io();
  t.equal(
    await ingestCommand(['--jsonl', file, '--data-dir', dataDir, '--embedder', 'hashing'], b.io),
    0,
    'a second run replaces, never duplicates',
  );

  const db = openStateDb(join(dataDir, 'state.sqlite'));
  t.teardown(() => db.close());
  const documents = new Documents(db);
  const row = documents.byUrl('corpus:tiny/d2');
  t.ok(row);
  t.equal(row?.status, 'indexed');
  t.equal(documents.byUrl('corpus:tiny/42')?.status, 'indexed', 'numeric _id values are kept as strings');

  const idx = await PassageIndex.open({ dir: join(dataDir, 'lance'), embedder: null });
  t.teardown(() => idx.close());
  const st = await idx.stats();
  t.same([st.pages, st.passages, st.vectors], [3, 3, 3]);
  const page = await idx.getPage(row!.pageRef);
  t.equal(page?.externalId, 'd2');
  t.equal(page?.host, 'd2.tiny.corpus.invalid', 'issue 15: every record is its own source, under the corpus domain');
  t.equal(page?.dateSource, 'corpus');
  const hits = await retrieve(idx, { query: 'memory sleep' });
  t.same(
    (await hydrate(idx, hits.passages)).map((p) => p.row.external_id),
    ['d2'],
  );
});

t.test('issue 14: ingest keeps two batches in flight; every record lands once, a repeated id keeps its later line', async (t) => {
  const dir = t.testdir({ data: {} });
  const file = join(dir, 'pipelined.jsonl');
  const lines = [
    ...Array.from({ length: 9 }, (_, i) => ({ _id: `r${i}`, title: `Record ${i}`, text: `Passage number ${i} about topic${i}.` })),
    // r3 again, two batches after its first line (batch size 2): the second version must win.
    { _id: 'r3', title: 'Record 3 revised', text: 'Revised passage about gardening.' },
    { _id: 'r9', title: 'Record 9', text: 'Passage number 9 about topic9.' },
  ];
  writeFileSync(file, lines.map((d) => JSON.stringify(d)).join('\n') + '\n');
  const dataDir = join(dir, 'data');
  const a = io();
  t.equal(await ingestCommand(['--jsonl', file, '--data-dir', dataDir, '--embedder', 'hashing', '--batch', '2'], a.io), 0);
  t.match(a.out(), /11 docs, 11 passages/);
  t.match(a.out(), /index: 10 pages, 10 passages, 10 vectors/);

  const db = openStateDb(join(dataDir, 'state.sqlite'));
  t.teardown(() => db.close());
  const documents = new Documents(db);
  for (let i = 0; i < 10; i++) t.equal(documents.byUrl(`corpus:pipelined/r${i}`)?.status, 'indexed', `r${i} recorded as indexed`);
  const idx = await PassageIndex.open({ dir: join(dataDir, 'lance'), embedder: null });
  t.teardown(() => idx.close());
  const r3 = documents.byUrl('corpus:pipelined/r3')!;
  t.equal((await idx.getPage(r3.pageRef))?.title, 'Record 3 revised');
  const hits = await retrieve(idx, { query: 'gardening' });
  t.same(
    (await hydrate(idx, hits.passages)).map((p) => p.row.external_id),
    ['r3'],
  );
  t.same(
    (await hydrate(idx, (await retrieve(idx, { query: 'topic3' })).passages)).map((p) => p.row.external_id),
    [],
    'the first r3 line is gone',
  );
});

t.test('svc ingest: usage errors', async (t) => {
  const a = io();
  await t.rejects(ingestCommand([], a.io), { name: 'UsageError' });
  const dir = t.testdir();
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"_id": "x", "text": "ok"}\nnot json\n');
  await t.rejects(ingestCommand(['--jsonl', bad, '--data-dir', join(dir, 'd'), '--embedder', 'none'], a.io), {
    name: 'UsageError',
    message: /bad\.jsonl:2: not JSON/,
  });
  await t.rejects(ingestCommand(['--jsonl', bad, '--embedder', 'bogus'], a.io), { name: 'UsageError' });
});
