/**
 * Long synchronous loops share the event loop with requests: they check a time budget between items and yield.
 * Paused loops resume one per turn in pause order, and loops starting in one phase share a slice, so a turn carries
 * at most two slices and none starves (see docs/architecture.md#event-loop-budgets).
 */

/**
 * Milliseconds of synchronous work in one slice by default: a fifth of the 50 ms bound, so a slice that overruns
 * (a slow item, a GC pause) still ends well inside it.
 */
export const LOOP_SLICE_MS = 10;

/** Resumers of paused loops, first paused first; one is resumed per turn of the event loop. */
const waiting: (() => void)[] = [];
let pumping = false;

/** When the thread's current window of budgeted work opened (performance.now()), or null when none is open. */
let windowStart: number | null = null;
let closing = false;

function closeWindow(): void {
  windowStart = null;
  closing = false;
}

/** Opens the window at `now` (and its closing immediate) unless one is open; its start. */
function windowOpenedAt(now: number, fresh = false): number {
  if (windowStart === null || fresh) windowStart = now;
  if (!closing) {
    closing = true;
    setImmediate(closeWindow);
  }
  return windowStart;
}

function pump(): void {
  const next = waiting.shift();
  // An immediate queued while immediates run waits for the next turn: I/O and timers are served in between.
  if (waiting.length > 0) setImmediate(pump);
  else pumping = false;
  // The resumed loop's slice is its own: a window the poll phase used up must not pause it again unserved.
  if (next) windowOpenedAt(performance.now(), true);
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

  /** True when this slice has run for its budget, or the thread's window of budgeted work has (shared by every loop). */
  due(): boolean {
    const now = performance.now();
    return now - this.#since >= this.#sliceMs || now - windowOpenedAt(now) >= this.#sliceMs;
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
