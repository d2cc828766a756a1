import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scan, sourceFiles } from './comment-figures.js';

const root = join(import.meta.dirname, '../..');

// Comments say why; run figures and work-log notes belong in docs (a comment links the section instead).
t.test('no source comment carries a run figure or a work-log note', async (t) => {
  const found = sourceFiles(root, false).flatMap((f) => scan(f, readFileSync(join(root, f), 'utf8')));
  t.same(
    found.map((f) => `${f.file}:${f.line} [${f.kinds.join(',')}]`),
    [],
  );
});

t.test('the scanner finds figures and work-log notes in comments, not in code', async (t) => {
  const src = [
    '// p95 fell from 9.8 → 4.0 ms (session 32)',
    '/** 0.957× the old merge, issue 14 */',
    "const s = 'session 32 at 0.957×'; // a plain why",
    '// ≈ 40 s at 1M passages',
  ].join('\n');
  const found = scan('x.ts', src);
  t.same(
    found.map((f) => f.line),
    [1, 2, 4],
  );
  t.ok(found[0]!.kinds.includes('session') && found[0]!.kinds.includes('before-after'));
  t.ok(found[1]!.kinds.includes('ratio') && found[1]!.kinds.includes('issue'));
  t.ok(found[2]!.kinds.includes('approx'));
});
