import { randomBytes } from 'node:crypto';
import { GetCommand, DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateToken, hashToken } from '../../shared/adapters/tokens.js';
import { resetConfigForTests } from '../../shared/config/env.js';
import { SCOPES_BY_TYPE, type TokenType } from '../../shared/domain/scopes.js';
import { defaultSettings } from '../../shared/domain/settings.js';
import { apiEvent, lambdaContext, parse } from '../support/api-event.js';

/**
 * The middy stack and the handlers, with DynamoDB replaced by aws-sdk-client-mock: authentication outcomes,
 * validation details, and how storage faults (conditional failures, throttling) reach the client.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const ORG = 'org_01jaaaaaaaaaaaaaaaaaaaaaaa';
const tokens: Record<TokenType | 'expired', string> = {
  'read-only': generateToken('sandbox'),
  'payroll-submitter': generateToken('sandbox'),
  admin: generateToken('sandbox'),
  expired: generateToken('sandbox'),
};

function tokenItem(type: TokenType, expiresAt: string | null = null) {
  return {
    api_key_id: `key_${type}`,
    organization_id: ORG,
    environment: 'sandbox',
    type,
    scopes: [...SCOPES_BY_TYPE[type]],
    expires_at: expiresAt,
  };
}

const handlers = {
  create: () => import('../../functions/api/employees.js').then((m) => m.handler),
  get: () => import('../../functions/api/employees.js').then((m) => m.handler),
  // The docs function also answers whatever no route claims.
  fallback: () => import('../../functions/api/docs.js').then((m) => m.handler),
  rotateKey: () => import('../../functions/api/admin.js').then((m) => m.handler),
  payroll: () => import('../../functions/api/payroll.js').then((m) => m.handler),
};

async function call(which: keyof typeof handlers, event: ReturnType<typeof apiEvent>) {
  const handler = await handlers[which]();
  return parse(await handler(event, lambdaContext));
}

const auth = (t: string) => ({ Authorization: `Bearer ${t}` });
const validEmployee = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
  employment_type: 'full_time',
  pay_group: 'default',
  pay_schedule: 'biweekly',
  start_date: '2026-01-05',
  bank_account: { account_number: '123456789', routing_number: '021000021', account_type: 'checking' },
};

beforeAll(() => {
  process.env.TABLE_NAME = 'unit-table';
  process.env.PAYROLL_SIGNING_SECRET = randomBytes(32).toString('base64url');
  process.env.PAYROLL_LOCAL_MASTER_KEY = randomBytes(32).toString('base64');
  // Rate limits are exercised against the real engine (e2e); here they would meet the mocked table.
  process.env.PAYROLL_RATE_LIMIT_READ = '0';
  process.env.PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE = '0';
  process.env.PAYROLL_RATE_LIMIT_PAYROLL_WRITE = '0';
  // The payroll function builds its bucket and queue clients at load (none is called by these tests).
  process.env.DISBURSEMENT_BUCKET = 'unit-bucket';
  process.env.PAYROLL_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/payroll';
  process.env.WEBHOOK_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/webhooks';
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  resetConfigForTests();
});

beforeEach(() => {
  ddb.reset();
  ddb.on(GetCommand).resolves({});
  for (const type of ['read-only', 'payroll-submitter', 'admin'] as const) {
    ddb
      .on(GetCommand, { Key: { PK: `TOKEN#${hashToken(tokens[type])}`, SK: 'TOKEN' } })
      .resolves({ Item: tokenItem(type) });
  }
  ddb
    .on(GetCommand, { Key: { PK: `TOKEN#${hashToken(tokens.expired)}`, SK: 'TOKEN' } })
    .resolves({ Item: tokenItem('admin', new Date(Date.now() - 1000).toISOString()) });
  ddb
    .on(GetCommand, { Key: { PK: `ORG#${ORG}`, SK: 'SETTINGS' } })
    .resolves({ Item: defaultSettings({ id: ORG, name: 'Acme' }, 'sandbox', new Date()) });
  ddb.on(UpdateCommand).resolves({});
});

afterAll(() => ddb.restore());

const post = (body: unknown, headers: Record<string, string> = auth(tokens.admin)) =>
  apiEvent({ method: 'POST', path: '/v1/employees', headers, body });

describe('authentication', () => {
  it('answers 401 with WWW-Authenticate and the envelope when the header is missing', async () => {
    const res = await call('create', post(validEmployee, {}));
    expect(res.statusCode).toBe(401);
    expect(res.headers['WWW-Authenticate']).toMatch(/^Bearer/);
    expect(res.body).toMatchObject({
      status: 401,
      error: { code: 'unauthorized', message: 'Unauthorized', details: [] },
    });
    expect(res.body.request_id).toBe(res.headers['X-Request-Id']);
  });

  it.each([
    ['a malformed header', 'Token abc'],
    ['a malformed token', 'Bearer pk_sandbox_short'],
    ['an unknown token', `Bearer ${generateToken('sandbox')}`],
    ['a token of another environment', `Bearer ${generateToken('production')}`],
    ['an expired token', `Bearer ${tokens.expired}`],
  ])('answers 401 invalid_token for %s', async (_, header) => {
    const res = await call('create', post(validEmployee, { Authorization: header }));
    expect(res.statusCode).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
    expect(res.headers['WWW-Authenticate']).toContain('error="invalid_token"');
  });

  it.each(['read-only', 'payroll-submitter'] as const)(
    'answers 403 insufficient_scope to a %s token on POST /employees',
    async (type) => {
      const res = await call('create', post(validEmployee, auth(tokens[type])));
      expect(res.statusCode).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'insufficient_scope', message: 'Forbidden: Insufficient scope' });
    },
  );

  it('runs the route API Gateway matched (its resource template), whatever prefix a custom domain puts on the path', async () => {
    const res = await call(
      'get',
      apiEvent({
        method: 'GET',
        path: '/payroll-api/v1/employees/x',
        resource: '/v1/employees/{id}',
        headers: { ...auth(tokens.admin), 'X-Forwarded-Proto': 'http' },
        params: { id: 'x' },
      }),
    );
    // The route's own middleware answered (HTTPS only), not the 404 of an unmatched path.
    expect(res.statusCode).toBe(403);
    expect(res.body.error.code).toBe('https_required');
  });

  it('answers an event that names no route (invoked by hand) with 404 in the envelope, never a raw error', async () => {
    const handler = await handlers.get();
    const res = parse(await handler({} as ReturnType<typeof apiEvent>, lambdaContext));
    expect(res.statusCode).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
  ])(
    'refuses an Idempotency-Key that is %s with one invalid_format problem, before the body is read',
    async (_, key) => {
      const res = await call(
        'payroll',
        apiEvent({
          method: 'POST',
          path: '/v1/payroll',
          headers: { ...auth(tokens.admin), 'Idempotency-Key': key },
          body: {},
        }),
      );
      expect(res.statusCode).toBe(400);
      expect(res.body.error.details).toEqual([
        { field: 'Idempotency-Key', code: 'invalid_format', message: 'An idempotency key is 1 to 255 characters' },
      ]);
    },
  );

  it('refuses a request that reached it over plain HTTP', async () => {
    const res = await call(
      'get',
      apiEvent({
        method: 'GET',
        path: '/v1/employees/x',
        headers: { ...auth(tokens.admin), 'X-Forwarded-Proto': 'http' },
        params: { id: 'x' },
      }),
    );
    expect(res.statusCode).toBe(403);
    expect(res.body.error.code).toBe('https_required');
  });
});

describe('POST /v1/employees validation (spec 7.1)', () => {
  const invalid = async (body: unknown) => {
    const res = await call('create', post(body));
    expect(res.statusCode).toBe(400);
    expect(res.body.error.code).toBe('invalid_request_body');
    expect(res.body.error.message).toBe('Invalid request body');
    return res.body.error.details as { field?: string; code: string }[];
  };

  it('lists every missing field at once', async () => {
    const details = await invalid({});
    expect(details.map((d) => d.field).sort()).toEqual([
      'email',
      'employment_type',
      'first_name',
      'last_name',
      'pay_group',
      'pay_schedule',
      'start_date',
    ]);
    expect(new Set(details.map((d) => d.code))).toEqual(new Set(['required']));
  });

  it.each([
    [{ first_name: '' }, 'first_name', 'required'],
    [{ first_name: 'x'.repeat(101) }, 'first_name', 'too_long'],
    [{ email: 'not-an-email' }, 'email', 'invalid_format'],
    [{ start_date: '2026-02-30' }, 'start_date', 'invalid_date'],
    [{ start_date: '05/01/2026' }, 'start_date', 'invalid_date'],
    [{ employment_type: 'Full_Time' }, 'employment_type', 'invalid_value'],
    [{ pay_group: 'executives' }, 'pay_group', 'invalid_value'],
    [{ pay_schedule: 'daily' }, 'pay_schedule', 'invalid_value'],
    [
      { bank_account: { ...validEmployee.bank_account, routing_number: '021000022' } },
      'bank_account.routing_number',
      'invalid_check_digit',
    ],
    [
      { bank_account: { ...validEmployee.bank_account, routing_number: '12345' } },
      'bank_account.routing_number',
      'invalid_format',
    ],
    [
      { bank_account: { ...validEmployee.bank_account, account_number: '123' } },
      'bank_account.account_number',
      'invalid_format',
    ],
    [
      { bank_account: { ...validEmployee.bank_account, account_type: 'money_market' } },
      'bank_account.account_type',
      'invalid_value',
    ],
    [{ bank_account: { account_type: 'checking' } }, 'bank_account.account_number', 'required'],
    [{ nickname: 'Ada' }, 'nickname', 'unknown_field'],
    [{ bank_account: { ...validEmployee.bank_account, iban: 'x' } }, 'bank_account.iban', 'unknown_field'],
    [{ first_name: 42 }, 'first_name', 'invalid_type'],
  ])('rejects %j naming %s (%s)', async (patch, field, code) => {
    const details = await invalid({ ...validEmployee, ...patch });
    expect(details).toContainEqual(expect.objectContaining({ field, code }));
  });

  it('reports schema and configured-value problems together', async () => {
    const details = await invalid({ ...validEmployee, email: 'nope', pay_group: 'Default' });
    expect(details.map((d) => d.field).sort()).toEqual(['email', 'pay_group']);
  });

  it.each([
    ['not json', '{"first_name":'],
    ['an array', '[]'],
    ['a string', '"x"'],
    ['null', 'null'],
  ])('rejects a body that is %s', async (_, raw) => {
    const res = await call('create', post(raw));
    expect(res.statusCode).toBe(400);
    expect(res.body.error.code).toBe('invalid_request_body');
  });

  it('rejects a missing body', async () => {
    const res = await call('create', post(undefined));
    expect(res.statusCode).toBe(400);
  });
});

describe('an optional body (POST /v1/api-keys/{id}/rotate)', () => {
  const rotate = (body: unknown) =>
    call(
      'rotateKey',
      apiEvent({
        method: 'POST',
        path: '/v1/api-keys/key_x/rotate',
        resource: '/v1/api-keys/{id}/rotate',
        headers: auth(tokens.admin),
        params: { id: 'key_x' },
        body,
      }),
    );

  // The key does not exist: a request that gets past validation reaches the use case and answers 404.
  it.each([
    ['no body', undefined],
    ['an empty body', ''],
    ['an empty object', {}],
    ['a valid body', { grace_period_seconds: 60 }],
  ])('accepts %s', async (_, body) => {
    const res = await rotate(body);
    expect(res.statusCode).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it.each([
    [{ grace_period_seconds: -1 }, 'grace_period_seconds', 'out_of_range'],
    [{ grace_period_seconds: 'soon' }, 'grace_period_seconds', 'invalid_type'],
    [{ grace: 60 }, 'grace', 'unknown_field'],
  ])('validates a body that is there as a required one: %j names %s (%s)', async (body, field, code) => {
    const res = await rotate(body);
    expect(res.statusCode).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request_body', message: 'Invalid request body' });
    expect(res.body.error.details).toEqual([expect.objectContaining({ field, code })]);
  });

  it.each([
    ['not json', '{"grace_period_seconds":'],
    ['an array', '[]'],
    ['null', 'null'],
  ])('rejects a body that is %s', async (_, raw) => {
    const res = await rotate(raw);
    expect(res.statusCode).toBe(400);
    expect(res.body.error.code).toBe('invalid_request_body');
  });
});

describe('storage outcomes', () => {
  it('answers 409 employee_already_exists when the email item condition fails', async () => {
    ddb.on(TransactWriteCommand).rejects(
      Object.assign(new Error('Transaction cancelled'), {
        name: 'TransactionCanceledException',
        CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }],
      }),
    );
    const res = await call('create', post(validEmployee));
    expect(res.statusCode).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'employee_already_exists', message: 'Employee already exists' });
  });

  it('stores an encrypted account number and answers only its last four digits', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const res = await call('create', post(validEmployee));
    expect(res.statusCode).toBe(201);
    expect(res.headers.Location).toBe(`/v1/employees/${res.body.data.employee_id}`);
    expect(res.body.data.bank_account).toEqual({
      account_type: 'checking',
      routing_number: '021000021',
      account_number_last4: '6789',
      status: 'active',
      status_reason: null,
      corrected_at: null,
    });
    expect(JSON.stringify(res.body)).not.toContain('123456789"');
    const written = JSON.stringify(ddb.commandCalls(TransactWriteCommand)[0]!.args[0].input);
    expect(written).not.toContain('"123456789"');
    expect(written).toContain('account_number_ciphertext');
  });

  it('answers a storage fault with 500 internal_error and nothing internal', async () => {
    ddb.on(TransactWriteCommand).rejects(
      Object.assign(new Error('Rate of requests exceeds the allowed throughput at arn:aws:dynamodb:secret'), {
        name: 'ProvisionedThroughputExceededException',
      }),
    );
    const res = await call('create', post(validEmployee));
    expect(res.statusCode).toBe(500);
    expect(res.body.error).toEqual({ code: 'internal_error', message: 'Internal server error', details: [] });
    expect(JSON.stringify(res.body)).not.toMatch(/arn:aws|Throughput|stack/i);
    expect(res.body.request_id).toBe(res.headers['X-Request-Id']);
  });

  it('answers 404 for an employee of another organization', async () => {
    const res = await call(
      'get',
      apiEvent({ method: 'GET', path: '/v1/employees/emp_x', headers: auth(tokens.admin), params: { id: 'emp_x' } }),
    );
    expect(res.statusCode).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found', message: 'Not found' });
  });
});

describe('unknown routes', () => {
  it('answers 404 not_found for an unknown path', async () => {
    const res = await call('fallback', apiEvent({ method: 'GET', path: '/v1/nothing-here' }));
    expect(res.statusCode).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const res = await call('fallback', apiEvent({ method: 'PUT', path: '/v1/employees/emp_1' }));
    expect(res.statusCode).toBe(405);
    expect(res.body.error.code).toBe('method_not_allowed');
    expect(res.headers.Allow).toBe('GET, PATCH, DELETE');
  });

  it('takes the literal parts of a path as they are: a dot matches only a dot', async () => {
    const res = await call('fallback', apiEvent({ method: 'GET', path: '/v1/openapiXjson' }));
    expect(res.statusCode).toBe(404);
    expect((await call('fallback', apiEvent({ method: 'POST', path: '/v1/openapi.json' }))).statusCode).toBe(405);
  });

  it('knows every declared endpoint, and only those, from the OpenAPI document it serves', async () => {
    const { documentedEndpoints } = await import('../../functions/api/docs.js');
    const { ROUTES } = await import('../../shared/api/routes.js');
    const key = (e: { method: string; path: string }) => `${e.method} ${e.path}`;
    expect(documentedEndpoints().map(key).sort()).toEqual(ROUTES.map(key).sort());
  });
});

describe('CORS for the dashboard on another origin', () => {
  const withOrigin = async <T>(origin: string | undefined, body: () => Promise<T>): Promise<T> => {
    const saved = process.env.PAYROLL_CORS_ALLOW_ORIGIN;
    if (origin === undefined) delete process.env.PAYROLL_CORS_ALLOW_ORIGIN;
    else process.env.PAYROLL_CORS_ALLOW_ORIGIN = origin;
    resetConfigForTests();
    try {
      return await body();
    } finally {
      if (saved === undefined) delete process.env.PAYROLL_CORS_ALLOW_ORIGIN;
      else process.env.PAYROLL_CORS_ALLOW_ORIGIN = saved;
      resetConfigForTests();
    }
  };

  it('stamps the configured origin and the readable headers on successes, errors and the fallback', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    await withOrigin('https://dashboard.example.com', async () => {
      const ok = await call('create', post(validEmployee));
      const refused = await call('create', post(validEmployee, {}));
      const unknown = await call('fallback', apiEvent({ method: 'GET', path: '/v1/nothing' }));
      expect([ok.statusCode, refused.statusCode, unknown.statusCode]).toEqual([201, 401, 404]);
      for (const res of [ok, refused, unknown]) {
        expect(res.headers['Access-Control-Allow-Origin']).toBe('https://dashboard.example.com');
        expect(res.headers['Access-Control-Expose-Headers']).toContain('X-Request-Id');
        expect(res.headers['Access-Control-Allow-Credentials']).toBeUndefined();
      }
    });
  });

  it('answers a preflight on a known path with its methods and the headers the dashboard sends', async () => {
    await withOrigin('*', async () => {
      const handler = await handlers.fallback();
      const res = (await handler(
        apiEvent({
          method: 'OPTIONS',
          path: '/v1/api-keys/key_1',
          headers: { Origin: 'https://d1.cloudfront.net', 'Access-Control-Request-Method': 'DELETE' },
        }),
        lambdaContext,
      ))!;
      expect(res.statusCode).toBe(204);
      expect(res.headers).toMatchObject({
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Methods': 'DELETE',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Idempotency-Key',
        'Access-Control-Max-Age': '7200',
      });
      expect(res.headers!['Access-Control-Allow-Credentials']).toBeUndefined();
      const payroll = (await handler(apiEvent({ method: 'OPTIONS', path: '/v1/payroll/pay_1' }), lambdaContext))!;
      expect(String(payroll.headers!['Access-Control-Allow-Methods']).split(', ').sort()).toEqual([
        'DELETE',
        'GET',
        'PATCH',
        'PUT',
      ]);
      // An unknown path is still 404.
      expect((await call('fallback', apiEvent({ method: 'OPTIONS', path: '/v1/nothing' }))).statusCode).toBe(404);
    });
  });

  it('adds no CORS header and answers no preflight when no origin is configured (the local stack serves the dashboard itself)', async () => {
    await withOrigin(undefined, async () => {
      const res = await call('fallback', apiEvent({ method: 'GET', path: '/v1/nothing' }));
      expect(res.headers['Access-Control-Allow-Origin']).toBeUndefined();
      expect((await call('fallback', apiEvent({ method: 'OPTIONS', path: '/v1/employees' }))).statusCode).toBe(405);
    });
  });
});
