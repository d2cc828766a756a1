#!/usr/bin/env node
// The `svc` command. Runs the compiled CLI (built by `npm ci` / `npm run build` into dist/).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const compiled = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(compiled)) {
  process.stderr.write('svc: dist/ is missing; run `npm run build` (npm ci does it) first\n');
  process.exit(1);
}
const { main } = await import(pathToFileURL(compiled).href);
process.exitCode = await main(process.argv.slice(2));
