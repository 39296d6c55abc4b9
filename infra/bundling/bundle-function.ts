import { copyFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { buildSync, type Metafile } from 'esbuild';
import { AWS_SDK_PATH, lambdaBuildOptions, REPO_ROOT } from './options.js';

/** What goes into one function's asset. */
export interface FunctionBundleSpec {
  /** Entry file under functions/, without extension, e.g. `api/employees`. */
  handler: string;
  /** Files (paths from the repository root) copied beside the bundle, for the handler to read at run time. */
  files?: readonly string[];
}

/** What esbuild's metafile says of the asset: `index` is `index.mjs` (its inputs and imports), `outputs` every file. */
export interface BundleOutput {
  index: Metafile['outputs'][string];
  /** Every file written, by its path relative to the repository root (esbuild's metafile keys). */
  outputs: Metafile['outputs'];
}

/**
 * Builds a function's asset into `outdir`, in this process, synchronously (CDK's local bundling hook is
 * synchronous): `index.mjs` (the handler, `index.handler`) with the AWS SDK and every other dependency bundled in,
 * the chunks it imports on first use under `chunks/`, the source maps, and the files the handler reads.
 */
export function bundleFunction(spec: FunctionBundleSpec, outdir: string): BundleOutput {
  mkdirSync(outdir, { recursive: true });
  const { metafile } = buildSync({
    ...lambdaBuildOptions(join(REPO_ROOT, 'functions', `${spec.handler}.ts`), outdir),
    metafile: true,
  });
  for (const file of spec.files ?? []) copyFileSync(join(REPO_ROOT, file), join(outdir, basename(file)));
  // The handler's own output: each module imported on first use is an entry point of the metafile too.
  const entry = `functions/${spec.handler}.ts`;
  const index = Object.values(metafile!.outputs).find((o) => o.entryPoint === entry)!;
  return { index, outputs: metafile!.outputs };
}

/** One code file of an asset: its absolute path and size. */
export interface AssetFile {
  file: string;
  bytes: number;
}

/** What a function's asset loads, from esbuild's metafile (source maps and copied files left out). */
export interface AssetLoad {
  /** index.mjs and the chunks its static imports reach: what a cold start loads and parses. */
  atLoad: AssetFile[];
  /** The modules the code imports on first use (`import()`) and the chunks they add, by entry point. */
  onFirstUse: { entryPoint: string; files: AssetFile[] }[];
  /** The source files (paths from the repository root) of the code loaded at cold start. */
  inputsAtLoad: string[];
  /** Bytes of the AWS SDK (@aws-sdk/*, @smithy/*) in the code loaded at cold start. */
  sdkBytesAtLoad: number;
}

/** Dynamic imports of the application's own making: its modules, and the SDK clients it loads lazily. */
const LAZY_ENTRY = /^(?!node_modules\/)|^node_modules\/@aws-sdk\/client-[^/]+\//;

export function assetLoad(output: BundleOutput): AssetLoad {
  const code = Object.entries(output.outputs).filter(([path]) => path.endsWith('.mjs'));
  const byPath = new Map(code);
  const closure = (start: string, skip: ReadonlySet<string> = new Set()): string[] => {
    const seen = new Set<string>();
    const walk = (path: string) => {
      if (seen.has(path) || skip.has(path)) return;
      seen.add(path);
      for (const i of byPath.get(path)?.imports ?? []) if (!i.external && i.kind === 'import-statement') walk(i.path);
    };
    walk(start);
    return [...seen];
  };
  const files = (paths: string[]): AssetFile[] =>
    paths.map((path) => ({ file: join(REPO_ROOT, path), bytes: byPath.get(path)!.bytes }));
  const [indexPath] = code.find(([, o]) => o === output.index)!;
  const atLoad = closure(indexPath);
  const loaded = new Set(atLoad);
  // The chunks the loaded code imports dynamically (esbuild writes a chunk for every import() it sees, even one in
  // code it then drops: only those the bundle still imports count).
  const lazy = [
    ...new Set(
      atLoad.flatMap((path) =>
        byPath
          .get(path)!
          .imports.filter((i) => !i.external && i.kind === 'dynamic-import')
          .map((i) => i.path),
      ),
    ),
  ];
  const onFirstUse = lazy
    .map((path) => [path, byPath.get(path)!] as const)
    .filter(([, o]) => o.entryPoint !== undefined && LAZY_ENTRY.test(o.entryPoint))
    .map(([path, o]) => ({ entryPoint: o.entryPoint!, files: files(closure(path, loaded)) }));
  const inputs = atLoad.flatMap((path) => Object.entries(byPath.get(path)!.inputs));
  const sdkBytesAtLoad = inputs
    .filter(([input]) => AWS_SDK_PATH.test(input))
    .reduce((sum, [, v]) => sum + v.bytesInOutput, 0);
  return {
    atLoad: files(atLoad),
    onFirstUse,
    inputsAtLoad: [...new Set(inputs.map(([input]) => input))],
    sdkBytesAtLoad,
  };
}
