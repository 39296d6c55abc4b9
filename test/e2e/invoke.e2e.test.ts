import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  comparable,
  committedEventFiles,
  EVENTS_DIR,
  sampleEvents,
  subscriptionEvent,
} from '../../scripts/generate-events.js';
import {
  type Assembly,
  DEFAULT_CDK_OUT,
  ensureAssembly,
  findFunction,
  stalenessOf,
} from '../../scripts/invoke-assembly.js';
import { type LocalTarget, localTarget, logGroupOf } from '../../scripts/invoke-environment.js';
import { type Invocation, invokeFunction, loadEvent, prepareEvent } from '../../scripts/invoke-harness.js';
import { type RunningStack, runToEnd, startLocalStack } from '../support/local-stack.js';
import { startReceiver } from '../support/webhook-receiver.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * `npm run invoke` (scripts/invoke.ts) runs each function as CDK built it: the asset of `cdk synth`, with the
 * environment its template gives it, in a fresh Node process, against a real local stack. Every deployed function
 * is invoked here through it at least once, doing real work whose outcome is checked (through the local stack's
 * own API where it can be): what deploys is exercised, not only the TypeScript the other end-to-end tests run.
 *
 * One synthesis for the file, into a temporary folder (skipped when cdk.out is newer than every source and holds the
 * default sandbox/dev stacks: it is then read as is, never written). The stack runs with PAYROLL_LOCAL_WORKERS=external, so its queues wait for the
 * built processor and deliverer, which this file feeds as Lambda's SQS event source would.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const INVOKE = join(ROOT, 'scripts', 'invoke.ts');

let assembly: Assembly;
let synthDir: string | undefined;
let stack: RunningStack;
let target: LocalTarget;
let token: string;
let sqs: SQSClient;
let receiver: Receiver;
/** Every API invocation of the file, for the audit lines they logged. */
const apiInvocations: Invocation[] = [];

async function invoke(name: string, event: unknown): Promise<Invocation> {
  const fn = findFunction(assembly, name);
  const invocation = await invokeFunction({ assembly, fn, target, event });
  if (!invocation.ok)
    throw new Error(
      `${name} failed: ${JSON.stringify(invocation.error)}\n${invocation.logs.map((l) => l.text).join('\n')}`,
    );
  // What Lambda's REPORT line says, measured: init (the module's load) and the handler's own time.
  expect(invocation.initMs).toBeGreaterThan(0);
  expect(invocation.durationMs).toBeGreaterThan(0);
  expect(invocation.maxMemoryMb).toBeGreaterThan(0);
  expect(invocation.report).toMatch(
    /^REPORT RequestId: [0-9a-f-]{36}\tDuration: [\d.]+ ms\tMemory Size: \d+ MB\tMax Memory Used: \d+ MB\tInit Duration: [\d.]+ ms$/,
  );
  return invocation;
}

/** One of an API function's sample events, filled in: the token, path parameters, a body. */
function apiEvent(fn: string, sample: string, options: { params?: Record<string, string>; body?: unknown } = {}) {
  const { event } = prepareEvent(loadEvent(findFunction(assembly, fn), sample).event, {
    token,
    params: options.params,
  });
  if (options.body !== undefined) (event as { body: string }).body = JSON.stringify(options.body);
  return event;
}

/** Invokes an API function with a sample; answers its status and parsed envelope. */
async function call(fn: string, sample: string, options: Parameters<typeof apiEvent>[2] = {}) {
  const invocation = await invoke(fn, apiEvent(fn, sample, options));
  apiInvocations.push(invocation);
  const result = invocation.result as { statusCode: number; headers: Record<string, string>; body: string };
  return { invocation, status: result.statusCode, headers: result.headers, body: JSON.parse(result.body) };
}

const queueArn = (url: string) => `arn:aws:sqs:${target.state.region}:000000000000:${url.split('/').pop()}`;

/** A received message as Lambda's SQS event source hands it over. */
function record(m: Message, url: string): SQSEvent['Records'][number] {
  const attributes = m.Attributes ?? {};
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn(url),
    awsRegion: target.state.region,
  };
}

/**
 * Lambda's SQS event source for one built function: receives batches from `url`, invokes the function with each,
 * deletes what it did not report failed, until the queue has nothing visible. Answers the invocations.
 */
async function drain(url: string, fn: string, batchSize: number): Promise<Invocation[]> {
  const invocations: Invocation[] = [];
  for (let round = 0; round < 20; round++) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: batchSize,
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return invocations;
    const invocation = await invoke(fn, { Records: Messages.map((m) => record(m, url)) } satisfies SQSEvent);
    invocations.push(invocation);
    const { batchItemFailures } = invocation.result as { batchItemFailures: { itemIdentifier: string }[] };
    expect(batchItemFailures).toEqual([]);
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
  throw new Error(`${url} still had messages after 20 batches`);
}

