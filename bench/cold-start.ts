import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { FALLBACK_HANDLER, ROUTES } from '../shared/http/routes.js';
import { progress } from './machine.js';

export interface BundleResult {
  entry: string;
  bytes: number;
  loadMsMedian: number;
}

const ROOT = join(import.meta.dirname, '..');
/** The non-route functions the CDK app deploys. */
const WORKERS = ['processor/process-payroll', 'processor/resume-stuck-payrolls', 'webhooks/deliver-event', 'audit/ingest-audit-log'];
const ESM_REQUIRE_SHIM = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * Each function bundled with the CDK construct's esbuild settings (ESM, minified, node22, the AWS SDK excluded as
 * the Lambda runtime provides it), then imported in a fresh Node process five times: the module's load time is
 * what a cold start adds on top of the runtime's own start.
 */
export async function benchColdStart(): Promise<BundleResult[]> {
  // Inside the project, so the externalised SDK resolves from node_modules as it does from /var/runtime on Lambda.
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.tmp', 'bundles-'));
  const entries = [...new Set([...ROUTES.map((r) => r.handler as string), FALLBACK_HANDLER, ...WORKERS])];
  const results: BundleResult[] = [];
  try {
    for (const entry of entries) {
      const outfile = join(dir, `${entry.replace(/\//g, '-')}.mjs`);
      await build({
        entryPoints: [join(ROOT, 'functions', `${entry}.ts`)], bundle: true, platform: 'node', format: 'esm', target: 'node22',
        minify: true, mainFields: ['module', 'main'], banner: { js: ESM_REQUIRE_SHIM }, outfile, external: ['@aws-sdk/*'],
        logLevel: 'silent',
      });
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const out = execFileSync(process.execPath, ['--input-type=module', '-e',
          `const t=performance.now(); await import(${JSON.stringify(`file://${outfile}`)}); console.log(performance.now()-t)`],
          { cwd: ROOT, env: { ...process.env, AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } });
        times.push(Number(out.toString().trim()));
      }
      times.sort((a, b) => a - b);
      results.push({ entry, bytes: statSync(outfile).size, loadMsMedian: times[2]! });
      progress(`cold start: ${entry} ${Math.round(statSync(outfile).size / 1024)} KB, ${times[2]!.toFixed(0)} ms`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results.sort((a, b) => b.bytes - a.bytes);
}
