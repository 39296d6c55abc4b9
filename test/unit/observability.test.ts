import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { METRIC_NAMES, SERVICE_NAME } from '../../shared/adapters/metric-names.js';

/**
 * shared/adapters/observability.ts: when tracing and metrics are on, and what a function publishes. Each test loads
 * the adapter afresh, with the environment it sets, as a cold start does.
 */

const LAMBDA = { AWS_LAMBDA_FUNCTION_NAME: 'payroll-api-employees', AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' };
const SWITCHES = [
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_EXECUTION_ENV',
  'PAYROLL_LOCAL_STACK',
  'POWERTOOLS_TRACE_ENABLED',
  'POWERTOOLS_METRICS_DISABLED',
  'POWERTOOLS_METRICS_NAMESPACE',
  'POWERTOOLS_DEV',
];
const saved = Object.fromEntries(SWITCHES.map((k) => [k, process.env[k]]));

afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  vi.restoreAllMocks();
  vi.resetModules();
});

async function adapter(env: Record<string, string>) {
  for (const k of SWITCHES) delete process.env[k];
  Object.assign(process.env, env);
  vi.resetModules();
  return import('../../shared/adapters/observability.js');
}

/** Everything written to stdout and stderr while `fn` runs. */
async function output(fn: () => Promise<unknown>): Promise<{ stdout: string[]; stderr: string[] }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr.push(String(chunk));
    return true;
  });
  try {
    await fn().catch(() => undefined);
  } finally {
    vi.mocked(process.stdout.write).mockRestore();
    vi.mocked(process.stderr.write).mockRestore();
  }
  return { stdout, stderr };
}

const context = { awsRequestId: 'r1' } as Context;

describe('the switches', () => {
  it.each([
    ['a Lambda function', LAMBDA, true, true],
    ['a Lambda function, tracing turned off', { ...LAMBDA, POWERTOOLS_TRACE_ENABLED: 'false' }, false, true],
    ['a Lambda function, metrics turned off', { ...LAMBDA, POWERTOOLS_METRICS_DISABLED: 'true' }, true, false],
    ['the local stack', { PAYROLL_LOCAL_STACK: 'true' }, false, false],
    ['the local stack, even with Lambda variables', { ...LAMBDA, PAYROLL_LOCAL_STACK: 'true' }, false, false],
    [
      'the local stack, metrics asked for',
      { PAYROLL_LOCAL_STACK: 'true', POWERTOOLS_METRICS_DISABLED: 'false' },
      false,
      true,
    ],
    ['a test or a benchmark (no Lambda variables)', {}, false, false],
    ['a test that asks for metrics', { POWERTOOLS_METRICS_DISABLED: 'false' }, false, true],
  ])('%s: tracing %s, metrics %s', async (_name, env, tracing, metrics) => {
    const { tracingEnabled, metricsEnabled } = await adapter({});
    expect(tracingEnabled(env)).toBe(tracing);
    expect(metricsEnabled(env)).toBe(metrics);
  });

  it('loads no tracer, and traces no client, outside Lambda', async () => {
    const { tracer, traced } = await adapter({ POWERTOOLS_TRACE_ENABLED: 'true' });
    expect(tracer).toBeUndefined();
    const client = { middlewareStack: {} };
    expect(traced(client)).toBe(client);
  });
});

describe('business metrics', () => {
  it('publishes what an invocation counted as one EMF line, namespace and service as deployed, unit Count', async () => {
    const { observe, businessMetrics } = await adapter({
      POWERTOOLS_METRICS_DISABLED: 'false',
      POWERTOOLS_METRICS_NAMESPACE: 'PayrollApi-sandbox',
    });
    const handler = observe(async () => {
      businessMetrics.count(METRIC_NAMES.payrollsCompleted);
      businessMetrics.count(METRIC_NAMES.paystubsWritten, 25);
      businessMetrics.count(METRIC_NAMES.paystubsWritten, 25);
      return 'ok';
    });
    const { stdout, stderr } = await output(() => handler({} as never, context));
    expect(stderr).toEqual([]);
    expect(stdout).toHaveLength(1);
    const emf = JSON.parse(stdout[0]!);
    expect(emf._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'PayrollApi-sandbox',
        Dimensions: [['service']],
        Metrics: [
          { Name: 'PayrollsCompleted', Unit: 'Count' },
          { Name: 'PaystubsWritten', Unit: 'Count' },
        ],
      },
    ]);
    expect(emf).toMatchObject({ service: SERVICE_NAME, PayrollsCompleted: 1, PaystubsWritten: [25, 25] });

    // The next invocation starts empty: counted once, published once.
    const again = await output(() => observe(async () => 'nothing')({} as never, context));
    expect(again).toEqual({ stdout: [], stderr: [] });
  });

  it('writes nothing, not even a warning, for an invocation that counted nothing', async () => {
    // As deployed (tracing off here: test/integration/tracing.test.ts traces a built function with a trace header).
    const { observe } = await adapter({
      ...LAMBDA,
      POWERTOOLS_TRACE_ENABLED: 'false',
      POWERTOOLS_METRICS_NAMESPACE: 'PayrollApi-sandbox',
    });
    const { stdout, stderr } = await output(() => observe(async () => 'ok')({} as never, context));
    expect({ stdout, stderr }).toEqual({ stdout: [], stderr: [] });
  });

  it('publishes what was counted before the handler threw, and throws on', async () => {
    const { observe, businessMetrics } = await adapter({
      POWERTOOLS_METRICS_DISABLED: 'false',
      POWERTOOLS_METRICS_NAMESPACE: 'PayrollApi-sandbox',
    });
    const handler = observe(async () => {
      businessMetrics.count(METRIC_NAMES.webhookDeliveriesFailed);
      throw new Error('boom');
    });
    let thrown: unknown;
    const { stdout } = await output(() =>
      handler({} as never, context).catch((err: unknown) => {
        thrown = err;
      }),
    );
    expect((thrown as Error).message).toBe('boom');
    expect(JSON.parse(stdout[0]!)).toMatchObject({ WebhookDeliveriesFailed: 1 });
  });

  it('counts nothing in the tests and the local stack unless asked', async () => {
    const { observe, businessMetrics } = await adapter({ PAYROLL_LOCAL_STACK: 'true' });
    const { stdout, stderr } = await output(() =>
      observe(async () => businessMetrics.count(METRIC_NAMES.payrollsSubmitted))({} as never, context),
    );
    expect({ stdout, stderr }).toEqual({ stdout: [], stderr: [] });
  });
});

describe('observed handlers', () => {
  it("keeps what the handler carries (an API router's routes) and its answers", async () => {
    const { observeApi } = await adapter({});
    const router = Object.assign(async (event: { httpMethod: string; resource: string }) => event.resource, {
      routes: ['getEmployee'],
    });
    const handler = observeApi(router);
    expect(handler.routes).toEqual(['getEmployee']);
    expect(await handler({ httpMethod: 'GET', resource: '/v1/employees/{id}' }, context)).toBe('/v1/employees/{id}');
  });

  it('names the route by its template, never by the path', async () => {
    const { apiRoute } = await adapter({});
    expect(apiRoute({ httpMethod: 'GET', resource: '/v1/employees/{id}' })).toBe('GET /v1/employees/{id}');
    expect(apiRoute({})).toBeUndefined();
  });
});
