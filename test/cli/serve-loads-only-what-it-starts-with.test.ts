/**
 * What `svc serve` loads before its first search: not the code of another CLI command, the MCP SDK (loaded at the first
 * /mcp request), the PostgreSQL client (only with SVC_DATABASE_URL), nor a second build of Arrow beside LanceDB's.
 * Each is seconds of a restart's module load spread over the process and every search thread.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The files of every module a fresh process holds after importing `entry` (CommonJS from require.cache, ESM from a hook). */
function loadedBy(entry: string): string[] {
  const script = `
    import { createRequire, register } from 'node:module';
    import { MessageChannel } from 'node:worker_threads';
    const { port1, port2 } = new MessageChannel();
    const esm = [];
    port1.on('message', (u) => esm.push(u));
    port1.unref();
    register('data:text/javascript,' + encodeURIComponent(
      'let port; export function initialize(d) { port = d.port; }' +
      'export async function load(url, ctx, next) { port.postMessage(url); return next(url, ctx); }'
    ), { data: { port: port2 }, transferList: [port2] });
    await import(${JSON.stringify(join(ROOT, entry))});
    await new Promise((r) => setTimeout(r, 200));
    const cjs = Object.keys(createRequire(import.meta.url).cache);
    process.stdout.write(JSON.stringify([...esm, ...cjs]));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as string[];
}

t.test('the serve path loads no other command, no MCP SDK, no PostgreSQL client, one Arrow', async (t) => {
  const files = loadedBy('main.ts');
  const has = (re: RegExp) => files.filter((f) => re.test(f));
  t.ok(has(/@lancedb[\\/]lancedb[\\/]dist[\\/]index\.js$/).length > 0, 'LanceDB is loaded (the check sees CommonJS modules)');
  t.ok(has(/[\\/]tools[\\/]search\.ts$/).length > 0, 'the search tool is loaded (the check sees ESM modules)');
  t.same(has(/@modelcontextprotocol/), [], 'no MCP SDK module');
  t.same(has(/node_modules[\\/]pg[\\/]/), [], 'no PostgreSQL client module');
  t.same(has(/apache-arrow[\\/].*\.mjs$/), [], "no ESM build of Arrow (LanceDB's CommonJS one only)");
  t.ok(has(/apache-arrow[\\/]Arrow\.node\.js$/).length > 0, "Arrow's CommonJS build is the one loaded");
  const cli = loadedBy('cli/main.ts');
  t.same(
    cli.filter((f) => /[\\/]cli[\\/](eval|ingest|fixtures|crawl|serve|reindex)\.ts$/.test(f)),
    [],
    'the CLI entry loads no command before it runs',
  );
});
