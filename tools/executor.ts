import type { z } from 'zod';
import type { AnyObjectSchema, DeepReadonly, ToolContext, ToolDefinition } from './define-tool.js';

/**
 * Runs a tool's handler where the tool says it runs (`ToolDefinition.runsOn`). `callTool` hands every call to the
 * executor of the services it is given (`ServiceDeps.executor`), so REST, MCP and `svc eval` take the same path: a
 * process with search threads runs `search-thread` tools on them (tools/search-pool.ts), any other runs them here.
 */
export interface ToolExecutor {
  run<I extends AnyObjectSchema, O extends AnyObjectSchema>(
    tool: ToolDefinition<I, O>,
    input: z.output<I>,
    ctx: ToolContext,
  ): Promise<DeepReadonly<z.input<O>>>;
}

/** Every handler on the calling thread: a process without search threads, and a search thread itself. */
export const inlineExecutor: ToolExecutor = {
  run: (tool, input, ctx) => tool.run(input, ctx),
};
