import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { config, resetConfigForTests } from '../../shared/config/env.js';
import { startLocalStack, type HttpResponse, type RunningStack } from '../support/local-stack.js';
import { typedClient, type components, type operations } from '../support/typed-client.js';

/**
 * Contract rules asserted directly, over HTTPS against the local stack, through the client typed from the OpenAPI
 * document:
 *
 * 1. the employee-write bucket counts down by exactly one per employee write, then refuses with 429;
 * 2. authenticated 404 and 409 answers carry the rate-limit headers, with the bucket's exact figures;
 * 3. an unknown field in a payroll submission (top level or inside an entry) is 400 naming the field.
 *
 * Every bucket holds 5 per minute (one cell every 12 s), so a countdown is short and exact. `stack.request` is used
 * only for bodies the typed client cannot express: an unknown field, or an empty payroll body.
 */
const LIMIT = 5;
/** Seconds per cell at LIMIT per minute. */
const CELL_S = 60 / LIMIT;

let stack: RunningStack;

type NewEmployee = operations['createEmployee']['requestBody']['content']['application/json'];
type Submission = components['schemas']['PayrollSubmission'];

let seq = 0;
const employee = (extra: Partial<NewEmployee> = {}): NewEmployee => {
  const n = seq++;
  return {
    first_name: 'Cora',
    last_name: `Contract ${n}`,
    email: `cora.${n}.${Date.now()}@example.com`,
    employment_type: 'full_time',
    pay_group: 'default',
    pay_schedule: 'biweekly',
    start_date: '2026-01-05',
    bank_account: { account_number: String(80_000_000 + n), routing_number: '021000021', account_type: 'checking' },
    ...extra,
  };
};

/** Each call pays its own two-week period, so windows never collide between tests of the one organization. */
let period = 0;
function run(ids: string[]): Submission {
  const start = new Date(Date.UTC(2027, 0, 4 + 14 * period++));
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    pay_period_start: iso(start),
    pay_period_end: iso(new Date(start.getTime() + 13 * 86_400_000)),
    pay_date: iso(new Date(start.getTime() + 18 * 86_400_000)),
    employees: ids.map((id) => ({
      employee_id: id,
      gross_pay: '2000.00',
      hours_worked: 80,
      deductions: { taxes: 400 },
    })),
  };
}

/**
 * The admin key of a new organization, from the CLI: the key's three buckets and its organization's (CONTRACT §3,
 * three times a key's limit) are all full, so the headers count the key's own bucket exactly.
 */
async function freshKey(): Promise<string> {
  return (await stack.createOrganization(`Contract ${seq++}`)).token;
}

/** The path parameter of `/v1/…/{id}`. */
const at = (id: string) => ({ params: { path: { id } } });

/** Ids of the right shape that no organization has. */
const UNKNOWN_EMPLOYEE = 'emp_00000000000000000000000000';
const UNKNOWN_PAYROLL = 'pay_00000000000000000000000000';

type Headers = Response['headers'] | HttpResponse['headers'];
const header = (h: Headers, name: string) => (h instanceof Headers ? h.get(name) : (h[name] ?? null));

/**
 * The rate-limit headers of the `nth` request a fresh bucket counted. GCRA with a burst of LIMIT: after n requests
 * the bucket's TAT is first + n·12 s, so Remaining is exactly LIMIT − n (no cell refills in under 12 s) and Reset
 * is ⌈12·n − e⌉, e being the seconds since the bucket's first request. e is at most the time since `since` (taken on
 * this side before that first request was sent), which bounds Reset from below; it is 12·n when e is under a second.
 */
/** An answer with its status, counted as the `nth` request of its bucket. */
function expectAnsweredAndCounted(result: { response: Response }, status: number, nth: number, since: number) {
  expect(result.response.status).toBe(status);
  expectCounted(result.response.headers, nth, since);
}

