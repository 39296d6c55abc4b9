import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { bundleFunction } from '../infra/bundling/bundle-function.js';
import { AWS_SDK_PATH, lambdaBuildOptions } from '../infra/bundling/options.js';
import { buildSdkLayer, layerImportsOf, sdkLayerFilesLoaded } from '../infra/bundling/sdk-layer.js';
import { ALL_HANDLERS, bundleSpecOf } from '../infra/lambda-functions.js';
import { routeModuleFile } from '../shared/http/route-files.js';
import { median, progress } from './machine.js';

export interface BundleResult {
  entry: string;
  bytes: number;
  /** Of which the AWS SDK (@aws-sdk/*, @smithy/*), from esbuild's metafile: 0 when the layer serves it all. */
  sdkBytes: number;
  /** The SDK layer's files the bundle's static imports reach: loaded with it on a cold start. */
  layerBytes: number;
  /** The layer's files it imports on first use only (the S3 client), beyond those already loaded. */
  onFirstUse: { bytes: number; msMedian: number } | undefined;
  /** Route modules bundled beside it, loaded on first use only (not part of the load time). */
  onDemand: { module: string; bytes: number }[];
  loadMsMedian: number;
}

export interface ColdStartResult {
  functions: BundleResult[];
  /** The SDK layer, built with the bundles, and its total size. */
  layer: { bytes: number; files: number };
  /** The same functions with the SDK left external and taken from node_modules, as the Lambda runtime offers it. */
  runtimeSdk: { entry: string; loadMsMedian: number }[];
}

const ROOT = join(import.meta.dirname, '..');
/** Fresh processes each function is loaded in; the median is reported. */
export const LOADS = 11;
/** Functions measured again with the runtime's SDK: one that only reads the table, and the largest. */
const RUNTIME_SDK_ENTRIES = ['api/get-employee', 'api/submit-payroll'];
const ENV = { ...process.env, AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };


/**
 * One fresh Node process: the time to import `file` (the module load a cold start adds), then the time to import
 * `later` (what its first use of a lazily loaded client adds).
 */
function loadOnce(file: string, later: readonly string[], cwd: string): { load: number; later: number } {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', [
    `let t = performance.now(); const m = await import(${JSON.stringify(`file://${file}`)});`,
    `if (typeof m.handler !== 'function') throw new Error('no handler');`,
    'const load = performance.now() - t; t = performance.now();',
    `for (const f of ${JSON.stringify(later)}) await import('file://' + f);`,
    'console.log(JSON.stringify({ load, later: performance.now() - t }));',
  ].join('\n')], { cwd, env: ENV });
  return JSON.parse(out.toString()) as { load: number; later: number };
}

/**
 * The comparison for the layer: each function bundled with the SDK external, in a folder inside node_modules so
 * Node resolves the SDK's packages as installed (their CommonJS builds, the full credential chain), as it does the
 * SDK copy in the Lambda runtime.
 */
