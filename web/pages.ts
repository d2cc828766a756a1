/**
 * The human pages: `/` (search), `/manage-url` and `/webmasters`, plus their static assets under `/assets/`.
 * No build step: the assets are plain ES modules and CSS read from web/static at mount time and served from
 * memory (a fixed set of names, so no request path ever reaches the file system).
 *
 * Every page and asset carries a strict Content-Security-Policy without inline scripts or styles, nosniff and
 * no-referrer. The pages call the REST API from the browser with the key kept in sessionStorage (see
 * web/static/api-client.js); the server never sees the key on a page request.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { renderManageUrlPage } from './manage-url-page.js';
import { renderSearchPage } from './search-page.js';
import { renderWebmastersPage } from './webmasters-page.js';

/** The Content-Security-Policy of every page: only same-origin scripts, styles, images and API calls. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Headers set on every page and asset response. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': PAGE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** Asset file names that may be served: lower-case kebab names with a known extension. */
const ASSET_NAME = /^[a-z0-9][a-z0-9-]*\.(js|css|svg)$/;

/** One static asset held in memory. */
export interface StaticAsset {
  readonly body: Buffer;
  readonly type: string;
}

/**
 * Finds web/static: next to this module when run from source (tsx), or in the source tree when run from dist/
 * (tsc does not copy non-TS files, and the assets need no compilation).
 */
export function staticDir(): string {
  const candidates = [new URL('./static/', import.meta.url), new URL('../../web/static/', import.meta.url)];
  for (const c of candidates) {
    const p = fileURLToPath(c);
    if (existsSync(p)) return p;
  }
  throw new Error('web: static assets folder (web/static) not found');
}

/** Reads every servable asset of `dir` into memory, keyed by file name. */
export function loadAssets(dir: string = staticDir()): ReadonlyMap<string, StaticAsset> {
  const out = new Map<string, StaticAsset>();
  for (const name of readdirSync(dir)) {
    const m = ASSET_NAME.exec(name);
    if (!m) continue;
    out.set(name, { body: readFileSync(join(dir, name)), type: CONTENT_TYPES[m[1] as string] as string });
  }
  return out;
}

function setPageHeaders(ctx: Context): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
}

/** Options of {@link mountWebPages}. */
export interface WebPagesOptions {
  readonly config: Config;
}

/**
 * Mounts the pages and `/assets/:name` on the router (called through AppServices.mountExtra, before the API).
 * Pages are rendered once at mount: they depend only on the configuration and on constants.
 */
export function mountWebPages(router: Router, opts: WebPagesOptions): void {
  const assets = loadAssets();
  const pages: Readonly<Record<string, string>> = {
    '/': renderSearchPage(),
    '/manage-url': renderManageUrlPage(),
    '/webmasters': renderWebmastersPage(opts.config),
  };
  for (const [path, body] of Object.entries(pages)) {
    router.get(path, (ctx) => {
      setPageHeaders(ctx);
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = body;
    });
  }
  router.get('/assets/:name', (ctx, next) => {
    const asset = assets.get(ctx.params.name ?? '');
    if (!asset) return next(); // falls through to the funnel's 404 route_not_found
    setPageHeaders(ctx);
    // Assets change only with a deploy; revalidation keeps a long-lived tab from mixing versions.
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = asset.type;
    ctx.body = asset.body;
  });
}
