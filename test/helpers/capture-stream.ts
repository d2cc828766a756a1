import { Writable } from 'node:stream';

/** A stdout/stderr stand-in for CLI tests: keeps what is written, and says it is a terminal or not (`isTTY`). */
export function captureStream(tty: boolean): { stream: Writable & { isTTY?: boolean }; text: () => string } {
  let buf = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      buf += String(chunk);
      cb();
    },
  }) as Writable & { isTTY?: boolean };
  stream.isTTY = tty;
  return { stream, text: () => buf };
}
