import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import packageJson from '../package.json' with { type: 'json' };
import { EXAMPLE_IDS } from '../shared/api/common.js';
import type { RouteDef, SuccessResponse } from '../shared/api/route.js';
import { ROUTES } from '../shared/api/routes.js';
import { REFERENCE_PAGE_CSP } from '../shared/http/api-reference.js';
import { ERROR_SCHEMAS, MAX_RETRY_AFTER_SECONDS, successEnvelope, type ErrorStatus } from './common.js';

/** The service's version, as package.json states it. */
const VERSION = packageJson.version;

const BUCKET_NAMES = { read: 'read', payroll_write: 'payroll-write', employee_write: 'employee-write' } as const;

interface HeaderSpec {
  description: string;
  schema: {
    type: 'string' | 'integer';
    minimum?: number;
    maximum?: number;
    maxLength?: number;
    pattern?: string;
    format?: string;
    enum?: string[];
  };
}

/** A header's integer: 32 bits, from `minimum` to `maximum`. */
const int32 = (minimum: number, maximum = 2_147_483_647) => ({
  type: 'integer' as const,
  format: 'int32',
  minimum,
  maximum,
});

/** Response headers, defined once under components/headers. Their bounds are what the service sends. */
const HEADERS = {
  'X-Request-Id': {
    description: "The request's id: also in the body's `request_id` and in the service's logs",
    schema: { type: 'string', maxLength: 64, pattern: '^[0-9A-Za-z-]+$' },
  },
  // A per-minute limit an operator configures (shared/config/env.ts); remaining is at most the limit.
  'X-RateLimit-Limit': {
    description:
      "Requests per minute of the route's rate-limit bucket (absent only where an operator turned the bucket off)",
    schema: int32(1),
  },
  'X-RateLimit-Remaining': {
    description: 'Requests you may still make right now',
    schema: int32(0),
  },
  // A bucket refills within a minute (shared/domain/rate-limit.ts).
  'X-RateLimit-Reset': {
    description: 'Seconds until the bucket is full again',
    schema: int32(0, 60),
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying',
    schema: int32(0, MAX_RETRY_AFTER_SECONDS),
  },
  Location: {
    description: 'The URL of the created (or accepted) resource',
    schema: { type: 'string', format: 'uri-reference', maxLength: 128 },
  },
  // shared/http/error-mapping.ts: the realm, and the authenticator's reason or the scope.
  'WWW-Authenticate': {
    description: 'The bearer challenge (RFC 6750), with `error` and `error_description` or `scope`',
    schema: { type: 'string', maxLength: 256, pattern: '^Bearer realm="payroll"' },
  },
  // shared/http/middleware/rate-limit.ts.
  Warning: {
    description:
      'On requests made with a token older than 60 days: `299 payroll-api "API key is N days old: rotate it …"`',
    schema: { type: 'string', maxLength: 160, pattern: '^299 payroll-api "[^"]*"$' },
  },
  Allow: {
    description: 'The methods the path answers',
    schema: { type: 'string', maxLength: 64, pattern: '^[A-Z]+(, [A-Z]+)*$' },
  },
  'Idempotent-Replayed': {
    description: '`true` when this answer replays an earlier submission',
    schema: { type: 'string', enum: ['true'] },
  },
  // functions/api/paystubs.ts and payroll.ts: the file is named after its paystub or run id.
  'Content-Disposition': {
    description: 'The file name of a PDF or NACHA file',
    schema: { type: 'string', maxLength: 128, pattern: '^(attachment|inline); filename="[^"]+"$' },
  },
  'Cache-Control': {
    description: 'How long the answer may be cached',
    schema: { type: 'string', enum: ['no-store', 'public, max-age=300', 'public, max-age=86400'] },
  },
  'Content-Security-Policy': {
    description: 'What the page may load and run',
    schema: { type: 'string', enum: [REFERENCE_PAGE_CSP] },
  },
  /**
   * CORS (shared/http/cors.ts, infra/api-stack.ts): a deployed stack stamps it on every answer, the functions' and
   * API Gateway's own alike: `*`, or the one origin it was deployed with (`-c corsAllowOrigin=https://…`). The local
   * stack serves the dashboard from its own origin and sends none.
   */
  'Access-Control-Allow-Origin': {
    description:
      'The origin browsers may call the API from: `*` unless the stack was deployed with one origin. Sent by a deployed stack on every answer; not by the local stack, which serves its dashboard itself.',
    // An origin's host is a DNS name: at most 253 characters, with the scheme and a port around it.
    schema: { type: 'string', maxLength: 270, pattern: '^(\\*|https?://[^/\\s]+)$' },
  },
} satisfies Record<string, HeaderSpec>;
type HeaderName = keyof typeof HEADERS;

