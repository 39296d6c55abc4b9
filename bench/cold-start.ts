import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { assetLoad, bundleFunction } from '../infra/bundling/bundle-function.js';
import { lambdaBuildOptions, PLACEHOLDER_DEPLOYED_ENV } from '../infra/bundling/options.js';
import { ALL_HANDLERS, bundleSpecOf } from '../infra/lambda-functions.js';
import { median, progress } from './machine.js';

export interface BundleResult {
  entry: string;
  /**
   * What a deployed cold start loads: index.mjs, the chunks its static imports reach, and the tracer's chunk, which
   * a deployed function imports at init (no source maps).
   */
  bytes: number;
  /** Of which the AWS SDK (@aws-sdk/*, @smithy/*), bundled in and tree-shaken, from esbuild's metafile. */
  sdkBytes: number;
  /** The chunks imported on first use only (the S3 client, the PDF renderer), beyond those already loaded. */
  onFirstUse: { modules: string[]; bytes: number; msMedian: number } | undefined;
  loadMsMedian: number;
}

/** A probe: a module of a few lines built with the same options, what any function doing as much loads at least. */
export interface FloorResult {
  probe: string;
  bytes: number;
  loadMsMedian: number;
}

export interface ColdStartResult {
  functions: BundleResult[];
  /** The load of the libraries alone, without any code of ours: the floor under the functions' figures. */
  floors: FloorResult[];
  /** The same functions with the SDK left external and taken from node_modules, as the Lambda runtime offers it. */
  runtimeSdk: { entry: string; loadMsMedian: number }[];
}

const ROOT = join(import.meta.dirname, '..');
/** Fresh processes each function is loaded in; the median is reported. */
export const LOADS = 11;
/** Functions measured again with the runtime's SDK: one that only reads the table, and the largest. */
const RUNTIME_SDK_ENTRIES = ['api/paystubs', 'api/payroll'];
/**
 * Each function is loaded with the variables its deployment sets: its module-scope wiring is part of its load. The
 * two Lambda sets too, so tracing is on as deployed: the X-Ray SDK and Powertools Tracer load at init (a chunk the
 * metafile lists as imported on first use, since it is an `import()`, but awaited at module scope when deployed).
 */
const ENV = {
  ...process.env,
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  AWS_LAMBDA_FUNCTION_NAME: 'payroll-cold-start',
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  ...PLACEHOLDER_DEPLOYED_ENV,
};

/**
 * The probes: each a handler and the least a function of ours does with a library at module scope. Every API function
 * and every worker builds a DynamoDB document client; the API functions (and the processor) validate with zod.
 */
const DYNAMO = [
  "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
  "import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';",
  'const table = DynamoDBDocumentClient.from(new DynamoDBClient({}));',
];
const ZOD = ["import * as z from 'zod';", 'const id = z.strictObject({ id: z.string().min(1).max(64) });'];
/** The probes the verdict reads (bench/run.ts). */
export const PROBE = {
  withZod: 'the DynamoDB document client and zod',
  withZodMini: 'the DynamoDB document client and zod/mini',
  withTracer: 'the DynamoDB document client, zod and Powertools Tracer (tracing on, as deployed)',
} as const;
export const FLOOR_PROBES: Record<string, string[]> = {
  'a handler, nothing else': ['export const handler = async () => ({ statusCode: 204 });'],
  'zod, one schema': [...ZOD, 'export const handler = async (e) => id.safeParse(e).success;'],
  'the DynamoDB document client': [...DYNAMO, 'export const handler = async () => table.send(new GetCommand({}));'],
  [PROBE.withZod]: [
    ...DYNAMO,
    ...ZOD,
    'export const handler = async (e) => id.safeParse(e).success && table.send(new GetCommand({}));',
  ],
  // What moving validation to zod's tree-shakeable build would leave: the same schema in zod/mini.
  [PROBE.withZodMini]: [
    ...DYNAMO,
    "import * as z from 'zod/mini';",
    'const id = z.strictObject({ id: z.string().check(z.minLength(1), z.maxLength(64)) });',
    'export const handler = async (e) => id.safeParse(e).success && table.send(new GetCommand({}));',
  ],
  [PROBE.withTracer]: [
    ...DYNAMO,
    ...ZOD,
    "import { Tracer } from '@aws-lambda-powertools/tracer';",
    "const tracer = new Tracer({ serviceName: 'probe', captureHTTPsRequests: false });",
    'const traced = tracer.captureAWSv3Client(table);',
    'export const handler = async (e) => id.safeParse(e).success && traced.send(new GetCommand({}));',
  ],
};

