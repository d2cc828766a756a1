/**
 * Re-embedding with the real all-MiniLM-L6-v2 (the shared weights): an index built with the hashing stand-in's vectors
 * gets the model's, and the vector arm then finds a passage by meaning (no word in common with the query).
 */
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { checkWeights, createEmbedder, createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const SHARED_MODELS = fileURLToPath(new URL('../../../shared/data/models/', import.meta.url));
const MODEL = 'all-MiniLM-L6-v2';
const problem = checkWeights(SHARED_MODELS, MODEL);

t.test(
  "another model's vectors replaced by the real model's: the vector arm answers by meaning",
  { skip: problem && !process.env.CI ? `SKIPPED real-model test: ${problem}` : false },
  async (t) => {
    t.equal(problem, null, 'the shared q8 weights are present and match SHA256SUMS');
    const dir = t.testdir();
    const pages = [
      makePage(1, 'a.example.ca', ['Renew your passport online before it expires.'], { title: 'Passport renewal' }),
      makePage(2, 'b.example.ca', ['The recipe needs two eggs, flour and a cup of milk.'], { title: 'Pancakes' }),
      makePage(3, 'c.example.ca', ['Wildfire smoke advisories and evacuation orders for the region.'], { title: 'Wildfires' }),
    ];
    const old = await PassageIndex.open({ dir, embedder: createHashingEmbedder(384) });
    await old.upsertPages(pages);
    await old.close();

    const model = await createEmbedder({ modelDir: SHARED_MODELS, modelName: MODEL, threads: 1 });
    t.ok(model, 'loads');
    if (!model) return;
    t.teardown(() => model.close());
    const idx = await PassageIndex.open({ dir, embedder: model, reembed: true });
    t.teardown(() => idx.close());
    t.equal(idx.rankingMode(), 'bm25', 'same dimension, another model: not served');
    t.equal(await idx.reembed(), 'done');
    t.equal(idx.rankingMode(), 'hybrid-rrf');
    t.equal(idx.storedVectorModel, `${MODEL}/q8`);
    const [q] = await model.embed(['what should I bake for breakfast'], { interactive: true });
    const near = await idx.vectorCandidates(q!, {}, 1);
    t.equal(near[0]?.page_ref, 2, 'the pancake recipe, found by meaning');
  },
);
