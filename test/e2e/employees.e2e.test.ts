import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';

/** The employees API over HTTPS against the local stack, as an integrator would use it. */
let stack: RunningStack;
let admin: string;
let other: { organization_id: string; token: string };

let accounts = 0;
const employee = (n: number | string, extra: Record<string, unknown> = {}) => ({
  first_name: 'Grace', last_name: `Hopper ${n}`, email: `grace.${n}@example.com`, employment_type: 'full_time',
  pay_group: 'default', pay_schedule: 'biweekly', start_date: '2026-01-05',
  bank_account: { account_number: `00012345${String(accounts++).padStart(4, '0')}`, routing_number: '021000021', account_type: 'checking' },
  ...extra,
});

beforeAll(async () => {
  stack = await startLocalStack();
  [{ token: admin }, other] = await Promise.all([stack.createOrganization('Acme'), stack.createOrganization('Globex')]);
});

afterAll(async () => {
  await stack?.stop();
});

describe('employees over HTTPS', () => {
  it('creates, reads, lists, patches and deletes an employee', async () => {
    const create = await stack.request('POST', '/v1/employees', { token: admin, body: employee('crud') });
    expect(create.status).toBe(201);
    expect(create.body).toMatchObject({ status: 201, data: { status: 'active', bank_account: { status: 'active' } } });
    const id = create.body.data.employee_id as string;
    expect(create.headers.location).toBe(`/v1/employees/${id}`);
    expect(create.headers['x-request-id']).toBe(create.body.request_id);
    expect(create.text).not.toMatch(/00012345\d{4}/);

    const got = await stack.request('GET', `/v1/employees/${id}`, { token: admin });
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(create.body.data);

    const patched = await stack.request('PATCH', `/v1/employees/${id}`, { token: admin, body: { last_name: 'Murray Hopper', email: 'amazing.grace@example.com' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ last_name: 'Murray Hopper', email: 'amazing.grace@example.com', first_name: 'Grace' });
    expect(Date.parse(patched.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(create.body.data.updated_at));

    const noBank = await stack.request('PATCH', `/v1/employees/${id}`, { token: admin, body: { bank_account: null } });
    expect(noBank.body.data.bank_account).toBeNull();

    const removed = await stack.request('DELETE', `/v1/employees/${id}`, { token: admin });
    expect(removed.status).toBe(200);
    expect(removed.body.data.status).toBe('removed');
    expect((await stack.request('GET', `/v1/employees/${id}`, { token: admin })).status).toBe(404);
    expect((await stack.request('PATCH', `/v1/employees/${id}`, { token: admin, body: { first_name: 'X' } })).status).toBe(404);
    expect((await stack.request('DELETE', `/v1/employees/${id}`, { token: admin })).status).toBe(404);

    // The email of a removed employee may be onboarded again.
    const again = await stack.request('POST', '/v1/employees', { token: admin, body: employee('crud', { email: 'amazing.grace@example.com' }) });
    expect(again.status).toBe(201);
  });

  it('answers 409 for an email already onboarded, whatever its case, and frees it on an email change', async () => {
    const first = await stack.request('POST', '/v1/employees', { token: admin, body: employee('dup') });
    expect(first.status).toBe(201);
    const dup = await stack.request('POST', '/v1/employees', { token: admin, body: employee('dup2', { email: 'GRACE.DUP@example.com' }) });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'employee_already_exists', message: 'Employee already exists' });

    const second = await stack.request('POST', '/v1/employees', { token: admin, body: employee('dup3') });
    const clash = await stack.request('PATCH', `/v1/employees/${second.body.data.employee_id}`, { token: admin, body: { email: 'grace.dup@example.com' } });
    expect(clash.status).toBe(409);

    await stack.request('PATCH', `/v1/employees/${first.body.data.employee_id}`, { token: admin, body: { email: 'grace.moved@example.com' } });
    const reuse = await stack.request('PATCH', `/v1/employees/${second.body.data.employee_id}`, { token: admin, body: { email: 'grace.dup@example.com' } });
    expect(reuse.status).toBe(200);
  });

  it('lets exactly one of 20 concurrent creates with one email through', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      stack.request('POST', '/v1/employees', { token: admin, body: employee(`race${i}`, { email: 'race@example.com' }) })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  });

  it('keeps every field under concurrent PATCHes of different fields', async () => {
    const created = await stack.request('POST', '/v1/employees', { token: admin, body: employee('patchrace') });
    const id = created.body.data.employee_id;
    const patches = [{ first_name: 'Anita' }, { last_name: 'Borg' }, { pay_schedule: 'weekly' }, { employment_type: 'part_time' }, { start_date: '2025-06-01' }];
    const results = await Promise.all(patches.map((body) => stack.request('PATCH', `/v1/employees/${id}`, { token: admin, body })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const final = await stack.request('GET', `/v1/employees/${id}`, { token: admin });
    expect(final.body.data).toMatchObject(Object.assign({}, ...patches));
  });

  it('pages through the list with no duplicate and no gap, and refuses a tampered or foreign token', async () => {
    const org = await stack.createOrganization('Paging Co');
    const ids = new Set<string>();
    for (let i = 0; i < 7; i++) {
      const r = await stack.request('POST', '/v1/employees', { token: org.token, body: employee(`page${i}`) });
      ids.add(r.body.data.employee_id);
    }
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const q: string = token ? `?limit=3&page_token=${encodeURIComponent(token)}` : '?limit=3';
      const res = await stack.request('GET', `/v1/employees${q}`, { token: org.token });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.employees.map((e: { employee_id: string }) => e.employee_id));
      token = res.body.data.next_page_token;
      pages++;
      if (pages === 1) {
        const [payload, sig] = token!.split('.');
        const tampered = await stack.request('GET', `/v1/employees?limit=3&page_token=${payload}x.${sig}`, { token: org.token });
        expect(tampered.status).toBe(400);
        expect(tampered.body.error.code).toBe('invalid_page_token');
        const foreign = await stack.request('GET', `/v1/employees?limit=3&page_token=${encodeURIComponent(token!)}`, { token: other.token });
        expect(foreign.status).toBe(400);
        expect(foreign.body.error.code).toBe('invalid_page_token');
      }
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(ids);
  });

  it.each([['0'], ['101'], ['abc']])('rejects limit=%s with 400 naming the parameter', async (limit) => {
    const res = await stack.request('GET', `/v1/employees?limit=${limit}`, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('limit');
  });

  it('hides one organization from another: its ids answer 404 and its lists are disjoint', async () => {
    const mine = await stack.request('POST', '/v1/employees', { token: admin, body: employee('isolated') });
    const id = mine.body.data.employee_id;
    for (const [method, body] of [['GET', undefined], ['PATCH', { first_name: 'Mallory' }], ['DELETE', undefined]] as const) {
      const res = await stack.request(method, `/v1/employees/${id}`, { token: other.token, body });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    const list = await stack.request('GET', '/v1/employees?limit=100', { token: other.token });
    expect(list.body.data.employees.map((e: { employee_id: string }) => e.employee_id)).not.toContain(id);
    expect((await stack.request('GET', `/v1/employees/${id}`, { token: admin })).body.data.first_name).toBe('Grace');
  });

  it('validates configured values against the settings, which an admin can change', async () => {
    const org = await stack.createOrganization('Settings Co');
    const before = await stack.request('POST', '/v1/employees', { token: org.token, body: employee('exec', { pay_group: 'executives' }) });
    expect(before.status).toBe(400);
    expect(before.body.error.details).toContainEqual(expect.objectContaining({ field: 'pay_group', code: 'invalid_value' }));

    const settings = await stack.request('GET', '/v1/settings', { token: org.token });
    expect(settings.body.data).toMatchObject({
      employment_types: ['full_time', 'part_time', 'contractor'], pay_groups: ['default'],
      pay_schedules: ['weekly', 'biweekly', 'semimonthly', 'monthly'], max_net_pay_per_employee: 250000, max_payroll_total: 100000000,
    });
    const patched = await stack.request('PATCH', '/v1/settings', { token: org.token, body: { pay_groups: ['default', 'executives'], max_net_pay_per_employee: '300000.50' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ pay_groups: ['default', 'executives'], max_net_pay_per_employee: 300000.5 });
    const after = await stack.request('POST', '/v1/employees', { token: org.token, body: employee('exec', { pay_group: 'executives' }) });
    expect(after.status).toBe(201);
    const badSettings = await stack.request('PATCH', '/v1/settings', { token: org.token, body: { pay_groups: [], colour: 'blue' } });
    expect(badSettings.status).toBe(400);
    expect(badSettings.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['colour', 'pay_groups']);
  });

  it('answers malformed bodies, unknown routes and wrong methods in the envelope', async () => {
    const notJson = await stack.request('POST', '/v1/employees', { token: admin, body: '{"first_name": ' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_request_body');
    const unknown = await stack.request('GET', '/v1/payrolls-typo', { token: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ status: 404, error: { code: 'not_found' } });
    const wrong = await stack.request('PUT', '/v1/employees', { token: admin, body: {} });
    expect(wrong.status).toBe(405);
    expect(wrong.body.error.code).toBe('method_not_allowed');
    expect(wrong.headers.allow).toBe('POST, GET');
  });

  it('refuses every plain-HTTP request with https_required', async () => {
    for (const [method, path] of [['GET', '/v1/employees'], ['POST', '/v1/employees'], ['GET', '/anything']]) {
      const res = await stack.plainHttp(method!, path!);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('https_required');
      expect(res.headers['x-request-id']).toBe(res.body.request_id);
    }
  });

  it('never writes a token or a full account number to its logs', async () => {
    const res = await stack.request('POST', '/v1/employees', { token: admin, body: employee('logs', { bank_account: { account_number: '99887766554433', routing_number: '021000021', account_type: 'savings' } }) });
    expect(res.status).toBe(201);
    const logs = stack.output();
    expect(logs).toContain(res.body.request_id);
    expect(logs).not.toContain('99887766554433');
    expect(logs).not.toContain(admin);
    expect(logs).not.toMatch(/pk_(sandbox|live)_[0-9A-Za-z]{43}/);
  });
});
