import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Deps } from '../../shared/adapters/clock.js';
import { newId } from '../../shared/adapters/ids.js';
import { resetConfigForTests } from '../../shared/config/env.js';
import { ApiKeyRepository } from '../../shared/data/api-key-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { UnauthorizedError } from '../../shared/domain/errors.js';
import { httpErrorOf } from '../../shared/http/error-mapping.js';
import { Authenticator } from '../../shared/http/authenticator.js';
import { createApiKey, createOrganization, rotateApiKey } from '../../shared/use-cases/api-keys.js';
import { apiEvent, lambdaContext, parse } from '../support/api-event.js';
import { createTestTable, engineEnvironment, type TestTable } from '../support/engines.js';

/**
 * The 24-hour grace period of an API key rotation (docs/api.md "API keys": `POST /v1/api-keys/{id}/rotate` with no
 * body; "the old one keeps working for the grace period (default 24 h …), then stops"), driven by time rather than
 * waited for, on DynamoDB Local through the real SDK:
 *
 * - below HTTP, through the clocks the code takes: `Deps.now` of the use cases and the `now` of the Authenticator;
 * - through the deployed handlers (the same middy stack, one container), with the system clock moved: they read
 *   the time from `Date`, so `vi.setSystemTime` (faking `Date` alone, no timers) is their clock.
 */
const HOUR = 3_600_000;
const GRACE_MS = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

function pinnedDeps(clock: { now: number }): Deps {
  return { now: () => new Date(clock.now), newId };
}

/** The outcome of authenticating `token` at the authenticator's current time: the key id, or the refusal. */
async function outcome(auth: Authenticator, token: string): Promise<string | UnauthorizedError> {
  try {
    return (await auth.authenticate(`Bearer ${token}`)).apiKeyId;
  } catch (err) {
    if (err instanceof UnauthorizedError) return err;
    throw err;
  }
}

function expectRefusedAsExpired(result: string | UnauthorizedError) {
  expect(result).toBeInstanceOf(UnauthorizedError);
  const err = result as UnauthorizedError;
  // What the HTTP layer answers: 401 `unauthorized` with the bearer challenge (the error table of docs/api.md).
  const http = httpErrorOf(err);
  expect(http.status).toBe(401);
  expect(err.code).toBe('unauthorized');
  expect(err.reason).toBe('The token has expired');
  expect(http.headers['WWW-Authenticate']).toBe(
    'Bearer realm="payroll", error="invalid_token", error_description="The token has expired"',
  );
}

describe('rotation grace below HTTP, on injected clocks', () => {
  let table: TestTable;
  let repo: ApiKeyRepository;

  beforeAll(async () => {
    table = await createTestTable('rotation');
    repo = new ApiKeyRepository(table);
  });

  it('keeps the old token until exactly 24 h after the rotation and refuses it from then on; the new one works at once', async () => {
    const clock = { now: Date.parse('2026-05-04T08:00:00.000Z') };
    const deps = pinnedDeps(clock);
    const org = newId('org');
    const key = await createApiKey(repo, deps, org, 'sandbox', { name: 'rotating', type: 'read-only' });

    clock.now += 10 * 86_400_000;
    const rotatedAt = clock.now;
    // No grace given: the default.
    const rotated = await rotateApiKey(repo, deps, org, key.record.api_key_id);
    expect(rotated.token).not.toBe(key.token);
    expect(rotated.record.token_issued_at).toBe(iso(rotatedAt));
    expect(rotated.record.previous_token_expires_at).toBe(iso(rotatedAt + GRACE_MS));
    const stored = await repo.get(org, key.record.api_key_id);
    expect(stored).toMatchObject({
      token_issued_at: iso(rotatedAt),
      previous_token_expires_at: iso(rotatedAt + GRACE_MS),
      revoked_at: null,
    });

    // No cache: every call reads the token item, so only the clock decides.
    const auth = new Authenticator(repo, 'sandbox', () => clock.now);
    const id = key.record.api_key_id;
    expect(await outcome(auth, rotated.token)).toBe(id);
    expect(await outcome(auth, key.token)).toBe(id);

    clock.now = rotatedAt + 23 * HOUR;
    expect(await outcome(auth, key.token)).toBe(id);
    clock.now = rotatedAt + GRACE_MS - 1;
    expect(await outcome(auth, key.token)).toBe(id);

    clock.now = rotatedAt + GRACE_MS;
    expectRefusedAsExpired(await outcome(auth, key.token));
    expect(await outcome(auth, rotated.token)).toBe(id);

    clock.now = rotatedAt + GRACE_MS + 30 * 86_400_000;
    expectRefusedAsExpired(await outcome(auth, key.token));
    expect(await outcome(auth, rotated.token)).toBe(id);
  });

  it('refuses the old token at the end of the grace even from a container that cached it a moment before', async () => {
    const clock = { now: Date.parse('2026-06-01T12:00:00.000Z') };
    const deps = pinnedDeps(clock);
    const org = newId('org');
    const key = await createApiKey(repo, deps, org, 'sandbox', { name: 'cached', type: 'admin' });
    const rotatedAt = clock.now;
    const rotated = await rotateApiKey(repo, deps, org, key.record.api_key_id);
    const auth = new Authenticator(repo, 'sandbox', () => clock.now);
    clock.now = rotatedAt + GRACE_MS - 1_000;
    expect(await outcome(auth, key.token)).toBe(key.record.api_key_id);
    // One second later, the same container: the expiry is checked on every request.
    clock.now = rotatedAt + GRACE_MS;
    expectRefusedAsExpired(await outcome(auth, key.token));
    expect(await outcome(auth, rotated.token)).toBe(key.record.api_key_id);
  });
});

