/** Polling for the process tests: a condition checked every 100 ms until it holds or the wait runs out. */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves once `cond` holds; throws `timed out waiting for <what>` after `ms`. */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 40_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
