import { fork } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { transformSync } from 'esbuild';
import type { Assembly, DeployedFunction } from './invoke-assembly.js';
import {
  type Environment,
  functionEnvironment,
  functionNameOf,
  type LocalTarget,
  logGroupOf,
  logStreamName,
  plainEnvironment,
} from './invoke-environment.js';
import type { ContextFields, InvokeMessage, LambdaError, RuntimeMessage } from './invoke-runtime.js';
import { EVENTS_DIR, eventFile, sampleEvents, TOKEN_PLACEHOLDER } from './generate-events.js';

/**
 * One invocation of a built function, as Lambda runs it: a fresh Node process (a cold execution environment) whose
 * task root is a copy of the function's asset, with the function's environment, running scripts/invoke-runtime.ts,
 * which imports the handler (init), calls it once with the event and a Lambda context (invoke) and reports back.
 */

/** Where assets are copied to run: outside the repository, so no node_modules above them resolves what the bundle lacks. */
const STAGE_ROOT = join(tmpdir(), 'payroll-invoke');
const INIT_TIMEOUT_MS = 10_000;

const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

const DAY_MS = 24 * 3600 * 1000;
let pruned = false;

/** Removes staged copies no invocation has used for a day (each use touches its copy), once per process. */
function pruneStaged(): void {
  if (pruned || !existsSync(STAGE_ROOT)) return;
  pruned = true;
  for (const name of readdirSync(STAGE_ROOT)) {
    const path = join(STAGE_ROOT, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > DAY_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another harness meanwhile.
    }
  }
}

/** Writes `file` through `write` unless it exists, atomically (several harnesses may run at once); touches it if it does. */
function writeOnce(file: string, write: (tmp: string) => void): void {
  pruneStaged();
  if (existsSync(file)) {
    const now = new Date();
    utimesSync(file, now, now);
    return;
  }
  mkdirSync(STAGE_ROOT, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  write(tmp);
  try {
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(file)) throw err;
  }
}

/**
 * A copy of the asset to run from, like Lambda's task root: nothing above it holds a node_modules, so a package the
 * bundle lacks fails here as it would deployed instead of resolving from the repository. Keyed by the asset's files,
 * sizes and times, so an asset changed in place (while debugging) is copied again.
 */
export function stageAsset(assetDir: string): string {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
      d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)],
    );
  const listing = walk(assetDir).map((f) => {
    const s = statSync(f);
    return [relative(assetDir, f), s.size, s.mtimeMs];
  });
  const staged = join(STAGE_ROOT, `${basename(assetDir)}-${sha(JSON.stringify(listing))}`);
  writeOnce(staged, (tmp) => cpSync(assetDir, tmp, { recursive: true }));
  return staged;
}

