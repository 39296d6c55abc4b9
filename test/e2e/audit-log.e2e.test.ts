import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localDynamoDbClient } from '../../local/engines/provision.js';
import { createDocumentClient } from '../../shared/adapters/dynamo.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { asReceived, typedClient, type components, type operations } from '../support/typed-client.js';

/**
 * The audit log over HTTPS, as a client reads it: requests of every outcome are recorded (batched into the table
 * off the request path), readable newest first through GET /v1/logs with its filters and pages, confined to the
 * organization, and nothing anywhere holds a token or a bank account number. Every call goes through the client
 * typed from the OpenAPI document, but for one: an unknown query parameter, hostile input it cannot express.
 */
type Log = components['schemas']['AuditLogLine'];
type LogQuery = NonNullable<operations['listLogs']['parameters']['query']>;

const ACCOUNT_NUMBER = '918273645501';
const TOKEN_SHAPE = /pk_sandbox_[0-9A-Za-z]{43}/;

let stack: RunningStack;
let org: { organization_id: string; token: string };
let other: { organization_id: string; token: string };
const ids = {} as Record<
  'createKey' | 'createEmployee' | 'ok' | 'notFound' | 'forbidden' | 'unknownToken' | 'expired' | 'other',
  string
>;
let adminKeyId: string;
let readOnly: { api_key_id: string; token: string };
let expiring: { api_key_id: string; token: string };
const tokens: string[] = [];

const requestIdOf = (res: { response: Response }) => res.response.headers.get('x-request-id')!;

function logsPage(token: string, query: LogQuery = {}) {
  return typedClient(stack, token).GET('/v1/logs', { params: { query } });
}

/** Every log of a query, page by page. */
async function allLogs(token: string, query: LogQuery, limit = 100): Promise<{ logs: Log[]; pages: number }> {
  const logs: Log[] = [];
  let pageToken: string | undefined;
  let pages = 0;
  do {
    const res = await logsPage(token, { ...query, limit, page_token: pageToken });
    expect(res.response.status, asReceived(res.response).text).toBe(200);
    logs.push(...res.data!.data.logs);
    pageToken = res.data!.data.next_page_token ?? undefined;
    pages++;
  } while (pageToken && pages < 100);
  return { logs, pages };
}

/** Audit lines reach the table in batches after the response: wait for them with a bound, never a fixed sleep. */
function waitForLogs(token: string, requestIds: string[], query: LogQuery = {}): Promise<Log[]> {
  return vi.waitFor(
    async () => {
      const { logs } = await allLogs(token, query);
      const seen = new Set(logs.map((l) => l.request_id));
      if (!requestIds.every((id) => seen.has(id)))
        throw new Error(
          `audit lines never appeared in 15000 ms: ${requestIds.filter((id) => !seen.has(id)).join(', ')}`,
        );
      return logs;
    },
    { timeout: 15_000, interval: 50 },
  );
}

