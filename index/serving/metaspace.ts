/**
 * A fix to transformers.js' tokenizers, applied by the embedding worker when a model is loaded.
 */
import { closeSync, openSync, readSync } from 'node:fs';

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
  const config = readTopLevelField(tokenizerJsonFile, 'pre_tokenizer') as { type?: string; split?: boolean } | null | undefined;
  if (config?.type !== 'Metaspace' || config.split === false) return false;
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

/**
 * One top-level field of a JSON object file, read from the file's head: tokenizers writes `pre_tokenizer` before the
 * vocabulary (`model`, nearly all of E5's tokenizer.json), and transformers.js has already parsed the whole file once
 * without keeping it, so a second full parse would only cost load time and memory. The head grows until the field's
 * value is complete; a field that is absent, or comes last, costs one read of the whole file. `undefined` when absent.
 */
export function readTopLevelField(file: string, key: string): unknown {
  const fd = openSync(file, 'r');
  try {
    let text = '';
    let size = 1 << 16;
    const decoder = new TextDecoder();
    for (;;) {
      const buf = Buffer.allocUnsafe(size);
      const got = readSync(fd, buf, 0, size, null);
      const end = got < size;
      text += decoder.decode(buf.subarray(0, got), { stream: !end });
      const found = topLevelField(text, key, end);
      if (found !== INCOMPLETE) return found;
      size *= 4;
    }
  } finally {
    closeSync(fd);
  }
}

const INCOMPLETE = Symbol('incomplete');

/**
 * Scans `text` (a JSON object, or the head of one when `complete` is false) for `key` at depth 1 and parses its value;
 * INCOMPLETE when the head ends first.
 */
function topLevelField(text: string, key: string, complete: boolean): unknown {
  let depth = 0;
  let i = 0;
  let valueStart = -1;
  let lastString = '';
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= n) break;
      if (depth === 1 && valueStart < 0) lastString = text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return valueStart >= 0 ? JSON.parse(text.slice(valueStart, i)) : undefined;
    } else if (c === ':' && depth === 1 && valueStart < 0 && lastString !== '' && JSON.parse(lastString) === key) valueStart = i + 1;
    else if (c === ',' && depth === 1) {
      if (valueStart >= 0) return JSON.parse(text.slice(valueStart, i));
      lastString = '';
    }
    i++;
  }
  if (complete) throw new Error('not a complete JSON object');
  return INCOMPLETE;
}