/** The module that loads Powertools Tracer and the X-Ray SDK, imported at init when tracing is on. */
const TRACING_MODULE = 'shared/adapters/tracing.ts';

const partition = <T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] => [
  items.filter(test),
  items.filter((item) => !test(item)),
];

/**
 * One fresh Node process: the time to import `file` (the module load a cold start adds), then the time to import
 * `later` (what the first use of its lazily imported modules adds: the S3 client, the PDF renderer).
 */
function loadOnce(file: string, later: readonly string[], cwd: string): { load: number; later: number } {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      [
        `let t = performance.now(); const m = await import(${JSON.stringify(`file://${file}`)});`,
        `if (typeof m.handler !== 'function') throw new Error('no handler');`,
        'const load = performance.now() - t; t = performance.now();',
        `for (const f of ${JSON.stringify(later)}) await import('file://' + f);`,
        'console.log(JSON.stringify({ load, later: performance.now() - t }));',
      ].join('\n'),
    ],
    { cwd, env: ENV },
  );
  return JSON.parse(out.toString()) as { load: number; later: number };
}

/**
 * The comparison for bundling the SDK: each function bundled with the SDK external, in a folder inside node_modules so
 * Node resolves the SDK's packages as installed (their CommonJS builds, the full credential chain), as it does the
 * SDK copy in the Lambda runtime.
 */
