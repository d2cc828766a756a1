#!/usr/bin/env node
// The `svc` command. Runs the compiled CLI (built by `npm ci` / `npm run build` into dist/).
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const compiled = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(compiled)) {
  process.stderr.write('svc: dist/ is missing; run `npm run build` (npm ci does it) first\n');
  process.exit(1);
}
// Node 22.1 and later keep V8's compiled code of each module on disk (os.tmpdir()), so a restart, and each search
// thread, compiles none of it again; Node 20 has no such cache and starts as before. Worker threads read it through
// the environment variable.
const cache = module.enableCompileCache?.();
if (cache?.directory) process.env.NODE_COMPILE_CACHE ??= cache.directory;
const { main } = await import(pathToFileURL(compiled).href);
process.exitCode = await main(process.argv.slice(2));
