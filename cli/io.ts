/** Streams and environment a CLI command works with (tests pass their own). */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
}

/** A CLI command: argv after the command name, exit code out. */
export type Command = (argv: string[], io: CliIo) => Promise<number>;

export const processIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Thrown for bad usage; main prints the message and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
