/**
 * Passage splitting: main-text blocks → passages of roughly 100–300 tokens, split at headings and paragraph
 * boundaries (sentences only when one paragraph alone is too long), each with its heading path and ordinal.
 */
import type { PassageInput } from '../page-model.js';
import type { TextBlock } from './extract-text.js';

/** Passage size targets in estimated tokens. */
export const PASSAGE_MIN_TOKENS = 100;
export const PASSAGE_MAX_TOKENS = 300;
/** A trailing passage smaller than this joins the previous one when they share a heading path. */
const TAIL_MERGE_TOKENS = 40;

/**
 * Token estimate without a tokenizer: about 4 characters per token for Latin-script text (the usual rule of thumb
 * for BPE vocabularies), with whole words counted at least once.
 */
export function estimateTokens(text: string): number {
  if (text === '') return 0;
  const words = text.split(/\s+/).filter((w) => w !== '').length;
  return Math.max(words, Math.ceil(text.length / 4));
}

interface Piece {
  text: string;
  snippetText: string;
}

/** Splits one over-long paragraph into sentence groups under the max. */
function splitLong(p: Piece): Piece[] {
  if (estimateTokens(p.text) <= PASSAGE_MAX_TOKENS) return [p];
  const sentences = p.text.match(/[^.!?。！？]+(?:[.!?。！？]+["»”’)]*\s*|$)/g) ?? [p.text];
  const out: Piece[] = [];
  let cur = '';
  const push = (): void => {
    const t = cur.trim();
    if (t !== '') out.push({ text: t, snippetText: t });
    cur = '';
  };
  for (const s of sentences) {
    if (cur !== '' && estimateTokens(cur + s) > PASSAGE_MAX_TOKENS) push();
    if (estimateTokens(s) > PASSAGE_MAX_TOKENS) {
      // A "sentence" with no punctuation (lists, tables flattened): cut on words.
      const words = s.split(/\s+/);
      for (const w of words) {
        if (cur !== '' && estimateTokens(`${cur} ${w}`) > PASSAGE_MAX_TOKENS) push();
        cur = cur === '' ? w : `${cur} ${w}`;
      }
    } else cur += s;
  }
  push();
  // The snippet-safe text of a split paragraph cannot be aligned piece by piece with certainty when it differs;
  // in that case every piece withholds what the paragraph withheld by using the intersection rule: only pieces
  // that occur verbatim in the snippet text keep their text.
  if (p.snippetText !== p.text) return out.map((o) => ({ text: o.text, snippetText: p.snippetText.includes(o.text) ? o.text : '' }));
  return out;
}

/** Builds passages from blocks. Ordinals are 0-based in reading order. */
export function buildPassages(blocks: readonly TextBlock[]): PassageInput[] {
  const passages: { text: string; snippetText: string; headingPath: string[]; page: number | undefined }[] = [];
  const path: { level: number; text: string }[] = [];
  let cur: Piece[] = [];
  let curTokens = 0;
  let curPath: string[] = [];
  let curPage: number | undefined;

  const flush = (): void => {
    if (cur.length === 0) return;
    const text = cur.map((p) => p.text).join('\n\n');
    const snippetText = cur
      .map((p) => p.snippetText)
      .filter((s) => s !== '')
      .join('\n\n');
    const prev = passages[passages.length - 1];
    if (
      prev &&
      curTokens < TAIL_MERGE_TOKENS &&
      prev.page === curPage &&
      sameArr(prev.headingPath, curPath) &&
      estimateTokens(prev.text) + curTokens <= PASSAGE_MAX_TOKENS
    ) {
      prev.text += `\n\n${text}`;
      prev.snippetText = [prev.snippetText, snippetText].filter((s) => s !== '').join('\n\n');
    } else passages.push({ text, snippetText, headingPath: curPath, page: curPage });
    cur = [];
    curTokens = 0;
  };

  for (const b of blocks) {
    // A passage stays on one page of a paged document, so its cite can name that page.
    if (b.page !== curPage) {
      flush();
      curPage = b.page;
    }
    if (b.kind === 'heading') {
      flush();
      while (path.length > 0 && path[path.length - 1]!.level >= b.level) path.pop();
      path.push({ level: b.level, text: b.text });
      curPath = path.map((h) => h.text);
      continue;
    }
    for (const piece of splitLong({ text: b.text, snippetText: b.snippetText })) {
      const t = estimateTokens(piece.text);
      if (cur.length > 0 && curTokens + t > PASSAGE_MAX_TOKENS && curTokens >= PASSAGE_MIN_TOKENS * 0.5) flush();
      if (cur.length === 0) curPath = path.map((h) => h.text);
      cur.push(piece);
      curTokens += t;
      if (curTokens >= PASSAGE_MAX_TOKENS) flush();
    }
  }
  flush();
  return passages.map((p, i) => ({
    ordinal: i,
    text: p.text,
    snippetText: p.snippetText,
    headingPath: p.headingPath,
    ...(p.page === undefined ? {} : { page: p.page }),
  }));
}

function sameArr(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
