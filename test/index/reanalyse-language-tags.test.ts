/**
 * An index written before terms carried their language (analysis version 2: a French page's stems bare, as an English
 * page's) is re-analysed when opened, so its postings never mix the two: afterwards a French reading finds the French
 * page and no English one, as in a fresh index.
 */
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { analyze } from '../../index/retrieval/analyzer.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const FRENCH = 'Les collectes des matières résiduelles ont lieu le lundi dans tous les arrondissements.';
const ENGLISH = 'The kidney collecting system develops from the ureteric bud, and its cells are collected for analysis.';

t.test('an index of untagged terms is re-analysed at open: French and English terms apart again', async (t) => {
  const dir = t.testdir();
  let idx = await PassageIndex.open({ dir, embedder: null });
  await idx.upsertPages([
    makePage(1, 'ville.example', [FRENCH], { title: 'Collectes', lang: 'fr' }),
    makePage(2, 'lab.example', [ENGLISH], { title: 'Collecting system', lang: 'en' }),
  ]);
  await idx.optimize();
  await idx.close();

  // As the previous analysis wrote them: the French page's stems without their tag.
  const db = await lancedb.connect(dir);
  const table = await db.openTable('passages');
  const untagged = analyze(`Collectes\n${FRENCH}`, 'fr')
    .map((x) => x.replace(/^fr:/, ''))
    .join(' ');
  await table.update({ where: 'page_ref = 1', values: { search_text: untagged } });
  table.close();
  db.close();
  const metaFile = join(dir, 'svc-index-meta.json');
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { analysis?: number };
  t.equal(meta.analysis, 3, 'the index records the tagged analysis');
  writeFileSync(metaFile, JSON.stringify({ ...meta, analysis: 2 }));

  idx = await PassageIndex.open({ dir, embedder: null });
  t.teardown(() => idx.close());
  t.equal(JSON.parse(readFileSync(metaFile, 'utf8')).analysis, 3, 're-analysed to the current version');
  const reader = await lancedb.connect(dir);
  const passages = await reader.openTable('passages');
  const [row] = (await passages.query().where('page_ref = 1').select(['search_text']).toArray()) as { search_text: string }[];
  passages.close();
  reader.close();
  t.same(row?.search_text.split(' ').slice(0, 3), ['fr:collect', 'fr:collect', 'fr:matier'], 'the French terms tagged');
  const refs = async (q: string) => (await retrieve(idx, { query: q, mode: 'bm25' })).passages.map((p) => p.row.page_ref);
  t.same(await refs('les collectes'), [1], 'a French reading: the French page only');
  t.same(await refs('the collecting system'), [2], 'an English reading: the English page only');
});
