import { availableParallelism } from 'node:os';

/**
 * The LANCE_CPU_THREADS a process should run with. Lance sizes its CPU pool to the core count; with 2 cores, LanceDB
 * 0.31 index builds and compaction were seen to deadlock (no CPU, the promise never settles) where 8 threads complete;
 * 0.39 has not hung (docs/bench-index.md "LanceDB 0.39"). Kept as insurance, since a hang costs far more than an
 * oversubscribed pool.
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
