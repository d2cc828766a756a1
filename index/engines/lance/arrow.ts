/**
 * apache-arrow as LanceDB loads it: its CommonJS build, required, so a process holds one copy of Arrow. An ESM
 * `import` of the package would load its other (ESM) build beside LanceDB's: every module of Arrow parsed twice at
 * each start of the process and of each search thread, and classes LanceDB's own checks do not know.
 */
import { createRequire } from 'node:module';
import type * as ArrowModule from 'apache-arrow';

const arrow = createRequire(import.meta.url)('apache-arrow') as typeof ArrowModule;

export const { Binary, Bool, Field, FixedSizeList, Float32, Float64, Int32, Schema, Type, Utf8 } = arrow;
