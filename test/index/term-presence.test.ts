/**
 * Issue 14 (per-query CPU): TermPresence answers exactly what a substring test of ` term ` on the space-padded
 * search_text answers, for any analysed text and any query terms (including hash-colliding and prefix-sharing ones).
 */
import t from 'tap';
import fc from 'fast-check';
import { TermPresence } from '../../index/retrieval/query.js';

const substring = (text: string, term: string) => ` ${text} `.includes(` ${term} `);
const row = (search_text: string) => ({ page_ref: 1, ordinal: 0, title: '', lang: 'en', search_text }) as never;
/** Whether the row holds `term`, read as the compiled query's checks read it: the term's slot in the presence array. */
const has = (p: TermPresence, r: never, term: string) => p.present(r)[p.slot(term)] === 1;

t.test('issue 14: term presence in one pass equals the substring test', async (t) => {
  const word = fc.stringMatching(/^[a-zé0-9]{1,6}$/);
  fc.assert(
    fc.property(fc.array(word, { maxLength: 40 }), fc.array(word, { minLength: 1, maxLength: 12 }), (tokens, terms) => {
      const text = tokens.join(' ');
      const p = new TermPresence(terms);
      const r = row(text);
      for (const term of terms) if (has(p, r, term) !== substring(text, term)) return false;
      return true;
    }),
    { numRuns: 3000 },
  );
  // "Aa" and "BB" share a Java-style 31-hash; prefixes and suffixes of a token are not the token.
  const p = new TermPresence(['Aa', 'BB', 'cell', 'cells', 'ell']);
  const r = row('BB cells xcell');
  t.same(
    ['Aa', 'BB', 'cell', 'cells', 'ell'].map((x) => has(p, r, x)),
    [false, true, false, true, false],
  );
  t.throws(() => has(p, r, 'other'), /not a query term/);
});

t.test('issue 14: duplicate terms share one slot; a row is read once per query', async (t) => {
  const p = new TermPresence(['cell', 'bone', 'cell', 'marrow']);
  const r = row('marrow of the cell');
  const present = p.present(r);
  t.equal(present.length, 3, 'one slot per distinct term');
  t.same(
    ['cell', 'bone', 'marrow'].map((x) => present[p.slot(x)] === 1),
    [true, false, true],
  );
  t.same(
    ['cell', 'bone', 'marrow'].map((x) => has(p, r, x)),
    [true, false, true],
  );
  t.equal(p.present(r), present, 'a row is read once per query');
  t.throws(() => p.slot('other'), /not a query term/);
});

t.test(
  'issue 14: a postings candidate says which probe terms it holds (bits up to 31 terms, bytes beyond), as its text would',
  async (t) => {
    const p = new TermPresence(['cell', 'bone', 'marrow']);
    const given = (present: number | Uint8Array) => ({ page_ref: 1, ordinal: 0, title: '', _present: present }) as never;
    t.same([...p.present(given(0b101))], [1, 0, 1], 'bits in slot order');
    t.same([...p.present(given(0b010))], [0, 1, 0], 'the next row, the same scratch refilled');
    t.same([...p.present(given(Uint8Array.of(0, 1, 1)))], [0, 1, 1], 'bytes');
    t.same([...p.present(row('bone marrow'))], [0, 1, 1], 'a row with text only: found in its text');
    // The postings' answer for its hits equals the text's, in either form.
    const { Postings } = await import('../../index/engines/memory/postings.js');
    const many = Array.from({ length: 40 }, (_, i) => `t${i}`);
    const postings = new Postings();
    const texts = ['t1 t5 t33 t39', 't0 t2 t34', 't3'];
    texts.forEach((x, i) => postings.add(i + 1, x));
    postings.flush();
    for (const probe of [many.slice(0, 8), many]) {
      const q = new TermPresence(probe);
      const hits = postings.search({ must: [], should: probe.map((term) => ({ term, weight: 1 })), probe }, 10);
      t.equal(hits.length, texts.length);
      for (const h of hits) {
        const fromPostings = [...q.present(given(postings.probePresence(h, probe)))];
        t.same(fromPostings, [...q.present(row(texts[h.rowId - 1]!))], `${probe.length} probe terms, row ${h.rowId}`);
      }
    }
  },
);