/** Headers never required, named as they are (the OWASP ruleset looks for `Access-Control-Allow-Origin` by name). */
const NEVER_REQUIRED: ReadonlySet<HeaderName> = new Set(['Access-Control-Allow-Origin']);

/**
 * Header components actually referred to, by component name. A Reference Object cannot add `required`, so a
 * header sent only sometimes has its own component, named with `.optional`.
 */
const usedHeaders = new Map<string, HeaderSpec & { required?: true }>();
const headerComponent = (name: HeaderName, required: boolean) => {
  const key = required || NEVER_REQUIRED.has(name) ? name : `${name}.optional`;
  usedHeaders.set(key, { ...HEADERS[name], ...(required && { required: true as const }) });
  return { $ref: `#/components/headers/${key}` };
};

/**
 * A response's headers: the shared ones by reference, the operation's own (`extra`) in full, and on every answer
 * the CORS origin a deployed stack stamps.
 */
function headers(
  entries: [HeaderName, boolean][],
  extra: Record<string, { description: string; required: boolean }> = {},
) {
  const out: Record<string, unknown> = {};
  for (const [name, required] of [...entries, ['Access-Control-Allow-Origin', false] as [HeaderName, boolean]])
    out[name] = headerComponent(name, required);
  for (const [name, h] of Object.entries(extra)) {
    const base: HeaderSpec = (HEADERS as Record<string, HeaderSpec>)[name] ?? {
      description: '',
      schema: { type: 'string' },
    };
    out[name] = { ...base, description: h.description, ...(h.required && { required: true }) };
  }
  return out as NonNullable<ResponseConfig['headers']>;
}

/** Which headers a route's response carries, by status (shared/http/middleware: request context, rate limit, auth). */
function responseHeaders(route: Pick<RouteDef, 'scope' | 'bucket'>, status: number): [HeaderName, boolean][] {
  const out: [HeaderName, boolean][] = [['X-Request-Id', true]];
  if (route.bucket !== null && status !== 401) {
    // Stamped once the rate limit was counted: always on answers past it, sometimes on 403 (sandbox_only), 413, 500.
    const always = status < 300 || [400, 404, 409, 422, 429].includes(status);
    out.push(['X-RateLimit-Limit', always], ['X-RateLimit-Remaining', always], ['X-RateLimit-Reset', always]);
  }
  if (route.scope !== null && status !== 401) out.push(['Warning', false]);
  if (status === 401) out.push(['WWW-Authenticate', true]);
  if (status === 403 && route.scope !== null) out.push(['WWW-Authenticate', false]);
  if (status === 429) out.push(['Retry-After', true]);
  return out;
}

function errorResponse(
  route: Pick<RouteDef, 'scope' | 'bucket'>,
  status: ErrorStatus,
  description: string,
): ResponseConfig {
  return {
    description,
    headers: headers(responseHeaders(route, status)),
    content: { 'application/json': { schema: { $ref: `#/components/schemas/Error${status}` } } },
  };
}

/** The authenticated routes' answers that read the same on every one of them: components/responses. */
const AUTHENTICATED = { scope: 'admin', bucket: 'read' } as const;
const SHARED_RESPONSES = {
  Unauthorized: [
    401,
    '`unauthorized`: a missing, malformed, unknown, expired or revoked token (`WWW-Authenticate` says which)',
  ],
  Forbidden: [
    403,
    "`insufficient_scope`: the token lacks the operation's scope (`x-required-scope`); or `https_required`: the request was made over plain HTTP",
  ],
  RateLimited: [
    429,
    "`rate_limited`: this key's bucket for the operation (`x-rate-limit-bucket`) is empty; retry after `Retry-After` seconds. Nothing was done.",
  ],
  InternalError: [500, '`internal_error`: anything unexpected (never a stack trace; quote the request id)'],
} as const satisfies Record<string, readonly [ErrorStatus, string]>;
const sharedRef = (name: keyof typeof SHARED_RESPONSES) => ({ $ref: `#/components/responses/${name}` });

/** Envelopes are zod schemas with a component id, made once per name (zod refuses an id twice). */
const envelopes = new Map<string, z.ZodType>();
function envelopeOf(s: SuccessResponse): z.ZodType {
  const name = s.envelope!;
  let schema = envelopes.get(name);
  if (!schema) {
    schema = successEnvelope(name, s.schema!, s.message ?? 'OK');
    envelopes.set(name, schema);
  }
  return schema;
}

