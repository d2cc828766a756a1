/**
 * Main-text extraction: boilerplate pruning (navigation, header/footer, asides, scripts, styles, hidden elements,
 * forms, cookie banners), a readability-style choice of the content container (paragraph scores propagated to
 * ancestors, weighted by link density and class/id hints), and a walk of that container into reading-order blocks
 * (headings and text), each carrying the text with and without its data-nosnippet parts.
 *
 * General rules only: nothing here is tuned to an individual site.
 */
import { NodeType, type HTMLElement, type Node } from 'node-html-parser';

/** One block of main text in reading order. */
export type TextBlock = (
  | { readonly kind: 'heading'; readonly level: number; readonly text: string; readonly snippetText: string }
  | { readonly kind: 'text'; readonly text: string; readonly snippetText: string }
) & {
  /** 1-based page of a paged document (PDF) the block is on; absent for HTML. Passages never cross pages. */
  readonly page?: number;
};

/** Elements never part of the main text. */
const DROP_TAGS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'button',
  'input',
  'select',
  'textarea',
  'option',
  'nav',
  'footer',
  'aside',
  'menu',
  'dialog',
  'head',
  'link',
  'meta',
  'map',
  'audio',
  'video',
  'picture',
  'math',
  'label',
  // Captions and credits of pictures (trafilatura's default): what the picture shows, not what the text says.
  'figcaption',
  // Ruby annotations (furigana, pinyin): a reading aid printed above the base text, not part of it.
  'rt',
  'rp',
]);
/** Elements whose text is never visible text. */
const NO_TEXT_TAGS = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'math']);
/** Roles that mark page furniture rather than content. */
const DROP_ROLES = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'search',
  'dialog',
  'alertdialog',
  'menu',
  'menubar',
  'toolbar',
  'tablist',
]);
/** class/id words of furniture (readability's "unlikely candidates", plus consent and share widgets). */
const UNLIKELY =
  /(^|[-_\s])(ad|ads|advert|advertisement|banner|breadcrumbs?|combx|comments?|community|consent|cookies?|cover-wrap|disqus|extra|footer|gdpr|header|legends?|masthead|menu|modal|nav|navbar|newsletter|outbrain|pager|pagination|popup|promo|related|remark|replies|rss|share|sharing|shoutbox|sidebar|skip|skyscraper|social|sponsor|sponsored|subscribe|supplemental|taboola|tags|toolbar|widget|yom-remote|agegate|byline|author-bio|login|signup|share-buttons|print|caption|credits?|photo-credit)([-_\s]|$)/i;
/** Furniture words that also occur glued into longer class names (jp-relatedposts, commentlist, socialbar, a
 * photo gallery or carousel beside the text). */
const UNLIKELY_SUBSTRING =
  /related|comment|sidebar|social|share|newsletter|subscri|sponsor|promo|breadcrumb|cookie|consent|disqus|outbrain|taboola|widget|gallery|slideshow|carousel|lightbox|author/i;
/** Words of post metadata, footers and teasers: furniture even beside "post" or "article" (see boilerplateKind). */
const FURNITURE_ANYWHERE =
  /meta(?!l)|rating|timestamp|entry-utility|teaser|byline|copyright|read-?time|related|footer|tags(?![a-z])|tag-?list|most-popular|more-on|disclaimer/i;
/** Furniture words that also name content blocks; see boilerplateKind. */
const AMBIGUOUS = /header|widget/gi;
/** A comment thread: a class/id token that is or begins with "comment(s)" (not "commentary"), or a known embed. */
const COMMENTS =
  /(^|\s)(comments?(?![a-z])[\w-]*|(?:article|post|blog|entry|user)[-_]comments(?![a-z])[\w-]*|disqus_thread|dsq-comments)(?=\s|$)/i;
/**
 * Lists of other pages named after what they list ("related-articles", "more_posts", "popular-stories"): the
 * "article"/"post" in the name would veto the furniture word below, but here it only says what is listed.
 */
const TEASER_LIST =
  /(^|\s)(related|more|similar|recommended|popular|trending|latest|other|read-more)[-_](articles?|posts?|stories|entries|news|content)(?=\s|$)/i;
/** readability's "maybe a candidate" words, which veto the substring rule above. */
const MAYBE_STRICT = /and|article|body|column|content|main|shadow/i;
const MAYBE = /and|article|body|column|content|main|shadow|story|entry|post|text/i;
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story/i;
const NEGATIVE =
  /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|foot|footer|footnote|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget|cookie|consent/i;

const BLOCK_TAGS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'li',
  'ul',
  'ol',
  'dl',
  'dd',
  'dt',
  'blockquote',
  'pre',
  'table',
  'tr',
  'td',
  'th',
  'tbody',
  'thead',
  'tfoot',
  'caption',
  'figure',
  'figcaption',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'address',
  'hr',
  'br',
  'center',
  'details',
  'summary',
  'body',
  'html',
  'header',
  'hgroup',
]);
const HEADING = /^h([1-6])$/;

/** Lower-case tag name ('' for the parser's root node, which has none). */
function tagOf(el: HTMLElement): string {
  return (el.rawTagName ?? '').toLowerCase();
}

function attr(el: HTMLElement, name: string): string {
  return el.getAttribute(name) ?? '';
}

