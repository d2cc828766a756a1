/**
 * Progress of a long command (`svc ingest`, `svc crawl`, the re-embedding) where nobody watches a live line: when
 * stdout is not a terminal (a pipe, a log file, CI), a line every few seconds with what is done, the rate and the time
 * left, and a summary at the end. On a terminal the command keeps its own live line (`tty: 'quiet'`), or this one
 * rewrites one in place (`tty: 'live'`).
 */
import type { CliIo } from './io.js';

/** How a progress line is made. */
export interface ProgressOptions {
  readonly io: CliIo;
  /** What a line starts with: `ingest`, `crawl`, `re-embedding`. */
  readonly label: string;
  /** What is counted: `docs`, `pages`, `passages`. */
  readonly unit: string;
  /** Milliseconds between lines off a terminal (config `progressMs`); 0: a line at every update. */
  readonly everyMs: number;
  /** On a terminal: `quiet` prints nothing (the command has its own line), `live` keeps one line up to date. @default 'quiet' */
  readonly tty?: 'quiet' | 'live';
  /** The count the work starts from (a resumed pass: what earlier runs did); the rate is of this run's. @default 0 */
  readonly from?: number;
  /** @default performance.now */
  readonly now?: () => number;
}

/** How far along the work is, when known: a count out of a total, or a fraction (the bytes of a file read). */
export interface ProgressPosition {
  readonly total?: number | null;
  /** 0..1; wins over `total` for the time left. */
  readonly fraction?: number | null;
  /** Said after the figures (e.g. `indexed 10, queued 4`). */
  readonly extra?: string;
}

/** Seconds as a short duration: `42 s`, `3 min 5 s`, `2 h 10 min`. */
export function formatSeconds(s: number): string {
  const n = Math.max(0, Math.round(s));
  if (n < 60) return `${n} s`;
  if (n < 3600) return `${Math.floor(n / 60)} min ${n % 60} s`;
  return `${Math.floor(n / 3600)} h ${Math.floor((n % 3600) / 60)} min`;
}

const rateText = (r: number): string => (r >= 100 ? String(Math.round(r)) : r.toFixed(1));

/** Progress lines of one command. */
export class ProgressLines {
  readonly #o: ProgressOptions;
  readonly #now: () => number;
  readonly #started: number;
  readonly #tty: boolean;
  #last: number;
  readonly #base: number;
  #lastDone = 0;

  constructor(o: ProgressOptions) {
    this.#o = o;
    this.#now = o.now ?? (() => performance.now());
    this.#started = this.#now();
    this.#last = this.#started;
    this.#tty = o.io.stdout.isTTY === true;
    this.#base = o.from ?? 0;
    this.#lastDone = this.#base;
  }

  /** The line for `done` now. */
  line(done: number, at: ProgressPosition = {}): string {
    const { label, unit } = this.#o;
    const secs = (this.#now() - this.#started) / 1000;
    const worked = done - this.#base;
    const rate = secs > 0 ? worked / secs : 0;
    const total = at.total ?? null;
    const fraction = at.fraction ?? (total !== null && total > 0 ? Math.min(1, done / total) : null);
    let left: string;
    if (total !== null) left = rate > 0 ? formatSeconds(Math.max(0, total - done) / rate) : 'unknown';
    else if (fraction !== null && fraction > 0) left = formatSeconds((secs * (1 - fraction)) / fraction);
    else left = 'unknown';
    return (
      `${label}: ${done}${total !== null ? `/${total}` : ''} ${unit}` +
      `${fraction !== null ? ` (${Math.floor(fraction * 100)}%)` : ''}, ${rateText(rate)} ${unit}/s, ${left} left` +
      (at.extra ? `, ${at.extra}` : '')
    );
  }

  /** Reports `done`: off a terminal, a line when `everyMs` has passed since the last one. */
  update(done: number, at: ProgressPosition = {}): void {
    this.#lastDone = done;
    const now = this.#now();
    if (this.#tty) {
      if (this.#o.tty === 'live' && now - this.#last >= 250) {
        this.#last = now;
        this.#o.io.stdout.write(`\r\x1b[2K${this.line(done, at)}`);
      }
      return;
    }
    if (now - this.#last < this.#o.everyMs) return;
    this.#last = now;
    this.#o.io.stdout.write(`${this.line(done, at)}\n`);
  }

  /** The summary: `<label>: <how> — N <unit> in T, R <unit>/s` (on a terminal too, after a live line). */
  finish(how: string, done = this.#lastDone, extra?: string): void {
    const secs = (this.#now() - this.#started) / 1000;
    const worked = done - this.#base;
    const clear = this.#tty && this.#o.tty === 'live' ? '\r\x1b[2K' : '';
    this.#o.io.stdout.write(
      `${clear}${this.#o.label}: ${how}, ${worked} ${this.#o.unit} in ${formatSeconds(secs)}, ` +
        `${rateText(secs > 0 ? worked / secs : 0)} ${this.#o.unit}/s${extra ? `, ${extra}` : ''}\n`,
    );
  }
}
