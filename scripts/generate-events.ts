import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import type {
  APIGatewayProxyEvent,
  CloudWatchLogsDecodedData,
  CloudWatchLogsEvent,
  EventBridgeEvent,
  SQSEvent,
} from 'aws-lambda';
import type { z } from 'zod';
import type { AuditRecord } from '../shared/adapters/audit-sink.js';
import { EXAMPLE_IDS } from '../shared/api/common.js';
import type { RouteDef } from '../shared/api/route.js';
import { ROUTES } from '../shared/api/routes.js';
import { QUEUE_DEFINITIONS } from '../shared/data/table-definition.js';
import { auditRecordSchema } from '../shared/schemas/audit.js';

/**
 * `npm run events`: writes events/, a sample event for every function the CDK app deploys, for
 * `npm run invoke` (scripts/invoke.ts) and `sam local invoke -e` alike (docs/invoke.md):
 *
 * - `events/<function>/<route id>.json`: the REST API proxy event API Gateway sends for each declared route
 *   (shared/api), with the route's method and template, its path parameters and declared headers from their
 *   examples, its example body, and `Authorization: Bearer <token>` where the route needs a token (the harness
 *   fills `<token>` from `--token` or PAYROLL_TOKEN);
 * - `events/processor/start.json` and `events/deliverer/delivery.json`: SQS batches of one message each;
 * - `events/sweeper/scheduled.json` and `events/bank-link/scheduled.json`: the schedules' events;
 * - `events/audit-ingest/subscription.json`: a CloudWatch Logs subscription delivery of one audit line.
 *
 * Everything is derived from the declarations and fixed constants, so the output is the same on every run;
 * test/e2e/invoke.e2e.test.ts fails while the committed files differ from what this writes.
 */

export const EVENTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'events');

/** Replaced by the harness with the token given to it; an event that still holds it is answered 401. */
export const TOKEN_PLACEHOLDER = '<token>';

export interface SampleEvent {
  /** The function's name as `npm run invoke` takes it: an API resource (`employees`) or a worker (`processor`). */
  function: string;
  /** The file's name under events/<function>/, without `.json`. */
  name: string;
  /** What the event is, for the harness's list. */
  description: string;
  /** The event `npm run invoke -- <function>` sends when no `--event` is given. */
  default?: boolean;
  event: unknown;
}

/** A deployed account, region, API and stage, as a sample event names them (none of them exists). */
const ACCOUNT = '123456789012';
const REGION = 'us-east-1';
const API_ID = 'a1b2c3d4e5';
const STAGE = 'dev';
const DOMAIN = `${API_ID}.execute-api.${REGION}.amazonaws.com`;
const SOURCE_IP = '203.0.113.10';
const USER_AGENT = 'payroll-sample-event/1.0';
/** 2026-11-20T10:02:28.752Z, the instant the API's own examples use. */
const NOW = Date.UTC(2026, 10, 20, 10, 2, 28, 752);
const ORGANIZATION_ID = 'org_01kfz8c1b2d3f4g5h6j7k8m9n0';
const STACK_PREFIX = `Payroll-sandbox-${STAGE}`;

const digest = (seed: string) => createHash('sha256').update(seed).digest('hex');
/** A UUID-shaped id derived from `seed`: every run writes the same one. */
const uuidOf = (seed: string) => {
  const h = digest(seed);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** API Gateway's `requestTime`: `20/Nov/2026:10:02:28 +0000`. */
function requestTime(ms: number): string {
  const d = new Date(ms);
  const month = d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getUTCDate())}/${month}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}

/** The `example` a schema's metadata declares, looking through `.optional()` and the like. */
function exampleOf(schema: z.ZodType | undefined): unknown {
  let current: unknown = schema;
  for (let depth = 0; current && depth < 5; depth++) {
    const s = current as { meta?: () => { example?: unknown } | undefined; unwrap?: () => unknown };
    const example = s.meta?.()?.example;
    if (example !== undefined) return example;
    current = s.unwrap?.();
  }
  return undefined;
}