/** An error answer with its status and code, counted as the `nth` request of its bucket. */
function expectRefusedAndCounted(
  result: { response: Response; error?: { error: { code: string } } },
  status: number,
  code: string,
  nth: number,
  since: number,
) {
  expectAnsweredAndCounted(result, status, nth, since);
  expect(result.error?.error.code).toBe(code);
}

function expectCounted(h: Headers, nth: number, since: number) {
  const elapsedS = (Date.now() - since) / 1000;
  expect(elapsedS).toBeLessThan(CELL_S);
  expect(header(h, 'x-ratelimit-limit')).toBe(String(LIMIT));
  expect(header(h, 'x-ratelimit-remaining')).toBe(String(LIMIT - nth));
  const reset = header(h, 'x-ratelimit-reset');
  expect(reset).toMatch(/^\d+$/);
  expect(Number(reset)).toBeLessThanOrEqual(CELL_S * nth);
  expect(Number(reset)).toBeGreaterThanOrEqual(Math.ceil(CELL_S * nth - elapsedS));
}

beforeAll(async () => {
  stack = await startLocalStack({
    env: {
      PAYROLL_RATE_LIMIT_READ: String(LIMIT),
      PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE: String(LIMIT),
      PAYROLL_RATE_LIMIT_PAYROLL_WRITE: String(LIMIT),
    },
  });
});

afterAll(async () => {
  await stack?.stop();
});

