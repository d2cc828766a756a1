/**
 * The index's write journal: makes a multi-table write whole or absent across a crash, since LanceDB commits each
 * table alone. Table versions are recorded (fsync + rename) before the write and restored at open if it never
 * finished; only a journal whose writer process is gone is rolled back, so readers beside a writer are safe.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Table } from '@lancedb/lancedb';
import { writeDurably } from './durable-file.js';

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

/** Records the tables' versions before a write; returns a function that ends the write (deletes the journal). */
export async function beginWrite(dir: string, tables: Readonly<Record<string, Table>>): Promise<() => void> {
  const versions: Record<string, number> = {};
  for (const [name, table] of Object.entries(tables)) versions[name] = await table.version();
  const entry: JournalEntry = { pid: process.pid, host: hostname(), token: randomUUID(), versions };
  const path = join(dir, FILE);
  running.add(entry.token);
  try {
    // No folder sync: a journal lost with the rename only means nothing to roll back, as before the write.
    await writeDurably(path, JSON.stringify(entry), { syncFolder: false });
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
