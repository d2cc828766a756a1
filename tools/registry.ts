import type { ToolDefinition } from './define-tool.js';

/**
 * Every tool of the service, in the order tools/list shows them. MCP registration, REST routes and OpenAPI are
 * all generated from this list.
 */
export const allTools: readonly ToolDefinition[] = [];
