import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { asReceived, typedClient, type operations, type TypedClient } from '../support/typed-client.js';

/**
 * The employees API over HTTPS against the local stack, as an integrator would use it: through the client typed
 * from the OpenAPI document. `stack.request` and `stack.plainHttp` remain only for hostile input the typed client
 * cannot express (a body that is not JSON, an unknown field, a non-numeric limit, an unknown path or method, plain
 * HTTP).
 */
let stack: RunningStack;
let admin: string;
let api: TypedClient;
let other: { organization_id: string; token: string };
let otherApi: TypedClient;

type NewEmployee = operations['createEmployee']['requestBody']['content']['application/json'];

let accounts = 0;
const employee = (n: number | string, extra: Partial<NewEmployee> = {}): NewEmployee => ({
  first_name: 'Grace',
  last_name: `Hopper ${n}`,
  email: `grace.${n}@example.com`,
  employment_type: 'full_time',
  pay_group: 'default',
  pay_schedule: 'biweekly',
  start_date: '2026-01-05',
  bank_account: {
    account_number: `00012345${String(accounts++).padStart(4, '0')}`,
    routing_number: '021000021',
    account_type: 'checking',
  },
  ...extra,
});

/** The path parameter of `/v1/employees/{id}`. */
const at = (id: string) => ({ params: { path: { id } } });

beforeAll(async () => {
  stack = await startLocalStack();
  [{ token: admin }, other] = await Promise.all([stack.createOrganization('Acme'), stack.createOrganization('Globex')]);
  api = typedClient(stack, admin);
  otherApi = typedClient(stack, other.token);
});

afterAll(async () => {
  await stack?.stop();
});