async function benchRuntimeSdk(): Promise<ColdStartResult['runtimeSdk']> {
  const dir = join(ROOT, 'node_modules', '.cache', 'payroll-bench-runtime-sdk');
  mkdirSync(dir, { recursive: true });
  try {
    const results = [];
    for (const entry of RUNTIME_SDK_ENTRIES) {
      const outfile = join(dir, `${entry.replace(/\//g, '-')}.mjs`);
      // The deployed options, but the SDK packages left as they are: resolved from node_modules when loaded.
      await build({ ...lambdaBuildOptions(join(ROOT, 'functions', `${entry}.ts`), outfile), plugins: [], external: ['@aws-sdk/*', '@smithy/*'], logLevel: 'silent' });
      const loadMsMedian = median(Array.from({ length: LOADS }, () => loadOnce(outfile, [], dir).load));
      progress(`cold start: ${entry} with the SDK from node_modules, ${loadMsMedian.toFixed(0)} ms`);
      results.push({ entry, loadMsMedian });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Each function bundled exactly as the CDK app deploys it (infra/bundling/bundle-function.ts: ESM, minified,
 * node22, the AWS SDK imported from the SDK layer, built beside the bundles as the CDK app builds it), then
 * imported in fresh Node processes from its asset folder, which has no node_modules: the module's load time, layer
 * files included, is what a cold start adds on top of the runtime's own start. The samples are taken in rounds,
 * one load of every function per round, so a burst of noise on this shared machine lands on one sample of many
 * functions rather than on every sample of one.
 */
export async function benchColdStart(): Promise<ColdStartResult> {
  const dir = mkdtempSync(join(tmpdir(), 'payroll-bundles-'));
  try {
    const layer = buildSdkLayer(join(dir, 'payroll-aws-sdk'));
    // Its code files; the source maps beside them are read only to map a stack trace.
    const layerOutputs = Object.entries(layer.metafile.outputs).filter(([file]) => file.endsWith('.mjs')).map(([, output]) => output);
    const layerResult = { bytes: layerOutputs.reduce((sum, o) => sum + o.bytes, 0), files: layerOutputs.length };
    progress(`cold start: SDK layer ${Math.round(layerResult.bytes / 1024)} KB in ${layerResult.files} files`);

    const built = [];
    for (const entry of ALL_HANDLERS) {
      // The function's asset, as the CDK construct builds it: index.mjs, its route modules and files beside it.
      const asset = join(dir, entry);
      const spec = bundleSpecOf(entry);
      const output = await bundleFunction(spec, asset, { sdkDir: layer.dir });
      const loaded = sdkLayerFilesLoaded(layer, layerImportsOf(output, layer.dir, 'import-statement'));
      const later = layerImportsOf(output, layer.dir, 'dynamic-import');
      const loadedLater = sdkLayerFilesLoaded(layer, later).filter((f) => !loaded.some((l) => l.file === f.file));
      built.push({
        entry, asset, later,
        file: join(asset, 'index.mjs'),
        bytes: statSync(join(asset, 'index.mjs')).size,
        sdkBytes: Object.entries(output.inputs).filter(([path]) => AWS_SDK_PATH.test(path)).reduce((sum, [, v]) => sum + v.bytesInOutput, 0),
        layerBytes: loaded.reduce((sum, f) => sum + f.bytes, 0),
        laterBytes: loadedLater.reduce((sum, f) => sum + f.bytes, 0),
        onDemand: (spec.modules ?? []).map((module) => ({ module, bytes: statSync(join(asset, routeModuleFile(module))).size })),
        samples: [] as { load: number; later: number }[],
      });
    }
    progress(`cold start: ${built.length} functions bundled; loading each ${LOADS} times`);
    for (let round = 1; round <= LOADS; round++) {
      for (const b of built) b.samples.push(loadOnce(b.file, b.later, b.asset));
      progress(`cold start: round ${round} of ${LOADS}`);
    }
    const functions: BundleResult[] = built.map((b) => ({
      entry: b.entry, bytes: b.bytes, sdkBytes: b.sdkBytes, layerBytes: b.layerBytes, onDemand: b.onDemand,
      loadMsMedian: median(b.samples.map((s) => s.load)),
      onFirstUse: b.later.length ? { bytes: b.laterBytes, msMedian: median(b.samples.map((s) => s.later)) } : undefined,
    }));
    for (const f of functions) {
      progress(`cold start: ${f.entry} ${Math.round(f.bytes / 1024)} KB (+ SDK layer ${Math.round(f.layerBytes / 1024)} KB), ${f.loadMsMedian.toFixed(0)} ms${f.onFirstUse ? ` (+ ${f.onFirstUse.msMedian.toFixed(0)} ms on first S3 use)` : ''}`);
    }
    return { functions: functions.sort((a, b) => b.bytes - a.bytes), layer: layerResult, runtimeSdk: await benchRuntimeSdk() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
