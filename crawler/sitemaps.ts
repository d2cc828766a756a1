/**
 * Sitemaps (sitemaps.org protocol): `<urlset>` lists pages, `<sitemapindex>` lists further sitemaps; either may be
 * gzipped (by Content-Encoding, which the fetcher undoes, or as a .gz file, undone here under a size cap). A plain
 * text sitemap (one URL per line) is accepted too. Only `<loc>` and `<lastmod>` are read.
 */
import { gunzipSync } from 'node:zlib';
import { normalizeUrl, hostOf } from './url.js';

/** One entry of a sitemap. */
export interface SitemapEntry {
  /** Absolute normalised URL. */
  readonly url: string;
  /** ISO 8601 or null. */
  readonly lastmod: string | null;
}

export interface ParsedSitemap {
  readonly kind: 'urlset' | 'index' | 'text' | 'unknown';
  readonly entries: readonly SitemapEntry[];
  /** Entries dropped: not a crawlable URL, or beyond the 50,000-entry protocol limit. */
  readonly skipped: number;
}

/** The protocol's limit per file. */
export const SITEMAP_MAX_ENTRIES = 50_000;

function decodeXmlText(s: string): string {
  return s
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_m, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&amp;/g, '&')
    .trim();
}

/** Undoes a gzip layer when the bytes start with the gzip magic number, keeping at most `maxBytes`. */
export function gunzipIfNeeded(body: Buffer, maxBytes: number): Buffer {
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) return gunzipSync(body, { maxOutputLength: maxBytes });
  return body;
}

/**
 * Parses a sitemap. `base` is the sitemap's own URL: relative locs are resolved against it, and (per the protocol)
 * entries of a urlset on another host than the sitemap are dropped unless `allowedHosts` lists that host
 * (robots.txt may point at a sitemap on another host for its own host).
 */
export function parseSitemap(text: string, base: string, allowedHosts: readonly string[] = []): ParsedSitemap {
  const ownHost = hostOf(base);
  const hosts = new Set([ownHost, ...allowedHosts.map((h) => h.toLowerCase())]);
  const head = text.slice(0, 4096);
  const isIndex = /<(?:\w+:)?sitemapindex[\s>]/i.test(head);
  const isUrlset = /<(?:\w+:)?urlset[\s>]/i.test(head);
  const entries: SitemapEntry[] = [];
  let skipped = 0;
  if (isIndex || isUrlset) {
    const tag = isIndex ? 'sitemap' : 'url';
    const re = new RegExp(`<(?:\\w+:)?${tag}[\\s>]([\\s\\S]*?)</(?:\\w+:)?${tag}>`, 'gi');
    for (const m of text.matchAll(re)) {
      const inner = m[1] ?? '';
      const loc = /<(?:\w+:)?loc>([\s\S]*?)<\/(?:\w+:)?loc>/i.exec(inner)?.[1];
      if (loc === undefined) continue;
      if (entries.length >= SITEMAP_MAX_ENTRIES) {
        skipped++;
        continue;
      }
      const url = normalizeUrl(decodeXmlText(loc), base);
      if (url === null || (!isIndex && !hosts.has(hostOf(url)))) {
        skipped++;
        continue;
      }
      const lm = /<(?:\w+:)?lastmod>([\s\S]*?)<\/(?:\w+:)?lastmod>/i.exec(inner)?.[1];
      const t = lm === undefined ? NaN : Date.parse(decodeXmlText(lm));
      entries.push({ url, lastmod: Number.isNaN(t) ? null : new Date(t).toISOString() });
    }
    return { kind: isIndex ? 'index' : 'urlset', entries, skipped };
  }
  if (!/^\s*</.test(text)) {
    for (const line of text.split(/\r?\n/)) {
      const l = line.trim();
      if (l === '') continue;
      if (entries.length >= SITEMAP_MAX_ENTRIES) {
        skipped++;
        continue;
      }
      const url = normalizeUrl(l);
      if (url === null || !hosts.has(hostOf(url))) {
        skipped++;
        continue;
      }
      entries.push({ url, lastmod: null });
    }
    return { kind: 'text', entries, skipped };
  }
  return { kind: 'unknown', entries, skipped };
}