describe('rule 1: the employee-write bucket', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    resetConfigForTests();
  });

  it('is documented as the bucket of every employee write, at 100 per minute unless configured', async () => {
    const doc = (await typedClient(stack).GET('/v1/openapi.json')).data as unknown as {
      info: { description: string };
      paths: Record<string, Record<string, { 'x-rate-limit-bucket'?: string }>>;
    };
    expect(doc.paths['/v1/employees']!.post!['x-rate-limit-bucket']).toBe('employee-write');
    expect(doc.paths['/v1/employees/{id}']!.patch!['x-rate-limit-bucket']).toBe('employee-write');
    expect(doc.paths['/v1/employees/{id}']!.delete!['x-rate-limit-bucket']).toBe('employee-write');
    expect(doc.info.description).toContain(
      'employee-write (every other write: employees, settings, API keys, webhooks, redeliveries; 100/min)',
    );
    // What the service runs with when the variable is not set (this stack sets it to LIMIT).
    vi.stubEnv('PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE', undefined);
    resetConfigForTests();
    expect(config().PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE).toBe(100);
  });

  it('counts POST, PATCH and DELETE down by exactly one each, then refuses with 429 and does nothing', async () => {
    const api = typedClient(stack, await freshKey());
    const since = Date.now();

    const a = await api.POST('/v1/employees', { body: employee() });
    expectAnsweredAndCounted(a, 201, 1, since);
    const aId = a.data!.data.employee_id;

    const patched = await api.PATCH('/v1/employees/{id}', { ...at(aId), body: { last_name: 'Patched' } });
    expectAnsweredAndCounted(patched, 200, 2, since);

    const removed = await api.DELETE('/v1/employees/{id}', at(aId));
    expectAnsweredAndCounted(removed, 200, 3, since);

    const b = await api.POST('/v1/employees', { body: employee() });
    expectAnsweredAndCounted(b, 201, 4, since);
    const bId = b.data!.data.employee_id;

    const last = await api.PATCH('/v1/employees/{id}', { ...at(bId), body: { first_name: 'Last' } });
    expectAnsweredAndCounted(last, 200, 5, since);

    // The bucket is empty: each kind of employee write is refused, and none of them acts.
    const refusedCreate = await api.POST('/v1/employees', { body: employee({ email: 'refused.create@example.com' }) });
    const refusedPatch = await api.PATCH('/v1/employees/{id}', { ...at(bId), body: { first_name: 'Refused' } });
    const refusedDelete = await api.DELETE('/v1/employees/{id}', at(bId));
    const elapsedS = (Date.now() - since) / 1000;
    expect(elapsedS).toBeLessThan(CELL_S);
    for (const refused of [refusedCreate, refusedPatch, refusedDelete]) {
      expect(refused.response.status).toBe(429);
      const body = refused.error!;
      expect(body.status).toBe(429);
      expect(body.error).toMatchObject({ code: 'rate_limited', message: 'Too Many Requests' });
      // The first cell comes back 12 s after the first request: Retry-After is ⌈12 − e⌉.
      const retryAfter = Number(refused.response.headers.get('retry-after'));
      expect(refused.response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(retryAfter).toBeLessThanOrEqual(CELL_S);
      expect(retryAfter).toBeGreaterThanOrEqual(Math.max(1, Math.ceil(CELL_S - elapsedS)));
      expect(body.status === 429 && body.error.retry_after).toBe(retryAfter);
      expect(refused.response.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      expect(refused.response.headers.get('x-ratelimit-remaining')).toBe('0');
      // Full again 60 s after the first request.
      const reset = Number(refused.response.headers.get('x-ratelimit-reset'));
      expect(reset).toBeLessThanOrEqual(60);
      expect(reset).toBeGreaterThanOrEqual(Math.ceil(60 - elapsedS));
      expect(refused.response.headers.get('x-request-id')).toBe(body.request_id);
    }

    // The read bucket of the same key is untouched (its first count), and the refused writes did nothing.
    const readSince = Date.now();
    const list = await api.GET('/v1/employees', { params: { query: { limit: 100 } } });
    expectAnsweredAndCounted(list, 200, 1, readSince);
    const emails = list.data!.data.employees.map((e) => e.email);
    expect(emails).not.toContain('refused.create@example.com');
    const stillB = list.data!.data.employees.find((e) => e.employee_id === bId);
    expect(stillB).toMatchObject({ first_name: 'Last', status: 'active' });
    expect(list.data!.data.employees.find((e) => e.employee_id === aId)).toBeUndefined();
  });

  it('is shared with the other admin writes (settings, API keys), and not with payroll writes', async () => {
    const token = await freshKey();
    const api = typedClient(stack, token);
    const since = Date.now();
    const settings = await api.PATCH('/v1/settings', { body: { pay_groups: ['default'] } });
    expectAnsweredAndCounted(settings, 200, 1, since);
    const key = await api.POST('/v1/api-keys', { body: { name: 'made by the fresh key', type: 'read-only' } });
    expectAnsweredAndCounted(key, 201, 2, since);
    const created = await api.POST('/v1/employees', { body: employee() });
    expectAnsweredAndCounted(created, 201, 3, since);
    // POST /v1/payroll has its own bucket (an empty body is refused by validation, after it was counted).
    const payrollSince = Date.now();
    const payroll = await stack.request('POST', '/v1/payroll?dry_run=true', { token, body: {} });
    expect(payroll.status).toBe(400);
    expectCounted(payroll.headers, 1, payrollSince);
    const next = await api.DELETE('/v1/employees/{id}', at(created.data!.data.employee_id));
    expectAnsweredAndCounted(next, 200, 4, since);
  });
});