async function benchRuntimeSdk(): Promise<ColdStartResult['runtimeSdk']> {
  const dir = join(ROOT, 'node_modules', '.cache', 'payroll-bench-runtime-sdk');
  mkdirSync(dir, { recursive: true });
  try {
    const results = [];
    for (const entry of RUNTIME_SDK_ENTRIES) {
      // The deployed options, but the SDK packages left as they are (the full credential chain included): resolved
      // from node_modules when loaded.
      const outdir = join(dir, entry.replace(/\//g, '-'));
      await build({
        ...lambdaBuildOptions(join(ROOT, 'functions', `${entry}.ts`), outdir),
        alias: {},
        external: ['@aws-sdk/*', '@smithy/*'],
        logLevel: 'silent',
      });
      const outfile = join(outdir, 'index.mjs');
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
 * Each function's asset built exactly as the CDK app deploys it (infra/bundling/bundle-function.ts, the function
 * CDK's local bundling calls: ESM, minified, node22, the AWS SDK bundled in and tree-shaken, lazily imported modules
 * in chunks beside the entry), then imported with plain `node` in fresh processes from its asset folder, which has no
 * node_modules: the module's load time is what a cold start adds on top of the runtime's own start. The samples are
 * taken in rounds, one load of every function per round, so a burst of noise on this shared machine lands on one
 * sample of many functions rather than on every sample of one.
 */
export async function benchColdStart(): Promise<ColdStartResult> {
  const dir = mkdtempSync(join(tmpdir(), 'payroll-bundles-'));
  try {
    const built = [];
    for (const entry of ALL_HANDLERS) {
      const asset = join(dir, entry);
      const load = assetLoad(bundleFunction(bundleSpecOf(entry), asset));
      // Deployed, tracing is on and the tracer's chunk is imported while the module loads (an awaited import() at
      // module scope): it counts with what a cold start loads, not with what is loaded on first use.
      const [tracing, firstUse] = partition(load.onFirstUse, (u) => u.entryPoint === TRACING_MODULE);
      const laterFiles = firstUse.flatMap((u) => u.files);
      built.push({
        entry,
        asset,
        file: join(asset, 'index.mjs'),
        // The entry chunks of the modules imported on first use (their own imports follow).
        later: firstUse.map((u) => u.files[0]!.file),
        modules: firstUse.map((u) => u.entryPoint),
        bytes: [...load.atLoad, ...tracing.flatMap((u) => u.files)].reduce((sum, f) => sum + f.bytes, 0),
        sdkBytes: load.sdkBytesAtLoad,
        laterBytes: [...new Map(laterFiles.map((f) => [f.file, f.bytes])).values()].reduce((sum, b) => sum + b, 0),
        tracing: tracing.length > 0,
        samples: [] as { load: number; later: number }[],
      });
    }
    // The tracer is found by its module's path: if that file moves, say so rather than count its chunk as lazy.
    if (!built.some((b) => b.tracing))
      throw new Error(`no function imports ${TRACING_MODULE}: update TRACING_MODULE in bench/cold-start.ts`);
    const probes = [];
    for (const [probe, lines] of Object.entries(FLOOR_PROBES)) {
      const source = join(dir, `probe-${probes.length}.mjs`);
      writeFileSync(source, `${lines.join('\n')}\n`);
      const outdir = join(dir, `probe-${probes.length}`);
      const { metafile } = await build({ ...lambdaBuildOptions(source, outdir), metafile: true });
      const outputs = metafile.outputs;
      const index = Object.values(outputs).find((o) => o.entryPoint !== undefined)!;
      // Counted as the functions are: index.mjs and the chunks its static imports reach.
      const bytes = assetLoad({ index, outputs }).atLoad.reduce((sum, f) => sum + f.bytes, 0);
      probes.push({ probe, outdir, file: join(outdir, 'index.mjs'), bytes, samples: [] as number[] });
    }
    progress(`cold start: ${built.length} functions and ${probes.length} probes bundled; loading each ${LOADS} times`);
    for (let round = 1; round <= LOADS; round++) {
      for (const b of built) b.samples.push(loadOnce(b.file, b.later, b.asset));
      for (const p of probes) p.samples.push(loadOnce(p.file, [], p.outdir).load);
      progress(`cold start: round ${round} of ${LOADS}`);
    }
    const functions: BundleResult[] = built.map((b) => ({
      entry: b.entry,
      bytes: b.bytes,
      sdkBytes: b.sdkBytes,
      loadMsMedian: median(b.samples.map((s) => s.load)),
      onFirstUse: b.later.length
        ? { modules: b.modules, bytes: b.laterBytes, msMedian: median(b.samples.map((s) => s.later)) }
        : undefined,
    }));
    for (const f of functions) {
      progress(
        `cold start: ${f.entry} ${Math.round(f.bytes / 1024)} KB (SDK ${Math.round(f.sdkBytes / 1024)} KB of it), ${f.loadMsMedian.toFixed(0)} ms${f.onFirstUse ? ` (+ ${Math.round(f.onFirstUse.bytes / 1024)} KB, ${f.onFirstUse.msMedian.toFixed(0)} ms on first use of ${f.onFirstUse.modules.join(', ')})` : ''}`,
      );
    }
    const floors = probes.map((p) => ({ probe: p.probe, bytes: p.bytes, loadMsMedian: median(p.samples) }));
    for (const f of floors)
      progress(`cold start: floor, ${f.probe}: ${Math.round(f.bytes / 1024)} KB, ${f.loadMsMedian.toFixed(0)} ms`);
    return {
      functions: functions.sort((a, b) => b.bytes - a.bytes),
      floors,
      runtimeSdk: await benchRuntimeSdk(),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Standalone: `npx tsx bench/cold-start.ts` prints the figures as JSON (`npm run bench` renders them into BENCHMARKS.md). */
if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? '')).href) {
  console.log(JSON.stringify(await benchColdStart(), null, 2));
}
