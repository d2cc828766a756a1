/**
 * URL normalisation for the crawler: one normal form per resource, so the frontier deduplicates and robots keys by
 * origin. The WHATWG parser plus the percent-encoding normalisation it leaves alone.
 */

/** Characters RFC 3986 calls unreserved: percent-encoding them is equivalent to writing them plainly. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * Normalises percent-escapes: unreserved characters decoded, other hex upper-cased, a bare `%` written as `%25`;
 * reserved characters never decoded. Escaping the bare `%` keeps the form stable: otherwise `%%330` became `%30`
 * on one pass and `0` on the next.
 */
export function normalizePercentEncoding(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})?/g, (_m, hex: string | undefined) => {
    if (hex === undefined) return '%25';
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/**
 * The crawler's normal form of a URL, or null when not crawlable (http(s) only; credentials refused, not stripped,
 * because such links are phishing-shaped).
 * @example normalizeUrl('HTTP://Example.COM:80/a/./b/../%7euser#x') === 'http://example.com/a/~user'
 */
export function normalizeUrl(input: string, base?: string): string | null {
  let u: URL;
  try {
    u = base === undefined ? new URL(input.trim()) : new URL(input.trim(), base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (u.username !== '' || u.password !== '') return null;
  if (u.hostname === '') return null;
  u.hash = '';
  if (u.hostname.endsWith('.') && !u.hostname.startsWith('[')) {
    const h = u.hostname.replace(/\.+$/, '');
    if (h === '') return null;
    u.hostname = h;
  }
  // WHATWG keeps the escapes it finds; normalising them makes equal resources compare equal.
  const path = normalizePercentEncoding(u.pathname);
  const search = u.search === '?' ? '' : normalizePercentEncoding(u.search);
  return `${u.protocol}//${u.host}${path === '' ? '/' : path}${search}`;
}

/** Lower-case host name of a URL (IPv6 literals keep their brackets, as in `URL.hostname`). Throws on an invalid URL. */
export function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase();
}

/** `scheme://host[:port]` of a URL: the unit robots.txt and politeness apply to. Throws on an invalid URL. */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/** Path and query of a URL as robots.txt rules match it (`/` when empty). Throws on an invalid URL. */
export function pathAndQueryOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname === '' ? '/' : u.pathname}${u.search === '?' ? '' : u.search}`;
}