/** Hidden by attribute or inline style. */
export function isHidden(el: HTMLElement): boolean {
  if (el.getAttribute('hidden') !== undefined) return true;
  if (attr(el, 'aria-hidden').toLowerCase() === 'true') return true;
  const style = attr(el, 'style').toLowerCase().replace(/\s+/g, '');
  if (style.includes('display:none') || style.includes('visibility:hidden')) return true;
  if (attr(el, 'type').toLowerCase() === 'hidden') return true;
  return false;
}

function classAndId(el: HTMLElement): string {
  return `${attr(el, 'class')} ${attr(el, 'id')}`.trim();
}

/**
 * Should this element and everything inside it be dropped before choosing the content? `hard`: always (scripts,
 * forms, hidden elements, nav/footer/aside …). `soft`: by role, a page `<header>` or class/id words — such hints
 * misfire on wrappers (`Page-ad-margins`, `penci_sidebar` around the whole article), so a soft drop is skipped
 * when the element holds a large share of the page's text.
 */
function boilerplateKind(el: HTMLElement, insideMainLandmark: boolean): 'hard' | 'soft' | null {
  const tag = tagOf(el);
  // An <aside> wrapping an <article> with prose misuses the tag (a page region, not a side note): like a class
  // hint, it drops only when it holds a small share of the page.
  if (tag === 'aside' && hasDescendant(el, ARTICLE_TAG) && holdsLead(el)) return 'soft';
  if (DROP_TAGS.has(tag)) return 'hard';
  if (isHidden(el)) return 'hard';
  // A figure is a picture and its caption, unless it frames a code listing, a table or a quotation.
  if (tag === 'figure' && !hasDescendant(el, FIGURE_CONTENT_TAGS)) return 'hard';
  // Forms are furniture (search boxes, sign-ups), except on sites that wrap the whole page in one (ASP.NET).
  if (tag === 'form') return 'soft';
  const role = attr(el, 'role').toLowerCase();
  if (DROP_ROLES.has(role)) return 'soft';
  // A page header is furniture; a header inside an explicit main landmark (title, dek) is not.
  if (tag === 'header' && !insideMainLandmark && !holdsLead(el)) return 'soft';
  if (tag === 'body' || tag === 'html' || tag === 'main' || tag === 'article' || tag === 'a') return null;
  // A heading's id is usually an anchor made from its own text ("nav_…", "share-your-data"), and its class styles
  // it: neither says the heading is furniture. A heading of a dropped widget goes with its wrapper.
  if (HEADING.test(tag)) return null;
  const ci = liveFeedAsContent(classAndId(el));
  // A comment thread can outweigh the article it follows (a popular recipe, a forum-like blog), so no share
  // guard: it goes unless it holds the page's title.
  if (ci !== '' && COMMENTS.test(ci) && !hasDescendant(el, H1_TAG)) return 'hard';
  if (ci !== '' && /cookie|consent|gdpr/i.test(ci)) return 'soft';
  // Post metadata (dates, bylines, ratings, reading times), post footers, related boxes and teasers for other
  // pages, whatever else the class says ("entry-meta", "post-ratings", "entryfooter", "article-teaser"):
  // trafilatura's markers, guarded by the lead test because these words also name a story's own summary.
  if (ci !== '' && FURNITURE_ANYWHERE.test(ci) && !holdsLead(el)) return 'soft';
  if (ci !== '' && TEASER_LIST.test(ci)) return 'soft';
  // "header" names an article's header (title, dek, lead) as often as the page's masthead, and "widget" a page
  // builder's text block (elementor-widget) as often as a sidebar box: neither drops an element holding prose.
  if (ci !== '' && namesFurniture(ci) && (namesFurniture(ci.replace(AMBIGUOUS, ' ')) || !holdsLead(el))) return 'soft';
  return null;
}

/** A live feed (live blog, live ticker, live match report): its entries are the page's content, whatever it calls them. */
const LIVE_FEED = /(^|[-_\s])live(blog|ticker|feed|[-_\s]|$)/i;

/**
 * The class/id words of a live feed with its "comment" words taken out: a live ticker or live blog often names
 * its entries "comments" (the editor comments on the match as it goes); they are the article, not readers' replies.
 */
function liveFeedAsContent(ci: string): string {
  let out = LIVE_FEED.test(ci) ? ci.replace(/comments?/gi, ' ') : ci;
  if (out.includes('--')) out = out.replace(BEM_MODIFIER, '');
  if (/js[-_]/i.test(out)) out = out.replace(SCRIPT_HOOK, ' ');
  return out;
}

/** A script hook (`js-lightbox-gallery`): names what a script does with the element, not what the element is. */
const SCRIPT_HOOK = /(^|\s)js[-_]\S*/gi;

/**
 * A BEM modifier (`block--modifier`): a variant of the block it follows ("Section--Ads" is a section that carries
 * ads, "teaser--has-share"), not what the block is. Its words are left out of the furniture hints.
 */
const BEM_MODIFIER = /(?<=\w)--[\w-]*/g;

/** Whether class/id words name furniture: a furniture word (whole, or glued in) that no content word vetoes. */
function namesFurniture(ci: string): boolean {
  return (UNLIKELY.test(ci) && !MAYBE.test(ci)) || (UNLIKELY_SUBSTRING.test(ci) && !MAYBE_STRICT.test(ci));
}

