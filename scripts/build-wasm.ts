/**
 * Assembles the flat vectors' SIMD kernel from its text, index/engines/memory/flat-vectors.wat, into flat-vectors.wasm beside the
 * module that loads it, in the source tree (tsx, tests) and in dist/ (the built service): the first step of
 * `npm run build`, which `npm ci` runs. The binary is never committed; its text is the only source.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import wabt from 'wabt';

export const WAT_URL = new URL('../index/engines/memory/flat-vectors.wat', import.meta.url);
/** Where the binary goes: beside index/engines/memory/flat-vectors.ts and beside dist/index/engines/memory/flat-vectors.js. */
export const WASM_URLS = [
  new URL('../index/engines/memory/flat-vectors.wasm', import.meta.url),
  new URL('../dist/index/engines/memory/flat-vectors.wasm', import.meta.url),
];

/** The WebAssembly binary of a module's text (SIMD and shared memory enabled; no names section, so comments change nothing). */
export async function assemble(wat: string): Promise<Uint8Array> {
  const features = { simd: true, threads: true };
  const module = (await wabt()).parseWat('flat-vectors.wat', wat, features);
  try {
    // The typings take no features here, but wabt's validate reads them (shared memory is checked against them).
    (module.validate as (features: object) => void)(features);
    return module.toBinary({}).buffer;
  } finally {
    module.destroy();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const binary = await assemble(await readFile(WAT_URL, 'utf8'));
  for (const url of WASM_URLS) {
    await mkdir(new URL('.', url), { recursive: true });
    await writeFile(url, binary);
  }
}
