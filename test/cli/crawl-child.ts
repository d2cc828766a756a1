/**
 * Child process entry for test/cli/crawl.test.ts: runs `svc crawl` with the given arguments, so the test
 * can kill -9 it mid-crawl and resume. Not a test file itself (tap only runs *.test.ts).
 */
import { crawlCommand } from '../../cli/crawl.js';
import { processIo } from '../../cli/io.js';

process.exitCode = await crawlCommand(process.argv.slice(2), processIo());