/** Whether an element holds a paragraph of prose: a `<p>` of sentence length that is not mostly a link. */
function holdsLead(el: HTMLElement): boolean {
  return someDescendant(el, 'p', (p) => {
    const t = squash(p.text);
    if (t.length < PROSE_CHARS) return false;
    return linkedLength(p) < t.length * 0.3;
  });
}

const ARTICLE_TAG = new Set(['article']);
const H1_TAG = new Set(['h1']);
const FIGURE_CONTENT_TAGS = new Set(['pre', 'table', 'blockquote']);
const WRAPPED_BLOCK_TAGS = new Set(['p', 'div', 'ul', 'ol', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote']);

/** Whether an element has a descendant with one of these tags (querySelector by tag names, without a selector). */
function hasDescendant(el: HTMLElement, tags: ReadonlySet<string>): boolean {
  for (const n of el.childNodes) {
    if (n.nodeType !== NodeType.ELEMENT_NODE) continue;
    const c = n as HTMLElement;
    if (tags.has(tagOf(c)) || hasDescendant(c, tags)) return true;
  }
  return false;
}

/** Whether any descendant with this tag passes the test, in document order (stops at the first that does). */
function someDescendant(el: HTMLElement, tag: string, test: (e: HTMLElement) => boolean): boolean {
  for (const n of el.childNodes) {
    if (n.nodeType !== NodeType.ELEMENT_NODE) continue;
    const c = n as HTMLElement;
    if ((tagOf(c) === tag && test(c)) || someDescendant(c, tag, test)) return true;
  }
  return false;
}

/** Summed squashed text length of every link inside an element (a link inside a link counted again, as querySelectorAll would list it). */
function linkedLength(el: HTMLElement): number {
  let n = 0;
  for (const m of el.childNodes) {
    if (m.nodeType !== NodeType.ELEMENT_NODE) continue;
    const c = m as HTMLElement;
    if (tagOf(c) === 'a') n += squashedLength(c.text);
    n += linkedLength(c);
  }
  return n;
}

interface PruneCtx {
  readonly stats: (el: HTMLElement) => Stats;
  /** Visible text length of the whole body. */
  readonly total: number;
  /** Lenient pass: soft rules off (used when the strict pass left almost nothing). */
  readonly lenient: boolean;
}

/** A page with at most this much visible text keeps its headings and links when it has nothing else. */
const SMALL_PAGE = 500;

/** A soft-dropped element may hold at most this share of the page's text. */
const SOFT_DROP_MAX_SHARE = 0.3;

/** Removes boilerplate subtrees in place. */
function prune(el: HTMLElement, insideMain: boolean, ctx: PruneCtx): void {
  for (const child of [...el.childNodes]) {
    if (child.nodeType === NodeType.COMMENT_NODE) {
      el.removeChild(child);
      continue;
    }
    if (child.nodeType !== NodeType.ELEMENT_NODE) continue;
    const c = child as HTMLElement;
    const tag = tagOf(c);
    const kind = boilerplateKind(c, insideMain);
    if (kind === 'hard' || (kind === 'soft' && !ctx.lenient && ctx.stats(c).len <= ctx.total * SOFT_DROP_MAX_SHARE)) {
      el.removeChild(c);
      continue;
    }
    prune(c, insideMain || tag === 'main' || tag === 'article' || attr(c, 'role').toLowerCase() === 'main', ctx);
  }
}

/**
 * Normalises whitespace (incl. NBSP) to single spaces, and removes invisible characters that sit inside words:
 * soft hyphens (German and Dutch sites hyphenate long words with &shy;), word joiners, byte-order marks.
 */
export function squash(s: string): string {
  return s
    .replace(/[\u00ad\u2060\ufeff]/g, '')
    .replace(/[\s\u00a0\u200b]+/g, ' ')
    .trim();
}

/**
 * squash(s).length without building the string: the text-length walks below call it on every text node of the
 * page, and the strings it would build are dropped at once.
 */
export function squashedLength(s: string): number {
  let n = 0;
  let gap = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0xad || c === 0x2060 || c === 0xfeff) continue;
    if (isSquashSpace(c)) {
      gap = true;
      continue;
    }
    if (gap && n > 0) n++;
    gap = false;
    n++;
  }
  return n;
}

/** The characters squash turns into spaces: JavaScript's \s (less U+FEFF, removed before), NBSP and U+200B. */
function isSquashSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200b) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

interface Stats {
  len: number;
  linkLen: number;
}

/** Text length and linked-text length of a subtree (cached per element). */
function makeStats(): (el: HTMLElement) => Stats {
  const cache = new Map<HTMLElement, Stats>();
  const stats = (el: HTMLElement): Stats => {
    const hit = cache.get(el);
    if (hit) return hit;
    let len = 0;
    let linkLen = 0;
    for (const n of el.childNodes) {
      if (n.nodeType === NodeType.TEXT_NODE) len += squashedLength(n.text);
      else if (n.nodeType === NodeType.ELEMENT_NODE) {
        if (NO_TEXT_TAGS.has(tagOf(n as HTMLElement))) continue;
        const s = stats(n as HTMLElement);
        len += s.len;
        linkLen += tagOf(n as HTMLElement) === 'a' && !isWrapperLink(n as HTMLElement, s.len) ? s.len : s.linkLen;
      }
    }
    const out = { len, linkLen };
    cache.set(el, out);
    return out;
  };
  return stats;
}

