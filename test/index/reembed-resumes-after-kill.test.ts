/**
 * A re-embedding killed with SIGKILL mid-pass resumes where its last batch committed (the progress saved in the index
 * metadata), and the vector arm is off until the resumed pass has given every passage its vector.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const CHILD = fileURLToPath(new URL('./reembed-crash-child.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the child until it has reported `batches` batches, then kills it; resolves with its output lines. */
function runChildUntil(dir: string, batches: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      // The progress lines: one at the start (0 done), then one per batch.
      if (out.split('\n').filter((l) => l.startsWith('P ')).length >= batches + 1) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) =>
      signal === 'SIGKILL' ? resolve(out.split('\n').filter(Boolean)) : reject(new Error(`child ended: ${out}`)),
    );
  });
}

t.test('kill -9 mid re-embedding: the next writer resumes at the last committed batch', async (t) => {
  const dir = t.testdir();
  const idx = await PassageIndex.open({ dir, embedder: null });
  // 10 pages of 2 passages: batches of 4 passages are 2 pages each.
  await idx.upsertPages(
    Array.from({ length: 10 }, (_, i) =>
      makePage(i + 1, `h${i}.example.ca`, [`first passage of page ${i + 1}`, `second passage of page ${i + 1}`]),
    ),
  );
  await idx.close();

  const lines = await runChildUntil(dir, 2);
  t.same(lines, ['ready', 'P 0', 'P 4', 'P 8'], 'two batches committed, the third stalled in its embedding');

  const model = createHashingEmbedder(32);
  const again = await PassageIndex.open({ dir, embedder: model, reembed: true });
  t.teardown(() => again.close());
  t.match(await again.reembedProgress(), { modelId: 'hashing-stand-in-32', done: 8, total: 20 }, 'resumes after the pages done');
  t.equal(again.rankingMode(), 'bm25', 'the vectors of the killed pass are not served');
  const done: number[] = [];
  t.equal(await again.reembed({ batchPassages: 4, onProgress: (p) => done.push(p.done) }), 'done');
  t.same(done, [8, 12, 16, 20], 'only the pages not done are embedded again');
  const s = await again.stats();
  t.equal(s.vectors, 20);
  t.equal(again.rankingMode(), 'hybrid-rrf-hashing');
});
