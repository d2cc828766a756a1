/**
 * Which versions of the passages table a reader may follow without a scan (index/engines/lance/passage-changes.ts, issue 14 item
 * 5): the writer's own commits by their pages, and its maintenance (compaction, index updates) as rows moved, from
 * the moment it begins — a search thread may be asked for a version the maintenance made before it has ended.
 */
import t from 'tap';
import { PassageChanges } from '../../index/engines/lance/passage-changes.js';

t.test('commits by their pages; maintenance moves rows from its begin mark to its end mark, and no further', async (t) => {
  const c = new PassageChanges();
  c.record({ version: 5, pageRefs: [1, 2] });
  c.record({ version: 6, pageRefs: [2, 3] });
  t.same(c.between(4, 6), { pageRefs: [1, 2, 3], moved: false }, 'two commits: their pages, each once');
  t.equal(c.between(3, 6), null, 'a version not told: unknown');
  t.same(c.between(6, 6), { pageRefs: [], moved: false }, 'no version between');

  c.record({ version: 6, pageRefs: [], maintenance: 'begin' });
  t.same(c.between(4, 8), { pageRefs: [1, 2, 3], moved: true }, 'while it runs, every version after its start is its own');
  c.record({ version: 8, pageRefs: [], maintenance: 'end' });
  t.same(c.between(6, 8), { pageRefs: [], moved: true }, 'after its end: the versions it made');
  t.equal(c.between(6, 9), null, 'a version after its end is not its own');
  c.record({ version: 9, pageRefs: [4] });
  t.same(c.between(5, 9), { pageRefs: [2, 3, 4], moved: true }, 'commits and maintenance across one span');

  c.record({ version: 9, pageRefs: [], maintenance: 'begin' });
  c.record({ version: 9, pageRefs: [], maintenance: 'end' });
  t.equal(c.between(9, 10), null, 'maintenance that made no version leaves none known');
  c.record({ version: 12, pageRefs: [], maintenance: 'end' });
  t.equal(c.between(9, 12), null, 'an end without a begin marks nothing');
  c.record({ version: 10, pageRefs: [1.5, Number.NaN, 7] });
  t.same(c.between(9, 10), { pageRefs: [7], moved: false }, 'only integer page refs are kept (they go into a filter)');
});