/** Text length from which a class/id hint counts in full when scoring a candidate. */
const HINT_FULL_CHARS = 250;

/** Above this many characters, a link that wraps blocks is a wrapper rather than a link (see isWrapperLink). */
const WRAPPER_LINK_CHARS = 500;

/**
 * A link wrapping paragraphs of prose is an unclosed <a> (the parser then nests everything after it inside) or a
 * whole-article link, not navigation: its text counts as text, its own inner links as links. Teaser cards wrapped
 * in one link stay links: they hold a title and a line or two.
 */
function isWrapperLink(a: HTMLElement, len: number): boolean {
  return len > WRAPPER_LINK_CHARS && hasDescendant(a, WRAPPED_BLOCK_TAGS);
}

function classWeight(el: HTMLElement): number {
  let w = 0;
  for (const v of [attr(el, 'class'), attr(el, 'id')]) {
    if (v === '') continue;
    if (NEGATIVE.test(liveFeedAsContent(v))) w -= 25;
    if (POSITIVE.test(v)) w += 25;
  }
  return w;
}

function tagBase(tag: string): number {
  switch (tag) {
    case 'div':
    case 'article':
    case 'main':
    case 'section':
      return 5;
    case 'pre':
    case 'td':
    case 'blockquote':
      return 3;
    case 'address':
    case 'ol':
    case 'ul':
    case 'dl':
    case 'dd':
    case 'dt':
    case 'li':
    case 'form':
      return -3;
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6':
    case 'th':
      return -5;
    default:
      return 0;
  }
}

function hasBlockChild(el: HTMLElement): boolean {
  return el.childNodes.some(
    (n) =>
      n.nodeType === NodeType.ELEMENT_NODE &&
      ['p', 'div', 'section', 'article', 'ul', 'ol', 'table', 'blockquote', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'].includes(
        tagOf(n as HTMLElement),
      ),
  );
}

/** Whether an element has a non-blank text node of its own. */
function hasOwnTextNode(el: HTMLElement): boolean {
  return el.childNodes.some((n) => n.nodeType === NodeType.TEXT_NODE && /\S/.test(n.rawText));
}

/** Whether the first visible text of an element is inside a link. */
function opensWithLink(el: HTMLElement): boolean {
  const first = (n: Node, inLink: boolean): boolean | null => {
    if (n.nodeType === NodeType.TEXT_NODE) return /\S/.test(n.rawText) ? inLink : null;
    if (n.nodeType !== NodeType.ELEMENT_NODE) return null;
    const e = n as HTMLElement;
    if (NO_TEXT_TAGS.has(tagOf(e))) return null;
    for (const c of e.childNodes) {
      const r = first(c, inLink || tagOf(e) === 'a');
      if (r !== null) return r;
    }
    return null;
  };
  return first(el, false) === true;
}

/** Direct text of an element (its text nodes and inline children, not nested blocks). */
function ownText(el: HTMLElement): string {
  let s = '';
  for (const n of el.childNodes) {
    if (n.nodeType === NodeType.TEXT_NODE) s += n.text;
    else if (n.nodeType === NodeType.ELEMENT_NODE && !BLOCK_TAGS.has(tagOf(n as HTMLElement))) s += (n as HTMLElement).text;
  }
  return squash(s);
}

/**
 * The document's own <html> or <body>. A <body> nested inside the content (a CMS pasting a whole HTML document
 * into a post) is just a wrapper: climbing must not stop at it.
 */
function isDocumentRoot(el: HTMLElement): boolean {
  const tag = tagOf(el);
  if (tag !== 'body' && tag !== 'html') return false;
  for (let p = el.parentNode; p && p.rawTagName; p = p.parentNode) {
    const t = tagOf(p);
    if (t !== 'html' && t !== 'body') return false;
  }
  return true;
}

/**
 * Chooses the content container(s): readability-style scoring. Returns the elements to read, in document order.
 */