/** scripts/invoke-runtime.ts as plain JavaScript, for plain `node` (no loader in the function's process). */
function runtimeScript(): string {
  const source = readFileSync(new URL('./invoke-runtime.ts', import.meta.url), 'utf8');
  const file = join(STAGE_ROOT, `runtime-${sha(source)}.mjs`);
  writeOnce(file, (tmp) =>
    writeFileSync(
      tmp,
      transformSync(source, { loader: 'ts', format: 'esm', target: 'node20', sourcefile: 'invoke-runtime.ts' }).code,
    ),
  );
  return file;
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface Invocation {
  fn: DeployedFunction;
  requestId: string;
  /** The handler returned (or called back) without an error. */
  ok: boolean;
  /** What it returned, parsed from the JSON Lambda would answer with. */
  result?: unknown;
  error?: LambdaError;
  timedOut: boolean;
  logs: LogLine[];
  /** Since the process started until the handler's module was loaded, as Lambda's Init Duration counts. */
  initMs?: number;
  durationMs?: number;
  maxMemoryMb?: number;
  /** Lambda's REPORT line for the invocation. */
  report: string;
  environment: Environment;
  /** Template values the harness could not resolve (each became a visible placeholder). */
  problems: string[];
}

export interface InvokeOptions {
  assembly: Assembly;
  fn: DeployedFunction;
  target: LocalTarget;
  event: unknown;
  /** Once the environment is known, before the process starts. */
  onStart?: (start: { requestId: string; environment: Environment; problems: string[] }) => void;
  /** Each line the function writes, as it writes it. */
  onLog?: (line: LogLine) => void;
}

export function reportLine(i: Pick<Invocation, 'requestId' | 'durationMs' | 'maxMemoryMb' | 'initMs' | 'fn'>): string {
  return [
    `REPORT RequestId: ${i.requestId}`,
    `Duration: ${(i.durationMs ?? 0).toFixed(2)} ms`,
    `Memory Size: ${i.fn.memoryMb} MB`,
    `Max Memory Used: ${i.maxMemoryMb ?? '?'} MB`,
    ...(i.initMs === undefined ? [] : [`Init Duration: ${i.initMs.toFixed(2)} ms`]),
  ].join('\t');
}

/** A trace header for one invocation, not sampled: no X-Ray daemon listens locally, so nothing is sent. */
const traceHeader = () =>
  `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')};Parent=${randomBytes(8).toString('hex')};Sampled=0`;

/** Runs the function once with `event` in a fresh process, and reports what Lambda's log and REPORT line would. */
export async function invokeFunction(options: InvokeOptions): Promise<Invocation> {
  const { fn, assembly, target } = options;
  const taskRoot = stageAsset(fn.assetDir);
  const logStream = logStreamName();
  const { variables, problems } = functionEnvironment(fn, assembly, target, taskRoot, logStream);
  const requestId = randomUUID();
  const logs: LogLine[] = [];
  const timeoutMs = fn.timeoutSeconds * 1000;
  options.onStart?.({ requestId, environment: variables, problems });

  const child = fork(runtimeScript(), [], {
    cwd: taskRoot,
    env: plainEnvironment(variables),
    // Nothing of this process's flags (tsx's loader, vitest's) reaches the function's.
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'json',
  });
  const streams = (['stdout', 'stderr'] as const).map(
    (stream) =>
      new Promise<void>((done) => {
        const lines = createInterface({ input: child[stream]!, crlfDelay: Number.POSITIVE_INFINITY });
        lines.on('line', (text) => {
          const line = { stream, text };
          logs.push(line);
          options.onLog?.(line);
        });
        lines.on('close', () => done());
      }),
  );

  let initMs: number | undefined;
  let outcome: RuntimeMessage | undefined;
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, ms);
  };
  arm(INIT_TIMEOUT_MS + timeoutMs);
  child.on('message', (message: RuntimeMessage) => {
    if (message.type === 'ready') {
      initMs = message.initMs;
      const context: ContextFields = {
        functionName: functionNameOf(fn),
        functionVersion: '$LATEST',
        invokedFunctionArn: `arn:aws:lambda:${target.state.region}:000000000000:function:${functionNameOf(fn)}`,
        memoryLimitInMB: String(fn.memoryMb),
        awsRequestId: requestId,
        logGroupName: logGroupOf(fn),
        logStreamName: logStream,
        deadline: Date.now() + timeoutMs,
      };
      arm(timeoutMs);
      const invoke: InvokeMessage = { type: 'invoke', event: options.event, context, traceId: traceHeader() };
      child.send(invoke);
    } else {
      if (message.type === 'init-error') initMs = message.initMs;
      outcome = message;
    }
  });
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done, fail) => {
    child.once('error', fail);
    child.once('close', (code, signal) => done({ code, signal }));
  });
  clearTimeout(timer);
  await Promise.all(streams);

  const base = { fn, requestId, logs, initMs, environment: variables, problems, timedOut };
  const finish = (rest: Omit<Invocation, keyof typeof base | 'report'>): Invocation => {
    const invocation = { ...base, ...rest };
    return { ...invocation, report: reportLine(invocation) };
  };
  if (timedOut) {
    const phase = initMs === undefined ? 'Init' : 'Task';
    return finish({
      ok: false,
      error: {
        errorType: 'Sandbox.Timedout',
        errorMessage: `${phase} timed out after ${(initMs === undefined ? INIT_TIMEOUT_MS + timeoutMs : timeoutMs) / 1000} seconds`,
        trace: [],
      },
      durationMs: timeoutMs,
    });
  }
  if (outcome?.type === 'result') {
    return finish({
      ok: true,
      result: JSON.parse(outcome.payload),
      durationMs: outcome.durationMs,
      maxMemoryMb: Math.ceil(outcome.maxRssKb / 1024),
    });
  }
  if (outcome?.type === 'error') {
    return finish({
      ok: false,
      error: outcome.error,
      durationMs: outcome.durationMs,
      maxMemoryMb: Math.ceil(outcome.maxRssKb / 1024),
    });
  }
  if (outcome?.type === 'init-error') return finish({ ok: false, error: outcome.error });
  return finish({
    ok: false,
    error: {
      errorType: 'Runtime.ExitError',
      errorMessage: `Runtime exited ${exit.signal ? `with signal ${exit.signal}` : `with error: exit status ${exit.code}`}`,
      trace: [],
    },
  });
}

