import { copyFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { routeModuleFile } from '../../shared/http/route-files.js';
import { lambdaBuildOptions, REPO_ROOT, SDK_LAYER_DIR } from './options.js';

/** What goes into one function's asset. */
export interface FunctionBundleSpec {
  /** Entry file under functions/, without extension, e.g. `api/create-employee`. */
  handler: string;
  /** Files (paths from the repository root) copied beside the bundle, for the handler to read at run time. */
  files?: readonly string[];
  /** Modules (source paths from the repository root) bundled into their own files beside it, imported on first use. */
  modules?: readonly string[];
}

export interface BundleOptions {
  /** Where the SDK layer's files are: /opt/payroll-aws-sdk as deployed, a temporary folder in the benchmark and tests. */
  sdkDir?: string;
  /** Source maps beside the files (line mappings only, for --enable-source-maps); the deployed bundles have them. */
  sourcemap?: boolean;
}

/**
 * Builds a function's asset into `outdir`: `index.mjs` (the handler, `index.handler`), its route modules beside it
 * and the files it reads. Returns what esbuild's metafile says of `index.mjs` (its inputs and imports).
 */
export type BundleOutput = Metafile['outputs'][string];

export async function bundleFunction(spec: FunctionBundleSpec, outdir: string, options: BundleOptions = {}): Promise<BundleOutput> {
  const sdkDir = options.sdkDir ?? SDK_LAYER_DIR;
  const maps = options.sourcemap ? { sourcemap: true, sourcesContent: false } : {};
  mkdirSync(outdir, { recursive: true });
  const { metafile } = await build({
    ...lambdaBuildOptions(join(REPO_ROOT, 'functions', `${spec.handler}.ts`), join(outdir, 'index.mjs'), sdkDir), ...maps, metafile: true,
  });
  for (const module of spec.modules ?? []) {
    await build({ ...lambdaBuildOptions(join(REPO_ROOT, module), join(outdir, routeModuleFile(module)), sdkDir), ...maps });
  }
  for (const file of spec.files ?? []) copyFileSync(join(REPO_ROOT, file), join(outdir, basename(file)));
  return Object.values(metafile!.outputs).find((o) => o.entryPoint !== undefined)!;
}

/**
 * Run by the CDK construct at synth, in a child process because CDK's bundling hook is synchronous and esbuild's
 * plugins need its asynchronous API: `node --import tsx infra/bundling/bundle-function.ts '<spec as JSON>' <outdir>`.
 */
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [spec, outdir] = process.argv.slice(2);
  if (!spec || !outdir) throw new Error('usage: bundle-function.ts <spec as JSON> <outdir>');
  await bundleFunction(JSON.parse(spec) as FunctionBundleSpec, outdir, { sourcemap: true });
}