describe('rule 2: rate-limit headers on authenticated 404 and 409 answers', () => {
  it("carries X-RateLimit-Limit, -Remaining and -Reset with the bucket's exact count on every 404 and 409", async () => {
    const api = typedClient(stack, await freshKey());
    const since = Date.now();

    // read bucket, 1st
    const missing = await api.GET('/v1/employees/{id}', at(UNKNOWN_EMPLOYEE));
    expectRefusedAndCounted(missing, 404, 'not_found', 1, since);

    // employee-write bucket, 1st and 2nd
    const patchMissing = await api.PATCH('/v1/employees/{id}', {
      ...at(UNKNOWN_EMPLOYEE),
      body: { last_name: 'Nobody' },
    });
    expectRefusedAndCounted(patchMissing, 404, 'not_found', 1, since);
    const deleteMissing = await api.DELETE('/v1/employees/{id}', at(UNKNOWN_EMPLOYEE));
    expectRefusedAndCounted(deleteMissing, 404, 'not_found', 2, since);

    // employee-write bucket, 3rd (201) and 4th (409: the same email, in other case)
    const first = employee();
    const created = await api.POST('/v1/employees', { body: first });
    expectAnsweredAndCounted(created, 201, 3, since);
    const duplicate = await api.POST('/v1/employees', { body: { ...employee(), email: first.email.toUpperCase() } });
    expectRefusedAndCounted(duplicate, 409, 'employee_already_exists', 4, since);

    // payroll-write bucket, 1st (202) and 2nd (409 duplicate_payroll_window)
    const body = run([created.data!.data.employee_id]);
    const submitted = await api.POST('/v1/payroll', { body });
    expectAnsweredAndCounted(submitted, 202, 1, since);
    const payrollId = (submitted.data!.data as components['schemas']['SubmittedPayroll']).payroll_id;
    const window = await api.POST('/v1/payroll', { body });
    expectRefusedAndCounted(window, 409, 'duplicate_payroll_window', 2, since);

    // payroll-write bucket, 3rd (409 payroll_immutable) and 4th (404 cancelling an unknown run)
    const immutable = await api.DELETE('/v1/payroll/{id}', at(payrollId));
    expectRefusedAndCounted(immutable, 409, 'payroll_immutable', 3, since);
    const cancelMissing = await api.POST('/v1/payroll/{id}/cancel', at(UNKNOWN_PAYROLL));
    expectRefusedAndCounted(cancelMissing, 404, 'not_found', 4, since);

    // read bucket, 2nd
    const missingRun = await api.GET('/v1/payroll/{id}', at(UNKNOWN_PAYROLL));
    expectRefusedAndCounted(missingRun, 404, 'not_found', 2, since);
  });
});

describe('rule 3: unknown fields in a payroll submission', () => {
  it('answers 400 invalid_request_body naming each unknown field, top level and inside an entry, storing nothing', async () => {
    const token = await freshKey();
    const api = typedClient(stack, token);
    const created = await api.POST('/v1/employees', { body: employee() });
    expect(created.response.status).toBe(201);
    const id = created.data!.data.employee_id;
    const valid = run([id]);
    const unknown = (field: string) => ({
      field,
      code: 'invalid_request_body',
      reason: 'unknown_field',
      message: `Unknown field "${field.split(/[.\]]/).pop()}"`,
    });
    const expectRefused = (res: HttpResponse, fields: string[]) => {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        status: 400,
        error: { code: 'invalid_request_body', message: 'Invalid request body' },
      });
      const details = res.body.error.details as { field: string }[];
      expect([...details].sort((x, y) => x.field.localeCompare(y.field))).toEqual(fields.sort().map(unknown));
    };

    // Unknown fields: hostile input the typed client cannot express, so sent raw.
    const topLevel = await stack.request('POST', '/v1/payroll', { token, body: { ...valid, currency: 'USD' } });
    expectRefused(topLevel, ['currency']);

    const inEntry = await stack.request('POST', '/v1/payroll', {
      token,
      body: { ...valid, employees: [{ ...valid.employees[0], salary: 5000 }] },
    });
    expectRefused(inEntry, ['employees[0].salary']);

    const dryRun = await stack.request('POST', '/v1/payroll?dry_run=true', {
      token,
      body: { ...valid, currency: 'USD', employees: [{ ...valid.employees[0], overtime_hours: 2 }] },
    });
    expectRefused(dryRun, ['currency', 'employees[0].overtime_hours']);

    // Only the unknown field is wrong in each: nothing was stored, so the window is still free for the valid body.
    const accepted = await api.POST('/v1/payroll', { body: valid });
    expect(accepted.response.status).toBe(202);
    const list = await api.GET('/v1/payroll', { params: { query: { limit: 100 } } });
    expect(list.data!.data.payrolls.filter((p) => p.pay_period_start === valid.pay_period_start)).toHaveLength(1);
  });
});