function routeEvent(route: RouteDef): APIGatewayProxyEvent {
  const params: Record<string, string> = {};
  for (const [name, schema] of Object.entries(route.params?.shape ?? {})) {
    const example = exampleOf(schema as z.ZodType);
    if (typeof example !== 'string') throw new Error(`${route.id}: path parameter ${name} declares no example`);
    params[name] = example;
  }
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!));
  const body = route.body?.example === undefined ? null : JSON.stringify(route.body.example);
  const requestId = uuidOf(`request:${route.id}`);
  const headers: Record<string, string> = {
    Accept: 'application/json',
    ...(route.scope !== null && { Authorization: `Bearer ${TOKEN_PLACEHOLDER}` }),
    ...(body !== null && { 'Content-Type': 'application/json' }),
    Host: DOMAIN,
    'User-Agent': USER_AGENT,
    'X-Amzn-Trace-Id': `Root=1-${Math.floor(NOW / 1000).toString(16)}-${digest(`trace:${route.id}`).slice(0, 24)}`,
    'X-Forwarded-For': SOURCE_IP,
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
  };
  // Declared request headers with their examples (Idempotency-Key); Accept stays JSON, so every sample answers
  // in the envelope.
  for (const [name, schema] of Object.entries(route.headers?.shape ?? {})) {
    if (name.toLowerCase() === 'accept') continue;
    const example = exampleOf(schema as z.ZodType);
    if (typeof example === 'string') headers[name] = example;
  }
  return {
    resource: route.path,
    path,
    httpMethod: route.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: Object.keys(params).length > 0 ? params : null,
    stageVariables: null,
    requestContext: {
      resourceId: digest(`resource:${route.path}`).slice(0, 6),
      resourcePath: route.path,
      httpMethod: route.method,
      extendedRequestId: Buffer.from(digest(`extended:${route.id}`).slice(0, 12), 'hex').toString('base64'),
      requestTime: requestTime(NOW),
      path: `/${STAGE}${path}`,
      accountId: ACCOUNT,
      protocol: 'HTTP/1.1',
      stage: STAGE,
      domainPrefix: API_ID,
      requestTimeEpoch: NOW,
      requestId,
      identity: {
        cognitoIdentityPoolId: null,
        accountId: null,
        cognitoIdentityId: null,
        caller: null,
        sourceIp: SOURCE_IP,
        principalOrgId: null,
        accessKey: null,
        cognitoAuthenticationType: null,
        cognitoAuthenticationProvider: null,
        userArn: null,
        userAgent: USER_AGENT,
        user: null,
        apiKey: null,
        apiKeyId: null,
        clientCert: null,
      },
      domainName: DOMAIN,
      apiId: API_ID,
      authorizer: null,
    },
    body,
    isBase64Encoded: false,
  };
}