function chooseContent(body: HTMLElement): { content: HTMLElement[]; opening: HTMLElement[] } {
  const stats = makeStats();
  const scores = new Map<HTMLElement, number>();
  const init = (el: HTMLElement): void => {
    // A class/id hint is worth its full weight only on an element with a paragraph's worth of text: "text" or
    // "content" in the class of a one-line teaser box must not outrank the article.
    if (!scores.has(el)) scores.set(el, tagBase(tagOf(el)) + classWeight(el) * Math.min(1, stats(el).len / HINT_FULL_CHARS));
  };
  /** Paragraphs of prose (long, few links): the element holding each and its length, for coverage below. */
  const prose: [HTMLElement, number][] = [];
  // Text inside a link (a teaser card wrapped in one <a>) is a link, whatever block wraps it: it scores nothing,
  // or a card whose class says "text" outranks the article.
  const walk = (el: HTMLElement, inLink: boolean): void => {
    const tag = tagOf(el);
    const linked = inLink || (tag === 'a' && !isWrapperLink(el, stats(el).len));
    for (const n of el.childNodes) if (n.nodeType === NodeType.ELEMENT_NODE) walk(n as HTMLElement, linked);
    if (linked) return;
    const leaf = tag === 'p' || tag === 'pre' || tag === 'td' || tag === 'blockquote';
    const container = tag === 'div' || tag === 'section' || tag === 'article' || tag === 'main';
    if (tag === 'li') {
      // List items are not scored (menus are lists too), but a sentence-long item is prose the content should hold.
      const text = ownText(el);
      const st = stats(el);
      // An item that opens with a link is a teaser (a linked title, then its summary), not prose of this page.
      if (text.length >= PROSE_CHARS && st.linkLen / Math.max(1, st.len) < 0.3 && !opensWithLink(el)) prose.push([el, text.length]);
      return;
    }
    if (!leaf && !container) return;
    const blocky = container && hasBlockChild(el);
    if (blocky && !hasOwnTextNode(el)) return;
    const text = ownText(el);
    if (text.length < 25) return;
    const score = 1 + (text.match(/[,，、،]/g)?.length ?? 0) + Math.min(Math.floor(text.length / 100), 3);
    if (text.length >= PROSE_CHARS) {
      const st = stats(el);
      if (blocky || st.len === 0 || st.linkLen / st.len < 0.3) prose.push([blocky ? el : (el.parentNode ?? el), text.length]);
    }
    // Text written straight into a wrapper between its blocks (paragraphs split by <br>, no <p>) is a paragraph
    // of that wrapper: it scores the wrapper itself, as readability does once it wraps such runs in <p>.
    let anc: HTMLElement | null = blocky ? el : el.parentNode;
    for (let level = 0; anc && level < 5; level++, anc = anc.parentNode) {
      if (!anc.tagName) break;
      init(anc);
      const div = level === 0 ? 1 : level === 1 ? 2 : level * 3;
      scores.set(anc, (scores.get(anc) ?? 0) + score / div);
    }
  };
  walk(body, false);
  let top: HTMLElement | null = null;
  let topScore = -Infinity;
  for (const [el, raw] of scores) {
    const s = stats(el);
    const ld = s.len === 0 ? 0 : s.linkLen / s.len;
    const score = raw * (1 - ld);
    scores.set(el, score);
    if (score > topScore) {
      topScore = score;
      top = el;
    }
  }
  if (!top || topScore <= 0) return { content: [body], opening: [] };
  const first = firstOfArticleStack(top, scores, topScore);
  if (first) top = first;
  const isRootish = (el: HTMLElement | null): boolean => !el || !el.rawTagName || isDocumentRoot(el);
  // When the best node is one of several similar siblings sharing a parent that scores nearly as well, the parent
  // holds the article (text split over several wrappers).
  const parent = top.parentNode;
  if (!isRootish(parent) && scores.has(parent!) && (scores.get(parent!) ?? 0) >= topScore * 0.9) top = parent!;
  // Text split over many wrappers (one paragraph per "card"): when at least three of the strongest candidates sit
  // under one ancestor of the top candidate, that ancestor is the article.
  const strong = [...scores]
    .filter(([, v]) => v >= topScore * 0.75)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([el]) => el);
  if (strong.length >= 3) {
    for (let anc = top.parentNode, depth = 0; !isRootish(anc) && depth < 6; anc = anc!.parentNode, depth++) {
      let inside = 0;
      for (const el of strong) {
        for (let p: HTMLElement | null = el; p; p = p.parentNode) {
          if (p === anc) {
            inside++;
            break;
          }
        }
      }
      if (inside >= 3) {
        top = anc!;
        break;
      }
    }
  }
  // A lone child carries nothing its parent does not: climb so that siblings can be considered.
  while (!isRootish(top.parentNode) && top.parentNode!.childNodes.filter((n) => n.nodeType === NodeType.ELEMENT_NODE).length === 1)
    top = top.parentNode!;
  const out: HTMLElement[] = [];
  const siblingsOf = top.parentNode;
  if (!siblingsOf || !siblingsOf.tagName) return { content: [top], opening: [] };
  const threshold = Math.max(10, (scores.get(top) ?? topScore) * 0.2);
  const topClass = attr(top, 'class');
  for (const n of siblingsOf.childNodes) {
    if (n.nodeType !== NodeType.ELEMENT_NODE) continue;
    const sib = n as HTMLElement;
    if (sib === top) {
      out.push(sib);
      continue;
    }
    let bonus = 0;
    if (topClass !== '' && attr(sib, 'class') === topClass) bonus += (scores.get(top) ?? 0) * 0.2;
    const s = scores.get(sib);
    if (s !== undefined && s + bonus >= threshold) {
      out.push(sib);
      continue;
    }
    // A module of the same kind as the article's (a CMS box class shared by the intro, the ingredients table and
    // the method of a recipe) is part of it even without a scored paragraph, unless it is mostly links.
    if (s === undefined && bonus > 0) {
      const st = stats(sib);
      if (st.len >= 25 && st.linkLen / st.len < 0.3) {
        out.push(sib);
        continue;
      }
    }
    // A paragraph beside the article (its lead, a closing line) joins it; a <div> holding only text and inline
    // elements is a paragraph too (readability turns such divs into <p> before this step).
    if (tagOf(sib) === 'p' || (tagOf(sib) === 'div' && !hasBlockChild(sib))) {
      const st = stats(sib);
      const ld = st.len === 0 ? 0 : st.linkLen / st.len;
      const text = squash(sib.text);
      if ((st.len > 80 && ld < 0.25) || (st.len > 0 && st.len <= 80 && ld === 0 && /\.( |$)/.test(text))) out.push(sib);
    }
  }
  const content = widenToProse(out, top, body, prose, stats);
  return { content, opening: articleOpening(content, top, body, stats) };
}

