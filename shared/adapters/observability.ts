import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { Context } from 'aws-lambda';
import { logger } from './logger.js';
import { type METRIC_NAMES, SERVICE_NAME } from './metric-names.js';

/**
 * What a deployed function tells about itself beyond its logs: business metrics (CloudWatch embedded metric format,
 * through Powertools Metrics) and traces (X-Ray, through Powertools Tracer). Each function stays its own composition
 * root: it wraps its handler in `observe` (or `observeApi`), and the adapters' client factories pass each SDK client
 * they build through `traced`. Both are switched by the environment alone:
 *
 * - Tracing is on in a Lambda function (the stacks turn X-Ray active tracing on for every function) unless
 *   `POWERTOOLS_TRACE_ENABLED=false`; never in the local stack, the tests or the benchmarks. When it is off the X-Ray
 *   SDK is not even loaded: it adds 121 KB and 25-40 ms to a cold start, and its context tracking enables an async
 *   hook on every promise of the process, so it is imported here (tracing.ts), once, only when it is used.
 * - Metrics are published by a Lambda function; elsewhere (the local stack, the tests) only when
 *   `POWERTOOLS_METRICS_DISABLED=false` asks for them. `POWERTOOLS_METRICS_DISABLED=true` turns them off deployed.
 *   The namespace is `POWERTOOLS_METRICS_NAMESPACE`, which the stacks set per deployment; the one dimension is
 *   `service` = SERVICE_NAME.
 */

type Env = Readonly<Record<string, string | undefined>>;

const FALSE = new Set(['false', '0', 'no', 'off']);
const TRUE = new Set(['true', '1', 'yes', 'on']);
const flag = (value: string | undefined): boolean | undefined => {
  const v = value?.trim().toLowerCase();
  if (v === undefined || v === '') return undefined;
  return TRUE.has(v) ? true : FALSE.has(v) ? false : undefined;
};

/** A Lambda function of a deployment: not the local stack, which runs the same handlers in one Node process. */
const inLambda = (env: Env) =>
  Boolean(env.AWS_LAMBDA_FUNCTION_NAME) && Boolean(env.AWS_EXECUTION_ENV) && env.PAYROLL_LOCAL_STACK !== 'true';

/** Whether this process traces: in a Lambda function, unless `POWERTOOLS_TRACE_ENABLED=false`. */
export function tracingEnabled(env: Env = process.env): boolean {
  return inLambda(env) && flag(env.POWERTOOLS_TRACE_ENABLED) !== false;
}

/** Whether this process publishes metrics: `POWERTOOLS_METRICS_DISABLED` if set, else in a Lambda function only. */
export function metricsEnabled(env: Env = process.env): boolean {
  const disabled = flag(env.POWERTOOLS_METRICS_DISABLED);
  return disabled === undefined ? inLambda(env) : !disabled;
}

async function loadTracer(): Promise<Tracer | undefined> {
  if (!tracingEnabled()) return undefined;
  const { createTracer } = await import('./tracing.js');
  return createTracer();
}

/** The container's tracer; undefined when tracing is off. Loaded while the function's module loads (init). */
export const tracer: Tracer | undefined = await loadTracer();

/** An SDK client whose calls appear as subsegments of the invocation's trace (DynamoDB, S3, SQS, KMS…). */
export function traced<Client extends object>(client: Client): Client {
  return tracer?.isTracingEnabled() ? tracer.captureAWSv3Client(client) : client;
}

/** `fn` as a subsegment `name` of the invocation's trace (a call no SDK client makes: the webhook POST). */
export function traceCall<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t = tracer;
  if (!t?.isTracingEnabled()) return fn();
  return t.provider.captureAsyncFunc(name, async (subsegment) => {
    try {
      return await fn();
    } catch (err) {
      t.addErrorAsMetadata(err as Error);
      throw err;
    } finally {
      subsegment?.close();
    }
  }) as Promise<T>;
}

export type MetricName = (typeof METRIC_NAMES)[keyof typeof METRIC_NAMES];

let metrics: Metrics | undefined;

/**
 * The business metrics of the invocation under way, published when it ends (`observe`). Counted by the use cases at
 * the write that makes the thing happen (a run's transition, a chunk marked done, a delivery closed), so a message
 * delivered again or a request replayed counts nothing twice.
 */
export const businessMetrics = {
  count(name: MetricName, value = 1): void {
    if (value <= 0 || !metricsEnabled()) return;
    metrics ??= new Metrics({ serviceName: SERVICE_NAME, logger });
    metrics.addMetric(name, MetricUnit.Count, value);
  },
  /** Writes what this invocation counted as one EMF line; nothing at all when it counted nothing. */
  flush(): void {
    if (!metrics?.hasStoredMetrics()) return;
    try {
      metrics.publishStoredMetrics();
    } catch (err) {
      logger.warn('business metrics not published', { error: err as Error });
    }
  },
};

/** Any Lambda handler: its event is whatever its trigger sends. */
type AnyHandler = (event: never, context: Context) => Promise<unknown>;
/** A handler as `observe` returns it: what it was, called as Lambda calls it. */
export type Observed<H extends AnyHandler> = H & ((event: Parameters<H>[0], context: Context) => ReturnType<H>);

/**
 * A Lambda handler, traced and measured: the invocation is a subsegment `## <handler>` annotated with `ColdStart`,
 * `Service` and, when `route` names one, `route`; an error is recorded on it (the response is not: it carries
 * customer data). The business metrics counted during the invocation are published at its end, thrown or not. What
 * the handler carries besides (an API router's `routes`) is kept.
 */
export function observe<H extends AnyHandler>(
  handler: H,
  options: { route?: (event: Parameters<H>[0]) => string | undefined } = {},
): Observed<H> {
  const run = (event: Parameters<H>[0], context: Context) => handler(event, context) as ReturnType<H>;
  const observed = async (event: Parameters<H>[0], context: Context) => {
    try {
      const t = tracer;
      if (!t?.isTracingEnabled()) return await run(event, context);
      return await t.provider.captureAsyncFunc(`## ${process.env._HANDLER ?? 'handler'}`, async (subsegment) => {
        t.annotateColdStart();
        t.addServiceNameAnnotation();
        const route = options.route?.(event);
        if (route) t.putAnnotation('route', route);
        try {
          return await run(event, context);
        } catch (err) {
          t.addErrorAsMetadata(err as Error);
          throw err;
        } finally {
          subsegment?.close();
        }
      });
    } finally {
      businessMetrics.flush();
    }
  };
  return Object.assign(observed, handler) as unknown as Observed<H>;
}

/** The route API Gateway matched, as declared: `GET /v1/employees/{id}` (the template, never the path's ids). */
export const apiRoute = (event: { httpMethod?: string; resource?: string }): string | undefined =>
  event.httpMethod && event.resource ? `${event.httpMethod} ${event.resource}` : undefined;

/** An API function's handler (its event API Gateway's proxy event), observed, its trace annotated with the route. */
export function observeApi<H extends AnyHandler>(handler: H): Observed<H> {
  return observe(handler, { route: (event) => apiRoute(event as { httpMethod?: string; resource?: string }) });
}
