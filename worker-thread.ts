import { existsSync } from 'node:fs';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` next to `from` (an `import.meta.url`). The module is JavaScript once
 * built; from source (tsx) it is TypeScript, and a worker does not inherit the parent's tsx loader, so a one-line
 * bootstrap registers tsx inside the worker before importing it.
 */
export function startModuleWorker(from: string, name: string, opts: WorkerOptions = {}): Worker {
  const jsUrl = new URL(`${name}.js`, from);
  const tsUrl = new URL(`${name}.ts`, from);
  if (!existsSync(jsUrl) && existsSync(tsUrl)) {
    const api = import.meta.resolve('tsx/esm/api');
    const code = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(tsUrl.href)}); })`;
    return new Worker(code, { ...opts, eval: true });
  }
  return new Worker(jsUrl, opts);
}
