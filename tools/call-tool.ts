import type { z } from 'zod';
import { SvcError, type FieldIssue } from '../errors.js';
import type { AnyObjectSchema, ToolContext, ToolDefinition } from './define-tool.js';
import { inlineExecutor } from './executor.js';
import { indexReadDeadlineMs, withIndexDeadline } from './index-deadline.js';

/** Turns zod issues into field issues: `path` names the field, `issue` says what is wrong in words. */
export function toFieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => ({
    path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    issue: i.message,
  }));
}

/** Validates raw input against the tool's schema; bound and type violations are 422 validation_failed. */
export function parseToolInput<I extends AnyObjectSchema>(tool: ToolDefinition<I, AnyObjectSchema>, raw: unknown): z.output<I> {
  const parsed = tool.input.safeParse(raw ?? {});
  // Unknown fields are refused rather than ignored: a misspelt `limt` silently doing nothing helps nobody.
  // Own-property test: `__proto__`, `constructor` or `toString` are unknown fields too, not inherited members.
  const unknown =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw)
      ? Object.keys(raw).filter((k) => !Object.hasOwn(tool.input.shape, k))
      : [];
  if (!parsed.success || unknown.length > 0) {
    const errors = [
      ...(parsed.success ? [] : toFieldIssues(parsed.error)),
      ...unknown.map((k) => ({ path: [k], issue: 'unrecognized parameter' })),
    ];
    const fields = [...new Set(errors.map((e) => e.path.join('.') || '(input)'))].join(', ');
    throw new SvcError('validation_failed', `invalid input for ${tool.name}: ${fields}`, { errors });
  }
  return parsed.data as z.output<I>;
}

/**
 * The call path REST uses: parse the input, then `runTool`. MCP parses each call's arguments before the SDK sees
 * them (tools/mcp.ts, `screenToolCalls`) and calls `runTool` with the parsed value; both answer the same value.
 */
export async function callTool<I extends AnyObjectSchema, O extends AnyObjectSchema>(
  tool: ToolDefinition<I, O>,
  raw: unknown,
  ctx: ToolContext,
): Promise<z.output<O>> {
  if (tool.enabled && !tool.enabled(ctx.deps.config)) {
    throw new SvcError('feature_disabled', `${tool.name} is not enabled on this service`);
  }
  return runTool(tool, parseToolInput(tool, raw), ctx);
}

/**
 * Runs parsed input where the tool says it runs (the services' executor, tools/executor.ts) and checks the output
 * against the declared schema, so REST JSON and MCP structuredContent are the same value for the same input. A tool
 * that reads the index answers within the index read deadline, or 503 `unavailable` (tools/index-deadline.ts).
 */
export async function runTool<I extends AnyObjectSchema, O extends AnyObjectSchema>(
  tool: ToolDefinition<I, O>,
  input: z.output<I>,
  ctx: ToolContext,
): Promise<z.output<O>> {
  const executor = ctx.deps.executor ?? inlineExecutor;
  const deadline = tool.readsIndex ? indexReadDeadlineMs(ctx.deps.config, ctx.deps.index) : 0;
  const result = await withIndexDeadline(deadline, (signal) => executor.run(tool, input, signal ? { ...ctx, signal } : ctx));
  const checked = tool.output.safeParse(result);
  if (!checked.success) {
    // A handler broke its own contract: a bug, reported as internal without details to the caller.
    throw new SvcError('internal', `output of ${tool.name} does not match its schema`, { cause: checked.error });
  }
  return checked.data;
}
