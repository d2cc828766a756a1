import t from 'tap';
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

// tap skips test files under a `fixtures` (or `tap-snapshots`) folder whatever the include pattern says: two test
// files once sat in test/fixtures and never ran. Every test file must live where tap looks.
t.test('no test file sits in a folder tap does not run', async (t) => {
  const root = join(import.meta.dirname, '..');
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.test.ts'));
  t.ok(files.length > 50, `${files.length} test files found`);
  const hidden = files.filter((f) => f.split(sep).some((part) => part === 'fixtures' || part === 'tap-snapshots' || part === 'node_modules'));
  t.same(hidden.map((f) => relative(root, join(root, f))), []);
});