/** The sample events of a function (events/<name>/), the default one first. */
export function samplesOf(fn: DeployedFunction) {
  const samples = sampleEvents().filter((e) => e.function === fn.name);
  return [...samples.filter((e) => e.default), ...samples.filter((e) => !e.default)];
}

/**
 * The event to send: `spec` is a file, `-` (stdin), or the name of one of the function's samples (`getEmployee`,
 * events/employees/getEmployee.json); without one, the function's default sample.
 */
export function loadEvent(fn: DeployedFunction, spec?: string): { event: unknown; source: string } {
  const read = (file: string) => ({ event: JSON.parse(readFileSync(file, 'utf8')) as unknown, source: file });
  if (spec === '-') return { event: JSON.parse(readFileSync(0, 'utf8')), source: 'stdin' };
  if (spec !== undefined) {
    if (existsSync(spec) && statSync(spec).isFile()) return read(spec);
    const named = join(EVENTS_DIR, fn.name, spec.endsWith('.json') ? spec : `${spec}.json`);
    if (existsSync(named)) return read(named);
    const names = samplesOf(fn).map((s) => s.name);
    throw new Error(`No event file ${spec}, and no sample named so for ${fn.name} (${names.join(', ') || 'none'})`);
  }
  const sample = samplesOf(fn)[0];
  if (!sample) throw new Error(`${fn.name} has no sample event under events/: pass --event <file>`);
  const file = eventFile(sample);
  return existsSync(file)
    ? read(file)
    : { event: sample.event, source: `${sample.function}/${sample.name} (generated)` };
}

type ProxyEvent = {
  resource?: string;
  httpMethod?: string;
  path?: string;
  headers?: Record<string, string> | null;
  multiValueHeaders?: Record<string, string[]> | null;
  pathParameters?: Record<string, string> | null;
  requestContext?: { path?: string; stage?: string };
};

/**
 * Fills an API Gateway event in: `<token>` in its Authorization header becomes `token`, and `params` replace its
 * path parameters (its path follows). Other events are returned as they are. `warnings` says what is left to fill.
 */
export function prepareEvent(
  event: unknown,
  options: { token?: string; params?: Record<string, string> } = {},
): { event: unknown; warnings: string[] } {
  const e = structuredClone(event) as ProxyEvent;
  const warnings: string[] = [];
  if (typeof e !== 'object' || e === null || typeof e.httpMethod !== 'string') {
    if (options.params && Object.keys(options.params).length > 0) warnings.push('--param only applies to API events');
    return { event: e, warnings };
  }
  const fill = (value: string) => (options.token ? value.replace(TOKEN_PLACEHOLDER, options.token) : value);
  for (const [name, value] of Object.entries(e.headers ?? {}))
    if (name.toLowerCase() === 'authorization') e.headers![name] = fill(value);
  for (const [name, values] of Object.entries(e.multiValueHeaders ?? {}))
    if (name.toLowerCase() === 'authorization') e.multiValueHeaders![name] = values.map(fill);
  const authorization = Object.entries(e.headers ?? {}).find(([k]) => k.toLowerCase() === 'authorization')?.[1];
  if (authorization?.includes(TOKEN_PLACEHOLDER))
    warnings.push(
      `the event's Authorization header is the placeholder "Bearer ${TOKEN_PLACEHOLDER}" (answered 401): pass --token or set PAYROLL_TOKEN`,
    );
  if (options.params && Object.keys(options.params).length > 0) {
    e.pathParameters = { ...e.pathParameters, ...options.params };
    if (e.resource) {
      const params = e.pathParameters;
      e.path = e.resource.replace(/\{(\w+)\+?\}/g, (whole, name: string) =>
        params[name] === undefined ? whole : encodeURIComponent(params[name]),
      );
      if (e.requestContext) e.requestContext.path = `/${e.requestContext.stage ?? 'dev'}${e.path}`;
    }
  }
  return { event: e, warnings };
}
