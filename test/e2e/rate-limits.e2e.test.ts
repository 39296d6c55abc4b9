import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';

/** Limits of 5 per minute, so the sixth request of a bucket is the first refused. */
let stack: RunningStack;
let admin: string;

async function freshKey(type = 'admin') {
  const res = await stack.request('POST', '/v1/api-keys', { token: admin, body: { name: `k${Math.random()}`, type } });
  return res.body.data.token as string;
}

const employee = (n: string) => ({
  first_name: 'Rae', last_name: 'Limit', email: `rae.${n}@example.com`, employment_type: 'full_time', pay_group: 'default',
  pay_schedule: 'weekly', start_date: '2026-01-05',
});

beforeAll(async () => {
  stack = await startLocalStack({ env: { PAYROLL_RATE_LIMIT_READ: '5', PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE: '5', PAYROLL_RATE_LIMIT_PAYROLL_WRITE: '5' } });
  admin = (await stack.createOrganization('Limits Co')).token;
});

afterAll(async () => {
  await stack?.stop();
});

describe('rate limits per token', () => {
  it('counts down, refuses the sixth read with 429 and Retry-After, and still lets writes through', async () => {
    const token = await freshKey();
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await stack.request('GET', '/v1/employees', { token });
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
      remaining.push(res.headers['x-ratelimit-remaining']!);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const refused = await stack.request('GET', '/v1/employees', { token });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limited', message: 'Too Many Requests' });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(12);
    expect(refused.body.error.retry_after).toBe(retryAfter);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-request-id']).toBe(refused.body.request_id);

    const write = await stack.request('POST', '/v1/employees', { token, body: employee('writer') });
    expect(write.status).toBe(201);
    expect(write.headers['x-ratelimit-remaining']).toBe('4');
  });

  it('never lets 20 concurrent clients exceed the limit in total', async () => {
    const token = await freshKey();
    const results = await Promise.all(Array.from({ length: 20 }, () => stack.request('GET', '/v1/employees', { token })));
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBeLessThanOrEqual(5);
    expect(ok).toBeGreaterThanOrEqual(4);
    expect(results.filter((r) => r.status === 429)).toHaveLength(20 - ok);
  });

  it('does no work for a refused request', async () => {
    const org = await stack.createOrganization('Quota Co');
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => stack.request('POST', '/v1/employees', { token: org.token, body: employee(`quota${i}`) })));
    const created = made.filter((r) => r.status === 201).length;
    expect(made.filter((r) => r.status === 429)).toHaveLength(8 - created);
    expect(created).toBeLessThanOrEqual(5);
    // A reader key from the CLI: the organization's write bucket is spent (key creation counts as a write).
    const reader = JSON.parse((await stack.admin('token', 'create', '--org', org.organization_id, '--type', 'read-only', '--json')).stdout);
    const listed = await stack.request('GET', '/v1/employees?limit=100', { token: reader.token });
    expect(listed.body.data.employees).toHaveLength(created);
  });

  it('keeps one bucket per key: another key is not affected', async () => {
    const a = await freshKey('read-only');
    const b = await freshKey('read-only');
    for (let i = 0; i < 5; i++) await stack.request('GET', '/v1/employees', { token: a });
    expect((await stack.request('GET', '/v1/employees', { token: a })).status).toBe(429);
    expect((await stack.request('GET', '/v1/employees', { token: b })).status).toBe(200);
  });
});
