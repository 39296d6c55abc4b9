import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { typedClient } from '../support/typed-client.js';

/**
 * Written against the client generated from the OpenAPI document (test/support/typed-client.ts): a renamed
 * field, path or parameter in the document fails to compile here.
 */
let stack: RunningStack;
let admin: ReturnType<typeof typedClient>;

async function newKey(name: string) {
  const { data } = await admin.POST('/v1/api-keys', { body: { name, type: 'read-only' } });
  return data!.data;
}

/** A read with `token`: its status. */
const readWith = async (token: string) => (await typedClient(stack, token).GET('/v1/employees')).response.status;

/**
 * Polls a condition with a bound: expiry is a matter of time, so the test waits for it rather than sleeping.
 * True once the condition holds; past the bound it fails, naming what never happened.
 */
function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<true> {
  return vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`${what}: not within ${timeoutMs} ms`);
      return true as const;
    },
    { timeout: timeoutMs, interval: 100 },
  );
}

beforeAll(async () => {
  stack = await startLocalStack();
  admin = typedClient(stack, (await stack.createOrganization('Lifecycle Co')).token);
});

afterAll(async () => {
  await stack?.stop();
});

describe('API key lifecycle', () => {
  it('rotates: the new token works at once, the old one through the grace period and not after', async () => {
    const key = await newKey('rotating');
    const rotated = await admin.POST('/v1/api-keys/{id}/rotate', {
      params: { path: { id: key.api_key_id } },
      body: { grace_period_seconds: 2 },
    });
    expect(rotated.response.status).toBe(200);
    const fresh = rotated.data!.data.token;
    expect(fresh).not.toBe(key.token);
    expect(rotated.data!.data).toMatchObject({
      api_key_id: key.api_key_id,
      type: 'read-only',
      token_hint: `pk_sandbox_…${fresh.slice(-4)}`,
    });
    expect(await readWith(fresh)).toBe(200);
    expect(await readWith(key.token)).toBe(200);
    const refusedAfterGrace = await eventually(
      'the old token refused after its grace period',
      async () => (await readWith(key.token)) === 401,
    );
    expect(refusedAfterGrace).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(rotated.data!.data.previous_token_expires_at!));
    expect(await readWith(fresh)).toBe(200);
  });

  it('keeps the old token for 24 hours by default, and a revocation ends both at once', async () => {
    const key = await newKey('default grace');
    const path = { params: { path: { id: key.api_key_id } } };
    const rotated = (await admin.POST('/v1/api-keys/{id}/rotate', path)).data!.data;
    const grace = Date.parse(rotated.previous_token_expires_at!) - Date.now();
    expect(grace).toBeGreaterThan(23.9 * 3600_000);
    expect(grace).toBeLessThanOrEqual(24 * 3600_000);
    const revoked = await admin.DELETE('/v1/api-keys/{id}', path);
    expect(revoked.response.status).toBe(200);
    expect(revoked.data!.data.revoked_at).not.toBeNull();
    expect(await readWith(key.token)).toBe(401);
    expect(await readWith(rotated.token)).toBe(401);
    const again = await admin.POST('/v1/api-keys/{id}/rotate', path);
    expect(again.response.status).toBe(404);
    expect(again.error?.error.code).toBe('not_found');
    const bad = await admin.POST('/v1/api-keys/{id}/rotate', { ...path, body: { grace_period_seconds: -1 } });
    expect(bad.response.status).toBe(400);
    expect(bad.error?.error.details).toEqual([
      expect.objectContaining({ field: 'grace_period_seconds', code: 'out_of_range' }),
    ]);
  });

  it('leaves no working token when rotations and revocations of the same keys race over HTTPS, and never answers 5xx', async () => {
    const org = await stack.createOrganization('Race Co');
    const api = typedClient(stack, org.token);
    const keys = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const made = await api.POST('/v1/api-keys', { body: { name: `race ${i}`, type: 'read-only' } });
        return made.data!.data;
      }),
    );
    // Each key: a rotation and a revocation sent together, some keys twice over.
    const tokens = new Set(keys.map((k) => k.token));
    const statuses: number[] = [];
    await Promise.all(
      keys.flatMap((k, i) => {
        const path = { params: { path: { id: k.api_key_id } } };
        const calls = [
          api.POST('/v1/api-keys/{id}/rotate', path).then((r) => {
            statuses.push(r.response.status);
            if (r.data) tokens.add(r.data.data.token);
          }),
          api.DELETE('/v1/api-keys/{id}', path).then((r) => {
            statuses.push(r.response.status);
          }),
        ];
        if (i % 3 === 0)
          calls.push(
            api.POST('/v1/api-keys/{id}/rotate', path).then((r) => {
              statuses.push(r.response.status);
              if (r.data) tokens.add(r.data.data.token);
            }),
          );
        return calls;
      }),
    );
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(
      statuses.every((s) => [200, 404, 409].includes(s)),
      JSON.stringify(statuses),
    ).toBe(true);
    // Every key ends revoked, and every token any call handed out is refused within the cache bound (5 s).
    const listed = (await api.GET('/v1/api-keys', { params: { query: { limit: 100 } } })).data!.data.api_keys;
    for (const k of keys) expect(listed.find((l) => l.api_key_id === k.api_key_id)!.revoked_at).not.toBeNull();
    await eventually(
      `all ${tokens.size} tokens refused`,
      async () => (await Promise.all([...tokens].map(readWith))).every((status) => status === 401),
      7_000,
    );
  });

  it('records when a key was last used', async () => {
    const key = await newKey('used');
    const list = async () =>
      (await admin.GET('/v1/api-keys', { params: { query: { limit: 100 } } })).data!.data.api_keys.find(
        (k) => k.api_key_id === key.api_key_id,
      )!;
    expect((await list()).last_used_at).toBeNull();
    const t = Date.now();
    await readWith(key.token);
    expect(Date.parse((await list()).last_used_at!)).toBeGreaterThanOrEqual(t - 1000);
  });

  it('warns on every response made with a key older than 60 days', async () => {
    const key = await newKey('old');
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: stack.state.dynamodb_endpoint,
        region: stack.state.region,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const hash = createHash('sha256').update(key.token).digest('hex');
    // Age the token as 70 days of calendar would (before its first use, so no container has it cached).
    await doc.send(
      new UpdateCommand({
        TableName: stack.state.table_name,
        Key: { PK: `TOKEN#${hash}`, SK: 'TOKEN' },
        UpdateExpression: 'SET issued_at = :old',
        ExpressionAttributeValues: { ':old': new Date(Date.now() - 70 * 86_400_000).toISOString() },
      }),
    );
    const res = await typedClient(stack, key.token).GET('/v1/employees');
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('warning')).toMatch(/^299 payroll-api "API key is 70 days old: rotate it/);
    expect((await admin.GET('/v1/employees')).response.headers.get('warning')).toBeNull();
  });

  it('holds at most 50 active keys per organization, also when 60 creations race; a revoked or expired key frees its place', async () => {
    const org = await stack.createOrganization('Key Cap Co');
    const api = typedClient(stack, org.token);
    const race = await Promise.all(
      Array.from({ length: 60 }, (_, i) => api.POST('/v1/api-keys', { body: { name: `k${i}`, type: 'read-only' } })),
    );
    const statuses = race.map((r) => r.response.status);
    // The organization's first admin key is one of the 50.
    expect(statuses.filter((s) => s === 201)).toHaveLength(49);
    expect(statuses.filter((s) => s === 422)).toHaveLength(11);
    expect(race.find((r) => r.response.status === 422)!.error!.error).toMatchObject({
      code: 'api_key_limit_reached',
      details: [expect.objectContaining({ code: 'api_key_limit_reached' })],
    });
    const made = race.filter((r) => r.response.status === 201).map((r) => r.data!.data);

    // A revoked key frees its place, once.
    expect(
      (await api.DELETE('/v1/api-keys/{id}', { params: { path: { id: made[0]!.api_key_id } } })).response.status,
    ).toBe(200);
    expect(
      (await api.POST('/v1/api-keys', { body: { name: 'after revoke', type: 'read-only' } })).response.status,
    ).toBe(201);
    expect((await api.POST('/v1/api-keys', { body: { name: 'over', type: 'read-only' } })).response.status).toBe(422);

    // So does a key past its expiry, though nothing released it: the cap is checked against a recount.
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: stack.state.dynamodb_endpoint,
        region: stack.state.region,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    await doc.send(
      new UpdateCommand({
        TableName: stack.state.table_name,
        Key: { PK: `ORG#${org.organization_id}`, SK: `APIKEY#${made[1]!.api_key_id}` },
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 60_000).toISOString() },
      }),
    );
    expect(
      (await api.POST('/v1/api-keys', { body: { name: 'after expiry', type: 'read-only' } })).response.status,
    ).toBe(201);
    expect((await api.POST('/v1/api-keys', { body: { name: 'over again', type: 'read-only' } })).response.status).toBe(
      422,
    );
    // Revoking the expired key gives back nothing: it no longer held a place (the counter would fall below the truth).
    expect(
      (await api.DELETE('/v1/api-keys/{id}', { params: { path: { id: made[1]!.api_key_id } } })).response.status,
    ).toBe(200);
    expect((await api.POST('/v1/api-keys', { body: { name: 'still over', type: 'read-only' } })).response.status).toBe(
      422,
    );
  });
});
