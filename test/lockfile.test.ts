import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface LockEntry {
  readonly version?: string;
  readonly optional?: boolean;
  readonly optionalDependencies?: Record<string, string>;
}

/**
 * Where npm would place `name` for the package at `location`: the nearest node_modules folder on the way up that
 * holds it (the lockfile's own resolution rule), or null.
 */
function resolveIn(packages: Record<string, LockEntry>, location: string, name: string): string | null {
  let dir = location;
  for (;;) {
    const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (dir === '') return null;
    const i = dir.lastIndexOf('/node_modules/');
    dir = i < 0 ? '' : dir.slice(0, i);
  }
}

// @lancedb/lancedb 0.39.0 lists platform packages the registry does not have (only linux-x64 gnu/musl exist).
// npm 11.16+ then drops them from the lockfile it writes and `npm ci` rejects that same lockfile ("Missing:
// @lancedb/lancedb-darwin-arm64@ from lock file", npm/cli#9846). The lockfile carries an inert placeholder
// `{ "optional": true }` at the nested location npm's ideal tree uses for each; `npm install` removes them again.
t.test('issue 14 regression: every optional dependency has a lockfile entry, so `npm ci` accepts the lockfile', async (t) => {
  const lock = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const missing: string[] = [];
  for (const [location, entry] of Object.entries(lock.packages)) {
    if (location === '') continue;
    for (const name of Object.keys(entry.optionalDependencies ?? {})) {
      if (!resolveIn(lock.packages, location, name)) missing.push(`"${location}/node_modules/${name}": { "optional": true }`);
    }
  }
  t.same(missing, [], 'entries to add to package-lock.json "packages" after an `npm install` removed them');
  const lance = lock.packages['node_modules/@lancedb/lancedb'];
  t.equal(lance?.version, '0.39.0');
});