function successResponse(route: RouteDef, s: SuccessResponse): ResponseConfig {
  const extra = {
    ...s.headers,
    ...(s.location && { Location: { description: 'The URL of the created (or accepted) resource', required: true } }),
  };
  const content: NonNullable<ResponseConfig['content']> = {};
  if (s.raw) {
    content[s.raw] = {
      schema: s.raw === 'application/json' ? { type: 'object' } : { type: 'string' },
      example: s.example,
    };
  } else {
    content['application/json'] = {
      schema: envelopeOf(s),
      example: { status: s.status, message: s.message ?? 'OK', data: s.example, request_id: EXAMPLE_IDS.request },
    };
  }
  for (const [type, alt] of Object.entries(s.alternatives ?? {}))
    content[type] = {
      schema: alt.schema ?? { type: 'string' },
      ...(alt.example !== undefined && { example: alt.example }),
    };
  return { description: s.description, headers: headers(responseHeaders(route, s.status), extra), content };
}

function responsesOf(route: RouteDef): RouteConfig['responses'] {
  const spec = route;
  const responses: RouteConfig['responses'] = {};
  for (const s of [...spec.success].sort((a, b) => a.status - b.status))
    responses[String(s.status)] = successResponse(route, s);
  const errors = spec.errors ?? {};
  const validated = spec.params || spec.query || spec.body || spec.headers;
  // Every route reads a body it is sent as JSON before anything else (shared/http/middleware/json-body.ts).
  const bodyRefused = '`invalid_request_body`: a body that is not a JSON object (this operation reads none)';
  const authenticated = route.scope !== null;
  const own = (status: ErrorStatus, description: string | undefined) =>
    description ? errorResponse(route, status, description) : undefined;
  const entries: [ErrorStatus, ResponseConfig | { $ref: string } | undefined][] = [
    [
      400,
      own(
        400,
        errors[400] ??
          (validated
            ? 'A malformed path or query parameter, or an unknown parameter (`invalid_request_body`, every problem in `details`)'
            : bodyRefused),
      ),
    ],
    [401, authenticated ? sharedRef('Unauthorized') : undefined],
    [
      403,
      !authenticated
        ? own(403, '`https_required`: the request was made over plain HTTP')
        : errors[403]
          ? own(
              403,
              `\`insufficient_scope\`: the token lacks the \`${route.scope}\` scope; ${errors[403]}; or \`https_required\`: plain HTTP`,
            )
          : sharedRef('Forbidden'),
    ],
    [404, own(404, errors[404])],
    [409, own(409, errors[409])],
    [410, own(410, errors[410])],
    [413, own(413, errors[413] ?? (spec.body ? 'The body is over 6 MB' : undefined))],
    [422, own(422, errors[422])],
    [
      429,
      authenticated
        ? sharedRef('RateLimited')
        : own(429, '`rate_limited`: the stage-wide throttle in front of the API'),
    ],
    [500, authenticated ? sharedRef('InternalError') : own(500, '`internal_error`: anything unexpected')],
  ];
  for (const [status, response] of entries) if (response) responses[String(status)] = response;
  return responses;
}

function registerRoute(registry: OpenAPIRegistry, route: RouteDef): void {
  const spec = route;
  const scopeNote = route.scope
    ? `\n\nRequires a token with the \`${route.scope}\` scope. Rate limit: the ${BUCKET_NAMES[route.bucket!]} bucket.`
    : '\n\nNo token needed.';
  registry.registerPath({
    method: route.method.toLowerCase() as RouteConfig['method'],
    path: route.path,
    operationId: route.id,
    summary: route.summary,
    description: spec.description + scopeNote,
    tags: [spec.tag],
    security: route.scope ? [{ bearerAuth: [route.scope] }] : [],
    ...(route.scope && { 'x-required-scope': route.scope }),
    ...(route.bucket && { 'x-rate-limit-bucket': BUCKET_NAMES[route.bucket] }),
    request: {
      ...(spec.params && { params: spec.params }),
      ...(spec.query && { query: spec.query }),
      ...(spec.headers && { headers: spec.headers }),
      ...(spec.body && {
        body: {
          description: spec.body.description ?? 'A JSON object',
          required: spec.body.required ?? true,
          content: {
            'application/json': { schema: spec.body.schema, example: spec.body.example },
            ...(spec.body.text && {
              'text/plain': {
                // A bigger body is refused (413) before it is read.
                schema: { type: 'string', maxLength: MAX_BODY_BYTES, description: spec.body.text.description },
                example: spec.body.text.example,
              },
            }),
          },
        },
      }),
    },
    responses: responsesOf(route),
  });
}

/** The largest request body read, in bytes (local/server.ts; Lambda's own limit deployed): over it, 413. */
const MAX_BODY_BYTES = 6 * 1024 * 1024;

