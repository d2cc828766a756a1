import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { evalCommand, ndcgAt, plainQuery, recallAt } from '../../cli/eval.js';
import { ingestCommand } from '../../cli/ingest.js';

const io = () => {
  const out = new PassThrough();
  const err = new PassThrough();
  let o = '';
  let e = '';
  out.on('data', (c: Buffer) => (o += c.toString()));
  err.on('data', (c: Buffer) => (e += c.toString()));
  return { io: { stdout: out, stderr: err, env: {} }, out: () => o, err: () => e };
};

t.test('metrics: nDCG@k (linear gain) and recall@k', async (t) => {
  const rel = new Map([
    ['a', 1],
    ['b', 1],
  ]);
  t.equal(ndcgAt(['a', 'b', 'c'], rel, 10), 1);
  t.equal(ndcgAt(['c', 'a'], rel, 10), 1 / Math.log2(3) / (1 + 1 / Math.log2(3)));
  t.equal(ndcgAt(['c', 'd'], rel, 10), 0);
  t.equal(ndcgAt(['b'], new Map([['b', 2], ['a', 1]]), 10), 2 / (2 + 1 / Math.log2(3)), 'graded relevance');
  t.equal(recallAt(['a', 'x'], rel, 100), 0.5);
  t.equal(recallAt(['x', 'a'], rel, 1), 0);
  t.equal(plainQuery('-2 "quoted" site:x.org claim'), '2  quoted  site x.org claim');
});

t.test('svc eval on a tiny BEIR dataset', async (t) => {
  const root = t.testdir();
  const beir = join(root, 'tinyset');
  mkdirSync(join(beir, 'qrels'), { recursive: true });
  const corpus = [
    { _id: 'd1', title: 'Vitamin D and bone density', text: 'Vitamin D supplements improved bone density in older adults.' },
    { _id: 'd2', title: 'Sleep and memory', text: 'Sleep deprivation impairs memory consolidation in students.' },
    { _id: 'd3', title: 'Coffee', text: 'Coffee consumption and heart rhythm in a cohort.' },
  ];
  writeFileSync(join(beir, 'corpus.jsonl'), corpus.map((d) => JSON.stringify(d)).join('\n'));
  writeFileSync(join(beir, 'queries.jsonl'), ['{"_id":"q1","text":"Does vitamin D improve bone density?"}', '{"_id":"q2","text":"-Sleep loss harms memory"}', '{"_id":"q3","text":"unrelated words only"}'].join('\n'));
  writeFileSync(join(beir, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n');
  const dataDir = join(root, 'data');
  const missing = io();
  t.equal(await evalCommand(['--beir', beir, '--data-dir', dataDir, '--embedder', 'none'], missing.io), 1, 'corpus not ingested yet');
  t.match(missing.err(), /not in the index/);

  t.equal(await ingestCommand(['--jsonl', join(beir, 'corpus.jsonl'), '--data-dir', dataDir, '--embedder', 'none'], io().io), 0);
  const r = io();
  t.equal(await evalCommand(['--beir', beir, '--data-dir', dataDir, '--embedder', 'none', '--json'], r.io), 0);
  const res = JSON.parse(r.out()) as { ndcg10: number; recall100: number; queries: number; ranking: string; mode: string };
  t.equal(res.queries, 3);
  t.equal(res.mode, 'bm25');
  t.equal(res.ranking, 'bm25');
  t.equal(res.recall100, 2 / 3, 'q1 and q2 found, q3 has no matching words');
  t.equal(res.ndcg10, 2 / 3);
  const table = io();
  t.equal(await evalCommand(['--beir', beir, '--data-dir', dataDir, '--embedder', 'none'], table.io), 0);
  t.match(table.out(), /\| tinyset \| bm25 \| bm25 \| 3 \| 0\.6667 \| 0\.6667 \|/);
  const vec = io();
  t.equal(await evalCommand(['--beir', beir, '--data-dir', dataDir, '--embedder', 'none', '--mode', 'vector'], vec.io), 1);
  t.match(vec.err(), /needs embeddings/);
});
