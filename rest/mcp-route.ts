import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Context } from 'koa';
import { SvcError } from '../errors.js';
import type { ToolContext, ToolDefinition } from '../tools/define-tool.js';
import { buildMcpServer } from '../tools/mcp.js';
import { readBody } from './body.js';

export interface McpRouteOptions {
  readonly tools: readonly ToolDefinition[];
  readonly version: string;
  readonly bodyLimit: number;
  /** Origins a browser may call /mcp from (exact match); requests without Origin are not browsers' and pass. */
  readonly allowedOrigins: readonly string[];
  /**
   * Authenticates the request (throws 401) and returns the tool context and a function that counts one tool call
   * against the key's quotas (throws rate_limited; `set` writes the rate headers).
   */
  readonly authenticate: (ctx: Context) => { ctx: ToolContext; countCall: (set: (name: string, value: string) => void) => void };
  readonly onInternalError: (err: unknown, tool: string) => void;
}

/**
 * Origin check (MCP transport security: DNS-rebinding protection). A browser page from a foreign origin gets 403.
 * The service's own origin (same host header) and configured origins are allowed.
 */
export function originAllowed(ctx: Context, allowed: readonly string[]): boolean {
  const origin = ctx.get('origin');
  if (origin === '') return true;
  if (allowed.includes(origin)) return true;
  try {
    const u = new URL(origin);
    return u.host === ctx.get('host');
  } catch {
    return false;
  }
}

/**
 * /mcp: Streamable HTTP, stateless, JSON responses. One McpServer per request (no session state to share or leak),
 * built from the registry with the caller's context. Only tools/call counts against quotas; a refused call gets an
 * isError result with code rate_limited and retry_after.
 */
export function mcpHandler(opts: McpRouteOptions) {
  return async (ctx: Context): Promise<void> => {
    if (!originAllowed(ctx, opts.allowedOrigins)) throw new SvcError('forbidden_origin', 'this Origin may not call /mcp');
    const { ctx: toolCtx, countCall } = opts.authenticate(ctx);
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      throw new SvcError('method_not_allowed', 'this server is stateless: POST JSON-RPC messages to /mcp');
    }
    const raw = await readBody(ctx.req, opts.bodyLimit);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      ctx.status = 400;
      ctx.body = { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null };
      return;
    }
    const res = ctx.res;
    const server = buildMcpServer({
      tools: opts.tools,
      ctx: toolCtx,
      version: opts.version,
      beforeCall: () => countCall((n, v) => res.setHeader(n, v)),
      onInternalError: opts.onInternalError,
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    ctx.respond = false;
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await transport.handleRequest(ctx.req, res, body);
  };
}