/** One SQS message as the event source mapping hands it to the function. */
function sqsEvent(queue: string, seed: string, message: unknown): SQSEvent {
  const body = JSON.stringify(message);
  return {
    Records: [
      {
        messageId: uuidOf(`message:${seed}`),
        receiptHandle: `AQEB${Buffer.from(digest(`receipt:${seed}`), 'hex').toString('base64')}`,
        body,
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(NOW),
          SenderId: 'AROAEXAMPLEEXAMPLE:payroll',
          ApproximateFirstReceiveTimestamp: String(NOW + 12),
        },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(body).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:${STACK_PREFIX}-Stateful-${queue}`,
        awsRegion: REGION,
      },
    ],
  };
}

function scheduledEvent(): EventBridgeEvent<'Scheduled Event', Record<string, never>> {
  return {
    version: '0',
    id: uuidOf('schedule'),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: ACCOUNT,
    time: '2026-11-20T10:05:00Z',
    region: REGION,
    resources: [`arn:aws:events:${REGION}:${ACCOUNT}:rule/${STACK_PREFIX}-Workers-PayrollSweepSchedule`],
    detail: {},
  };
}

/** The delivery payload of a subscription: `awslogs.data` is base64 of gzipped JSON. */
export function subscriptionEvent(logGroup: string, messages: readonly string[], at = NOW): CloudWatchLogsEvent {
  const data: CloudWatchLogsDecodedData = {
    messageType: 'DATA_MESSAGE',
    owner: ACCOUNT,
    logGroup,
    logStream: `${new Date(at).toISOString().slice(0, 10).replace(/-/g, '/')}/[$LATEST]${digest(logGroup).slice(0, 32)}`,
    subscriptionFilters: ['audit-log'],
    logEvents: messages.map((message, i) => ({
      id: BigInt(`0x${digest(`${at}:${i}:${message}`).slice(0, 14)}`).toString(),
      timestamp: at + i,
      message,
    })),
  };
  return { awslogs: { data: gzipSync(JSON.stringify(data)).toString('base64') } };
}

/** One audit line as a deployed API function logs it (shared/adapters/audit-sink.ts through Powertools' logger). */
function auditLine(): string {
  const route = ROUTES.find((r) => r.id === 'getEmployee')!;
  const record: AuditRecord = auditRecordSchema.parse({
    request_id: uuidOf(`request:${route.id}`),
    api_key_id: EXAMPLE_IDS.apiKey,
    organization_id: ORGANIZATION_ID,
    method: route.method,
    path: route.path.replace('{id}', EXAMPLE_IDS.employee),
    route: route.path,
    status: 200,
    source_ip: SOURCE_IP,
    user_agent: USER_AGENT,
    at: new Date(NOW).toISOString(),
    latency_ms: 14,
    auth_failure: null,
  } satisfies AuditRecord);
  return JSON.stringify({
    level: 'INFO',
    message: 'audit',
    timestamp: new Date(NOW + 14).toISOString(),
    service: 'payroll-api',
    audit_event: 'request',
    audit: record,
  });
}

/** Every sample event, in the order `npm run invoke` lists them: the API routes as declared, then the workers. */
export function sampleEvents(): SampleEvent[] {
  const api = ROUTES.map((route, i, all) => ({
    function: route.function,
    name: route.id,
    description: `${route.method} ${route.path}${route.scope ? ` (${route.scope})` : ''}`,
    // The first route of its function that only reads and needs no id: a safe call to try first.
    default:
      route.method === 'GET' &&
      !route.path.includes('{') &&
      all.findIndex((r) => r.function === route.function && r.method === 'GET' && !r.path.includes('{')) === i,
    event: routeEvent(route),
  }));
  return [
    ...api,
    {
      function: 'processor',
      name: 'start',
      description: `SQS: a start message from the ${QUEUE_DEFINITIONS.payroll.name} queue (an unknown run: a no-op)`,
      default: true,
      event: sqsEvent('PayrollProcessingQueue', 'processor', {
        kind: 'start',
        organization_id: ORGANIZATION_ID,
        payroll_id: EXAMPLE_IDS.payroll,
      }),
    },
    {
      function: 'deliverer',
      name: 'delivery',
      description: `SQS: a delivery message from the ${QUEUE_DEFINITIONS.webhooks.name} queue (an unknown event: a no-op)`,
      default: true,
      event: sqsEvent('WebhookDeliveryQueue', 'deliverer', {
        organization_id: ORGANIZATION_ID,
        event_id: EXAMPLE_IDS.event,
        webhook_id: EXAMPLE_IDS.webhook,
      }),
    },
    {
      function: 'sweeper',
      name: 'scheduled',
      description: 'EventBridge: the five-minute schedule',
      default: true,
      event: scheduledEvent(),
    },
    {
      function: 'bank-link',
      name: 'scheduled',
      description: 'EventBridge Scheduler: the one-minute schedule (the pass reads nothing from its event)',
      default: true,
      event: scheduledEvent(),
    },
    {
      function: 'audit-ingest',
      name: 'subscription',
      description: 'CloudWatch Logs: a subscription delivery of one audit line',
      default: true,
      event: subscriptionEvent(`/payroll/${STACK_PREFIX}-Api/routes/Employees`, [auditLine()]),
    },
  ];
}

export const eventFile = (e: Pick<SampleEvent, 'function' | 'name'>) => join(EVENTS_DIR, e.function, `${e.name}.json`);
export const serializeEvent = (event: unknown) => `${JSON.stringify(event, null, 2)}\n`;

/** The .json files under events/, relative to it with `/` separators. */
export function committedEventFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
      d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith('.json') ? [join(dir, d.name)] : [],
    );
  try {
    return walk(EVENTS_DIR).map((f) => relative(EVENTS_DIR, f).split(sep).join('/'));
  } catch {
    return [];
  }
}

/**
 * What an event means, for comparing a committed file with a generated one: a subscription's `awslogs.data` is
 * compared decoded, since gzip's bytes may differ between zlib versions while the payload does not.
 */
export function comparable(event: unknown): unknown {
  const data = (event as Partial<CloudWatchLogsEvent> | null)?.awslogs?.data;
  if (typeof data !== 'string') return event;
  return { awslogs: { data: JSON.parse(gunzipSync(Buffer.from(data, 'base64')).toString('utf8')) } };
}

function main(): void {
  const events = sampleEvents();
  const wanted = new Set(events.map((e) => `${e.function}/${e.name}.json`));
  for (const stale of committedEventFiles().filter((f) => !wanted.has(f))) rmSync(join(EVENTS_DIR, stale));
  let written = 0;
  for (const e of events) {
    const file = eventFile(e);
    const text = serializeEvent(e.event);
    let current: string | undefined;
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      current = undefined;
    }
    // A subscription whose payload is unchanged keeps its bytes, whatever this machine's zlib writes.
    if (
      current !== undefined &&
      JSON.stringify(comparable(JSON.parse(current))) === JSON.stringify(comparable(e.event))
    )
      continue;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    written++;
  }
  for (const dir of readdirSync(EVENTS_DIR, { withFileTypes: true }))
    if (dir.isDirectory() && readdirSync(join(EVENTS_DIR, dir.name)).length === 0)
      rmSync(join(EVENTS_DIR, dir.name), { recursive: true });
  console.log(`events/: ${events.length} sample events, ${written} written`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
