import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { randomUUID } from 'node:crypto';
import { SvcError, isSvcError, toProblem, type ErrorCode } from '../errors.js';
import type { KeyStore } from '../state/keys.js';
import type { RateLimiter } from '../state/rate-limits.js';
import type { ToolContext, ToolDefinition } from '../tools/define-tool.js';
import type { ServiceDeps } from '../tools/deps.js';
import { authenticate, enforceRate } from './auth.js';
import { mcpHandler } from './mcp-route.js';
import { buildOpenApi } from './openapi.js';
import { mountToolRoutes } from './tool-routes.js';

/** What the HTTP layer needs; built by main.ts. */
export interface AppServices {
  readonly deps: ServiceDeps;
  readonly keys: KeyStore;
  readonly limiter: RateLimiter;
  readonly tools: readonly ToolDefinition[];
  readonly version: string;
  /** Whether the stores are open and usable, with a word per component (for /readyz). */
  readonly readiness: () => Promise<{ ok: boolean; checks: Record<string, string> }>;
  /** Extra routes (human web pages) mounted before the API. */
  readonly mountExtra?: (router: Router) => void;
}

const statusCodes: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'route_not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  501: 'method_not_allowed',
};

/** Maps anything thrown to an SvcError; unknown failures become `internal` (no details leave the process). */
function asSvcError(err: unknown): SvcError {
  if (isSvcError(err)) return err;
  const status = (err as { status?: unknown })?.status;
  if (typeof status === 'number' && statusCodes[status]) return new SvcError(statusCodes[status] as ErrorCode);
  return new SvcError('internal', undefined, { cause: err });
}

/** The Koa application: request log, one error funnel, security headers, API routes, /mcp, health. */
export function createHttpApp(s: AppServices): Koa {
  const app = new Koa({ proxy: false });
  const log = s.deps.log;
  const { config } = s.deps;

  // Request log: id, method, matched route pattern (never the URL: it carries query text and hosts), status, latency.
  app.use(async (ctx: Context, next: Next) => {
    const id = randomUUID();
    const started = process.hrtime.bigint();
    ctx.set('X-Request-Id', id);
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      log.info({ req_id: id, method: ctx.method, route: String(route), status: ctx.status, ms: Math.round(ms * 100) / 100 }, 'request');
    }
  });

  // The one error funnel: every failure leaves as application/problem+json with a stable code.
  app.use(async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined && ctx.respond !== false) {
        throw new SvcError('route_not_found', `no route ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const e = asSvcError(err);
      if (e.code === 'internal') log.error({ err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) }, 'internal error');
      if (e.retryAfter !== undefined) ctx.set('Retry-After', String(e.retryAfter));
      ctx.status = e.status;
      ctx.type = 'application/problem+json';
      ctx.body = toProblem(e);
    }
  });

  app.use(async (ctx: Context, next: Next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    ctx.set('Cache-Control', 'no-store');
    await next();
  });

  const toolContext = (ctx: Context): ToolContext => {
    const key = authenticate(ctx, s.keys);
    enforceRate(s.limiter, key, (n, v) => ctx.set(n, v), s.deps.now());
    return { deps: s.deps, caller: { keyId: key.id, digest: key.digest } };
  };

  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const r = await s.readiness();
    ctx.status = r.ok ? 200 : 503;
    ctx.body = { status: r.ok ? 'ready' : 'unavailable', checks: r.checks };
  });
  const openapi = buildOpenApi(s.tools, s.version);
  router.get('/api/v1/openapi.json', (ctx) => {
    ctx.body = openapi;
  });
  router.all(
    '/mcp',
    mcpHandler({
      tools: s.tools,
      version: s.version,
      bodyLimit: config.bodyLimit,
      allowedOrigins: config.allowedOrigins,
      authenticate: (ctx) => {
        const key = authenticate(ctx, s.keys);
        return {
          ctx: { deps: s.deps, caller: { keyId: key.id, digest: key.digest } },
          countCall: (set) => enforceRate(s.limiter, key, set, s.deps.now()),
        };
      },
      onInternalError: (err, tool) =>
        log.error({ tool, err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) }, 'internal tool error'),
    }),
  );
  s.mountExtra?.(router);
  const api = new Router({ prefix: '/api/v1' });
  mountToolRoutes(api, s.tools, { bodyLimit: config.bodyLimit, context: toolContext });
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  app.use(api.routes());
  app.use(api.allowedMethods({ throw: true }));
  return app;
}
