import t from 'tap';
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

// tap skips test files under a `fixtures` (or `tap-snapshots`) folder whatever the include pattern says: two test
// files once sat in test/fixtures and never ran. Every test file must live where tap looks.
t.test('no test file sits in a folder tap does not run', async (t) => {
  const root = join(import.meta.dirname, '..');
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.test.ts'));
  t.ok(files.length > 50, `${files.length} test files found`);
  const hidden = files.filter((f) =>
    f.split(sep).some((part) => part === 'fixtures' || part === 'tap-snapshots' || part === 'node_modules'),
  );
  t.same(
    hidden.map((f) => relative(root, join(root, f))),
    [],
  );
});

// Issue 13 item 8: test/ mirrors the source folders, so the tests of crawler/x.ts are found in test/crawler/.
const SOURCE_FOLDERS = ['cli', 'crawler', 'index', 'rest', 'state', 'tools', 'web', 'webmaster', 'fixtures'];
/** Tests named like a source file elsewhere on purpose, and why. */
const DELIBERATE: Record<string, string> = {
  'e2e/documents.test.ts': 'issue 16 end to end (crawl to answers), not state/documents.ts alone',
  'harness/loopback-only.test.ts': 'fixtures/loopback-only.ts: tap skips any folder named fixtures',
  'rest/mcp.test.ts': '/mcp over HTTP (rest/mcp-route.ts), not tools/mcp.ts alone',
};

t.test('issue 13: tests mirror the source folders', async (t) => {
  const root = join(import.meta.dirname, '..');
  const repo = join(root, '..');
  const files = (readdirSync(root, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => f.split(sep).join('/'));
  // A test file sits in test/ itself (top-level modules), in a source folder's mirror, or in e2e/ or harness/.
  const folders = new Set([...SOURCE_FOLDERS.filter((d) => d !== 'fixtures'), 'e2e', 'harness']);
  t.same(
    files.filter((f) => f.includes('/') && !folders.has(f.slice(0, f.indexOf('/')))),
    [],
    'every test file is in a mirrored folder',
  );

  // A test named after a source file (x.test.ts, x-issueN.test.ts) sits in that file's top folder.
  const homes = new Map<string, Set<string>>();
  for (const folder of SOURCE_FOLDERS) {
    for (const f of readdirSync(join(repo, folder), { recursive: true }) as string[]) {
      if (!f.endsWith('.ts') || f.endsWith('.d.ts')) continue;
      const name = f.split(sep).pop()!.slice(0, -3);
      homes.set(name, (homes.get(name) ?? new Set()).add(folder));
    }
  }
  t.ok(homes.has('store') && homes.get('crawler')?.has('crawler'), 'source files found');
  const astray = files.filter((f) => {
    if (DELIBERATE[f]) return false;
    const name = f
      .split('/')
      .pop()!
      .replace(/\.test\.ts$/, '')
      .replace(/-issue\d+$/, '');
    const home = homes.get(name);
    const folder = f.includes('/') ? f.slice(0, f.indexOf('/')) : '.';
    return home !== undefined && !home.has(folder);
  });
  t.same(astray, [], "every test named after a source file is in that file's folder");
});
