/**
 * The near-duplicate labelled set (fixtures/near-duplicates/pairs.json): pairs of real pages from ../shared/data/web,
 * each side a recipe (which page, which form of it, which boilerplate edits) that this module turns into main text
 * through the crawler's own extractor, so the set stays small and the text is exactly what the index would fingerprint.
 * `buildPairs` wrote the fixture; the unit tests and bench/near-duplicates.ts read it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extractPage } from '../../crawler/extract.js';
import { SHARED_DATA_DIR } from '../../fixtures/test-web/index.js';

const WEB = join(SHARED_DATA_DIR, 'web');
const AEB = join(WEB, 'article-extraction-benchmark');
const READABILITY = join(WEB, 'readability-test-pages');
export const PAIRS_FILE = new URL('../../fixtures/near-duplicates/pairs.json', import.meta.url);

/** Boilerplate edits made to a page's HTML before extraction. */
export const EDITS = ['nav', 'footer', 'ads', 'date', 'comments', 'share', 'strip', 'note', 'trim'] as const;
export type Edit = (typeof EDITS)[number];

/**
 * One side of a pair. `aeb`: the article-extraction benchmark page `id` (`html`: its page; `truth`: its annotated
 * article body as a bare print-style page). `readability`: the Mozilla Readability test page `id` (`html`: its page;
 * `expected`: the reader-mode rendering of the same article).
 */
export interface PageSpec {
  readonly set: 'aeb' | 'readability';
  readonly id: string;
  readonly form: 'html' | 'truth' | 'expected';
  readonly edits: readonly Edit[];
}

export interface LabelledPair {
  readonly a: PageSpec;
  readonly b: PageSpec;
  /** Whether the two are near-copies (the same article). */
  readonly same: boolean;
  /** How the pair was made (for per-kind figures). */
  readonly kind: string;
}

export interface PairsFile {
  readonly how: string;
  readonly pairs: readonly LabelledPair[];
}

const gz = (path: string): string => gunzipSync(readFileSync(path)).toString('utf8');

let truthCache: Record<string, { url: string; articleBody: string }> | null = null;
export function aebTruth(): Record<string, { url: string; articleBody: string }> {
  truthCache ??= JSON.parse(readFileSync(join(AEB, 'ground-truth.json'), 'utf8')) as Record<string, { url: string; articleBody: string }>;
  return truthCache;
}

const escape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const NAV =
  '<nav class="site-nav"><ul>' +
  ['Home', 'World', 'Politics', 'Business', 'Technology', 'Science', 'Health', 'Sports', 'Arts', 'Opinion', 'Podcasts', 'Subscribe']
    .map((x) => `<li><a href="/${x.toLowerCase()}">${x}</a></li>`)
    .join('') +
  '</ul></nav>';
const FOOTER =
  '<footer><p>© 2025 The Daily Example Media Group. All rights reserved. Use of this site constitutes acceptance of our ' +
  'User Agreement and Privacy Policy and Cookie Statement.</p><ul><li><a href="/about">About us</a></li>' +
  '<li><a href="/contact">Contact</a></li><li><a href="/careers">Careers</a></li><li><a href="/advertise">Advertise with us</a></li></ul></footer>';
const AD =
  '<div class="advertisement ad-slot"><span>Advertisement</span><p>Sponsored: Save up to 40% on home insurance when you ' +
  'bundle with auto. Get a free quote in minutes from our partners today.</p></div>';
const DATE = '<p class="dateline">Updated March 12, 2025 10:42 a.m. ET · 6 min read</p>';
const NOTE =
  '<p><em>This article was originally published by our partner newsroom and is republished here with permission. ' +
  'It has been edited for length.</em></p>';
const SHARE = '<div class="share-bar">Share this article: Facebook Twitter LinkedIn Email Print Copy link</div>';
const COMMENTS =
  '<section id="comments"><h3>Comments (3)</h3>' +
  [
    'Great piece, thanks for writing it. I had no idea about most of this and will be sharing it with my family tonight.',
    'I disagree with the second half. The author leaves out the obvious counterexample and the numbers quoted are years old.',
    'Does anyone know whether the same rules apply outside the country? I could not find anything on the official website.',
  ]
    .map((c, i) => `<div class="comment"><p class="author">reader${i + 1}</p><p>${c}</p></div>`)
    .join('') +
  '</section>';

