import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * How every Lambda function is bundled, in one place: the CDK construct (infra/constructs/payroll-function.ts)
 * deploys with these settings and the cold-start benchmark (bench/cold-start.ts) measures bundles built with
 * them, so the figures in BENCHMARKS.md are those of the code that runs.
 */

/** The repository root: NodejsFunction resolves entries, the lock file and esbuild's working directory from it. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * esbuild emits ESM, but some dependencies are still CommonJS and call `require` for Node built-ins; ESM has no
 * `require`, so the bundle recreates one at its top.
 */
export const ESM_REQUIRE_SHIM = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** The Node.js major the runtime (nodejs22.x) runs and the bundles target. */
export const LAMBDA_TARGET = 'node22';

/** Prefer the ESM builds of dependencies so esbuild can tree-shake them. */
export const MAIN_FIELDS = ['module', 'main'];

/**
 * Modules replaced inside the bundles only. The AWS SDK's default credential chain becomes environment variables
 * alone: see infra/bundling/env-credentials.ts for why that is exact on Lambda, and what it saves.
 */
export const LAMBDA_ALIASES: Record<string, string> = {
  '@aws-sdk/credential-provider-node': join(REPO_ROOT, 'infra', 'bundling', 'env-credentials.ts'),
};

/** The same settings as esbuild's JavaScript API takes them (for the benchmark and the bundle tests). */
export function lambdaBuildOptions(entry: string, outfile: string) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node' as const,
    format: 'esm' as const,
    target: LAMBDA_TARGET,
    mainFields: MAIN_FIELDS,
    banner: { js: ESM_REQUIRE_SHIM },
    minify: true,
    alias: LAMBDA_ALIASES,
    // The AWS SDK v3 is bundled, as deployed: see infra/constructs/payroll-function.ts.
    external: [] as string[],
  };
}

/** The aliases as the esbuild command-line flags NodejsFunction passes through (`--alias:from=to`). */
export function lambdaAliasArgs(): Record<string, string> {
  return Object.fromEntries(Object.entries(LAMBDA_ALIASES).map(([from, to]) => [`--alias:${from}`, to]));
}

/**
 * The esbuild command line that bundles a route module (routes.ts `modules`) beside a function's bundle, with the
 * same settings; NodejsFunction runs it after bundling, in the repository root. Derived from lambdaBuildOptions:
 * an option added there and not mapped here fails the type check.
 */
export function lambdaModuleCommand(module: string, outfile: string): string {
  const { entryPoints, outfile: out, bundle, platform, format, target, mainFields, banner, minify, alias, external, ...unmapped } =
    lambdaBuildOptions(join(REPO_ROOT, module), outfile);
  const exhaustive: Record<string, never> = unmapped;
  void exhaustive;
  const quote = (v: string) => `'${v.replace(/'/g, "'\\''")}'`;
  const args = [
    join(REPO_ROOT, 'node_modules', '.bin', 'esbuild'), ...entryPoints, ...(bundle ? ['--bundle'] : []), `--platform=${platform}`, `--format=${format}`,
    `--target=${target}`, `--main-fields=${mainFields.join(',')}`, ...(minify ? ['--minify'] : []), `--banner:js=${banner.js}`,
    ...Object.entries(alias).map(([from, to]) => `--alias:${from}=${to}`), ...external.map((name) => `--external:${name}`),
    `--outfile=${out}`, '--log-level=warning',
  ];
  return args.map(quote).join(' ');
}