/**
 * An infinite scroll stacks the next stories after the page's own as sibling `<article>`s of one kind; the page's
 * story is the first of them, though a later one may score higher. When the top candidate sits in a later one, the
 * best candidate of the first (scoring at least a fifth as well) replaces it.
 */
function firstOfArticleStack(top: HTMLElement, scores: ReadonlyMap<HTMLElement, number>, topScore: number): HTMLElement | null {
  let art: HTMLElement | null = top;
  while (art && art.rawTagName && !isArticleElement(art)) art = art.parentNode;
  if (!art || !art.rawTagName) return null;
  let doc: HTMLElement = art;
  while (doc.parentNode) doc = doc.parentNode;
  const tag = tagOf(art);
  const cls = attr(art, 'class');
  // The first element of the same tag and class in document order (each may sit in a wrapper of its own).
  const first = (el: HTMLElement): HTMLElement | undefined => {
    for (const n of el.childNodes) {
      if (n.nodeType !== NodeType.ELEMENT_NODE) continue;
      const c = n as HTMLElement;
      // The tag first: reading an element's attributes parses them.
      if (tagOf(c) === tag && attr(c, 'class') === cls) return c;
      const hit = first(c);
      if (hit) return hit;
    }
    return undefined;
  };
  const head = first(doc);
  if (head === undefined || head === art) return null;
  let best: [HTMLElement, number] | null = null;
  for (const [el, v] of scores) {
    if (best && v <= best[1]) continue;
    for (let p: HTMLElement | null = el; p; p = p.parentNode)
      if (p === head) {
        best = [el, v];
        break;
      }
  }
  return best && best[1] >= topScore * 0.2 ? best[0] : null;
}

function isArticleElement(el: HTMLElement): boolean {
  return tagOf(el) === 'article' || attr(el, 'role').toLowerCase() === 'article';
}

/**
 * What precedes the chosen content inside the page's one `<article>`: the article's own header (title, dek, lead
 * paragraph), often a module of its own that scores below the body. The `<article>` element is the author's
 * statement of where the article is, so its opening belongs to it; what follows the body inside it (author box,
 * tags, copyright, "more on this") does not, and a page with several articles (a listing, an infinite scroll of
 * stories) makes no such statement. Returns the subtrees before the content, in document order.
 */
function articleOpening(
  out: readonly HTMLElement[],
  top: HTMLElement,
  scope: HTMLElement,
  stats: (el: HTMLElement) => Stats,
): HTMLElement[] {
  let art: HTMLElement | null = null;
  for (let p = top.parentNode; p && p.rawTagName && p !== scope; p = p.parentNode)
    if (isArticleElement(p)) {
      art = p;
      break;
    }
  const first = out[0];
  if (!art || !first) return [];
  const contains = (anc: HTMLElement, el: HTMLElement): boolean => {
    for (let p: HTMLElement | null = el; p; p = p.parentNode) if (p === anc) return true;
    return false;
  };
  if (!contains(art, first)) return [];
  const a = art;
  const others = scope
    .querySelectorAll('article, [role=article]')
    .filter((o) => o !== a && !contains(o, a) && !contains(a, o) && stats(o).len >= 200);
  if (others.length > 0) return [];
  const levels: HTMLElement[][] = [];
  for (let el: HTMLElement = first; el !== a && el.parentNode; el = el.parentNode) {
    const before: HTMLElement[] = [];
    for (const n of el.parentNode.childNodes) {
      if (n === el) break;
      if (n.nodeType === NodeType.ELEMENT_NODE) before.push(n as HTMLElement);
    }
    levels.push(before);
  }
  return levels.reverse().flat();
}

/** A text block of an article's opening at least this long is its lead, not a date or a byline. */
const LEAD_CHARS = 80;

/** Share of the page's prose the chosen content must hold, else it is widened. */
const PROSE_HELD = 0.65;

/** A paragraph at least this long counts as prose when checking what share of it the chosen content holds. */
const PROSE_CHARS = 80;

/**
 * The scoring above picks the single densest block; an article split into modules (an intro, a table section, a
 * FAQ, a recipe card, each in its own wrapper) loses all but one of them. When the chosen content holds less than
 * two thirds of the page's prose, the nearest ancestor of the top candidate that holds most of it, with few links, is
 * the article instead.
 */
function widenToProse(
  out: HTMLElement[],
  top: HTMLElement,
  scope: HTMLElement,
  prose: readonly [HTMLElement, number][],
  stats: (el: HTMLElement) => Stats,
): HTMLElement[] {
  const total = prose.reduce((n, [, len]) => n + len, 0);
  if (total === 0) return out;
  const inside = (el: HTMLElement, anc: HTMLElement): boolean => {
    for (let p: HTMLElement | null = el; p; p = p.parentNode) if (p === anc) return true;
    return false;
  };
  const held = (ancs: readonly HTMLElement[]): number => prose.reduce((n, [el, len]) => n + (ancs.some((a) => inside(el, a)) ? len : 0), 0);
  if (held(out) >= total * PROSE_HELD) return out;
  for (let anc = top.parentNode; anc && anc.rawTagName; anc = anc.parentNode) {
    const st = stats(anc);
    if (st.len > 0 && st.linkLen / st.len > 0.35) break;
    if (held([anc]) >= total * 0.8) return [anc];
    if (anc === scope) break;
  }
  return out;
}

