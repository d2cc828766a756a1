/**
 * A fix to transformers.js' tokenizers, applied by the embedding worker when a model is loaded.
 */
import { readFileSync } from 'node:fs';

/** What the worker reaches of transformers.js' Metaspace pre-tokenizer (not in its typings). */
interface MetaspaceLike {
  replacement: string;
  pre_tokenize_text(text: string, options?: unknown): string[];
}

/**
 * transformers.js' Metaspace pre-tokenizer ignores `split` (true in E5's tokenizer.json, as in tokenizers' default),
 * so a whole passage reaches the Unigram lattice as one word, and building that lattice copies the rest of the word
 * at every character: quadratic in the passage's length, a large share of an E5 batch's time. Splitting as tokenizers
 * does (each replacement character begins a word, merged with what follows) gives the same ids: SentencePiece pieces
 * never span a word boundary (test/index/metaspace.test.ts compares both on real passages).
 */
export function splitMetaspaceWords(tokenizer: unknown, tokenizerJsonFile: string): boolean {
  const json = JSON.parse(readFileSync(tokenizerJsonFile, 'utf8')) as { pre_tokenizer?: { type?: string; split?: boolean } | null };
  if (json.pre_tokenizer?.type !== 'Metaspace' || json.pre_tokenizer.split === false) return false;
  const pre = (tokenizer as { pre_tokenizer?: Partial<MetaspaceLike> | null }).pre_tokenizer;
  if (!pre || typeof pre.replacement !== 'string' || pre.replacement.length !== 1 || typeof pre.pre_tokenize_text !== 'function')
    return false;
  const whole = pre.pre_tokenize_text.bind(pre);
  const rep = pre.replacement;
  pre.pre_tokenize_text = (text, options) =>
    whole(text, options).flatMap((w) => {
      const words: string[] = [];
      let start = 0;
      for (let i = 1; i < w.length; i++)
        if (w[i] === rep) {
          words.push(w.slice(start, i));
          start = i;
        }
      words.push(w.slice(start));
      return words;
    });
  return true;
}
