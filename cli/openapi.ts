import { VERSION } from '../main.js';
import { buildOpenApi } from '../rest/openapi.js';
import { allTools } from '../tools/registry.js';
import type { CliIo } from './io.js';

/** `svc openapi`: prints the OpenAPI 3.1 document (the committed docs/openapi.json is this output). */
export async function openapiCommand(_argv: string[], io: CliIo): Promise<number> {
  io.stdout.write(JSON.stringify(buildOpenApi(allTools, VERSION), null, 2) + '\n');
  return 0;
}
