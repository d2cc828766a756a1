/**
 * Ctrl-C (SIGINT) and SIGTERM stop a long command the same way: the command finishes or hands back what it holds
 * (frontier leases, a batch being written), prints its summary and exits with its own code. A second signal of
 * the same kind is left to Node's default, so an operator can still kill a command that hangs while stopping.
 */
export interface StopSignals {
  /** Aborted at the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** The signal that asked for the stop, or null while none has. */
  readonly received: () => NodeJS.Signals | null;
  /** Removes the handlers (call once the command no longer needs them). */
  dispose(): void;
}

/** Installs one-shot SIGINT and SIGTERM handlers that abort {@link StopSignals.signal}. */
export function onStopSignals(): StopSignals {
  const ac = new AbortController();
  let received: NodeJS.Signals | null = null;
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    const h = (): void => {
      received ??= sig;
      ac.abort();
    };
    handlers.set(sig, h);
    process.once(sig, h);
  }
  return {
    signal: ac.signal,
    received: () => received,
    dispose: () => {
      for (const [sig, h] of handlers) process.removeListener(sig, h);
    },
  };
}
