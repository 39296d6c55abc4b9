import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

/** The file name a route module is bundled to beside the function (infra/constructs/payroll-function.ts). */
export const routeModuleFile = (module: string) => `${basename(module, extname(module))}.mjs`;

/**
 * One of a route's `modules` (routes.ts), imported on first use by the handler at `moduleUrl`. Deployed, it is
 * its own bundle beside the function's; run from source, the module itself (the specifier is computed, so the
 * function's bundler leaves it out).
 */
export async function importRouteModule<T>(moduleUrl: string, module: string): Promise<T> {
  const here = dirname(fileURLToPath(moduleUrl));
  const beside = join(here, routeModuleFile(module));
  const source = join(here, '..', '..', module.replace(/\.ts$/, '.js'));
  return (await import(pathToFileURL(existsSync(beside) ? beside : source).href)) as T;
}
