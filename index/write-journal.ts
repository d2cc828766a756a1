/**
 * The index's write journal: what makes a multi-table write (pages, images, passages) whole or absent across a
 * crash. LanceDB commits each table on its own; a process killed between two commits would leave the tables
 * disagreeing (e.g. passages of a page whose row was never written). So before a write the writer records each
 * table's current version in `svc-write-journal.json` (written to a temporary file, fsynced, renamed), commits
 * the tables, then deletes the journal. A journal found at open means a write never finished: every table is
 * restored to its recorded version (a new version equal to the old one), so a restart sees the index exactly as
 * it was before the interrupted write, and the writer (crawler, ingest) writes the pages again on its next pass.
 *
 * Other processes open the same index while a writer runs (`svc status`, `svc eval` beside `svc serve`): a journal
 * is only rolled back when its writer is gone, i.e. it was written on this machine by a process that no longer
 * exists (or by this process through a write that is no longer running).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Table } from '@lancedb/lancedb';

const FILE = 'svc-write-journal.json';

/** Who is writing, and each table's version before the write. */
export interface JournalEntry {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
  readonly versions: Record<string, number>;
}

/** Writes of this process still running (their journals must not be rolled back by another open). */
const running = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the write a journal describes can no longer finish: its process is gone (or it is ours and over). */
export function writerGone(entry: JournalEntry): boolean {
  if (entry.host !== hostname()) return false; // another machine's writer: not ours to judge
  if (entry.pid === process.pid) return !running.has(entry.token);
  return !alive(entry.pid);
}

/**
 * Writes and fsyncs a file on libuv's thread pool: an fsync waits for the disk (up to hundreds of ms on a busy one),
 * and the synchronous form held the event loop that much on every index write (bench/load.ts --trace-turns).
 */
async function syncWrite(path: string, text: string): Promise<void> {
  const file = await open(path, 'w');
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
}

/** Records the tables' versions before a write; returns a function that ends the write (deletes the journal). */
export async function beginWrite(dir: string, tables: Readonly<Record<string, Table>>): Promise<() => void> {
  const versions: Record<string, number> = {};
  for (const [name, table] of Object.entries(tables)) versions[name] = await table.version();
  const entry: JournalEntry = { pid: process.pid, host: hostname(), token: randomUUID(), versions };
  const path = join(dir, FILE);
  running.add(entry.token);
  try {
    await syncWrite(`${path}.tmp`, JSON.stringify(entry));
    await rename(`${path}.tmp`, path);
  } catch (err) {
    running.delete(entry.token);
    throw err;
  }
  return () => {
    unlinkSync(path);
    running.delete(entry.token);
  };
}

/**
 * At open: when a write was interrupted (its writer is gone), restores each table to its version before that write
 * and deletes the journal. Returns the tables rolled back (empty when there was nothing to do).
 */
export async function recoverInterruptedWrite(dir: string, tables: Readonly<Record<string, Table>>): Promise<string[]> {
  const path = join(dir, FILE);
  if (!existsSync(path)) return [];
  let entry: JournalEntry;
  try {
    entry = JSON.parse(readFileSync(path, 'utf8')) as JournalEntry;
  } catch {
    // The journal itself is written through a rename, so a torn file means the write never started.
    unlinkSync(path);
    return [];
  }
  if (!writerGone(entry)) return [];
  const rolledBack: string[] = [];
  for (const [name, version] of Object.entries(entry.versions ?? {})) {
    const table = tables[name];
    if (!table || typeof version !== 'number') continue;
    if ((await table.version()) === version) continue;
    await table.checkout(version);
    await table.restore();
    rolledBack.push(name);
  }
  unlinkSync(path);
  return rolledBack;
}
