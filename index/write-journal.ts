/**
 * The index's write journal: what makes a multi-table write (pages, images, passages) whole or absent across a
 * crash. LanceDB commits each table on its own; a process killed between two commits would leave the tables
 * disagreeing (e.g. passages of a page whose row was never written). So before a write the writer records each
 * table's current version in `svc-write-journal.json` (written to a temporary file, fsynced, renamed), commits
 * the tables, then deletes the journal. A journal found at open means a write never finished: every table is
 * restored to its recorded version (a new version equal to the old one), so a restart sees the index exactly as
 * it was before the interrupted write, and the writer (crawler, ingest) writes the pages again on its next pass.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Table } from '@lancedb/lancedb';

const FILE = 'svc-write-journal.json';

/** Table name → version before the write. */
export type JournalEntry = Record<string, number>;

function syncWrite(path: string, text: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Records the tables' versions before a write; returns a function that ends the write (deletes the journal). */
export async function beginWrite(dir: string, tables: Readonly<Record<string, Table>>): Promise<() => void> {
  const entry: JournalEntry = {};
  for (const [name, table] of Object.entries(tables)) entry[name] = await table.version();
  const path = join(dir, FILE);
  syncWrite(`${path}.tmp`, JSON.stringify(entry));
  renameSync(`${path}.tmp`, path);
  return () => unlinkSync(path);
}

/**
 * At open: when a write was interrupted, restores each table to its version before that write and deletes the
 * journal. Returns the tables rolled back (empty when there was nothing to do).
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
  const rolledBack: string[] = [];
  for (const [name, version] of Object.entries(entry)) {
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
