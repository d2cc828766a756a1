/**
 * Plain-text and Markdown documents (text/plain, text/markdown) → title and passages, with the same passage model
 * as HTML pages. Markdown ATX headings (`#`…`######`) and Setext headings (underlined with = or -) become the
 * heading path; links keep their text, emphasis and code marks are dropped. Plain text: paragraphs at blank lines.
 */
import type { PassageInput } from '../page-model.js';
import { buildPassages } from './extract-passages.js';
import type { TextBlock } from './extract-text.js';

/** A text document turned into what the index stores. */
export interface PlainDocument {
  readonly title: string;
  readonly mainText: string;
  readonly passages: PassageInput[];
}

/** Inline Markdown → text: links and images keep their text, emphasis/code marks and HTML tags go. */
function inlineMarkdown(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]{1,200}>/g, '')
    .replace(/(\*\*|__|\*|_|~~|`)(?=\S)([^*_~`]*?\S)\1/g, '$2')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Splits text into paragraph blocks (blank-line separated), or Markdown blocks when `markdown`. */
export function textBlocks(text: string, markdown: boolean): TextBlock[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: TextBlock[] = [];
  let para: string[] = [];
  let fence = false;
  const flush = (): void => {
    const raw = para.join(' ');
    const t = markdown ? inlineMarkdown(raw.replace(/^\s*(?:[-*+]|\d+[.)]|>)\s+/, '')) : raw.replace(/\s+/g, ' ').trim();
    if (t !== '') blocks.push({ kind: 'text', text: t, snippetText: t });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (markdown) {
      if (/^\s*(```|~~~)/.test(line)) {
        fence = !fence;
        continue;
      }
      if (!fence) {
        const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
        if (atx) {
          flush();
          const t = inlineMarkdown(atx[2]!);
          if (t !== '') blocks.push({ kind: 'heading', level: atx[1]!.length, text: t, snippetText: t });
          continue;
        }
        const next = lines[i + 1];
        if (para.length === 0 && line.trim() !== '' && next !== undefined && /^\s{0,3}(=+|-+)\s*$/.test(next)) {
          const t = inlineMarkdown(line);
          blocks.push({ kind: 'heading', level: next.trim().startsWith('=') ? 1 : 2, text: t, snippetText: t });
          i++;
          continue;
        }
        // A list item or quote line starts its own block, so lists do not run together into one sentence.
        if (/^\s*(?:[-*+]|\d+[.)]|>)\s+/.test(line)) flush();
      }
    }
    if (line.trim() === '') flush();
    else para.push(line.trim());
  }
  flush();
  return blocks;
}

/** Builds a text document. Title: the first Markdown H1, else the first non-empty line (at most 200 characters). */
export function plainDocument(text: string, markdown: boolean): PlainDocument {
  const blocks = textBlocks(text, markdown);
  const h1 = blocks.find((b) => b.kind === 'heading' && b.level === 1)?.text;
  const first = blocks[0]?.text ?? '';
  const title = h1 ?? (first.length <= 200 ? first : `${first.slice(0, 199).replace(/\s+\S*$/, '')}…`);
  return { title, mainText: blocks.map((b) => b.text).join('\n\n'), passages: buildPassages(blocks) };
}
