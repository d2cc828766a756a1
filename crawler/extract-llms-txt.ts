/**
 * llms.txt reading (https://llmstxt.org): a Markdown file whose first H1 is the site's title, an optional
 * blockquote right after is the summary, and H2 sections list links. Only these facts are kept for svc_site.
 */

/** What a host's llms.txt declares. */
export interface LlmsTxt {
  /** Text of the first `# ` heading, or null when there is none (the file is then not well-formed). */
  readonly title: string | null;
  /** The blockquote following the title (lines starting with `>` joined), or null. */
  readonly summary: string | null;
  /** Number of Markdown links `[text](url)` anywhere in the file. */
  readonly linkCount: number;
  /** H2 section names, in order. */
  readonly sections: readonly string[];
}

/** Caps what is read of a file: llms.txt is small by design; a huge one is not read beyond this. */
const MAX_CHARS = 512 * 1024;

/** Parses an llms.txt body. Never throws. */
export function parseLlmsTxt(input: string): LlmsTxt {
  const text = input.slice(0, MAX_CHARS).replace(/^\uFEFF/, '');
  const lines = text.split(/\r?\n/);
  let title: string | null = null;
  let summary: string | null = null;
  const sections: string[] = [];
  let i = 0;
  for (; i < lines.length; i++) {
    const m = /^#\s+(.+?)\s*#*\s*$/.exec(lines[i]!);
    if (m) {
      title = m[1]!;
      i++;
      break;
    }
  }
  if (title !== null) {
    while (i < lines.length && lines[i]!.trim() === '') i++;
    const quote: string[] = [];
    while (i < lines.length && /^\s*>/.test(lines[i]!)) {
      quote.push(lines[i]!.replace(/^\s*>\s?/, '').trim());
      i++;
    }
    if (quote.length > 0) summary = quote.join(' ').replace(/\s+/g, ' ').trim() || null;
  }
  for (const l of lines) {
    const m = /^##\s+(.+?)\s*#*\s*$/.exec(l);
    if (m) sections.push(m[1]!);
  }
  const linkCount = (text.match(/\[[^\]\n]*\]\([^)\s]+(?:\s+"[^"]*")?\)/g) ?? []).length;
  return { title, summary, linkCount, sections };
}
