import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';

/**
 * How every piece of Lambda code is bundled, in one place: the CDK construct (infra/constructs/payroll-function.ts)
 * builds each function's asset with these options through CDK's local bundling (./bundle-function.ts), and the
 * cold-start benchmark (bench/cold-start.ts) and the bundle tests build the very same assets, so the figures in
 * BENCHMARKS.md are those of the code that runs.
 */

/** The repository root: entries and packages resolve from it, and esbuild works in it. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What every piece of Lambda code is built with: ESM for the Node.js of the runtime, minified, with line-mapping
 * source maps, every dependency bundled in (the AWS SDK v3 included, tree-shaken to what the function uses),
 * packages resolved from the repository wherever the entry is. Dynamic imports are split into chunks beside the
 * entry, loaded on first use only (the S3 client, the paystub PDF renderer), so a cold start neither loads nor
 * parses code only some requests need. The output is self-contained: it runs with plain `node`.
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
  // Some CommonJS (ssh2) also reads `__dirname`, which ESM has not: Node 20.11+ gives it as `import.meta.dirname`.
  define: { __dirname: 'import.meta.dirname', __filename: 'import.meta.filename' },

  minify: true,
  // Line mappings for --enable-source-maps; the sources themselves would double the upload.
  sourcemap: true,
  sourcesContent: false,
  splitting: true,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  // Credentials from the environment only: see env-credentials.ts for why that is exact on Lambda.
  // The SDK's browser user-agent parser: exported beside the Node one but never called in Node, yet esbuild writes a
  // 34 KB chunk for its `import('bowser')` into every asset. Left as an import no code path in Node reaches.
  // ssh2's optional native addons (its crypto binding and `cpu-features`): built for this machine, not for Lambda,
  // and each loaded inside a try that falls back to ssh2's pure JavaScript, which is what runs deployed.
  external: ['bowser', 'cpu-features', './crypto/build/Release/sshcrypto.node'],
  alias: { '@aws-sdk/credential-provider-node': join(REPO_ROOT, 'infra', 'bundling', 'env-credentials.ts') },
  nodePaths: [join(REPO_ROOT, 'node_modules')],
  absWorkingDir: REPO_ROOT,
  logLevel: 'warning',
} as const satisfies BuildOptions;

/** A path in node_modules that belongs to the AWS SDK v3 (in esbuild's metafile inputs). */
export const AWS_SDK_PATH = /node_modules\/(@aws-sdk|@smithy)\//;

/**
 * The esbuild options of a function's asset: `entry` bundled to `<outdir>/index.mjs` (the handler is
 * `index.handler`), its lazily imported modules to `<outdir>/chunks/`.
 */
export function lambdaBuildOptions(entry: string, outdir: string): BuildOptions {
  return { ...LAMBDA_ESBUILD_OPTIONS, entryPoints: { index: entry }, outdir };
}

/**
 * The variables a deployment gives a function (infra/constructs/service-access.ts), with placeholder values: each
 * function builds its clients at module scope, so the benchmark and the bundle tests load a built asset with these.
 * No client is called at load, so nothing is ever sent to the placeholders.
 */
export const PLACEHOLDER_DEPLOYED_ENV = {
  TABLE_NAME: 'payroll-table',
  DISBURSEMENT_BUCKET: 'payroll-bucket',
  PAYROLL_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/payroll',
  WEBHOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/webhooks',
  PAYROLL_KMS_KEY_ID: 'arn:aws:kms:us-east-1:000000000000:key/00000000-0000-0000-0000-000000000000',
  PAYROLL_FILE_KMS_KEY_ID: 'arn:aws:kms:us-east-1:000000000000:key/11111111-1111-1111-1111-111111111111',
  PAYROLL_SIGNING_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:signing',
  PAYROLL_ENVIRONMENT: 'sandbox',
} as const;
