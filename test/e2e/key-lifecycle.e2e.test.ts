import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';

let stack: RunningStack;
let admin: string;

async function newKey(name: string) {
  const res = await stack.request('POST', '/v1/api-keys', { token: admin, body: { name, type: 'read-only' } });
  return res.body.data as { api_key_id: string; token: string };
}

/** Polls a condition with a bound: expiry is a matter of time, so the test waits for it rather than sleeping. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

beforeAll(async () => {
  stack = await startLocalStack();
  admin = (await stack.createOrganization('Lifecycle Co')).token;
});

afterAll(async () => {
  await stack?.stop();
});

describe('API key lifecycle', () => {
  it('rotates: the new token works at once, the old one through the grace period and not after', async () => {
    const key = await newKey('rotating');
    const rotated = await stack.request('POST', `/v1/api-keys/${key.api_key_id}/rotate`, { token: admin, body: { grace_period_seconds: 2 } });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.token as string;
    expect(fresh).not.toBe(key.token);
    expect(rotated.body.data).toMatchObject({ api_key_id: key.api_key_id, type: 'read-only', token_hint: `pk_sandbox_…${fresh.slice(-4)}` });
    expect((await stack.request('GET', '/v1/employees', { token: fresh })).status).toBe(200);
    expect((await stack.request('GET', '/v1/employees', { token: key.token })).status).toBe(200);
    const refusedAfterGrace = await eventually(async () => (await stack.request('GET', '/v1/employees', { token: key.token })).status === 401);
    expect(refusedAfterGrace).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(rotated.body.data.previous_token_expires_at));
    expect((await stack.request('GET', '/v1/employees', { token: fresh })).status).toBe(200);
  });

  it('keeps the old token for 24 hours by default, and a revocation ends both at once', async () => {
    const key = await newKey('default grace');
    const rotated = await stack.request('POST', `/v1/api-keys/${key.api_key_id}/rotate`, { token: admin });
    const grace = Date.parse(rotated.body.data.previous_token_expires_at) - Date.now();
    expect(grace).toBeGreaterThan(23.9 * 3600_000);
    expect(grace).toBeLessThanOrEqual(24 * 3600_000);
    expect((await stack.request('DELETE', `/v1/api-keys/${key.api_key_id}`, { token: admin })).status).toBe(200);
    expect((await stack.request('GET', '/v1/employees', { token: key.token })).status).toBe(401);
    expect((await stack.request('GET', '/v1/employees', { token: rotated.body.data.token })).status).toBe(401);
    expect((await stack.request('POST', `/v1/api-keys/${key.api_key_id}/rotate`, { token: admin })).status).toBe(404);
    const bad = await stack.request('POST', `/v1/api-keys/${key.api_key_id}/rotate`, { token: admin, body: { grace_period_seconds: -1 } });
    expect(bad.status).toBe(400);
  });

  it('records when a key was last used', async () => {
    const key = await newKey('used');
    const before = (await stack.request('GET', '/v1/api-keys?limit=100', { token: admin })).body.data.api_keys.find((k: { api_key_id: string }) => k.api_key_id === key.api_key_id);
    expect(before.last_used_at).toBeNull();
    const t = Date.now();
    await stack.request('GET', '/v1/employees', { token: key.token });
    const after = (await stack.request('GET', '/v1/api-keys?limit=100', { token: admin })).body.data.api_keys.find((k: { api_key_id: string }) => k.api_key_id === key.api_key_id);
    expect(Date.parse(after.last_used_at)).toBeGreaterThanOrEqual(t - 1000);
  });

  it('warns on every response made with a key older than 60 days', async () => {
    const key = await newKey('old');
    const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: stack.state.dynamodb_endpoint, region: stack.state.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
    const hash = createHash('sha256').update(key.token).digest('hex');
    // Age the token as 70 days of calendar would (before its first use, so no container has it cached).
    await doc.send(new UpdateCommand({ TableName: stack.state.table_name, Key: { PK: `TOKEN#${hash}`, SK: 'TOKEN' }, UpdateExpression: 'SET issued_at = :old', ExpressionAttributeValues: { ':old': new Date(Date.now() - 70 * 86_400_000).toISOString() } }));
    const res = await stack.request('GET', '/v1/employees', { token: key.token });
    expect(res.status).toBe(200);
    expect(res.headers.warning).toMatch(/^299 payroll-api "API key is 70 days old: rotate it/);
    expect((await stack.request('GET', '/v1/employees', { token: admin })).headers.warning).toBeUndefined();
  });
});