/** Walks content elements into blocks, tracking data-nosnippet and link density per block. */
function toBlocks(roots: readonly HTMLElement[], keepLinkRuns = false): TextBlock[] {
  const blocks: TextBlock[] = [];
  /** Per block, the element it was read from: a heading, or the innermost block element around a text run. */
  const from: HTMLElement[] = [];
  let owner: HTMLElement | null = null;
  let text = '';
  let snip = '';
  let linkLen = 0;
  const flush = (): void => {
    const t = squash(text);
    const s = squash(snip);
    const links = linkLen;
    text = '';
    snip = '';
    linkLen = 0;
    if (t === '') return;
    // A run that is mostly links (a list of related stories, tag clouds) is furniture, not text.
    if (!keepLinkRuns && links / t.length > 0.5 && t.length < 400) return;
    blocks.push({ kind: 'text', text: t, snippetText: s });
    from.push(owner ?? roots[0]!);
  };
  const visit = (n: Node, nosnippet: boolean, inLink: boolean): void => {
    if (n.nodeType === NodeType.TEXT_NODE) {
      const v = n.text;
      text += v;
      if (!nosnippet) snip += v;
      if (inLink) linkLen += squashedLength(v);
      return;
    }
    if (n.nodeType !== NodeType.ELEMENT_NODE) return;
    const el = n as HTMLElement;
    const tag = tagOf(el);
    const ns = nosnippet || el.getAttribute('data-nosnippet') !== undefined;
    const h = HEADING.exec(tag);
    if (h) {
      flush();
      const t = squash(el.text);
      if (t !== '') {
        let s = '';
        const collect = (m: Node, nsIn: boolean): void => {
          if (m.nodeType === NodeType.TEXT_NODE) {
            if (!nsIn) s += m.text;
          } else if (m.nodeType === NodeType.ELEMENT_NODE) {
            const e = m as HTMLElement;
            for (const c of e.childNodes) collect(c, nsIn || e.getAttribute('data-nosnippet') !== undefined);
          }
        };
        collect(el, nosnippet);
        blocks.push({ kind: 'heading', level: Number(h[1]), text: t, snippetText: squash(s) });
        from.push(el);
      }
      return;
    }
    if (tag === 'br') {
      text += '\n';
      snip += '\n';
      return;
    }
    const block = BLOCK_TAGS.has(tag);
    const outer = owner;
    if (block) {
      flush();
      owner = el;
    } else if (tag === 'td' || tag === 'th') {
      text += ' ';
      snip += ' ';
    }
    const link = inLink || (tag === 'a' && !isWrapperLink(el, squashedLength(el.text)));
    for (const c of el.childNodes) visit(c, ns, link);
    if (block) {
      flush();
      owner = outer;
    } else {
      // Inline elements are separated from the following text only where the source had whitespace; images and
      // similar carry none, so nothing to add.
    }
  };
  for (const r of roots) {
    visit(r, hasNoSnippetAncestor(r), false);
    flush();
  }
  return dropHeadingsOfEmptyBoxes(blocks, from);
}

/**
 * Drops a heading whose own box kept no text: the nearest element around it holding more than the heading ("related
 * posts" with its link list, "more on this topic" over teasers) lost all its text to the link and teaser filters,
 * even when text from the next box follows it in reading order.
 */
/** A heading at most this long can be the label of a box of links or teasers. */
const BOX_LABEL_CHARS = 50;

function dropHeadingsOfEmptyBoxes(blocks: readonly TextBlock[], from: readonly HTMLElement[]): TextBlock[] {
  // How many blocks each element holds: a box that holds more than its heading kept text, or headings of their
  // own (a quotation set as a run of headings).
  const stats = makeStats();
  const held = new Map<HTMLElement, number>();
  if (blocks.some((b) => b.kind === 'heading' && b.text.length <= BOX_LABEL_CHARS))
    for (const el of from) for (let p: HTMLElement | null = el; p; p = p.parentNode) held.set(p, (held.get(p) ?? 0) + 1);
  return blocks.filter((b, i) => {
    // A long heading is text set large (a lead, a quotation), not the label of a box.
    if (b.kind !== 'heading' || b.text.length > BOX_LABEL_CHARS) return true;
    const own = stats(from[i]!).len;
    let box: HTMLElement | null = from[i]!.parentNode;
    while (box && box.tagName && stats(box).len <= own) box = box.parentNode;
    return !box || !box.tagName || (held.get(box) ?? 0) > 1;
  });
}

function hasNoSnippetAncestor(el: HTMLElement): boolean {
  for (let p = el.parentNode; p && p.tagName; p = p.parentNode) if (p.getAttribute('data-nosnippet') !== undefined) return true;
  return false;
}

/**
 * The element holding the page's visible text: its <body>, unless most of the text sits outside it. Markup the
 * parser recovers from otherwise than a browser can leave the article a sibling of the body in the parsed tree,
 * where a browser would have moved it inside; the whole document is then read.
 */
function documentBody(root: HTMLElement, stats: (el: HTMLElement) => Stats): HTMLElement {
  const body = firstByTag(root, 'body');
  if (!body) return root;
  const doc = firstByTag(root, 'html') ?? root;
  return stats(doc).len > stats(body).len * 2 ? doc : body;
}