describe('rotation grace through the handlers, with the system clock moved', () => {
  type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  let handlers: { listEmployees: Handler; createApiKey: Handler; rotateApiKey: Handler };
  let adminToken: string;

  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
  const listWith = async (token: string) =>
    parse(
      await handlers.listEmployees(
        apiEvent({ method: 'GET', path: '/v1/employees', headers: auth(token) }),
        lambdaContext,
      ),
    );

  beforeAll(async () => {
    const table = await createTestTable('rotation-http');
    Object.assign(process.env, engineEnvironment(), {
      TABLE_NAME: table.tableName,
      PAYROLL_SIGNING_SECRET: randomBytes(32).toString('base64url'),
      PAYROLL_LOCAL_MASTER_KEY: randomBytes(32).toString('base64'),
      PAYROLL_ENVIRONMENT: 'sandbox',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    });
    resetConfigForTests();
    // Before the first request: the container's authenticator and rate limiter take `Date.now` when they are built.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now());
    handlers = {
      listEmployees: (await import('../../functions/api/employees.js')).handler as Handler,
      createApiKey: (await import('../../functions/api/admin.js')).handler as Handler,
      rotateApiKey: (await import('../../functions/api/admin.js')).handler as Handler,
    };
    const org = await createOrganization(new OrganizationRepository(table), pinnedDeps({ now: Date.now() }), {
      name: 'Grace Co',
      environment: 'sandbox',
    });
    adminToken = org.token;
  });

  afterAll(() => {
    vi.useRealTimers();
  });

  it('answers 200 to the old token until 24 h after the rotation, then 401 unauthorized; the new token at once', async () => {
    const made = parse(
      await handlers.createApiKey(
        apiEvent({
          method: 'POST',
          path: '/v1/api-keys',
          headers: auth(adminToken),
          body: { name: 'integration', type: 'read-only' },
        }),
        lambdaContext,
      ),
    );
    expect(made.statusCode).toBe(201);
    const oldToken: string = made.body.data.token;
    const keyId: string = made.body.data.api_key_id;
    expect((await listWith(oldToken)).statusCode).toBe(200);

    vi.setSystemTime(Date.now() + 3 * HOUR);
    const rotatedAt = Date.now();
    // An empty POST: the default grace period.
    const rotated = parse(
      await handlers.rotateApiKey(
        apiEvent({
          method: 'POST',
          path: `/v1/api-keys/${keyId}/rotate`,
          resource: '/v1/api-keys/{id}/rotate',
          params: { id: keyId },
          headers: auth(adminToken),
        }),
        lambdaContext,
      ),
    );
    expect(rotated.statusCode).toBe(200);
    expect(rotated.body.data).toMatchObject({
      api_key_id: keyId,
      token_issued_at: iso(rotatedAt),
      previous_token_expires_at: iso(rotatedAt + GRACE_MS),
      revoked_at: null,
    });
    const newToken: string = rotated.body.data.token;
    expect(newToken).not.toBe(oldToken);

    // The new token works at once, and so does the old one.
    expect((await listWith(newToken)).statusCode).toBe(200);
    expect((await listWith(oldToken)).statusCode).toBe(200);

    vi.setSystemTime(rotatedAt + GRACE_MS - 1);
    expect((await listWith(oldToken)).statusCode).toBe(200);

    vi.setSystemTime(rotatedAt + GRACE_MS);
    const refused = await listWith(oldToken);
    expect(refused.statusCode).toBe(401);
    expect(refused.body).toMatchObject({
      status: 401,
      error: { code: 'unauthorized', message: 'Unauthorized', details: [] },
    });
    expect(refused.headers['WWW-Authenticate']).toBe(
      'Bearer realm="payroll", error="invalid_token", error_description="The token has expired"',
    );
    expect((await listWith(newToken)).statusCode).toBe(200);

    vi.setSystemTime(rotatedAt + 7 * 24 * HOUR);
    expect((await listWith(oldToken)).statusCode).toBe(401);
    expect((await listWith(newToken)).statusCode).toBe(200);
  });
});
