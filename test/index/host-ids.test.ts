import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { HostIds, type HostRow } from '../../index/engines/lance/host-ids.js';

/** A host row as the pages table gives it; `learn` reads its host and id. */
const row = (host: string, host_id: number) => ({ host, host_id, lang: 'en' }) as unknown as HostRow;

t.test('HostIds.under: the hosts equal to a domain or under it, as a scan of every host finds them', async (t) => {
  const ids = new HostIds(null);
  ids.learn([row('example.org', 1), row('www.example.org', 2), row('badexample.org', 3), row('a.b.example.org', 4)]);
  const under = (d: string) => ids.under(d).sort((a, b) => a - b);
  t.same(under('example.org'), [1, 2, 4], 'not badexample.org');
  t.same(under('b.example.org'), [4]);
  t.same(under('org'), [1, 2, 3, 4]);
  t.same(under('ample.org'), [], 'a label boundary, not a substring');
  t.same(under('example.org.'), []);
  t.equal(ids.idFor('news.example.org'), 5, 'a new host: max + 1');
  t.same(under('example.org'), [1, 2, 4, 5]);
  ids.learn([row('www.example.org', 9)]);
  t.same(under('example.org'), [1, 4, 5, 9], 'a host whose id changed is found by its new id only');
  const copy = ids.under('org');
  copy.push(99);
  t.notOk(ids.under('org').includes(99), 'callers get a copy');

  // Random hosts from a few labels (dots doubled and trailing too), learned and relearned with other ids, and new
  // hosts given theirs: every domain answers as the scan does.
  const label = fc.constantFrom('a', 'b', 'ex', 'org', 'ca', '');
  const host = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join('.'));
  const op = fc.oneof(
    fc.record({ learn: fc.array(fc.record({ host, id: fc.integer({ min: 1, max: 30 }) }), { maxLength: 6 }) }),
    fc.record({ add: host }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 25 }), (ops) => {
      const h = new HostIds(null);
      const all = new Map<string, number>();
      for (const o of ops) {
        if ('learn' in o) {
          h.learn(o.learn.map((r) => row(r.host, r.id)));
          for (const r of o.learn) all.set(r.host, r.id);
        } else all.set(o.add, h.idFor(o.add));
      }
      const domains = new Set(['', 'zz', ...[...all.keys()].flatMap((x) => x.split('.').map((_, i, ls) => ls.slice(i).join('.')))]);
      for (const d of domains) {
        const want = [...all].filter(([x]) => x === d || x.endsWith(`.${d}`)).map(([, id]) => id);
        assert.deepStrictEqual(h.under(d), want, d); // the scan's order too: hosts in the order they became known
      }
    }),
    { numRuns: 400 },
  );
  t.pass('400 random histories: every domain answers as the scan, in its order');
});
