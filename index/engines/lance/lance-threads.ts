import { availableParallelism } from 'node:os';

/**
 * The LANCE_CPU_THREADS a process should run with: at least 8, because with a 2-core-sized pool older LanceDB index
 * builds deadlocked (docs/bench-index.md "LanceDB 0.39"). Kept as insurance: a hang costs more than oversubscription.
 */
export function lanceCpuThreads(cores: number = availableParallelism()): string {
  return String(Math.max(8, cores));
}

/**
 * Sets LANCE_CPU_THREADS for this process unless the operator set it. Lance reads the variable once, at its pool's
 * first use, so a process entry calls this before any index is opened (cli/main.ts, the test preload, benchmarks);
 * library code such as `PassageIndex.open` never writes the process environment. Child processes inherit it.
 */
export function setLanceCpuThreads(env: NodeJS.ProcessEnv = process.env): void {
  env.LANCE_CPU_THREADS ??= lanceCpuThreads();
}
