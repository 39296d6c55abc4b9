import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunction } from '../../infra/bundling/bundle-function.js';
import { bundleSpecOf } from '../../infra/lambda-functions.js';
import { generateToken } from '../../shared/adapters/tokens.js';
import { apiEvent } from '../support/api-event.js';
import { createTestTable, engineEnvironment } from '../support/engines.js';

/**
 * Tracing as deployed: the employees function's asset, built as the CDK app builds it, loaded with plain `node` in a
 * fresh process with the variables Lambda sets (active tracing: a trace header, the X-Ray daemon's address, here a
 * UDP socket of this test), and invoked once against DynamoDB Local. The X-Ray SDK streams each subsegment as it
 * closes: the handler's, annotated, and one per AWS call. Without tracing the X-Ray SDK is not even loaded.
 */

const run = promisify(execFile);
let dir: string;
let asset: string;
let tableName: string;
let daemon: Socket;
let documents: Record<string, unknown>[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'payroll-tracing-'));
  asset = join(dir, 'api-employees');
  bundleFunction(bundleSpecOf('api/employees'), asset);
  tableName = (await createTestTable('tracing')).tableName;
  daemon = createSocket('udp4');
  // Each datagram: a JSON header line, then one segment document.
  daemon.on('message', (msg) => {
    const [, body] = msg.toString('utf8').split('\n');
    if (body) documents.push(JSON.parse(body) as Record<string, unknown>);
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
});

afterAll(() => {
  daemon?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One cold start and one request of the built function; what it printed. */
async function invokeOnce(env: Record<string, string>): Promise<{ status: number; xray: boolean; stdout: string }> {
  const event = apiEvent({
    method: 'GET',
    path: '/v1/employees/emp_unknown',
    params: { id: 'emp_unknown' },
    headers: { Authorization: `Bearer ${generateToken('sandbox')}` },
  });
  const script = [
    `const { handler } = await import(${JSON.stringify(`file://${join(asset, 'index.mjs')}`)});`,
    `const result = await handler(${JSON.stringify(event)}, { awsRequestId: 'r1', getRemainingTimeInMillis: () => 29000 });`,
    // The X-Ray SDK registers its context namespace when it loads.
    `console.log(JSON.stringify({ status: result.statusCode, xray: Boolean(process.namespaces?.AWSXRay) }));`,
  ].join('\n');
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      ...engineEnvironment(),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      TABLE_NAME: tableName,
      PAYROLL_ENVIRONMENT: 'sandbox',
      PAYROLL_LOCAL_MASTER_KEY: randomBytes(32).toString('base64'),
      PAYROLL_SIGNING_SECRET: randomBytes(32).toString('base64'),
      POWERTOOLS_SERVICE_NAME: 'payroll',
      POWERTOOLS_METRICS_NAMESPACE: 'PayrollTest',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      // What Lambda sets in a function with active tracing.
      AWS_LAMBDA_FUNCTION_NAME: 'payroll-employees',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      LAMBDA_TASK_ROOT: asset,
      _HANDLER: 'index.handler',
      _X_AMZN_TRACE_ID: `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')};Parent=${randomBytes(8).toString('hex')};Sampled=1`,
      AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
      ...env,
    },
  });
  const lines = stdout.trim().split('\n');
  return { ...(JSON.parse(lines.at(-1)!) as { status: number; xray: boolean }), stdout };
}

type Subsegment = {
  name: string;
  annotations?: Record<string, unknown>;
  metadata?: Record<string, Record<string, unknown>>;
  aws?: { operation?: string; table_name?: string };
  namespace?: string;
};

describe('tracing a deployed function', () => {
  it('traces the invocation: the handler annotated with cold start, service and route, a subsegment per DynamoDB call', async () => {
    documents = [];
    const { status, xray, stdout } = await invokeOnce({});
    expect(status).toBe(401);
    expect(xray).toBe(true);
    // Nothing counted, nothing published: no EMF line, no "no metrics" warning.
    expect(stdout).not.toContain('CloudWatchMetrics');
    expect(stdout).not.toContain('No application metrics');
    const subsegments = (): Subsegment[] => documents as Subsegment[];
    await expect
      .poll(() => subsegments().map((s) => s.name), { timeout: 5_000, interval: 20 })
      .toContain('## index.handler');
    const handler = subsegments().find((s) => s.name === '## index.handler')!;
    expect(handler.annotations).toEqual({ ColdStart: true, Service: 'payroll', route: 'GET /v1/employees/{id}' });
    // The answer is customer data: never recorded in the trace.
    expect(JSON.stringify(handler.metadata ?? {})).not.toContain('statusCode');
    await expect.poll(() => subsegments().some((s) => s.name === 'DynamoDB'), { timeout: 5_000 }).toBe(true);
    const dynamo = subsegments().find((s) => s.name === 'DynamoDB')!;
    expect(dynamo).toMatchObject({ namespace: 'aws', aws: { operation: 'GetItem', table_name: tableName } });
  });

  it('loads no X-Ray SDK and sends nothing when tracing is off (POWERTOOLS_TRACE_ENABLED=false)', async () => {
    documents = [];
    const { status, xray } = await invokeOnce({ POWERTOOLS_TRACE_ENABLED: 'false' });
    expect(status).toBe(401);
    expect(xray).toBe(false);
    expect(documents).toEqual([]);
  });

  it('loads no X-Ray SDK outside Lambda (the local stack, the tests)', async () => {
    documents = [];
    const { status, xray } = await invokeOnce({ AWS_LAMBDA_FUNCTION_NAME: '', AWS_EXECUTION_ENV: '' });
    expect(status).toBe(401);
    expect(xray).toBe(false);
    expect(documents).toEqual([]);
  });
});
