/**
 * The runtime side of `npm run invoke`: what Lambda's Node.js runtime does in a fresh execution environment, in a
 * fresh Node process of its own. It is run with plain `node` (scripts/invoke-harness.ts transpiles this file, which
 * imports nothing but Node's built-ins), in the function's task root, with exactly the environment the harness
 * gives it:
 *
 * 1. init: imports the handler's module (`_HANDLER`, `index.handler` → `index.mjs`, export `handler`) from
 *    LAMBDA_TASK_ROOT, running its module-scope code, and reports the init duration (since the process started,
 *    as Lambda's Init Duration counts the runtime's start too);
 * 2. invoke: takes one event from the harness, calls `handler(event, context)` with a Lambda context object
 *    (request id, deadline, function name, memory, log group and stream), awaits the promise (or the callback),
 *    and reports the result as JSON text, as Lambda serializes it, or the error as Lambda reports it, with the
 *    handler's duration and the process's peak memory;
 * 3. exits once its output is flushed, as an environment that is never invoked again.
 *
 * Logs are whatever the function writes to stdout and stderr; the harness collects them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ContextFields {
  functionName: string;
  functionVersion: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  logGroupName: string;
  logStreamName: string;
  /** Epoch milliseconds after which Lambda would stop the invocation. */
  deadline: number;
}

export interface LambdaError {
  errorType: string;
  errorMessage: string;
  trace: string[];
}

export type RuntimeMessage =
  | { type: 'ready'; initMs: number }
  | { type: 'init-error'; initMs: number; error: LambdaError }
  | { type: 'result'; payload: string; durationMs: number; maxRssKb: number }
  | { type: 'error'; error: LambdaError; durationMs: number; maxRssKb: number };

export interface InvokeMessage {
  type: 'invoke';
  event: unknown;
  context: ContextFields;
  /** `_X_AMZN_TRACE_ID` for this invocation, as Lambda sets it before each one. */
  traceId: string;
}

function lambdaError(err: unknown): LambdaError {
  if (err instanceof Error)
    return { errorType: err.name, errorMessage: err.message, trace: (err.stack ?? '').split('\n').filter(Boolean) };
  return { errorType: typeof err, errorMessage: String(err), trace: [] };
}

function send(message: RuntimeMessage): Promise<void> {
  return new Promise((resolve) => process.send!(message, () => resolve()));
}

/** Exits once what was written to stdout and stderr has left the process. */
function exitFlushed(code: number): void {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

type Handler = (event: unknown, context: object, callback: (err?: unknown, value?: unknown) => void) => unknown;

async function init(): Promise<Handler> {
  const spec = process.env._HANDLER ?? 'index.handler';
  const root = process.env.LAMBDA_TASK_ROOT ?? process.cwd();
  const dot = spec.lastIndexOf('.');
  const moduleName = spec.slice(0, dot);
  const exportName = spec.slice(dot + 1);
  const file = ['.js', '.mjs', '.cjs'].map((ext) => join(root, `${moduleName}${ext}`)).find((f) => existsSync(f));
  if (!file) {
    throw Object.assign(new Error(`Cannot find module '${moduleName}' in ${root}`), {
      name: 'Runtime.ImportModuleError',
    });
  }
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const handler = mod[exportName];
  if (typeof handler !== 'function') {
    throw Object.assign(new Error(`${spec} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  }
  return handler as Handler;
}

function lambdaContext(fields: ContextFields, done: (err: unknown, value?: unknown) => void) {
  const { deadline, ...rest } = fields;
  return {
    ...rest,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: (err: unknown, value: unknown) => done(err, value),
    fail: (err: unknown) => done(err ?? new Error('handled')),
    succeed: (value: unknown) => done(null, value),
  };
}

const handler = await init().catch(async (err: unknown) => {
  await send({ type: 'init-error', initMs: performance.now(), error: lambdaError(err) });
  exitFlushed(1);
  return undefined;
});
if (handler) {
  // Listening before saying ready: the harness sends the event as soon as it hears it.
  process.once('message', (message: InvokeMessage) => void invoke(handler, message));
  await send({ type: 'ready', initMs: performance.now() });
}

async function invoke(handler: Handler, message: InvokeMessage): Promise<void> {
  process.env._X_AMZN_TRACE_ID = message.traceId;
  const started = performance.now();
  let outcome: RuntimeMessage;
  try {
    const result = await new Promise((resolve, reject) => {
      const callback = (err?: unknown, value?: unknown) => (err ? reject(err) : resolve(value));
      const returned = handler(message.event, lambdaContext(message.context, callback), callback);
      if (returned && typeof (returned as Promise<unknown>).then === 'function')
        (returned as Promise<unknown>).then(resolve, reject);
    });
    const durationMs = performance.now() - started;
    // Lambda answers with the result serialized as JSON (`undefined` as null): what cannot be serialized fails here.
    outcome = {
      type: 'result',
      payload: JSON.stringify(result ?? null),
      durationMs,
      maxRssKb: process.resourceUsage().maxRSS,
    };
  } catch (err) {
    outcome = {
      type: 'error',
      error: lambdaError(err),
      durationMs: performance.now() - started,
      maxRssKb: process.resourceUsage().maxRSS,
    };
  }
  await send(outcome);
  exitFlushed(0);
}
