import { contextTool } from './context.js';
import type { ToolDefinition } from './define-tool.js';
import { entitiesTool } from './entities.js';
import { freshTool } from './fresh.js';
import { imagesTool } from './images.js';
import { pageTool } from './page.js';
import { requestStatusTool } from './request-status.js';
import { searchTool } from './search.js';
import { siteTool } from './site.js';
import { submitUrlTool } from './submit-url.js';

/**
 * Every tool of the service, in the order tools/list shows them. MCP registration, REST routes and OpenAPI are
 * all generated from this list.
 */
export const allTools: readonly ToolDefinition[] = [
  searchTool,
  contextTool,
  freshTool,
  pageTool,
  entitiesTool,
  siteTool,
  submitUrlTool,
  requestStatusTool,
  imagesTool,
] as readonly ToolDefinition[];
