import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError, errorTable, isSvcError, toProblem, type ErrorCode } from '../errors.js';
import type { KeysRepo, UsageCountersRepo } from '../state/repos/types.js';
import type { ToolContext, ToolDefinition } from '../tools/define-tool.js';
import type { ServiceDeps } from '../tools/deps.js';
import { assertUtf8Url } from './body.js';
import { authenticate, enforceRate, setRateHeaders } from './auth.js';
import { answeredAtEdge } from './client-error.js';
import { HttpMetrics, processFamilies, renderFamilies, type MetricFamily } from './metrics.js';
import { buildOpenApi } from './openapi.js';
import { hostHeaderProblem, servedHosts } from './served-host.js';
import { mountToolRoutes } from './tool-routes.js';

/** What the HTTP layer needs; built by main.ts. */
export interface AppServices {
  readonly deps: ServiceDeps;
  /** API keys (verified on every request) and their usage counters: the state repositories' own. */
  readonly keys: KeysRepo;
  readonly usage: UsageCountersRepo;
  readonly tools: readonly ToolDefinition[];
  readonly version: string;
  /** Whether the stores are open and usable, with a word per component (for /readyz). */
  readonly readiness: () => Promise<{ ok: boolean; checks: Record<string, string> }>;
  /** What this process runs (`svc serve --role`), for /metrics. @default "all" */
  readonly role?: string;
  /** The role's own gauges for /metrics (frontier depth and leases, outbox lag, index version…). */
  readonly gauges?: () => Promise<MetricFamily[]>;
  /** Extra routes (human web pages) mounted before the API. */
  readonly mountExtra?: (router: Router) => void;
  /** Routes answered before the app's middleware (`createHttpHandler`). */
  readonly plainRoutes?: readonly PlainRoute[];
}

/**
 * A route the server answers before the Koa stack, for calls whose fixed cost matters (a searcher's internal shard
 * calls, several per query): `take` answers null for any request it leaves to the app, which then answers it as it
 * would without this route; else it reads the request and gives the answer. Its failures go through the app's funnel
 * (the same problem+json), and each request is logged and counted under `pattern` as the app's routes are.
 */
export interface PlainRoute {
  readonly pattern: string;
  take(req: IncomingMessage): (() => Promise<{ readonly type: string; readonly body: string }>) | null;
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

/**
 * What the operator's log keeps of an unexpected failure: its class and stack frames, never its message (a
 * storage error quotes the filter it ran, i.e. the caller's values) and never the request.
 */
export function internalErrorLog(err: unknown): { name: string; frames: string[] } {
  if (!(err instanceof Error)) return { name: typeof err, frames: [] };
  const frames = (err.stack ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('at '))
    .slice(0, 12);
  return { name: err.name, frames };
}

/** nginx's status for a client that closed the connection before its answer: what the request log and metrics show. */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * Whether a failure is the client going away mid-request (its body stream aborted): not a fault of ours, so it is
 * neither answered (nobody is listening) nor counted or logged as an internal error.
 */
function clientClosed(req: IncomingMessage, err: unknown): boolean {
  return !isSvcError(err) && req.readableAborted;
}

/**
 * The error funnel's verdict on a failure the edge did not answer, counted (and logged when internal): null when the
 * client left (status 499, nothing to write), else the problem to answer with.
 */
function settleFailure(err: unknown, req: IncomingMessage, metrics: HttpMetrics, log: AppServices['deps']['log']): SvcError | null {
  if (clientClosed(req, err)) {
    metrics.clientAborted();
    return null;
  }
  const e = asSvcError(err);
  metrics.error(e.code);
  if (e.code === 'rate_limited') metrics.quotaRejected();
  if (e.code === 'internal') log.error({ err: internalErrorLog(err) }, 'internal error');
  return e;
}

/** One request's log line and latency metric: its matched route pattern, never its URL (query text, hosts). */
function logRequest(
  log: AppServices['deps']['log'],
  metrics: HttpMetrics,
  r: { id: string; method: string; route: string; status: number; started: bigint },
): void {
  const ms = Number(process.hrtime.bigint() - r.started) / 1e6;
  log.info({ req_id: r.id, method: r.method, route: r.route, status: r.status, ms: Math.round(ms * 100) / 100 }, 'request');
  metrics.observe(r.method, r.route, r.status, ms / 1000);
}

/** Maps anything thrown to an SvcError; unknown failures become `internal` (no details leave the process). */
function asSvcError(err: unknown): SvcError {
  if (isSvcError(err)) return err;
  const status = (err as { status?: unknown })?.status;
  if (typeof status === 'number' && statusCodes[status]) return new SvcError(statusCodes[status] as ErrorCode);
  return new SvcError('internal', undefined, { cause: err });
}

/** The headers every answer carries (the app's third middleware and the plain routes set them). */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cache-control': 'no-store',
} as const;

