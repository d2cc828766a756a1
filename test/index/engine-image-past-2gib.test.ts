/**
 * An engine image's sections are laid out at 8-byte aligned offsets that pass 2 GiB and 4 GiB for an index of a few
 * million passages: the alignment must not wrap (32-bit bit operations turned such an offset negative, and a 2M-passage
 * index could not make or publish its image).
 */
import t from 'tap';
import { align8 } from '../../index/engines/lance/engine-image.js';

t.test('offsets past 2 GiB and 4 GiB align up to the next multiple of 8', async (t) => {
  for (const [n, want] of [
    [0, 0],
    [1, 8],
    [8, 8],
    [2 ** 31 - 1, 2 ** 31],
    [2 ** 31 + 1, 2 ** 31 + 8],
    [3_000_000_003, 3_000_000_008],
    [2 ** 32 + 5, 2 ** 32 + 8],
    [2 ** 40 + 1, 2 ** 40 + 8],
  ] as const)
    t.equal(align8(n), want, `align8(${n})`);
});