/** `html` with one boilerplate edit applied (insertions go where a template would put them). */
function applyEdit(html: string, edit: Edit): string {
  const afterBody = (s: string) => (/<body[^>]*>/i.test(html) ? html.replace(/<body[^>]*>/i, (m) => m + s) : s + html);
  const beforeBodyEnd = (s: string) => (/<\/body>/i.test(html) ? html.replace(/<\/body>/i, s + '</body>') : html + s);
  switch (edit) {
    case 'nav':
      return afterBody(NAV);
    case 'footer':
      return beforeBodyEnd(FOOTER);
    case 'comments':
      return beforeBodyEnd(COMMENTS);
    case 'share':
      return afterBody(SHARE);
    case 'date': {
      const i = html.search(/<p[\s>]/i);
      return i < 0 ? afterBody(DATE) : html.slice(0, i) + DATE + html.slice(i);
    }
    case 'ads': {
      // After the second and the fifth paragraph, as an in-article ad slot would be.
      let n = 0;
      return html.replace(/<\/p>/gi, (m) => (++n === 2 || n === 5 ? m + AD : m));
    }
    case 'note': {
      // A syndication note inside the article, before its first paragraph.
      const i = html.search(/<p[\s>]/i);
      return i < 0 ? afterBody(NOTE) : html.slice(0, i) + NOTE + html.slice(i);
    }
    case 'trim': {
      // A syndicated copy cut before its last paragraph.
      const end = html.toLowerCase().lastIndexOf('</p>');
      let start = -1;
      for (const m of html.slice(0, Math.max(0, end)).matchAll(/<p[\s>]/gi)) start = m.index;
      return start < 0 ? html : html.slice(0, start) + html.slice(end + 4);
    }
    case 'strip':
      return html.replace(/<(nav|footer|aside|header)\b[\s\S]*?<\/\1>/gi, '');
  }
}

/** The raw HTML of a spec, before edits. */
function sourceHtml(spec: PageSpec): string {
  if (spec.set === 'aeb') {
    if (spec.form === 'truth') {
      const t = aebTruth()[spec.id];
      if (!t) throw new Error(`no aeb page ${spec.id}`);
      const paras = t.articleBody
        .split(/\n+/)
        .filter((x) => x.trim() !== '')
        .map((x) => `<p>${escape(x)}</p>`);
      return `<!doctype html><html><head><title>Print</title></head><body><article>${paras.join('')}</article></body></html>`;
    }
    return gz(join(AEB, 'html', `${spec.id}.html.gz`));
  }
  return gz(join(READABILITY, spec.id, spec.form === 'expected' ? 'expected.html.gz' : 'source.html.gz'));
}

/** A spec's URL (what extraction resolves links against). */
export function specUrl(spec: PageSpec): string {
  const base = spec.set === 'aeb' ? (aebTruth()[spec.id]?.url ?? 'https://aeb.example/') : `https://readability.example/${spec.id}/`;
  return spec.form === 'html' && spec.edits.length === 0 ? base : `${base}#${spec.form}-${spec.edits.join('-')}`;
}

/** A spec's HTML with its edits applied (what a crawler would have fetched). */
export function specHtml(spec: PageSpec): string {
  let html = sourceHtml(spec);
  for (const e of spec.edits) html = applyEdit(html, e);
  return html;
}

/** A spec's main text as the crawler's extractor keeps it. */
export function specMainText(spec: PageSpec): string {
  return extractPage(specHtml(spec), { url: specUrl(spec) }).mainText;
}

/** The labelled pairs of the fixture. */
export function readPairs(): PairsFile {
  return JSON.parse(readFileSync(PAIRS_FILE, 'utf8')) as PairsFile;
}