/**
 * The server's request handler: `s.plainRoutes` first (a request whose Host the app would refuse is left to it), then
 * the Koa application.
 */
export function createHttpHandler(s: AppServices): (req: IncomingMessage, res: ServerResponse) => void {
  const { app, metrics, served } = buildHttpApp(s);
  const koa = app.callback();
  const plain = s.plainRoutes ?? [];
  if (plain.length === 0) return koa;
  const log = s.deps.log;
  const answerPlain = async (
    req: IncomingMessage,
    res: ServerResponse,
    pattern: string,
    answer: () => Promise<{ type: string; body: string }>,
  ) => {
    const id = randomUUID();
    const started = process.hrtime.bigint();
    let status = 200;
    try {
      const a = await answer();
      const edge = answeredAtEdge(res);
      if (edge !== undefined) {
        // Answered at the edge meanwhile (as in the funnel): that answer is what is counted, nothing more is written.
        metrics.error(edge);
        status = errorTable[edge].status;
        return;
      }
      res.writeHead(200, { ...SECURITY_HEADERS, 'x-request-id': id, 'content-type': a.type, 'content-length': Buffer.byteLength(a.body) });
      res.end(a.body);
    } catch (err) {
      // The app's funnel, for what a route can throw (its catch below the request log).
      const edge = answeredAtEdge(res);
      const e = edge === undefined ? settleFailure(err, req, metrics, log) : null;
      if (edge !== undefined) {
        metrics.error(edge);
        status = errorTable[edge].status;
      } else if (e === null) status = CLIENT_CLOSED_STATUS;
      else {
        status = e.status;
        const body = JSON.stringify(toProblem(e));
        res.writeHead(status, {
          ...SECURITY_HEADERS,
          'x-request-id': id,
          ...(e.retryAfter !== undefined ? { 'retry-after': String(e.retryAfter) } : {}),
          'content-type': 'application/problem+json',
          'content-length': Buffer.byteLength(body),
        });
        res.end(body);
      }
    } finally {
      logRequest(log, metrics, { id, method: req.method ?? '', route: pattern, status, started });
    }
  };
  return (req, res) => {
    if (hostHeaderProblem(req) === null && served.hostAllowed(req.headers.host ?? ''))
      for (const r of plain) {
        const answer = r.take(req);
        if (answer) return void answerPlain(req, res, r.pattern, answer);
      }
    void koa(req, res);
  };
}

