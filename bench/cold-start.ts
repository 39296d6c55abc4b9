import { execFileSync, execSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { lambdaBuildOptions, lambdaModuleCommand } from '../infra/bundling/options.js';
import { routeModuleFile } from '../shared/http/route-files.js';
import { FALLBACK_HANDLER, ROUTES, type RouteDef } from '../shared/http/routes.js';
import { progress } from './machine.js';

export interface BundleResult {
  entry: string;
  bytes: number;
  /** Of which the AWS SDK (@aws-sdk/*, @smithy/*), from esbuild's metafile. */
  sdkBytes: number;
  /** Route modules bundled beside it, loaded on first use only (not part of the load time). */
  onDemand: { module: string; bytes: number }[];
  loadMsMedian: number;
}

const ROOT = join(import.meta.dirname, '..');
/** The non-route functions the CDK app deploys. */
const WORKERS = ['processor/process-payroll', 'processor/resume-stuck-payrolls', 'webhooks/deliver-event', 'audit/ingest-audit-log'];
const LOADS = 11;

/**
 * Each function bundled exactly as the CDK app deploys it (infra/bundling/options.ts: ESM, minified, node22, the
 * AWS SDK bundled with environment credentials), then imported in a fresh Node process eleven times, from a folder
 * with no node_modules so the bundle can lean on nothing: the module's load time is what a cold start adds on top
 * of the runtime's own start.
 */
export async function benchColdStart(): Promise<BundleResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'payroll-bundles-'));
  const entries = [...new Set([...ROUTES.map((r) => r.handler as string), FALLBACK_HANDLER, ...WORKERS])];
  const results: BundleResult[] = [];
  try {
    for (const entry of entries) {
      const outfile = join(dir, `${entry.replace(/\//g, '-')}.mjs`);
      // Files a route reads at run time are copied beside its bundle, as the CDK construct's bundling hook does.
      const route = (ROUTES as readonly RouteDef[]).find((r) => r.handler === entry);
      for (const file of route?.files ?? []) copyFileSync(join(ROOT, file), join(dir, basename(file)));
      // Route modules are bundled into their own files beside it, with the command the CDK construct runs.
      const onDemand = (route?.modules ?? []).map((module) => {
        const file = join(dir, routeModuleFile(module));
        execSync(lambdaModuleCommand(module, file), { cwd: ROOT, stdio: 'ignore' });
        return { module, bytes: statSync(file).size };
      });
      const { metafile } = await build({ ...lambdaBuildOptions(join(ROOT, 'functions', `${entry}.ts`), outfile), metafile: true, logLevel: 'silent' });
      const inputs = Object.values(metafile.outputs)[0]!.inputs;
      const sdkBytes = Object.entries(inputs).filter(([path]) => /node_modules\/(@aws-sdk|@smithy)\//.test(path)).reduce((sum, [, v]) => sum + v.bytesInOutput, 0);
      const times: number[] = [];
      for (let i = 0; i < LOADS; i++) {
        const out = execFileSync(process.execPath, ['--input-type=module', '-e',
          `const t=performance.now(); const m = await import(${JSON.stringify(`file://${outfile}`)}); if (typeof m.handler !== 'function') throw new Error('no handler'); console.log(performance.now()-t)`],
          { cwd: dir, env: { ...process.env, AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } });
        times.push(Number(out.toString().trim()));
      }
      times.sort((a, b) => a - b);
      const bytes = statSync(outfile).size;
      const loadMsMedian = times[Math.floor(LOADS / 2)]!;
      results.push({ entry, bytes, sdkBytes, onDemand, loadMsMedian });
      progress(`cold start: ${entry} ${Math.round(bytes / 1024)} KB (SDK ${Math.round(sdkBytes / 1024)} KB), ${loadMsMedian.toFixed(0)} ms`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results.sort((a, b) => b.bytes - a.bytes);
}
