/**
 * A delta segment names the writer's title statistics after its patches (titles and their terms in all); a replay
 * that ends elsewhere is refused, so a reader never serves title scores other than the writer's (it scans instead).
 */
import t from 'tap';
import { emptyRows, encodeDelta } from '../../index/engines/lance/engine-delta.js';
import { applyDelta, TextSnapshot } from '../../index/engines/lance/text-engine.js';

const identity = { version: 2, analysis: 1, maxTermLength: 64, from: 1, base: 'b', prev: 'b' };

t.test("a delta whose replay does not reach the writer's title statistics is refused", async (t) => {
  const ok = encodeDelta([{ gone: [], rows: emptyRows(false, false) }], { ...identity, titles: { titles: 0, terms: 0 } });
  await applyDelta(new TextSnapshot(64), ok);
  t.same(ok.header.titles, { titles: 0, terms: 0 }, 'the header carries them');

  const off = encodeDelta([{ gone: [], rows: emptyRows(false, false) }], { ...identity, titles: { titles: 3, terms: 7 } });
  await t.rejects(applyDelta(new TextSnapshot(64), off), /title statistics 0\/0 after replay, the writer's 3\/7/);
});
