import t from 'tap';
import { readFile } from 'node:fs/promises';
import { FLAT_VECTORS_WASM } from '../../index/flat-vectors-kernel.js';
import { assemble, KERNEL_URL, render, WAT_URL } from '../../scripts/build-wasm.js';

/**
 * Issue 42: the flat vectors' WebAssembly kernel is built from its checked-in text (index/flat-vectors.wat) with wabt;
 * what the code loads must be exactly that text assembled, so an edit of either side alone fails here.
 */
t.test('issue 42: the kernel the code loads is flat-vectors.wat assembled, byte for byte', async (t) => {
  const built = await assemble(await readFile(WAT_URL, 'utf8'));
  t.ok(built.length > 1000, `an assembled module (${built.length} bytes)`);
  t.same([...built.subarray(0, 8)], [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0], 'a WebAssembly binary, version 1');
  t.equal(Buffer.from(FLAT_VECTORS_WASM, 'base64').equals(Buffer.from(built)), true, 'the loaded bytes equal the rebuilt ones');
  t.equal(await readFile(KERNEL_URL, 'utf8'), render(built), 'the generated module is exactly what `npm run build:wasm` writes');
});

t.test('issue 42: a changed source assembles to other bytes (the comparison can fail)', async (t) => {
  const wat = await readFile(WAT_URL, 'utf8');
  const changed = wat.replace('(i32.const 64)', '(i32.const 48)');
  t.not(changed, wat);
  t.equal(Buffer.from(await assemble(changed)).equals(Buffer.from(FLAT_VECTORS_WASM, 'base64')), false);
});
