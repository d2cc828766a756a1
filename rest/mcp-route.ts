import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Context } from 'koa';
import { SvcError } from '../errors.js';
import type { ToolContext, ToolDefinition } from '../tools/define-tool.js';
import { serveMcp } from '../tools/mcp.js';
import { decodeUtf8, readBody } from './body.js';

type SetHeader = (name: string, value: string) => void;

export interface McpRouteOptions {
  readonly tools: readonly ToolDefinition[];
  readonly version: string;
  readonly bodyLimit: number;
  /**
   * Whether a browser Origin may call /mcp (scheme, host and port; see rest/served-host.ts). Requests without
   * Origin are not browsers' and pass; the Host itself was checked for every route before.
   */
  readonly originAllowed: (origin: string, host: string) => boolean;
  /**
   * Authenticates the request (throws 401) and returns the tool context, a function that counts one tool call
   * against the key's quotas (throws rate_limited; `set` writes the rate headers) and one that writes the rate
   * headers without counting (initialize, tools/list: every successful response carries them).
   */
  readonly authenticate: (
    ctx: Context,
  ) => Promise<{ ctx: ToolContext; countCall: (set: SetHeader) => Promise<void>; showQuota: (set: SetHeader) => Promise<void> }>;
  readonly onInternalError: (err: unknown, tool: string) => void;
  /** Every refusal answered as an isError result (for /metrics). */
  readonly onToolError?: (err: SvcError) => void;
}

/**
 * /mcp: Streamable HTTP, stateless, JSON responses. One McpServer per request (no session state to share or leak),
 * built from the registry with the caller's context. Only tools/call counts against quotas; a refused call gets an
 * isError result with code rate_limited and retry_after, plus the Retry-After header. Every answer carries the
 * X-RateLimit-* headers.
 */
export function mcpHandler(opts: McpRouteOptions) {
  return async (ctx: Context): Promise<void> => {
    const origin = ctx.get('origin');
    if (origin !== '' && !opts.originAllowed(origin, ctx.get('host')))
      throw new SvcError('forbidden_origin', 'this Origin may not call /mcp');
    const { ctx: toolCtx, countCall, showQuota } = await opts.authenticate(ctx);
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      throw new SvcError('method_not_allowed', 'this server is stateless: POST JSON-RPC messages to /mcp');
    }
    const raw = await readBody(ctx.req, opts.bodyLimit);
    const text = decodeUtf8(raw, 'the request body');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      ctx.status = 400;
      ctx.body = { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null };
      return;
    }
    const res = ctx.res;
    const set: SetHeader = (n, v) => res.setHeader(n, v);
    await showQuota(set); // a tools/call below overwrites them with the counted values
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = await serveMcp(
      {
        tools: opts.tools,
        ctx: toolCtx,
        version: opts.version,
        beforeCall: () => countCall(set),
        onInternalError: opts.onInternalError,
        ...(opts.onToolError ? { onToolError: opts.onToolError } : {}),
      },
      transport,
    );
    ctx.respond = false;
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await transport.handleRequest(ctx.req, res, body);
  };
}
