/**
 * The index's write journal: makes a multi-table write whole or absent across a crash, since LanceDB commits each
 * table alone. Table versions are recorded (fsync + rename) before the write and restored at open if it never
 * finished; only a journal whose writer process is gone is rolled back, so readers beside a writer are safe.
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