async function scanTable(): Promise<Record<string, unknown>[]> {
  const doc = createDocumentClient(localDynamoDbClient(stack.state.dynamodb_endpoint, stack.state.region));
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(new ScanCommand({ TableName: stack.state.table_name, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

beforeAll(async () => {
  // The test reads the log in a polling loop: keep the per-key read limit out of the way.
  stack = await startLocalStack({ env: { PAYROLL_RATE_LIMIT_READ: '100000' } });
  org = await stack.createOrganization('Audit Co');
  other = await stack.createOrganization('Elsewhere Inc');
  tokens.push(org.token, other.token);
  const api = typedClient(stack, org.token);

  const ro = await api.POST('/v1/api-keys', { body: { name: 'read only', type: 'read-only' } });
  expect(ro.response.status).toBe(201);
  ids.createKey = requestIdOf(ro);
  readOnly = ro.data!.data;
  tokens.push(readOnly.token);

  const created = await api.POST('/v1/employees', {
    body: {
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.com',
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'monthly',
      start_date: '2026-02-01',
      bank_account: { account_number: ACCOUNT_NUMBER, routing_number: '011000015', account_type: 'checking' },
    },
  });
  expect(created.response.status).toBe(201);
  ids.createEmployee = requestIdOf(created);

  const ok = await api.GET('/v1/employees');
  expect(ok.response.status).toBe(200);
  ids.ok = requestIdOf(ok);

  const notFound = await api.GET('/v1/employees/{id}', { params: { path: { id: 'emp_doesnotexist' } } });
  expect(notFound.response.status).toBe(404);
  ids.notFound = requestIdOf(notFound);

  const forbidden = await typedClient(stack, readOnly.token).GET('/v1/api-keys');
  expect(forbidden.response.status).toBe(403);
  ids.forbidden = requestIdOf(forbidden);

  const unknown = await typedClient(stack, `pk_sandbox_${'Z'.repeat(43)}`).GET('/v1/employees');
  expect(unknown.response.status).toBe(401);
  ids.unknownToken = requestIdOf(unknown);

  const short = await api.POST('/v1/api-keys', {
    body: { name: 'short-lived', type: 'read-only', expires_at: new Date(Date.now() + 1500).toISOString() },
  });
  expect(short.response.status).toBe(201);
  expiring = short.data!.data;
  tokens.push(expiring.token);
  // Poll until the key is refused, with a bound.
  const expiringApi = typedClient(stack, expiring.token);
  const res = await vi.waitFor(
    async () => {
      const current = await expiringApi.GET('/v1/employees');
      if (current.response.status === 200)
        throw new Error(`the short-lived key ${expiring.api_key_id} was still accepted after 10000 ms of polling`);
      return current;
    },
    { timeout: 10_000, interval: 50 },
  );
  expect(res.response.status).toBe(401);
  ids.expired = requestIdOf(res);

  const theirs = await typedClient(stack, other.token).GET('/v1/employees');
  expect(theirs.response.status).toBe(200);
  ids.other = requestIdOf(theirs);

  const keys = await api.GET('/v1/api-keys', { params: { query: { limit: 100 } } });
  adminKeyId = keys.data!.data.api_keys.find((k) => k.name === 'Initial admin key')!.api_key_id;
});

afterAll(async () => {
  await stack?.stop();
});

describe('GET /v1/logs', () => {
  let logs: Log[];
  const byId = (id: string) => logs.find((l) => l.request_id === id);

  beforeAll(async () => {
    logs = await waitForLogs(org.token, [
      ids.createKey,
      ids.createEmployee,
      ids.ok,
      ids.notFound,
      ids.forbidden,
      ids.expired,
    ]);
  });

  it('records each outcome with who, what, where, when and how it ended', () => {
    const base = {
      organization_id: org.organization_id,
      source_ip: expect.any(String),
      latency_ms: expect.any(Number),
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    };
    expect(byId(ids.ok)).toEqual({
      ...base,
      request_id: ids.ok,
      api_key_id: adminKeyId,
      method: 'GET',
      path: '/v1/employees',
      route: '/v1/employees',
      status: 200,
      user_agent: null,
      auth_failure: null,
    });
    expect(byId(ids.createEmployee)).toMatchObject({
      api_key_id: adminKeyId,
      method: 'POST',
      path: '/v1/employees',
      status: 201,
    });
    expect(byId(ids.notFound)).toMatchObject({
      ...base,
      api_key_id: adminKeyId,
      method: 'GET',
      path: '/v1/employees/emp_doesnotexist',
      route: '/v1/employees/{id}',
      status: 404,
      auth_failure: null,
    });
    expect(byId(ids.forbidden)).toMatchObject({
      ...base,
      api_key_id: readOnly.api_key_id,
      path: '/v1/api-keys',
      status: 403,
      auth_failure: null,
    });
    expect(byId(ids.expired)).toMatchObject({
      ...base,
      api_key_id: expiring.api_key_id,
      path: '/v1/employees',
      status: 401,
      auth_failure: 'The token has expired',
    });
    for (const l of logs) expect(l.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('lists newest first', () => {
    const times = logs.map((l) => l.at);
    expect(times).toEqual([...times].sort().reverse());
    expect(logs.findIndex((l) => l.request_id === ids.expired)).toBeLessThan(
      logs.findIndex((l) => l.request_id === ids.ok),
    );
  });

  it("keeps an unknown token's failure out of every organization's log, counted in the platform partition operators read", async () => {
    expect(byId(ids.unknownToken)).toBeUndefined();
    const burst = await vi.waitFor(
      async () => {
        const found = (await scanTable()).find(
          (i) => i.entity === 'audit_burst' && (i.request_ids as Set<string> | undefined)?.has(ids.unknownToken),
        );
        if (!found) throw new Error(`the unknown token's failure ${ids.unknownToken} was never counted in 15000 ms`);
        return found;
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(burst).toMatchObject({ statuses: new Set(['401']), source_ip: expect.any(String) });
    expect(burst.reasons).toContain('The token is unknown or revoked');
    expect(burst.PK).toBe(`AUDIT#UNAUTHENTICATED#${(burst.first_at as string).slice(0, 10)}`);
    const theirs = await allLogs(other.token, {});
    expect(theirs.logs.map((l) => l.request_id)).not.toContain(ids.unknownToken);
  });

  it('keeps 200 requests with bad tokens as one counted line per source and minute, not 200 items for 400 days', async () => {
    const unattributed = async () =>
      (await scanTable()).filter((i) => String(i.PK).startsWith('AUDIT#UNAUTHENTICATED#'));
    const countOf = (items: Record<string, unknown>[]) =>
      items.reduce((n, i) => n + (i.entity === 'audit_burst' ? Number(i.count) : 1), 0);
    const before = await unattributed();
    for (let i = 0; i < 20; i++) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          stack.request('GET', '/v1/employees', { token: `pk_sandbox_${'x'.repeat(30)}${i}${j}` }),
        ),
      );
    }
    const after = await vi.waitFor(
      async () => {
        const items = await unattributed();
        if (countOf(items) < countOf(before) + 200)
          throw new Error(`counted ${countOf(items) - countOf(before)} of 200`);
        return items;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(countOf(after) - countOf(before)).toBe(200);
    // One source (this machine): at most one new line per minute the burst spanned, plus the minute it began in.
    expect(after.length - before.length).toBeLessThanOrEqual(2);
  });

  it('filters by status', async () => {
    const { logs: forbidden } = await allLogs(org.token, { status: 403 });
    expect(forbidden.map((l) => l.request_id)).toEqual([ids.forbidden]);
    const { logs: unauthorized } = await allLogs(org.token, { status: 401 });
    expect(unauthorized.map((l) => l.request_id)).toEqual([ids.expired]);
  });

  it('filters by key, alone and with a status', async () => {
    const { logs: ro } = await allLogs(org.token, { api_key_id: readOnly.api_key_id });
    expect(ro.map((l) => l.request_id)).toEqual([ids.forbidden]);
    const { logs: exp } = await allLogs(org.token, { api_key_id: expiring.api_key_id });
    expect(exp.length).toBeGreaterThanOrEqual(2);
    expect(exp.every((l) => l.api_key_id === expiring.api_key_id)).toBe(true);
    expect(exp[0]!.request_id).toBe(ids.expired);
    const { logs: expRefused } = await allLogs(org.token, { api_key_id: expiring.api_key_id, status: 401 });
    expect(expRefused.map((l) => l.request_id)).toEqual([ids.expired]);
  });

  it('filters by path prefix', async () => {
    const { logs: employees } = await allLogs(org.token, { path_prefix: '/v1/employees' });
    expect(employees.length).toBeGreaterThanOrEqual(4);
    expect(employees.every((l) => l.path.startsWith('/v1/employees'))).toBe(true);
    expect(employees.map((l) => l.request_id)).toEqual(
      expect.arrayContaining([ids.ok, ids.notFound, ids.createEmployee, ids.expired]),
    );
    expect(employees.map((l) => l.request_id)).not.toContain(ids.forbidden);
    const { logs: one } = await allLogs(org.token, { path_prefix: '/v1/employees/emp_' });
    expect(one.map((l) => l.request_id)).toEqual([ids.notFound]);
  });

  it('narrows to a from/to range, inclusively', async () => {
    const from = byId(ids.notFound)!.at;
    const to = byId(ids.forbidden)!.at;
    const { logs: ranged } = await allLogs(org.token, { from, to });
    const got = ranged.map((l) => l.request_id);
    expect(got).toEqual(expect.arrayContaining([ids.notFound, ids.forbidden]));
    expect(ranged.every((l) => l.at >= from && l.at <= to)).toBe(true);
    const expected = logs.filter((l) => l.at >= from && l.at <= to).map((l) => l.request_id);
    expect(got).toEqual(expected);
    const future = await logsPage(org.token, { from: new Date(Date.now() + 86_400_000).toISOString() });
    expect(future.data!.data).toEqual({ logs: [], next_page_token: null });
    const longAgo = await logsPage(org.token, { to: '2020-01-01' });
    expect(longAgo.data!.data).toEqual({ logs: [], next_page_token: null });
  });

  it('pages through a filtered log: signed tokens, no duplicate, no gap, the same as one big page', async () => {
    const whole = await allLogs(org.token, { path_prefix: '/v1/employees' }, 100);
    const paged = await allLogs(org.token, { path_prefix: '/v1/employees' }, 2);
    expect(paged.pages).toBeGreaterThanOrEqual(2);
    expect(paged.logs.map((l) => l.request_id)).toEqual(whole.logs.map((l) => l.request_id));
    expect(new Set(paged.logs.map((l) => l.request_id)).size).toBe(paged.logs.length);

    const first = await logsPage(org.token, { path_prefix: '/v1/employees', limit: 2 });
    const pageToken = first.data!.data.next_page_token!;
    expect(pageToken).toEqual(expect.any(String));
    // A token belongs to its organization and its filters.
    const otherFilters = await logsPage(org.token, { status: 200, limit: 2, page_token: pageToken });
    expect(otherFilters.response.status).toBe(400);
    expect(otherFilters.error!.error.code).toBe('invalid_page_token');
    const otherOrg = await logsPage(other.token, { path_prefix: '/v1/employees', limit: 2, page_token: pageToken });
    expect(otherOrg.response.status).toBe(400);
  });

  it("keeps each organization's log to itself", async () => {
    const theirs = await waitForLogs(other.token, [ids.other]);
    expect(theirs.every((l) => l.organization_id === other.organization_id)).toBe(true);
    const mine = new Set((await allLogs(org.token, {})).logs.map((l) => l.request_id));
    expect(theirs.some((l) => mine.has(l.request_id))).toBe(false);
    expect(mine.has(ids.other)).toBe(false);
  });

  it('is for admin keys only, and validates every parameter at once', async () => {
    expect((await logsPage(readOnly.token)).response.status).toBe(403);
    // An unknown parameter (colour): hostile input the typed client cannot express.
    const bad = await stack.request('GET', '/v1/logs?status=99&path_prefix=v1&from=yesterday&limit=0&colour=blue', {
      token: org.token,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'colour',
      'from',
      'limit',
      'path_prefix',
      'status',
    ]);
    const reversed = await logsPage(org.token, { from: '2026-02-01', to: '2026-01-01' });
    expect(reversed.response.status).toBe(400);
    expect(reversed.error!.error.details).toEqual([
      expect.objectContaining({ field: 'to', code: 'invalid_date_range' }),
    ]);
    expect((await logsPage(org.token, { status: 700 })).response.status).toBe(400);
    expect((await logsPage(org.token, { from: '2026-01-01T00:00:00+02:00', to: '2026-01-02' })).response.status).toBe(
      200,
    );
  });

  it("stores no token and no bank account number, in the table or in the stack's output", async () => {
    const items = await scanTable();
    const audit = items.filter((i) => i.entity === 'audit');
    expect(audit.length).toBeGreaterThanOrEqual(6);
    const ok = audit.find((i) => i.request_id === ids.ok)!;
    expect(ok.PK).toBe(`AUDIT#ORG#${org.organization_id}`);
    expect(ok.SK).toBe(`${ok.at as string}#${ids.ok}`);
    expect(ok.ttl).toBe(Math.floor(Date.parse(ok.at as string) / 1000) + 400 * 86_400);

    const table = JSON.stringify(items);
    expect(table).not.toMatch(TOKEN_SHAPE);
    expect(table).not.toContain(ACCOUNT_NUMBER);
    for (const token of tokens) expect(table).not.toContain(token);
    const output = stack.output();
    expect(output).not.toMatch(TOKEN_SHAPE);
    expect(output).not.toContain(ACCOUNT_NUMBER);
  });
});
