// Runs the CLI from source (development and tests): `npx tsx cli/run.ts <command> …`.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
