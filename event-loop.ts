/**
 * Long synchronous work shares one event loop with the requests a process serves (issue 14: the loop never waits
 * more than 50 ms on the crawler's indexing path). Work that loops over many items — a sitemap's entries, a page's
 * links, a scan batch's rows, a write's rows — checks a time budget between items and gives the loop a turn when the
 * budget is spent.
 *
 * Paused loops resume one per turn of the event loop, in the order they paused. With plain setImmediate every paused
 * loop resumed in the same turn (immediates queued before a turn all run in it): twenty sitemaps admitted at once,
 * each with its own 10 ms budget, held the loop for 200 ms. Resumed one at a time, every turn carries at most one
 * slice of this work, and a loop that pauses goes to the back of the queue, so none starves.
 */

/**
 * Milliseconds of synchronous work in one slice by default: a fifth of the 50 ms bound, so a slice that overruns
 * (a slow item, a GC pause) still ends well inside it.
 */
export const LOOP_SLICE_MS = 10;

/** Resumers of paused loops, first paused first; one is resumed per turn of the event loop. */
const waiting: (() => void)[] = [];
let pumping = false;

function pump(): void {
  const next = waiting.shift();
  // An immediate queued while immediates run waits for the next turn: I/O and timers are served in between.
  if (waiting.length > 0) setImmediate(pump);
  else pumping = false;
  next?.();
}

/** Lets the event loop run its pending I/O and timers before going on; paused loops resume one per turn. */
export function yieldToLoop(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!pumping) {
      pumping = true;
      setImmediate(pump);
    }
  });
}

/**
 * One loop's budget of synchronous work between two turns. `due()` is cheap (one clock read); `pause()` yields and
 * starts a new slice when the loop resumes. Awaiting a resolved promise is not a turn: only `pause()` lets I/O in.
 */
export class LoopBudget {
  #since = performance.now();
  readonly #sliceMs: number;

  constructor(sliceMs: number = LOOP_SLICE_MS) {
    this.#sliceMs = sliceMs;
  }

  /** True when this slice has run for its budget. */
  due(): boolean {
    return performance.now() - this.#since >= this.#sliceMs;
  }

  /** Yields to the loop; the next slice starts when this loop resumes. */
  async pause(): Promise<void> {
    await yieldToLoop();
    this.#since = performance.now();
  }

  /** Yields only when the slice is spent (`if (b.due()) await b.pause()`). */
  async tick(): Promise<void> {
    if (this.due()) await this.pause();
  }
}
