import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One of a route's `files` (routes.ts), for the handler at `moduleUrl` (its `import.meta.url`). Deployed, the file
 * was copied beside the bundle (infra/constructs/payroll-function.ts); run from source (the local stack, tests) it
 * is read where it is, from the repository root two folders above functions/api/.
 */
export function readRouteFile(moduleUrl: string, file: string): string {
  const here = dirname(fileURLToPath(moduleUrl));
  const beside = join(here, basename(file));
  return readFileSync(existsSync(beside) ? beside : join(here, '..', '..', file), 'utf8');
}