/** The Koa application: request log, one error funnel, security headers, API routes, /mcp, health. */
function buildHttpApp(s: AppServices): { app: Koa; metrics: HttpMetrics; served: ReturnType<typeof servedHosts> } {
  const app = new Koa({ proxy: false });
  const log = s.deps.log;
  const { config } = s.deps;
  const metrics = new HttpMetrics();

  // Request log: id, method, matched route pattern (never the URL: it carries query text and hosts), status, latency.
  app.use(async (ctx: Context, next: Next) => {
    const id = randomUUID();
    const started = process.hrtime.bigint();
    ctx.set('X-Request-Id', id);
    try {
      await next();
    } finally {
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      logRequest(log, metrics, { id, method: ctx.method, route: String(route), status: ctx.status, started });
    }
  });

  // The one error funnel: every failure leaves as application/problem+json with a stable code.
  app.use(async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.body === undefined && ctx.respond !== false) {
        if (ctx.status === 404) throw new SvcError('route_not_found', `no route ${ctx.method} ${ctx.path.slice(0, 200)}`);
        // The router set 405/501 and `Allow`; the body is ours.
        if (ctx.status === 405 || ctx.status === 501)
          throw new SvcError('method_not_allowed', `${ctx.method} is not allowed here; see Allow`);
      }
    } catch (err) {
      // Answered at the edge: counted below (the handler failed because the edge refused its body).
      const e = answeredAtEdge(ctx.res) === undefined ? settleFailure(err, ctx.req, metrics, log) : undefined;
      if (e === null) {
        ctx.status = CLIENT_CLOSED_STATUS;
        ctx.respond = false;
      } else if (e !== undefined) {
        if (e.retryAfter !== undefined) ctx.set('Retry-After', String(e.retryAfter));
        ctx.status = e.status;
        ctx.type = 'application/problem+json';
        ctx.body = toProblem(e);
      }
    }
    // The edge answered this request itself (broken body framing, a body too slow), whatever the handler did
    // meanwhile: that answer is what the log and the metrics show, and nothing more is written.
    const edge = answeredAtEdge(ctx.res);
    if (edge !== undefined) {
      metrics.error(edge);
      ctx.status = errorTable[edge].status;
      ctx.respond = false;
    }
  });

  app.use(async (ctx: Context, next: Next) => {
    ctx.set(SECURITY_HEADERS);
    await next();
  });

  // DNS-rebinding protection on every route: the Host must be a name this service is served under.
  const served = servedHosts({ bindHost: config.host, allowedHosts: config.allowedHosts, allowedOrigins: config.allowedOrigins });
  app.use(async (ctx: Context, next: Next) => {
    const malformed = hostHeaderProblem(ctx.req);
    if (malformed) throw malformed;
    if (!served.hostAllowed(ctx.get('host'))) throw new SvcError('forbidden_host', 'this Host header does not name this service');
    // Text is refused when it is not UTF-8, never repaired with U+FFFD behind the caller's back.
    assertUtf8Url(ctx.url);
    await next();
  });

  const toolContext = async (ctx: Context) => {
    const key = await authenticate(ctx, s.keys);
    const set = (n: string, v: string): void => ctx.set(n, v);
    return {
      toolCtx: { deps: s.deps, caller: { keyId: key.id, digest: key.digest } } satisfies ToolContext,
      count: () => enforceRate(s.usage, key, set, s.deps.now()),
      show: async () => setRateHeaders(set, await s.usage.peek(key.digest, { perMinute: key.perMinute, perDay: key.perDay }, s.deps.now())),
    };
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
  // Aggregates only (rest/metrics.ts): no key, query, URL or address ever becomes a label.
  router.get('/metrics', async (ctx) => {
    let role: MetricFamily[] = [];
    let up = 1;
    try {
      role = (await s.gauges?.()) ?? [];
    } catch {
      up = 0; // a store is down: the scrape still answers, and says so
    }
    const families = [
      ...processFamilies(s.role ?? 'all', s.version),
      {
        name: 'svc_state_up',
        help: 'Whether the role gauges could be read from the state and the index (1) or not (0).',
        type: 'gauge' as const,
        samples: [{ value: up }],
      },
      ...metrics.families(),
      ...role,
    ];
    ctx.type = 'text/plain; version=0.0.4; charset=utf-8';
    ctx.body = renderFamilies(families) + metrics.renderHistograms();
  });
  // Built at its first request: nothing a start waits for.
  let openapi: ReturnType<typeof buildOpenApi> | null = null;
  router.get('/api/v1/openapi.json', (ctx) => {
    ctx.body = openapi ??= buildOpenApi(s.tools, s.version);
  });
  // The MCP SDK is loaded at the first /mcp request, not at start: a REST search never needs it.
  let mcp: Promise<(ctx: Context) => Promise<void>> | null = null;
  router.all('/mcp', async (ctx) => {
    mcp ??= import('./mcp-route.js').then(({ mcpHandler }) =>
      mcpHandler({
        tools: s.tools,
        version: s.version,
        bodyLimit: config.bodyLimit,
        originAllowed: served.originAllowed,
        authenticate: async (ctx) => {
          const key = await authenticate(ctx, s.keys);
          const limits = { perMinute: key.perMinute, perDay: key.perDay };
          return {
            ctx: { deps: s.deps, caller: { keyId: key.id, digest: key.digest } },
            countCall: (set) => enforceRate(s.usage, key, set, s.deps.now()),
            showQuota: async (set) => setRateHeaders(set, await s.usage.peek(key.digest, limits, s.deps.now())),
          };
        },
        onInternalError: (err, tool) => log.error({ tool, err: internalErrorLog(err) }, 'internal tool error'),
        onToolError: (e) => {
          metrics.error(e.code);
          if (e.code === 'rate_limited') metrics.quotaRejected();
        },
      }),
    );
    const handle = await mcp;
    await handle(ctx);
  });
  s.mountExtra?.(router);
  const api = new Router({ prefix: '/api/v1' });
  mountToolRoutes(api, s.tools, { bodyLimit: config.bodyLimit, context: toolContext });
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.use(api.routes());
  app.use(api.allowedMethods());
  return { app, metrics, served };
}
