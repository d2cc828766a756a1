/**
 * A file replaced whole or not at all: written under a temporary name, synced, renamed into place. Every file the
 * index keeps beside its tables (the write journal, the index metadata, engine segments and their manifests) goes
 * through here, on libuv's thread pool: an fsync waits for the disk and must not hold the event loop.
 */
import { randomBytes } from 'node:crypto';
import { open, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface DurableOptions {
  /**
   * Also sync the folder, so the rename itself survives a power cut (a new file a reader must find after a crash).
   * Without it a crash may leave the previous file, never half of one. @default true
   */
  readonly syncFolder?: boolean;
}

/** Writes `data` to `path` durably (see the module comment). */
export async function writeDurably(path: string, data: Uint8Array | string, opts: DurableOptions = {}): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fh = await open(temp, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(temp, path);
  if (opts.syncFolder === false) return;
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}
