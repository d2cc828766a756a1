import type { ToolExecutor } from './deps.js';

export type { ToolExecutor } from './deps.js';

/** Every handler on the calling thread: a process without search threads, and a search thread itself. */
export const inlineExecutor: ToolExecutor = {
  run: (tool, input, ctx) => tool.run(input, ctx),
};
