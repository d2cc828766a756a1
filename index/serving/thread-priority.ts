import { getPriority, setPriority } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The native threads LanceDB runs its work on: its CPU pool (`lance-cpu`: encoding, decoding, compaction, index
 * builds) and the tokio runtime that drives its I/O and async work (`tokio-rt-worker`). Linux names every thread
 * (`/proc/self/task/<tid>/comm`); Node's own threads are `node` (and the libuv pool's), which are left alone.
 */
export const INDEX_THREAD_NAMES: ReadonlySet<string> = new Set(['lance-cpu', 'tokio-rt-worker']);

/** Where Linux lists a process's threads. */
const TASKS = '/proc/self/task';

/**
 * Lowers LanceDB's native threads' CPU priority (nice 10) so index maintenance never holds the HTTP thread off a
 * core. Linux only; a lowered thread stays lowered, as raising it back needs privilege
 * (see docs/architecture.md#lancedb-thread-priority).
 */
export class IndexThreadPriority {
  readonly #nice: number;
  /**
   * Threads already looked at, by thread id: set to the nice value, or seen under another name twice. A new thread
   * briefly carries its creator's name (`node`) before naming itself, so one such look does not dismiss it.
   */
  #seen = new Map<number, 'done' | 'other once'>();
  #timer: NodeJS.Timeout | null = null;

  constructor(nice: number) {
    if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new RangeError(`nice must be an integer 0–19, not ${nice}`);
    this.#nice = nice;
  }

  /**
   * Lowers every index thread not yet at the nice value; returns how many it lowered now. Threads that end while it
   * runs, and a platform without /proc, are skipped silently. Only threads not seen before have their name read,
   * so a scan once a process's threads are known is far cheaper than the first.
   */
  scan(): number {
    if (this.#nice === 0) return 0;
    let tids: number[];
    try {
      tids = readdirSync(TASKS).map(Number);
    } catch {
      return 0; // not Linux
    }
    const now = new Set(tids);
    for (const tid of this.#seen.keys()) if (!now.has(tid)) this.#seen.delete(tid);
    let n = 0;
    for (const tid of tids) {
      const before = this.#seen.get(tid);
      if (before === 'done') continue;
      try {
        const name = readFileSync(`${TASKS}/${tid}/comm`, 'utf8').trim();
        if (!INDEX_THREAD_NAMES.has(name)) {
          this.#seen.set(tid, before === undefined ? 'other once' : 'done');
          continue;
        }
        this.#seen.set(tid, 'done');
        if (getPriority(tid) >= this.#nice) continue;
        setPriority(tid, this.#nice);
        n++;
      } catch {
        // the thread ended between the listing and here
      }
    }
    return n;
  }

  /** Scans now and then every `everyMs` (the timer never holds the process open). */
  start(everyMs = 1000): this {
    if (this.#nice === 0 || this.#timer) return this;
    this.scan();
    this.#timer = setInterval(() => this.scan(), everyMs);
    this.#timer.unref();
    return this;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
