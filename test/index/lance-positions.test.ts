import t from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { Index, MatchQuery, Operator, PhraseQuery } from '@lancedb/lancedb';
import { Field, Int32, Schema, Utf8 } from 'apache-arrow';
import { FTS_OPTIONS } from '../../index/engines/lance/maintenance.js';

// Whether svc may turn FTS positions on (FTS_OPTIONS.withPosition) and match phrases with PhraseQuery: LanceDB 0.31
// failed every optimize of a positions index with an unindexed tail ("Error decoding batch: LanceError(Arrow)…",
// lance-format/lance#7653 in 0.37), and found no phrase in the tail. No timing here: tap's timeout only bounds a hang.
t.test('issue 14 regression: a positions FTS index compacts with an unindexed tail and PhraseQuery finds phrases in it', async (t) => {
  const db = await lancedb.connect(t.testdir());
  t.teardown(() => db.close());
  const schema = new Schema([new Field('id', new Int32(), false), new Field('text', new Utf8(), false)]);
  const words = 'cells protein regulation tumour growth signalling immune response therapy patients'.split(' ');
  let id = 0;
  const rows = (n: number, extra: (i: number) => string | null = () => null) =>
    lancedb.makeArrowTable(
      Array.from({ length: n }, (_, i) => ({
        id: id++,
        text: extra(i) ?? Array.from({ length: 12 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' '),
      })),
      { schema },
    );
  const table = await db.createTable('p', rows(3000), { storageOptions: { new_table_data_storage_version: '2.1' } });
  t.teardown(() => table.close());
  await table.createIndex('text', { config: Index.fts({ ...FTS_OPTIONS, withPosition: true }) });
  const count = async (q: MatchQuery | PhraseQuery) => (await table.query().fullTextSearch(q).select(['id']).limit(50).toArray()).length;
  for (let round = 1; round <= 4; round++) {
    const fresh = `zqfresh${round}x`;
    await table.add(rows(500, (i) => (i === 0 ? `Regulatory ${fresh} cells were measured` : i === 1 ? `cells ${fresh} in reverse` : null)));
    t.equal(await count(new PhraseQuery(`${fresh} cells`, 'text')), 1, `round ${round}: the phrase is found in the unindexed tail`);
    t.equal(
      await count(new MatchQuery(`${fresh} cells`, 'text', { operator: Operator.And })),
      2,
      `round ${round}: both rows have both words`,
    );
    await table.optimize();
    t.equal(await count(new PhraseQuery(`${fresh} cells`, 'text')), 1, `round ${round}: and in the index after optimize`);
    t.equal(
      await count(new MatchQuery('cells zqneverseen', 'text', { operator: Operator.And })),
      0,
      `round ${round}: an unknown word matches nothing`,
    );
  }
  const stats = await table.indexStats('text_idx');
  t.equal(stats?.numUnindexedRows, 0, 'every row is indexed');
  t.equal(await table.countRows(), 5000);
});
