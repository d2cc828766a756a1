import t from 'tap';
import { readFile } from 'node:fs/promises';
import { KERNEL_URL } from '../../index/engines/memory/flat-vectors.js';
import { assemble, WAT_URL, WASM_URLS } from '../../scripts/build-wasm.js';

/**
 * The flat vectors' WebAssembly kernel is built from its checked-in text (index/engines/memory/flat-vectors.wat) with wabt at
 * `npm run build`; what the code loads must be exactly that text assembled, so a stale or hand-made binary fails here.
 */
t.test('the kernel the code loads is flat-vectors.wat assembled, byte for byte', async (t) => {
  const built = Buffer.from(await assemble(await readFile(WAT_URL, 'utf8')));
  t.same([...built.subarray(0, 8)], [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0], 'a WebAssembly binary, version 1');
  t.equal(KERNEL_URL.href, WASM_URLS[0]!.href, 'the build writes where the code reads');
  t.equal((await readFile(KERNEL_URL)).equals(built), true, 'the loaded bytes equal the rebuilt ones');
});

t.test('a changed source assembles to other bytes (the comparison can fail)', async (t) => {
  const wat = await readFile(WAT_URL, 'utf8');
  const changed = wat.replace('(i32.const 64)', '(i32.const 48)');
  t.not(changed, wat);
  t.equal(Buffer.from(await assemble(changed)).equals(await readFile(KERNEL_URL)), false);
});