const DESCRIPTION = `Onboard employees, submit payroll runs, get NACHA direct-deposit files and paystubs, and hear about every step through signed webhooks.

**Envelope.** Every JSON answer is \`{status, message, data, request_id}\`, or \`{status, error: {code, message, details[], retry_after?}, request_id}\` for an error, and carries \`X-Request-Id\`. \`details\` lists every problem found, not just the first.

**Authentication.** \`Authorization: Bearer pk_sandbox_…\` (or \`pk_live_…\`). Each operation names the scope it needs (\`x-required-scope\`). Another organization's ids answer 404, never 403.

**Rate limits.** Each key has three buckets: read (every GET, 300/min), payroll-write (every write under /v1/payroll, and /v1/disbursement-returns; 100/min) and employee-write (every other write: employees, settings, API keys, webhooks, redeliveries; 100/min). Authenticated answers carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`; past the limit, \`429 rate_limited\` with \`Retry-After\`.

**Pagination.** Lists take \`limit\` (1–100, default 50) and \`page_token\`, and answer \`next_page_token\` (\`null\` on the last page). Page tokens are signed over your organization and the query.

**Unknown paths and methods.** An unknown path is \`404 not_found\`; a known path with another method \`405 method_not_allowed\` with \`Allow\` (components/responses/NotFound and MethodNotAllowed). Plain HTTP is \`403 https_required\`.`;

/** The document, from the route table and the zod schemas. Deterministic: no timestamps, components sorted. */
export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export function buildOpenApiDocument(): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  usedHeaders.clear();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'pk_sandbox_… or pk_live_…',
    description:
      'An API key of the organization. Token types: `read-only` (read:employees, read:payroll, read:paystubs), `payroll-submitter` (those and write:payroll), `admin` (all, with write:employees and admin). Each operation lists the scope it requires.',
  });
  for (const status of [404, 405] as const) {
    registry.registerComponent('responses', status === 404 ? 'NotFound' : 'MethodNotAllowed', {
      description:
        status === 404 ? 'An unknown path' : 'A known path with another method; `Allow` lists those it answers',
      headers: headers([
        ['X-Request-Id', true],
        ...(status === 405 ? [['Allow', true] as [HeaderName, boolean]] : []),
      ]) as Record<string, never>,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/Error${status}` } } },
    });
  }
  for (const [name, [status, description]] of Object.entries(SHARED_RESPONSES)) {
    registry.registerComponent('responses', name, errorResponse(AUTHENTICATED, status, description) as never);
  }
  for (const route of ROUTES) registerRoute(registry, route);
  for (const [name, header] of [...usedHeaders].sort(([a], [b]) => a.localeCompare(b)))
    registry.registerComponent('headers', name, header as never);

  // Responses refer to the error schemas by reference, so they are generated as definitions of their own.
  const errorSchemas = Object.values(ERROR_SCHEMAS).map((schema) => ({ type: 'schema' as const, schema }));
  const doc = new OpenApiGeneratorV31([...registry.definitions, ...errorSchemas], {
    sortComponents: 'alphabetically',
  }).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Payroll API',
      version: VERSION,
      description: DESCRIPTION,
    },
    // `x-internal: false`: both are meant for the API's users (OWASP API9, inventory); the descriptions name the
    // environment each runs.
    servers: [
      {
        url: 'https://localhost:8443',
        description: 'The local stack (`npm start`), on your own machine',
        'x-internal': false,
      },
      {
        url: 'https://{restApiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: 'A deployed stack (the `ApiUrl` output): the sandbox or production environment',
        'x-internal': false,
        variables: {
          restApiId: { default: 'abc123defg' },
          region: { default: 'us-east-1' },
          stage: { default: 'sandbox' },
        },
      },
    ],
    tags: [
      { name: 'Employees', description: 'Onboard, read, change and remove employees' },
      {
        name: 'Payroll',
        description: 'Submit runs, follow their processing, get the NACHA file, cancel in the sandbox',
      },
      { name: 'Paystubs', description: 'Paystubs of runs with an outcome, as JSON or PDF' },
      { name: 'Webhooks', description: 'Endpoints that receive signed (Standard Webhooks) deliveries' },
      { name: 'Events', description: 'The event log, with every delivery attempt' },
      { name: 'Audit log', description: 'Every authenticated request and authentication failure' },
      { name: 'Settings', description: 'Configured values, compliance caps and the NACHA originator' },
      { name: 'API keys', description: 'Keys, rotation with a grace period, revocation' },
      { name: 'Reference', description: 'This document and its rendering' },
    ],
  });
  return doc;
}

/** The committed form of the document (docs/openapi.json): two-space JSON and a final newline. */
export const serializeOpenApi = (doc: OpenApiDocument): string => `${JSON.stringify(doc, null, 2)}\n`;