describe('employees over HTTPS', () => {
  it('creates, reads, lists, patches and deletes an employee', async () => {
    const create = await api.POST('/v1/employees', { body: employee('crud') });
    expect(create.response.status).toBe(201);
    expect(create.data).toMatchObject({ status: 201, data: { status: 'active', bank_account: { status: 'active' } } });
    const id = create.data!.data.employee_id;
    expect(create.response.headers.get('location')).toBe(`/v1/employees/${id}`);
    expect(create.response.headers.get('x-request-id')).toBe(create.data!.request_id);
    expect(asReceived(create.response).text).not.toMatch(/00012345\d{4}/);

    const got = await api.GET('/v1/employees/{id}', at(id));
    expect(got.response.status).toBe(200);
    expect(got.data!.data).toEqual(create.data!.data);

    const patched = await api.PATCH('/v1/employees/{id}', {
      ...at(id),
      body: { last_name: 'Murray Hopper', email: 'amazing.grace@example.com' },
    });
    expect(patched.response.status).toBe(200);
    expect(patched.data!.data).toMatchObject({
      last_name: 'Murray Hopper',
      email: 'amazing.grace@example.com',
      first_name: 'Grace',
    });
    expect(Date.parse(patched.data!.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(create.data!.data.updated_at));

    const noBank = await api.PATCH('/v1/employees/{id}', { ...at(id), body: { bank_account: null } });
    expect(noBank.data!.data.bank_account).toBeNull();

    const removed = await api.DELETE('/v1/employees/{id}', at(id));
    expect(removed.response.status).toBe(200);
    expect(removed.data!.data.status).toBe('removed');
    expect((await api.GET('/v1/employees/{id}', at(id))).response.status).toBe(404);
    expect((await api.PATCH('/v1/employees/{id}', { ...at(id), body: { first_name: 'X' } })).response.status).toBe(404);
    expect((await api.DELETE('/v1/employees/{id}', at(id))).response.status).toBe(404);

    // The email of a removed employee may be onboarded again.
    const again = await api.POST('/v1/employees', { body: employee('crud', { email: 'amazing.grace@example.com' }) });
    expect(again.response.status).toBe(201);
  });

  it('answers 409 for an email already onboarded, whatever its case, and frees it on an email change', async () => {
    const first = await api.POST('/v1/employees', { body: employee('dup') });
    expect(first.response.status).toBe(201);
    const dup = await api.POST('/v1/employees', { body: employee('dup2', { email: 'GRACE.DUP@example.com' }) });
    expect(dup.response.status).toBe(409);
    expect(dup.error!.error).toMatchObject({ code: 'employee_already_exists', message: 'Employee already exists' });

    const second = await api.POST('/v1/employees', { body: employee('dup3') });
    const clash = await api.PATCH('/v1/employees/{id}', {
      ...at(second.data!.data.employee_id),
      body: { email: 'grace.dup@example.com' },
    });
    expect(clash.response.status).toBe(409);

    await api.PATCH('/v1/employees/{id}', {
      ...at(first.data!.data.employee_id),
      body: { email: 'grace.moved@example.com' },
    });
    const reuse = await api.PATCH('/v1/employees/{id}', {
      ...at(second.data!.data.employee_id),
      body: { email: 'grace.dup@example.com' },
    });
    expect(reuse.response.status).toBe(200);
  });

  it('keeps every field under concurrent PATCHes of different fields', async () => {
    const created = await api.POST('/v1/employees', { body: employee('patchrace') });
    const id = created.data!.data.employee_id;
    const patches = [
      { first_name: 'Anita' },
      { last_name: 'Borg' },
      { pay_schedule: 'weekly' },
      { employment_type: 'part_time' },
      { start_date: '2025-06-01' },
    ];
    const results = await Promise.all(patches.map((body) => api.PATCH('/v1/employees/{id}', { ...at(id), body })));
    expect(results.map((r) => r.response.status)).toEqual([200, 200, 200, 200, 200]);
    const final = await api.GET('/v1/employees/{id}', at(id));
    expect(final.data!.data).toMatchObject(Object.assign({}, ...patches));
  });

  it('pages through the list with no duplicate and no gap, and refuses a tampered or foreign token', async () => {
    const org = await stack.createOrganization('Paging Co');
    const orgApi = typedClient(stack, org.token);
    const ids = new Set<string>();
    for (let i = 0; i < 7; i++) {
      const r = await orgApi.POST('/v1/employees', { body: employee(`page${i}`) });
      ids.add(r.data!.data.employee_id);
    }
    const pageOf = (page_token?: string) =>
      orgApi.GET('/v1/employees', { params: { query: { limit: 3, page_token } } });
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const res = await pageOf(token ?? undefined);
      expect(res.response.status).toBe(200);
      seen.push(...res.data!.data.employees.map((e) => e.employee_id));
      token = res.data!.data.next_page_token;
      pages++;
      if (pages === 1) {
        const [payload, sig] = token!.split('.');
        const tampered = await orgApi.GET('/v1/employees', {
          params: { query: { limit: 3, page_token: `${payload}x.${sig}` } },
        });
        expect(tampered.response.status).toBe(400);
        expect(tampered.error!.error.code).toBe('invalid_page_token');
        const foreign = await otherApi.GET('/v1/employees', { params: { query: { limit: 3, page_token: token! } } });
        expect(foreign.response.status).toBe(400);
        expect(foreign.error!.error.code).toBe('invalid_page_token');
      }
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(ids);
  });

  it.each([[0], [101]])('rejects limit=%s with 400 naming the parameter', async (limit) => {
    const res = await api.GET('/v1/employees', { params: { query: { limit } } });
    expect(res.response.status).toBe(400);
    expect(res.error!.error.details[0]!.field).toBe('limit');
  });

  it('rejects limit=abc with 400 naming the parameter', async () => {
    const res = await stack.request('GET', '/v1/employees?limit=abc', { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('limit');
  });

  it('hides one organization from another: its ids answer 404 and its lists are disjoint', async () => {
    const mine = await api.POST('/v1/employees', { body: employee('isolated') });
    const id = mine.data!.data.employee_id;
    const attempts = [
      await otherApi.GET('/v1/employees/{id}', at(id)),
      await otherApi.PATCH('/v1/employees/{id}', { ...at(id), body: { first_name: 'Mallory' } }),
      await otherApi.DELETE('/v1/employees/{id}', at(id)),
    ];
    for (const res of attempts) {
      expect(res.response.status).toBe(404);
      expect(res.error!.error.code).toBe('not_found');
    }
    const list = await otherApi.GET('/v1/employees', { params: { query: { limit: 100 } } });
    expect(list.data!.data.employees.map((e) => e.employee_id)).not.toContain(id);
    expect((await api.GET('/v1/employees/{id}', at(id))).data!.data.first_name).toBe('Grace');
  });

  it('validates configured values against the settings, which an admin can change', async () => {
    const org = await stack.createOrganization('Settings Co');
    const orgApi = typedClient(stack, org.token);
    const before = await orgApi.POST('/v1/employees', { body: employee('exec', { pay_group: 'executives' }) });
    expect(before.response.status).toBe(400);
    expect(before.error!.error.details).toContainEqual(
      expect.objectContaining({ field: 'pay_group', code: 'invalid_value' }),
    );

    const settings = await orgApi.GET('/v1/settings');
    expect(settings.data!.data).toMatchObject({
      employment_types: ['full_time', 'part_time', 'contractor'],
      pay_groups: ['default'],
      pay_schedules: ['weekly', 'biweekly', 'semimonthly', 'monthly'],
      max_net_pay_per_employee: 250000,
      max_payroll_total: 100000000,
    });
    const patched = await orgApi.PATCH('/v1/settings', {
      body: { pay_groups: ['default', 'executives'], max_net_pay_per_employee: '300000.50' },
    });
    expect(patched.response.status).toBe(200);
    expect(patched.data!.data).toMatchObject({
      pay_groups: ['default', 'executives'],
      max_net_pay_per_employee: 300000.5,
    });
    const after = await orgApi.POST('/v1/employees', { body: employee('exec', { pay_group: 'executives' }) });
    expect(after.response.status).toBe(201);
    // An unknown field: hostile input the typed client cannot express.
    const badSettings = await stack.request('PATCH', '/v1/settings', {
      token: org.token,
      body: { pay_groups: [], colour: 'blue' },
    });
    expect(badSettings.status).toBe(400);
    expect(badSettings.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'colour',
      'pay_groups',
    ]);
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
    for (const [method, path] of [
      ['GET', '/v1/employees'],
      ['POST', '/v1/employees'],
      ['GET', '/anything'],
    ]) {
      const res = await stack.plainHttp(method!, path!);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('https_required');
      expect(res.headers['x-request-id']).toBe(res.body.request_id);
    }
  });

  it('never writes a token or a full account number to its logs', async () => {
    const res = await api.POST('/v1/employees', {
      body: employee('logs', {
        bank_account: { account_number: '99887766554433', routing_number: '021000021', account_type: 'savings' },
      }),
    });
    expect(res.response.status).toBe(201);
    const logs = stack.output();
    expect(logs).toContain(res.data!.request_id);
    expect(logs).not.toContain('99887766554433');
    expect(logs).not.toContain(admin);
    expect(logs).not.toMatch(/pk_(sandbox|live)_[0-9A-Za-z]{43}/);
  });
});
