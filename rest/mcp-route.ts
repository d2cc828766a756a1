import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import { SvcError } from '../errors.js';
import type { ToolContext, ToolDefinition } from '../tools/define-tool.js';
import { buildMcpServer, enabledTools, screenToolCalls } from '../tools/mcp.js';
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
 * /mcp: Streamable HTTP, stateless, JSON responses. Origin, key, body, then `screenToolCalls` (the quota and the
 * arguments of each tools/call), then the SDK's transport and a per-request McpServer. Rate headers on every answer.
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
    const set: SetHeader = (n, v) => ctx.set(n, v);
    await showQuota(set); // a tools/call below overwrites them with the counted values
    const tools = enabledTools(opts.tools, toolCtx.deps.config);
    const hooks = { onInternalError: opts.onInternalError, ...(opts.onToolError ? { onToolError: opts.onToolError } : {}) };
    const screened = await screenToolCalls(body, {
      tools,
      protocolVersion: ctx.get('mcp-protocol-version') || DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
      ...hooks,
    });
    const server = buildMcpServer({ tools, ctx: toolCtx, version: opts.version, countCall: () => countCall(set), ...hooks });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    let response: Response;
    try {
      await server.connect(transport);
      response = await transport.handleRequest(webRequest(ctx), { parsedBody: screened.forward });
    } finally {
      await server.close();
    }
    await respond(ctx, response, screened.answers);
  };
}

/** The request as the SDK's web-standard transport reads it: method, URL and headers (the body is passed parsed). */
function webRequest(ctx: Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  return new Request(ctx.href, { method: ctx.method, headers });
}

/**
 * Writes the transport's response, with the screened answers added to its own when it accepted the request (a
 * refusal of the HTTP request itself, e.g. an unsupported protocol version, wins). One answer is sent as an object,
 * several as an array, as the transport does.
 */
async function respond(ctx: Context, response: Response, screened: readonly JSONRPCMessage[]): Promise<void> {
  const text = await response.text();
  response.headers.forEach((value, name) => ctx.set(name, value));
  if (screened.length === 0 || (response.status !== 200 && response.status !== 202)) {
    ctx.body = text === '' ? null : text;
    ctx.status = response.status;
    return;
  }
  const own = response.status === 200 ? [JSON.parse(text) as JSONRPCMessage | JSONRPCMessage[]].flat() : [];
  const answers = [...screened, ...own];
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(answers.length === 1 ? answers[0] : answers);
}
