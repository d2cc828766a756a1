/**
 * Citation text for a passage: "title — host — YYYY-MM-DD", plus "p. N" for a passage of a paged document (PDF)
 * (spec §2.1 `cite`). Missing parts are dropped, never rendered as "undefined" or an empty segment.
 */

/** Longest title kept in a citation, in characters (ellipsis included). */
export const MAX_CITE_TITLE_CHARS = 120;

/** The parts a citation is made from. `date` is an ISO 8601 string, a Date, or null/undefined when unknown. */
export interface CiteParts {
  readonly title?: string | null;
  readonly host?: string | null;
  readonly date?: string | Date | null;
  /** 1-based page of a paged document (PDF) the passage is on; null/undefined for HTML and text. */
  readonly page?: number | null;
}

/** Collapses whitespace (titles come from HTML and carry newlines and runs of spaces). */
function clean(s: string | null | undefined): string {
  return (s ?? '').replace(/\s+/gu, ' ').trim();
}

/** Shortens a title at a word boundary when possible, with a trailing ellipsis. */
function shortenTitle(title: string, max: number): string {
  const chars = Array.from(title); // code points, so a surrogate pair is never split
  if (chars.length <= max) return title;
  const cut = chars.slice(0, max - 1).join('');
  const lastSpace = cut.lastIndexOf(' ');
  // Only back off to a word boundary when it does not throw away most of the title.
  const base = lastSpace >= max * 0.6 ? cut.slice(0, lastSpace) : cut;
  return `${base.replace(/[\s\p{P}]+$/u, '')}…`;
}

/** Formats a date as YYYY-MM-DD (UTC), or '' when it is missing or not a valid date. */
export function formatCiteDate(date: string | Date | null | undefined): string {
  if (date === null || date === undefined || date === '') return '';
  if (typeof date === 'string') {
    // A bare calendar date is kept as written: parsing it would be fine, but a date-time with an offset must be
    // normalised to UTC, so both go through Date except the plain YYYY-MM-DD form.
    const m = /^(\d{4})-(\d{2})-(\d{2})$/u.exec(date.trim());
    if (m) return m[0];
  }
  const d = typeof date === 'string' ? new Date(date) : date;
  const t = d.getTime();
  if (Number.isNaN(t)) return '';
  return d.toISOString().slice(0, 10);
}

/**
 * Formats a citation: `title — host — YYYY-MM-DD — p. N`, dropping whichever parts are missing.
 * @example formatCite({ title: 'Annual report', host: 'ville.example', page: 12 }) // → 'Annual report — ville.example — p. 12'
 */
export function formatCite(parts: CiteParts): string {
  const title = clean(parts.title);
  const host = clean(parts.host).toLowerCase();
  const page = typeof parts.page === 'number' && Number.isInteger(parts.page) && parts.page > 0 ? `p. ${parts.page}` : '';
  const segments = [title === '' ? '' : shortenTitle(title, MAX_CITE_TITLE_CHARS), host, formatCiteDate(parts.date), page];
  return segments.filter((s) => s !== '').join(' — ');
}