/** The first descendant with this tag in document order (querySelector(tag) without compiling a selector). */
function firstByTag(el: HTMLElement, tag: string): HTMLElement | null {
  for (const n of el.childNodes) {
    if (n.nodeType !== NodeType.ELEMENT_NODE) continue;
    const c = n as HTMLElement;
    if (tagOf(c) === tag) return c;
    const hit = firstByTag(c, tag);
    if (hit) return hit;
  }
  return null;
}

/**
 * Extracts the main text of a parsed document as blocks. The document is modified (pruned) — pass a tree parsed
 * for this purpose.
 */
export function extractMainBlocks(root: HTMLElement, opts: { lenient?: boolean } = {}): TextBlock[] {
  return extractMainBlocksAndLength(root, opts).blocks;
}

/**
 * extractMainBlocks, and the document's visible text length as visibleTextLength would give it before the pruning:
 * both need the text length of every element, which is measured once.
 */
export function extractMainBlocksAndLength(root: HTMLElement, opts: { lenient?: boolean } = {}): { blocks: TextBlock[]; visible: number } {
  const stats = makeStats();
  const body = documentBody(root, stats);
  const total = stats(body).len;
  return { blocks: mainBlocks(body, total, stats, opts.lenient === true), visible: total };
}

function mainBlocks(body: HTMLElement, total: number, stats: (el: HTMLElement) => Stats, lenient: boolean): TextBlock[] {
  prune(body, false, { stats, total, lenient });
  // An explicit single main landmark is a strong signal; still score inside it to drop leftovers.
  const mains = body.querySelectorAll('main, [role=main]');
  const scope = mains.length === 1 && squashedLength(mains[0]!.text) >= 200 ? mains[0]! : body;
  const { content, opening } = chooseContent(scope);
  for (const r of [...opening, ...content]) dropTeaserCards(r);
  // Of the article's opening, only its prose (the lead) joins: dates, bylines and reading times are short lines
  // there, and its title is the page's title, not article text.
  const lead = toBlocks(opening).filter((b) => b.kind === 'text' && b.text.length >= LEAD_CHARS);
  const blocks = dropEmptySections([...lead, ...toBlocks(content)]);
  // A small page whose only text is headings or links (a link-wrapped teaser, captioned images) keeps that text:
  // the filters above tell furniture from prose, and there is no prose to protect here.
  return blocks.length > 0 || total > SMALL_PAGE ? blocks : toBlocks(content, true);
}

/** A heading that is a link (or sits in one): the title of a teaser for another page, not a section of this one. */
function isLinkedHeading(h: HTMLElement): boolean {
  const text = squash(h.text);
  if (text === '') return false;
  for (let p: HTMLElement | null = h.parentNode; p && p.tagName; p = p.parentNode) if (tagOf(p) === 'a') return true;
  const linked = linkedLength(h);
  return linked >= text.length * 0.9;
}

/**
 * Removes teaser cards (related stories, "more from" rails) inside the content: where two or more headings below
 * h1 are links, each one's card — the largest ancestor holding that heading alone and little text — goes.
 */
function dropTeaserCards(root: HTMLElement): void {
  const headings: HTMLElement[] = [];
  const walk = (el: HTMLElement): void => {
    for (const n of el.childNodes) {
      if (n.nodeType !== NodeType.ELEMENT_NODE) continue;
      const c = n as HTMLElement;
      if (HEADING.test(tagOf(c))) headings.push(c);
      else walk(c);
    }
  };
  walk(root);
  const linked = headings.filter((h) => tagOf(h) !== 'h1' && isLinkedHeading(h));
  if (linked.length < 2) return;
  const isHeading = new Set(headings);
  const headingsIn = (el: HTMLElement): number => {
    let n = 0;
    for (const h of headings) for (let p: HTMLElement | null = h; p && n < 2; p = p.parentNode) if (p === el) n++;
    return n;
  };
  for (const h of linked) {
    let card: HTMLElement = h;
    for (let p = h.parentNode; p && p !== root && p.tagName; p = p.parentNode) {
      if (squashedLength(p.text) > 400 || (!isHeading.has(p) && headingsIn(p) > 1)) break;
      card = p;
    }
    card.parentNode?.removeChild(card);
  }
}

/**
 * Drops headings whose section kept no text (a "Related posts" heading whose link list was removed, a trailing
 * "Comments" heading): a heading with nothing under it before the next heading of the same or a higher level.
 */
function dropEmptySections(blocks: readonly TextBlock[]): TextBlock[] {
  const out: TextBlock[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    if (b.kind === 'heading') {
      let hasText = false;
      for (let j = i + 1; j < blocks.length; j++) {
        const n = blocks[j]!;
        if (n.kind === 'text') {
          hasText = true;
          break;
        }
        if (n.level <= b.level) break;
      }
      if (!hasText) continue;
    }
    out.push(b);
  }
  return out;
}

/** Visible text length of a parsed document (scripts, styles and templates excluded). */
export function visibleTextLength(root: HTMLElement): number {
  const stats = makeStats();
  return stats(documentBody(root, stats)).len;
}

/** Joins blocks into one plain text (paragraphs separated by blank lines). */
export function blocksToText(blocks: readonly TextBlock[]): string {
  return blocks.map((b) => b.text).join('\n\n');
}
