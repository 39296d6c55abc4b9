import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { typedClient, type components, type operations } from '../support/typed-client.js';

/**
 * Limits of 5 per minute per key (15 per organization), so the sixth request of a bucket is the first refused. Every call goes through the client
 * typed from the OpenAPI document; the rate-limit headers are read from its `response.headers`.
 */
let stack: RunningStack;

/** A key of its own organization (each organization has its own bucket too), made with the CLI: no bucket spent. */
async function freshKey(type: components['schemas']['ApiKey']['type'] = 'admin', orgId?: string) {
  const org = orgId ?? (await stack.createOrganization(`Limits ${Math.random()}`)).organization_id;
  const made = await stack.admin('token', 'create', '--org', org, '--type', type, '--json');
  return JSON.parse(made.stdout).token as string;
}

const employee = (n: string): operations['createEmployee']['requestBody']['content']['application/json'] => ({
  first_name: 'Rae',
  last_name: 'Limit',
  email: `rae.${n}@example.com`,
  employment_type: 'full_time',
  pay_group: 'default',
  pay_schedule: 'weekly',
  start_date: '2026-01-05',
});

beforeAll(async () => {
  stack = await startLocalStack({
    env: {
      PAYROLL_RATE_LIMIT_READ: '5',
      PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE: '5',
      PAYROLL_RATE_LIMIT_PAYROLL_WRITE: '5',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
});

describe('rate limits per token', () => {
  it('counts down, refuses the sixth read with 429 and Retry-After, and still lets writes through', async () => {
    const api = typedClient(stack, await freshKey());
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { response } = await api.GET('/v1/employees');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('5');
      // CONTRACT §3: seconds until the bucket is full again, an integer.
      expect(response.headers.get('x-ratelimit-reset')).toMatch(/^[1-9]\d*$/);
      remaining.push(response.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const refused = await api.GET('/v1/employees');
    expect(refused.response.status).toBe(429);
    const refusal = refused.error!;
    expect(refusal.error).toMatchObject({ code: 'rate_limited', message: 'Too Many Requests' });
    const retryAfter = Number(refused.response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(12);
    // Only a 429 carries retry_after: its status narrows the error union.
    expect(refusal.status === 429 && refusal.error.retry_after).toBe(retryAfter);
    expect(refused.response.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.response.headers.get('x-request-id')).toBe(refusal.request_id);

    const write = await api.POST('/v1/employees', { body: employee('writer') });
    expect(write.response.status).toBe(201);
    expect(write.response.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('never lets 20 concurrent clients exceed the limit in total', async () => {
    const api = typedClient(stack, await freshKey());
    const results = await Promise.all(Array.from({ length: 20 }, () => api.GET('/v1/employees')));
    const ok = results.filter((r) => r.response.status === 200).length;
    expect(ok).toBeLessThanOrEqual(5);
    expect(ok).toBeGreaterThanOrEqual(4);
    expect(results.filter((r) => r.response.status === 429)).toHaveLength(20 - ok);
  });

  it('does no work for a refused request', async () => {
    const org = await stack.createOrganization('Quota Co');
    const api = typedClient(stack, org.token);
    const made = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.POST('/v1/employees', { body: employee(`quota${i}`) })),
    );
    const created = made.filter((r) => r.response.status === 201).length;
    expect(made.filter((r) => r.response.status === 429)).toHaveLength(8 - created);
    expect(created).toBeLessThanOrEqual(5);
    // A reader key from the CLI: the organization's write bucket is spent (key creation counts as a write).
    const reader = JSON.parse(
      (await stack.admin('token', 'create', '--org', org.organization_id, '--type', 'read-only', '--json')).stdout,
    ) as { token: string };
    const listed = await typedClient(stack, reader.token).GET('/v1/employees', { params: { query: { limit: 100 } } });
    expect(listed.data!.data.employees).toHaveLength(created);
  });

  it('gives POST /payroll* its own payroll-write bucket, counted before validation', async () => {
    // A new organization's admin token (from the CLI): the shared admin's employee-write bucket stays unspent.
    const { token } = await stack.createOrganization('Payroll Bucket Co');
    const api = typedClient(stack, token);
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      // An empty body is refused by validation (400) but still spends the payroll-write bucket.
      const res = await stack.request('POST', '/v1/payroll?dry_run=true', { token, body: {} });
      expect(res.status).toBe(400);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      remaining.push(res.headers['x-ratelimit-remaining']!);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const refused = await stack.request('POST', '/v1/payroll', { token, body: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limited', message: 'Too Many Requests' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.body.error.retry_after).toBe(Number(refused.headers['retry-after']));
    // The read and employee-write buckets of the same key are untouched.
    const read = await api.GET('/v1/employees');
    expect(read.response.status).toBe(200);
    expect(read.response.headers.get('x-ratelimit-remaining')).toBe('4');
    const write = await api.POST('/v1/employees', { body: employee('payroll-bucket') });
    expect(write.response.status).toBe(201);
    expect(write.response.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('keeps one bucket per key: another key is not affected', async () => {
    const { organization_id } = await stack.createOrganization('Two Keys Co');
    const a = typedClient(stack, await freshKey('read-only', organization_id));
    const b = typedClient(stack, await freshKey('read-only', organization_id));
    for (let i = 0; i < 5; i++) await a.GET('/v1/employees');
    expect((await a.GET('/v1/employees')).response.status).toBe(429);
    expect((await b.GET('/v1/employees')).response.status).toBe(200);
  });

  it("caps an organization at 3 times a key's limit, however many keys it makes", async () => {
    const { organization_id } = await stack.createOrganization('Many Keys Co');
    const clients = await Promise.all(
      Array.from({ length: 4 }, async () => typedClient(stack, await freshKey('read-only', organization_id))),
    );
    const statuses: number[] = [];
    for (const api of clients.slice(0, 3)) {
      for (let i = 0; i < 5; i++) statuses.push((await api.GET('/v1/employees')).response.status);
    }
    expect(statuses).toEqual(Array(15).fill(200));
    // The fourth key has its own 5 left, but the organization's 15 are spent: the headers show the tighter bucket.
    const fourth = await clients[3]!.GET('/v1/employees');
    expect(fourth.response.status).toBe(429);
    expect(fourth.error!.error.code).toBe('rate_limited');
    expect(fourth.response.headers.get('x-ratelimit-limit')).toBe('15');
    expect(fourth.response.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(fourth.response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another organization is not affected.
    expect((await typedClient(stack, await freshKey('read-only')).GET('/v1/employees')).response.status).toBe(200);
  });

  it('spends nothing of the organization when a key is refused by its own bucket', async () => {
    const { organization_id } = await stack.createOrganization('Noisy Key Co');
    const noisy = typedClient(stack, await freshKey('read-only', organization_id));
    const quiet = typedClient(stack, await freshKey('read-only', organization_id));
    const burst = await Promise.all(Array.from({ length: 40 }, () => noisy.GET('/v1/employees')));
    expect(burst.filter((r) => r.response.status === 200).length).toBeLessThanOrEqual(5);
    // 40 tries by one key used at most 5 of the organization's 15: another key still gets its whole limit.
    for (let i = 0; i < 5; i++) expect((await quiet.GET('/v1/employees')).response.status).toBe(200);
    const sixth = await quiet.GET('/v1/employees');
    expect(sixth.response.status).toBe(429);
    expect(sixth.response.headers.get('x-ratelimit-limit')).toBe('5');
  });
});
