import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, buildSync, type BuildOptions, type BuildResult, type OutputFile } from 'esbuild';

/**
 * The developer dashboard's build, shared by `npm run build:dashboard` (writes dashboard/dist), the local stack
 * (builds in memory on demand: local/dashboard-files.ts) and the CDK stack (builds into the site asset at synth).
 * esbuild bundles src/main.tsx and its CSS into content-hashed files under assets/, so everything but index.html
 * and config.json can be cached for good.
 */
export const DASHBOARD_DIR = dirname(fileURLToPath(import.meta.url));
export const DASHBOARD_SRC = join(DASHBOARD_DIR, 'src');
export const DASHBOARD_DIST = join(DASHBOARD_DIR, 'dist');

/** A built file: its path inside the site (posix, no leading slash) and its bytes. */
export interface DashboardFile {
  path: string;
  contents: Uint8Array;
}

/** What the static site is told at run time. Same origin (an empty base) unless a deployment writes another. */
export interface DashboardConfig {
  api_base_url: string;
}
export const SAME_ORIGIN_CONFIG: DashboardConfig = { api_base_url: '' };

const options: BuildOptions = {
  entryPoints: { app: join(DASHBOARD_SRC, 'main.tsx') },
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  sourcemap: 'linked',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: join(DASHBOARD_DIR, 'tsconfig.json'),
  entryNames: 'assets/[name]-[hash]',
  assetNames: 'assets/[name]-[hash]',
  outdir: DASHBOARD_DIST,
  write: false,
  metafile: true,
  logLevel: 'silent',
};

function assemble(result: BuildResult & { outputFiles?: OutputFile[] }): DashboardFile[] {
  const files: DashboardFile[] = (result.outputFiles ?? []).map((f) => ({
    path: relative(DASHBOARD_DIST, f.path).split(sep).join('/'),
    contents: f.contents,
  }));
  const find = (pattern: RegExp) => {
    const file = files.find((f) => pattern.test(f.path));
    if (!file) throw new Error(`dashboard build: no output matches ${pattern}`);
    return `./${file.path}`;
  };
  const html = readFileSync(join(DASHBOARD_SRC, 'index.html'), 'utf8')
    .replace('{{script}}', find(/^assets\/app-[^.]+\.js$/))
    .replace('{{styles}}', find(/^assets\/app-[^.]+\.css$/));
  const encoder = new TextEncoder();
  files.push({ path: 'index.html', contents: encoder.encode(html) });
  files.push({ path: 'config.json', contents: encoder.encode(`${JSON.stringify(SAME_ORIGIN_CONFIG)}\n`) });
  return files;
}

export async function bundleDashboard(): Promise<DashboardFile[]> {
  return assemble(await build(options));
}

/** For CDK's local bundling hook, which is synchronous. */
export function bundleDashboardSync(): DashboardFile[] {
  return assemble(buildSync(options));
}

export function writeDashboard(files: DashboardFile[], outdir: string): void {
  rmSync(outdir, { recursive: true, force: true });
  for (const file of files) {
    const target = join(outdir, ...file.path.split('/'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.contents);
  }
}

/** The newest modification time among the sources (and the build itself), to rebuild only when something changed. */
export function latestSourceChange(dir = DASHBOARD_SRC): number {
  let latest = statSync(fileURLToPath(import.meta.url)).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}
