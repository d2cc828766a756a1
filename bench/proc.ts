/**
 * A child process's CPU time and memory as Linux reports them (/proc/<pid>/stat and status): what a bench reads of
 * the processes it starts, which the machine's load does not change as it does their latencies.
 */
import { readFileSync } from 'node:fs';

/** User + system CPU time the process has used, all its threads (ms; clock ticks of USER_HZ 100 on Linux). */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The process's resident memory (MiB): all of it, its own pages (anonymous and shared memory) and file-backed ones. */
export function processMemory(pid: number): { rss: number; own: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: mib('VmRSS'), own: mib('RssAnon') + mib('RssShmem'), file: mib('RssFile') };
}
