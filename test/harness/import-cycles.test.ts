import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findCycles } from './import-cycles.js';

/** Writes `files` (repo-relative path → text) under a fresh folder and returns it. */
function tree(t: Test, files: Record<string, string>): string {
  const root = t.testdir();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

// Issue 44 item 2: `npm run lint` runs the same check as a script; this proves it finds what it must.
t.test('the repository source has no import circle', async (t) => {
  t.same(findCycles(join(import.meta.dirname, '../..')), []);
});

t.test('a circle through a type-only import is found and named', async (t) => {
  const root = tree(t, {
    'state/a.ts': "import { b } from './b.js';\nexport const a = b + 1;\n",
    'state/b.ts': "import type { C } from './repos/c.js';\nexport const b: C = 1;\n",
    'state/repos/c.ts': "export type { A } from '../a.js';\nexport type C = number;\n",
    'state/d.ts': "import { a } from './a.js';\nexport const d = a;\n",
  });
  t.same(findCycles(root), [['state/a.ts', 'state/b.ts', 'state/repos/c.ts', 'state/a.ts']]);
});

t.test('dynamic imports count; imports of packages and of files that do not exist do not', async (t) => {
  const root = tree(t, {
    'x.ts': "import pg from 'pg';\nimport './missing.js';\nexport const load = () => import('./y.js');\nexport default pg;\n",
    'y.ts': "import { load } from './x.js';\nexport const again = load;\n",
    'z.ts': "import { load } from './x.js';\nexport const z = load;\n",
  });
  t.same(findCycles(root), [['x.ts', 'y.ts', 'x.ts']]);
});

t.test('a tree without a circle, and folders that hold no source, give nothing', async (t) => {
  const root = tree(t, {
    'a.ts': "import { b } from './lib/b.js';\nexport const a = b;\n",
    'lib/b.ts': 'export const b = 1;\n',
    'node_modules/p/index.ts': "import './index.js';\n",
    'dist/a.ts': "import './a.js';\n",
  });
  t.same(findCycles(root), []);
});

t.test('a file importing itself is a circle', async (t) => {
  const root = tree(t, { 'self.ts': "export * from './self.js';\n" });
  t.same(findCycles(root), [['self.ts', 'self.ts']]);
});