// Its own hook timeout (vitest.config.ts's stays for the rest): a synthesis and a local stack's start, run at once,
// took more than 180 s on a loaded machine.
beforeAll(async () => {
  // cdk.out is read as is only when it is newer than every source and holds the default sandbox/dev stacks.
  const fresh =
    stalenessOf(DEFAULT_CDK_OUT) === undefined &&
    existsSync(join(DEFAULT_CDK_OUT, 'Payroll-sandbox-dev-Api.template.json'));
  if (!fresh) synthDir = mkdtempSync(join(tmpdir(), 'payroll-invoke-synth-'));
  let synthLog = '';
  [assembly, stack] = await Promise.all([
    ensureAssembly({
      dir: synthDir ?? DEFAULT_CDK_OUT,
      synth: fresh ? 'never' : 'always',
      log: (t) => (synthLog += t),
    }).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${synthLog}`);
    }),
    startLocalStack({ env: { PAYROLL_LOCAL_WORKERS: 'external' } }),
  ]);
  receiver = await startReceiver();
  target = localTarget(stack.dir);
  token = (await stack.createOrganization('Invoke Co')).token;
  sqs = new SQSClient({
    endpoint: target.state.sqs_endpoint,
    region: target.state.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}, 420_000);

afterAll(async () => {
  sqs?.destroy();
  await stack?.stop();
  await receiver?.close();
  if (synthDir) rmSync(synthDir, { recursive: true, force: true });
});

describe('events/', () => {
  it('is committed as generated: run `npm run events` after changing a route', () => {
    const generated = sampleEvents();
    expect(committedEventFiles().sort(), 'events/ is stale: run `npm run events`').toEqual(
      generated.map((e) => `${e.function}/${e.name}.json`).sort(),
    );
    for (const e of generated) {
      const committed = JSON.parse(readFileSync(join(EVENTS_DIR, e.function, `${e.name}.json`), 'utf8'));
      expect(comparable(committed), `events/${e.function}/${e.name}.json is stale: run \`npm run events\``).toEqual(
        comparable(JSON.parse(JSON.stringify(e.event))),
      );
    }
  });

  it('has a sample for every function CDK builds, and none for a function it does not', () => {
    expect(new Set(sampleEvents().map((e) => e.function))).toEqual(new Set(assembly.functions.map((f) => f.name)));
  });
});

describe('npm run invoke', () => {
  const cli = (...args: string[]) =>
    runToEnd([INVOKE, '--no-synth', '--cdk-out', assembly.dir, '--data-dir', stack.dir, ...args], {
      ...process.env,
      PAYROLL_TOKEN: token,
    });

  it('lists the built functions with their logical ids and sample events', async () => {
    const { code, stdout, stderr } = await cli();
    expect(code, stderr).toBe(0);
    for (const fn of assembly.functions) expect(stdout).toMatch(new RegExp(`^${fn.name}\\s+${fn.logicalId}\\s`, 'm'));
    expect(stdout).toMatch(/^ {2}employees\s+listEmployees \(default\), createEmployee, getEmployee/m);
  });

  it('invokes one by name with a sample, printing the logs, the REPORT line and the result', async () => {
    const { code, stdout, stderr } = await cli('docs', '--event', 'getOpenApi');
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/^START RequestId: ([0-9a-f-]{36}) Version: \$LATEST$/m);
    expect(stderr).toMatch(/"message":"request".*"path":"\/v1\/openapi.json".*"status":200/);
    expect(stderr).toMatch(/^END RequestId: [0-9a-f-]{36}\nREPORT RequestId: .*\tInit Duration: [\d.]+ ms$/m);
    const result = JSON.parse(stdout) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({ openapi: '3.1.0', info: { title: 'Payroll API' } });
  });

  it('refuses an unknown function with the list of names', async () => {
    const { code, stderr } = await cli('nope');
    expect(code).toBe(1);
    expect(stderr).toContain('No function "nope"');
    expect(stderr).toContain('employees, payroll, disbursements, returns');
  });
});

