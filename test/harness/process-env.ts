// Test-process preload (.taprc): the process settings `svc` makes at its entry (cli/main.ts), so tests that open an
// index directly run under the same Lance thread pool as the service. Imports nothing heavy.
import { setLanceCpuThreads } from '../../index/engines/lance/lance-threads.js';

setLanceCpuThreads();
