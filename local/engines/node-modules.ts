import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest `node_modules/<relative>` above this file (or the working directory): for files packages do not export. */
export function findInNodeModules(relative: string): { nodeModules: string; path: string } {
  const starts = [dirname(fileURLToPath(import.meta.url)), process.cwd()];
  for (const start of starts) {
    for (let dir = start; ; dir = dirname(dir)) {
      const candidate = join(dir, 'node_modules', relative);
      if (existsSync(candidate)) return { nodeModules: join(dir, 'node_modules'), path: candidate };
      if (dirname(dir) === dir) break;
    }
  }
  throw new Error(`node_modules/${relative} not found: run npm install`);
}