describe('every built function, against the local stack', () => {
  let employeeId: string;
  let payrollId: string;
  let webhookSecret: string;

  it('employees: creates the sample employee (201), then reads it back by id (200)', async () => {
    const created = await call('employees', 'createEmployee');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 201, message: 'Employee created', data: { first_name: 'Ada' } });
    employeeId = created.body.data.employee_id;
    expect(created.headers.Location).toBe(`/v1/employees/${employeeId}`);

    const read = await call('employees', 'getEmployee', { params: { id: employeeId } });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      status: 200,
      data: { employee_id: employeeId, bank_account: { account_number_last4: '6789' } },
    });
    // The bank account was encrypted by one process and read back by another: the local key stands in for KMS.
    expect(read.body.request_id).toBe((apiEvent('employees', 'getEmployee') as any).requestContext.requestId);
  });

  it("admin: lists the organization's keys (a list route: the page-token secret stands in for Secrets Manager)", async () => {
    const keys = await call('admin', 'listApiKeys');
    expect(keys.status).toBe(200);
    expect(keys.body.data.api_keys).toEqual([expect.objectContaining({ type: 'admin', revoked_at: null })]);
  });

  it('webhooks: registers an endpoint with the sample body, pointed at a receiver (201)', async () => {
    const sample = JSON.parse((apiEvent('webhooks', 'createWebhook') as { body: string }).body);
    const created = await call('webhooks', 'createWebhook', { body: { ...sample, url: receiver.url } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ url: receiver.url, events: sample.events, status: 'active' });
    webhookSecret = created.body.data.secret;
  });

  it('payroll: submits the sample run for the employee (202)', async () => {
    const sample = JSON.parse((apiEvent('payroll', 'submitPayroll') as { body: string }).body);
    const body = { ...sample, employees: sample.employees.map((e: object) => ({ ...e, employee_id: employeeId })) };
    const submitted = await call('payroll', 'submitPayroll', { body });
    expect(submitted.status).toBe(202);
    expect(submitted.body.data).toMatchObject({ status: 'pending', employee_count: 1 });
    payrollId = submitted.body.data.payroll_id;
  });

  it('processor: takes the run from its queue to completed, with its paystub and NACHA file', async () => {
    const invocations = await drain(target.state.queues.payroll, 'processor', 10);
    // start → chunk → finalize, each message enqueueing the next.
    expect(invocations.length).toBeGreaterThanOrEqual(2);
    const run = await stack.request('GET', `/v1/payroll/${payrollId}`, { token });
    expect(run.status).toBe(200);
    expect(run.body.data).toMatchObject({ payroll_id: payrollId, status: 'completed', employee_count: 1 });
    const file = await stack.request('GET', `/v1/payroll/${payrollId}/disbursement`, { token });
    expect(file.status).toBe(200);
  });

  it("paystubs: lists the run's paystub (200)", async () => {
    const listed = await call('paystubs', 'listPaystubs');
    expect(listed.status).toBe(200);
    expect(listed.body.data.paystubs).toEqual([
      expect.objectContaining({ employee_id: employeeId, payroll_id: payrollId }),
    ]);
  });

  it("deliverer: delivers the run's events from its queue, signed, to the endpoint", async () => {
    await drain(target.state.queues.webhooks, 'deliverer', 10);
    const delivered = await receiver.waitFor((all) => all.length > 0);
    const verifier = new Webhook(webhookSecret);
    const payloads = delivered.map((r) => verifier.verify(r.body, r.headers as Record<string, string>) as any);
    expect(payloads).toContainEqual(expect.objectContaining({ type: 'payroll.completed' }));
    expect(payloads.every((p) => p.data.payroll_id === payrollId)).toBe(true);
  });

  it('returns: applies the sample report; its unknown trace numbers are reported as such (200)', async () => {
    const applied = await call('returns', 'postDisbursementReturns');
    expect(applied.status).toBe(200);
    expect(applied.body.data.outcomes).toEqual([
      expect.objectContaining({ type: 'return', outcome: 'unknown_trace' }),
      expect.objectContaining({ type: 'correction', outcome: 'unknown_trace' }),
    ]);
  });

  it('docs: answers the API reference page without a token (200)', async () => {
    const page = await invoke('docs', apiEvent('docs', 'getApiReference'));
    const result = page.result as { statusCode: number; headers: Record<string, string>; body: string };
    expect(result.statusCode).toBe(200);
    expect(result.headers['Content-Type']).toMatch(/^text\/html/);
  });

  it('sweeper: the scheduled sample finds nothing stalled: a no-op', async () => {
    const swept = await invoke('sweeper', loadEvent(findFunction(assembly, 'sweeper')).event);
    expect(swept.result).toEqual({ resumed: 0, dispatched: 0, redelivered: 0, abandoned: 0 });
  });

  it('audit-ingest: writes the audit lines the API invocations logged, which GET /v1/logs then lists', async () => {
    // Deployed, CloudWatch Logs delivers these lines to the ingest function; here the harness collected them.
    const lines = apiInvocations.flatMap((i) => i.logs.map((l) => l.text).filter((t) => t.includes('"audit_event"')));
    expect(lines.length).toBe(apiInvocations.length);
    const fn = findFunction(assembly, 'employees');
    const ingested = await invoke('audit-ingest', subscriptionEvent(logGroupOf(fn), lines, Date.now()));
    expect(ingested.result).toEqual({ ingested: lines.length });

    const logs = await stack.request('GET', '/v1/logs?limit=100', { token });
    expect(logs.status).toBe(200);
    const requestIds = new Set(logs.body.data.logs.map((l: { request_id: string }) => l.request_id));
    for (const i of apiInvocations) {
      const id = JSON.parse((i.result as { body: string }).body).request_id;
      expect(requestIds.has(id), `audit line of ${id}`).toBe(true);
    }
  });
});
