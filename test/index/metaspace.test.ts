/**
 * E5's tokenizer splits at word boundaries (index/serving/metaspace.ts) where transformers.js would run the Unigram
 * lattice over a whole passage: the ids must be exactly those of the unsplit tokenizer, on real English and French
 * passages and on the edge cases of whitespace (which the normaliser and the replacement character decide).
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { readCorpus } from '../../cli/ingest.js';
import { checkWeights } from '../../index/serving/embedder.js';
import { readTopLevelField, splitMetaspaceWords } from '../../index/serving/metaspace.js';
import { crossLingualSet } from '../helpers/cross-lingual-set.js';

const MODELS = fileURLToPath(new URL('../../../shared/data/models/', import.meta.url));
const SCIFACT = fileURLToPath(new URL('../../../shared/data/beir/scifact/corpus.jsonl.gz', import.meta.url));
const E5 = 'multilingual-e5-small';
const problem = checkWeights(MODELS, E5, { verifyHash: false });

t.test(
  'split at word boundaries: the same ids as the whole-passage lattice',
  { skip: problem && !process.env.CI ? `SKIPPED: ${problem}` : false },
  async (t) => {
    env.allowRemoteModels = false;
    env.localModelPath = MODELS;
    const plain = await AutoTokenizer.from_pretrained(E5);
    const split = await AutoTokenizer.from_pretrained(E5);
    t.equal(splitMetaspaceWords(split, join(MODELS, E5, 'tokenizer.json')), true, "E5's Metaspace splits");
    t.not(split.pre_tokenizer, plain.pre_tokenizer, 'two tokenizers, one fixed');
    const minilm = await AutoTokenizer.from_pretrained('all-MiniLM-L6-v2');
    t.equal(splitMetaspaceWords(minilm, join(MODELS, 'all-MiniLM-L6-v2', 'tokenizer.json')), false, 'a BERT tokenizer is left alone');

    const texts: string[] = [
      '',
      ' ',
      'passage: ',
      'query:   three  spaces   between',
      '  leading and trailing  ',
      'tab\tnew\nline\r\nand form\ffeed',
      'a\u2581literal replacement character▁inside▁words',
      'ﬁnancement du Québec — « guillemets » et l’apostrophe',
      '東京の病院でマスクが盗まれた 2020年',
      'emoji 🎉🎉 and café au lait',
    ];
    for await (const d of readCorpus(SCIFACT)) {
      texts.push(`passage: ${d.title}\n${d.text}`);
      if (texts.length >= 70) break;
    }
    for (const p of crossLingualSet().web) for (const x of p.passages) texts.push(`passage: ${p.title}\n${x.text}`);
    t.ok(texts.length > 80, `${texts.length} texts`);
    let differ = 0;
    for (const text of texts) {
      const a = plain(text, { truncation: true, max_length: 512 }).input_ids.tolist().join();
      const b = split(text, { truncation: true, max_length: 512 }).input_ids.tolist().join();
      if (a !== b) {
        differ++;
        t.fail(`ids differ: ${JSON.stringify(text.slice(0, 80))}`);
      }
    }
    t.equal(differ, 0, 'every text: the same ids');
  },
);

t.test('the pre-tokenizer read from the head of tokenizer.json is the one a full parse finds', async (t) => {
  for (const model of [E5, 'all-MiniLM-L6-v2']) {
    const file = join(MODELS, model, 'tokenizer.json');
    let whole: { pre_tokenizer?: unknown };
    try {
      whole = JSON.parse(readFileSync(file, 'utf8')) as { pre_tokenizer?: unknown };
    } catch {
      t.comment(`SKIPPED: no ${file}`);
      continue;
    }
    t.same(readTopLevelField(file, 'pre_tokenizer'), whole.pre_tokenizer, model);
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-top-field-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  // Strings holding braces, quotes, colons and the key itself; the same key nested; multi-byte text across the first
  // read's boundary; the field after a value far larger than the first read.
  const tricky = {
    version: '1.0',
    'a"}:{,': ['pre_tokenizer', '}{][', '\\"', { pre_tokenizer: 'nested, not this' }],
    big: 'é€𝄞'.repeat(40000),
    pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', split: true, odd: 'x":{,}' },
    model: { vocab: [['pre_tokenizer', 1]] },
  };
  t.same(readTopLevelField(write('tricky.json', JSON.stringify(tricky, null, 2)), 'pre_tokenizer'), tricky.pre_tokenizer);
  t.same(readTopLevelField(write('compact.json', JSON.stringify(tricky)), 'pre_tokenizer'), tricky.pre_tokenizer);
  t.equal(readTopLevelField(write('last.json', '{"a": 1, "pre_tokenizer": null}'), 'pre_tokenizer'), null, 'a null value, last');
  t.equal(readTopLevelField(write('absent.json', JSON.stringify({ a: { pre_tokenizer: 1 } })), 'pre_tokenizer'), undefined, 'absent');
  t.throws(() => readTopLevelField(write('cut.json', '{"a": [1, 2'), 'pre_tokenizer'), /not a complete JSON object/);
});
