import type { z } from 'zod';
import type { Config } from '../config.js';
import type { RunsOn, ToolContext } from './deps.js';

/** MCP tool annotations (hints for clients; never security boundaries). */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly openWorldHint: boolean;
  readonly idempotentHint?: boolean;
  readonly destructiveHint?: boolean;
}

/** How the REST facade exposes a tool. */
export interface RestBinding {
  readonly method: 'GET' | 'POST';
  /** Path under /api/v1 in @koa/router syntax, e.g. "/search" or "/entities/:id". Path params feed same-named inputs. */
  readonly path: string;
  /** Where the other inputs come from: the query string (GET) or a JSON body (POST). */
  readonly source: 'query' | 'body';
  /** HTTP status on success. @default 200 */
  readonly successStatus?: number;
  /** Optional request headers mapped onto input fields (e.g. Idempotency-Key → idempotency_key). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Shapes the HTTP body from the tool output when a route returns a part of it (e.g. GET /entities/:id returns
   * the one record of svc_entities' output). Absent: the body is the tool output itself.
   */
  readonly respond?: (output: never) => unknown;
  /** OpenAPI summary for this route. */
  readonly summary?: string;
}

export type { Caller, RunsOn, ToolContext } from './deps.js';

// Schemas are zod objects; `any` here only widens the generic bound so every concrete object schema fits.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyObjectSchema = z.ZodObject<any>;

/**
 * One tool, defined once. MCP registration, REST routes, OpenAPI and TypeScript types all derive from this.
 * `run` receives the parsed input and returns a value that must satisfy `output` (checked on every call).
 */
export interface ToolDefinition<I extends AnyObjectSchema = AnyObjectSchema, O extends AnyObjectSchema = AnyObjectSchema> {
  /** MCP tool name: `svc_*`. */
  readonly name: `svc_${string}`;
  /** Short human title. */
  readonly title: string;
  /** Written for a model: what it does, when to use it, what comes back, what it will not do. */
  readonly description: string;
  readonly input: I;
  readonly output: O;
  readonly annotations: ToolAnnotations;
  /** REST routes: the first is the tool's main route (its JSON equals the MCP structuredContent). */
  readonly rest: readonly [RestBinding, ...RestBinding[]];
  /** Whether the tool exists in this configuration (absent from tools/list and 404 feature_disabled otherwise). */
  readonly enabled?: (config: Config) => boolean;
  /** Where `run` runs (a search thread only reads the index: it has no crawler, state or entities). */
  readonly runsOn: RunsOn;
  /**
   * `run` reads the passage index: a call is bounded by the index read deadline (tools/index-deadline.ts), past which
   * it answers 503 `unavailable`. @default false
   */
  readonly readsIndex?: boolean;
  readonly run: (input: z.output<I>, ctx: ToolContext) => Promise<DeepReadonly<z.input<O>>>;
}

/** Readonly all the way down: handlers may return readonly arrays and records (mutable ones fit too). */
export type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** Identity function that keeps the literal types of a tool definition. */
export function defineTool<I extends AnyObjectSchema, O extends AnyObjectSchema>(def: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return def;
}
