import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/**
 * Node's event-loop delay monitor, read as a delay. `perf_hooks.monitorEventLoopDelay` records the time *between* two
 * of its ticks, its resolution included (`Histogram::RecordDelta` in Node's src/histogram.cc): an idle loop reads
 * about the resolution, and a stall its length plus up to one resolution more. These readers subtract the resolution
 * (older load-bench figures in docs/bench-history.md are that much high).
 */
export class LoopDelayMonitor {
  readonly #h: IntervalHistogram;
  readonly #resolutionNs: number;

  constructor(resolutionMs: number) {
    this.#h = monitorEventLoopDelay({ resolution: resolutionMs });
    this.#resolutionNs = resolutionMs * 1e6;
  }

  enable(): void {
    this.#h.enable();
  }

  disable(): void {
    this.#h.disable();
  }

  reset(): void {
    this.#h.reset();
  }

  /** Samples recorded (the monitor was seen to record none over whole windows of heavy load). */
  get count(): number {
    return this.#h.count;
  }

  /** The largest delay, ns (0 without samples). */
  get maxNs(): number {
    return this.#delay(this.#h.max);
  }

  /** The p-th percentile delay, ns (0 without samples). */
  percentileNs(p: number): number {
    return this.#delay(this.#h.percentile(p));
  }

  #delay(ns: number): number {
    return this.#h.count > 0 ? Math.max(0, ns - this.#resolutionNs) : 0;
  }
}
