import t from 'tap';
import fc from 'fast-check';
import { fold, wordTokens } from '../../index/retrieval/analyzer.js';

// The reference: the Unicode path every text took before ASCII got its fast path (issue 14, per-query cost).
const refFold = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
const refTokens = (s: string) => refFold(s).match(/[\p{L}\p{N}]+/gu) ?? [];

t.test('issue 14: the ASCII fast path of fold and wordTokens gives exactly the Unicode path’s result', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary-ascii', maxLength: 200 }), (s) => {
      t.same(wordTokens(s), refTokens(s));
      t.equal(fold(s), refFold(s));
    }),
    { numRuns: 300 },
  );
  t.same(wordTokens('Café au LAIT, 2-3 crème'), ['cafe', 'au', 'lait', '2', '3', 'creme'], 'non-ASCII text still folds');
  t.same(wordTokens('PD-1 blockade: 90% of IL6'), ['pd', '1', 'blockade', '90', 'of', 'il6']);
});
