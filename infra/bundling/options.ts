import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';

/**
 * How every Lambda function is bundled, in one place: the CDK construct (infra/constructs/payroll-function.ts)
 * deploys bundles built by ./bundle-function.ts with these settings, and the cold-start benchmark
 * (bench/cold-start.ts) and the bundle tests build them the same way, so the figures in BENCHMARKS.md are those of
 * the code that runs.
 */

/** The repository root: entries and packages resolve from it, and esbuild works in it. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What every piece of Lambda code is built with, the functions' bundles and the SDK layer alike: ESM for the Node.js
 * of the runtime, minified, packages resolved from the repository wherever the entry is.
 */
export const LAMBDA_ESBUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  // The Node.js major the runtime (nodejs22.x) runs.
  target: 'node22',
  // Prefer the ESM builds of dependencies so esbuild can tree-shake them.
  mainFields: ['module', 'main'],
  // Some dependencies are still CommonJS and call `require` for Node built-ins; ESM has no `require`, so each file
  // recreates one at its top.
  banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
  minify: true,
  nodePaths: [join(REPO_ROOT, 'node_modules')],
  absWorkingDir: REPO_ROOT,
  logLevel: 'warning',
} as const satisfies BuildOptions;

/** The AWS SDK layer's top-level folder (infra/bundling/sdk-layer.ts). */
export const SDK_LAYER_FOLDER = 'payroll-aws-sdk';

/** Where Lambda unpacks the AWS SDK layer: a layer's top-level folder lands under /opt. */
export const SDK_LAYER_DIR = `/opt/${SDK_LAYER_FOLDER}`;

/** A module specifier, or a path in node_modules, that belongs to the AWS SDK v3. */
export const AWS_SDK_MODULE = /^(@aws-sdk|@smithy)\//;
export const AWS_SDK_PATH = /node_modules\/(@aws-sdk|@smithy)\//;

/** The SDK packages the layer serves. Code in functions/ and shared/ imports them by their usual names. */
export const SDK_PACKAGES = [
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/lib-dynamodb',
  '@aws-sdk/client-s3',
  '@aws-sdk/client-kms',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-secrets-manager',
] as const;

/** The layer file that stands for a package: `@aws-sdk/client-dynamodb` → `client-dynamodb.mjs`. */
export function sdkLayerFile(pkg: string): string {
  return `${pkg.slice(pkg.indexOf('/') + 1)}.mjs`;
}

/**
 * Resolves each SDK package to its file in the layer folder `sdkDir`, kept external: a function's bundle imports
 * the layer by absolute path and carries no SDK code. The files are marked free of side effects, so an import whose
 * names the function never uses is dropped, as tree-shaking dropped that client when it was bundled (a function
 * that builds a service it never calls does not load that client at its cold start).
 */
function sdkLayerPlugin(sdkDir: string): Plugin {
  const files = new Map<string, string>(SDK_PACKAGES.map((pkg) => [pkg, `${sdkDir}/${sdkLayerFile(pkg)}`]));
  return {
    name: 'payroll-sdk-layer',
    setup(build) {
      build.onResolve({ filter: /^@aws-sdk\// }, (args) => {
        const path = files.get(args.path);
        return path ? { path, external: true, sideEffects: false } : undefined;
      });
    },
  };
}

/**
 * The esbuild options of a function's bundle (and of its route modules). `sdkDir` is /opt/payroll-aws-sdk as
 * deployed; the benchmark and the tests build the layer into a temporary folder and pass it.
 */
export function lambdaBuildOptions(entry: string, outfile: string, sdkDir: string = SDK_LAYER_DIR): BuildOptions {
  return { ...LAMBDA_ESBUILD_OPTIONS, entryPoints: [entry], outfile, plugins: [sdkLayerPlugin(sdkDir)] };
}
