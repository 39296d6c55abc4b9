import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SCOPES_BY_TYPE, TOKEN_TYPES, type TokenType } from '../../shared/domain/scopes.js';
import type { RouteDef } from '../../shared/api/route.js';
import { ROUTES } from '../../shared/api/routes.js';
import { runToEnd, startLocalStack, type HttpResponse, type RunningStack } from '../support/local-stack.js';
import { payrollBody } from '../support/payroll-fixture.js';
import { asReceived, typedClient } from '../support/typed-client.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * The authorization matrix is generated from the route table: each request is built at run time from a route's
 * method and path template, with missing, malformed, expired, revoked or foreign tokens, which a client typed by
 * literal paths cannot express. The matrix and the fixtures it compares stay on `stack.request`; the API key tests
 * below call the API through the typed client.
 */
let stack: RunningStack;
let org: { organization_id: string; token: string };
const tokens = {} as Record<TokenType, string>;

beforeAll(async () => {
  stack = await startLocalStack();
  org = await stack.createOrganization('Auth Co');
  for (const type of TOKEN_TYPES) {
    const res = await typedClient(stack, org.token).POST('/v1/api-keys', { body: { name: `${type} key`, type } });
    expect(res.response.status).toBe(201);
    tokens[type] = res.data!.data.token;
  }
});

afterAll(async () => {
  await stack?.stop();
});

const concrete = (path: string) => path.replace(/\{\w+\}/g, 'x_unknown');
const bodyFor = (method: string) => (method === 'POST' || method === 'PATCH' ? {} : undefined);

/**
 * A revoked token answers 401 at once (CONTRACT §2: no cache outlives a revocation) on the very next request, to
 * routes of every function, not only the one that revoked it.
 */
async function refusedEverywhere(token: string): Promise<void> {
  for (const path of ['/v1/employees', '/v1/payroll', '/v1/paystubs', '/v1/webhooks']) {
    expect((await stack.request('GET', path, { token })).status, path).toBe(401);
  }
}

/** Generated from the route declarations: a new route is covered by this matrix without anyone editing it. */
const defaultRepresentationScopes = (route: (typeof ROUTES)[number]) =>
  route.success.flatMap((s) =>
    Object.values(s.alternatives ?? {}).flatMap((a) => (a.scope?.default ? [a.scope.scope] : [])),
  );

describe('authorization matrix: every route × every token type', () => {
  const cases = ROUTES.filter((r) => r.scope !== null).flatMap((route) => TOKEN_TYPES.map((type) => ({ route, type })));

  it.each(cases.map((c) => [`${c.route.method} ${c.route.path}`, c.type, c] as const))(
    '%s with a %s token',
    async (_, __, { route, type }) => {
      const res = await stack.request(route.method, concrete(route.path), {
        token: tokens[type],
        body: bodyFor(route.method),
      });
      // The matrix sends no Accept header: a route whose default representation needs a further scope needs both.
      const needed = [route.scope!, ...defaultRepresentationScopes(route)];
      const allowed = needed.every((scope) => SCOPES_BY_TYPE[type].includes(scope));
      if (allowed) {
        expect([401, 403]).not.toContain(res.status);
      } else {
        expect(res.status).toBe(403);
        expect(res.body.error).toMatchObject({ code: 'insufficient_scope', message: 'Forbidden: Insufficient scope' });
        // Refused for its scope, but authenticated: it counts against the bucket and says so.
        expect(res.headers['x-ratelimit-limit']).toMatch(/^[1-9]\d*$/);
      }
    },
  );

  it.each(ROUTES.filter((r) => r.scope !== null).map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s: 401 without, with a malformed and with an unknown token',
    async (_, route) => {
      for (const headers of [
        {},
        { Authorization: 'Bearer' },
        { Authorization: 'Basic dXNlcjpwYXNz' },
        { Authorization: 'Bearer pk_sandbox_000' },
        { Authorization: `Bearer pk_sandbox_${'A'.repeat(43)}` },
      ] as Record<string, string>[]) {
        const res = await stack.request(route.method, concrete(route.path), { headers, body: bodyFor(route.method) });
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ status: 401, error: { code: 'unauthorized', message: 'Unauthorized' } });
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="payroll"/);
      }
    },
  );
});

/**
 * The rest of the matrix, still generated from the route table: every route with an expired and with a revoked
 * token, and every route that names a resource with another organization's token, against real resources.
 */
type Resource = 'employee' | 'payroll' | 'paystub' | 'webhook' | 'event' | 'apiKey' | 'file';
/** What a path parameter names, by the collection before it: `employees/{id}` is an employee's id. */
const PATH_PARAMETERS: Record<string, Resource> = {
  'employees/{id}': 'employee',
  'payroll/{id}': 'payroll',
  'paystubs/{id}': 'paystub',
  'webhooks/{id}': 'webhook',
  'events/{id}': 'event',
  'api-keys/{id}': 'apiKey',
  'disbursement-files/{id}': 'file',
};
/** What a query parameter that names a resource names (the lists' filters, read from the OpenAPI document). */
const QUERY_PARAMETERS: Record<string, Resource> = {
  employee_id: 'employee',
  payroll_id: 'payroll',
  api_key_id: 'apiKey',
};

interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { example?: unknown }> };
}
const DOCUMENT = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const operation = (route: RouteDef) => DOCUMENT.paths[route.path]?.[route.method.toLowerCase()];
/** The documented example body, so a write gets past validation to its lookup (and would act, if authorization failed). */
const exampleBody = (route: RouteDef) => operation(route)?.requestBody?.content?.['application/json']?.example;
/** `employees/{id}` for each parameter of the path. */
const pathParameters = (path: string) =>
  path.split('/').flatMap((segment, i, all) => (/^\{\w+\}$/.test(segment) ? [`${all[i - 1]}/${segment}`] : []));
const resourceQueryParameters = (route: RouteDef) =>
  (operation(route)?.parameters ?? []).filter((p) => p.in === 'query' && p.name.endsWith('_id')).map((p) => p.name);

const authenticated = ROUTES.filter((r) => r.scope !== null) as readonly RouteDef[];
const withIds = authenticated.filter((r) => pathParameters(r.path).length > 0);
/** Reads of a collection or a singleton: authenticated GETs without a path parameter. */
const collections = authenticated.filter((r) => r.method === 'GET' && pathParameters(r.path).length === 0);

describe('authorization matrix: dead tokens and another organization, against real resources', () => {
  let owner: { organization_id: string; token: string };
  let intruder: { organization_id: string; token: string };
  const ids = {} as Record<Resource, string>;
  /** Every id and value of the owner's that another organization must never see. */
  let ownerSecrets: string[] = [];
  let expiredToken: string;
  let revokedToken: string;
  let victimToken: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const before = new Map<string, string>();

  /** The route's path with the owner's resources in it; a parameter the test does not know fails loudly. */
  const ownerPath = (route: RouteDef, mutate = false) => {
    let path = route.path;
    for (const parameter of pathParameters(route.path)) {
      const resource = PATH_PARAMETERS[parameter];
      if (!resource)
        throw new Error(
          `${route.method} ${route.path}: no resource for the path parameter ${parameter}: add it to PATH_PARAMETERS and create one`,
        );
      // An unknown id of the same kind: the same prefix and length, its last character changed.
      const id = mutate ? ids[resource].slice(0, -1) + (ids[resource].endsWith('0') ? '1' : '0') : ids[resource];
      path = path.replace(parameter.slice(parameter.indexOf('/') + 1), id);
    }
    return path;
  };
  /** Polls a condition with a bound: no fixed sleeps. */
  const eventually = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> =>
    vi.waitFor(
      async () => {
        const value = await probe();
        if (value === undefined) throw new Error(`${what}: not within ${timeoutMs} ms`);
        return value;
      },
      { timeout: timeoutMs, interval: 50 },
    );
  const ownerViews = async () => {
    const views = new Map<string, string>();
    for (const route of withIds.filter((r) => r.method === 'GET')) {
      const res = await stack.request('GET', ownerPath(route), { token: owner.token });
      expect(res.status, `${route.method} ${route.path} as the owner`).toBe(200);
      views.set(
        route.id,
        res.headers['content-type']?.startsWith('application/json') ? JSON.stringify(res.body.data) : res.text,
      );
    }
    const keys = await stack.request('GET', '/v1/api-keys?limit=100', { token: owner.token });
    views.set(
      'api keys',
      JSON.stringify(keys.body.data.api_keys.map((k: Record<string, unknown>) => ({ ...k, last_used_at: undefined }))),
    );
    return views;
  };
  const expect401 = (res: HttpResponse, described: string, description: string) => {
    expect(res.status, described).toBe(401);
    expect(res.body, described).toEqual({
      status: 401,
      error: { code: 'unauthorized', message: 'Unauthorized', details: [] },
      request_id: res.headers['x-request-id'],
    });
    expect(res.headers['www-authenticate'], described).toBe(
      `Bearer realm="payroll", error="invalid_token", error_description="${description}"`,
    );
    for (const secret of ownerSecrets) expect(res.text, described).not.toContain(secret);
  };

  beforeAll(async () => {
    [owner, intruder] = await Promise.all([
      stack.createOrganization('Owner Co'),
      stack.createOrganization('Intruder Co'),
    ]);
    const as = (method: string, path: string, body?: unknown) =>
      stack.request(method, path, { token: owner.token, body });
    // Admin tokens, so that nothing but their death can refuse them. The expiry runs out while the rest is made.
    const expiring = await as('POST', '/v1/api-keys', {
      name: 'expiring',
      type: 'admin',
      expires_at: new Date(Date.now() + 3000).toISOString(),
    });
    expect(expiring.status).toBe(201);
    expiredToken = expiring.body.data.token;
    // Each is used while alive, so the authenticator caches it (5 s): expiry must be checked on a cached token too,
    // and the revocation must evict it, not merely find the cache empty.
    expect((await stack.request('GET', '/v1/employees', { token: expiredToken })).status).toBe(200);
    const revoked = await as('POST', '/v1/api-keys', { name: 'revoked', type: 'admin' });
    revokedToken = revoked.body.data.token;
    expect((await stack.request('GET', '/v1/employees', { token: revokedToken })).status).toBe(200);
    expect((await stack.request('GET', '/v1/settings', { token: revokedToken })).status).toBe(200);
    expect((await as('DELETE', `/v1/api-keys/${revoked.body.data.api_key_id}`)).status).toBe(200);
    // At once, on the function that revoked it and on every other (each function is its own container, locally as
    // deployed), though each served the token a moment before.
    expect((await stack.request('GET', '/v1/settings', { token: revokedToken })).status).toBe(401);
    await refusedEverywhere(revokedToken);

    const victim = await as('POST', '/v1/api-keys', { name: 'victim', type: 'read-only' });
    ids.apiKey = victim.body.data.api_key_id;
    victimToken = victim.body.data.token;
    receiver = await startReceiver();
    // Subscribed to an event the run below does not raise: its events get no delivery attempt that could change them.
    ids.webhook = (
      await as('POST', '/v1/webhooks', { url: receiver.url, events: ['payroll.failed'], description: 'owner hook' })
    ).body.data.webhook_id;
    const employee = await as('POST', '/v1/employees', {
      first_name: 'Olive',
      last_name: 'Owner',
      email: 'olive.owner@example.com',
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2026-01-05',
      bank_account: { account_number: '77001122', routing_number: '021000021', account_type: 'checking' },
    });
    ids.employee = employee.body.data.employee_id;
    const submitted = await as('POST', '/v1/payroll', payrollBody([ids.employee]));
    expect(submitted.status).toBe(202);
    ids.payroll = submitted.body.data.payroll_id;
    await eventually("the owner's run completes", async () =>
      (await as('GET', `/v1/payroll/${ids.payroll}`)).body.data.status === 'completed' ? true : undefined,
    );
    ids.file = (await as('GET', `/v1/payroll/${ids.payroll}`)).body.data.disbursement.file_id;
    // The bank link delivers the file to the sandbox bank by itself; its acknowledgement is the owner's inbound file.
    await eventually("the bank's acknowledgement", async () =>
      (await as('GET', '/v1/bank-link/inbound-files')).body.data.inbound_files.length > 0 ? true : undefined,
    );
    ids.paystub = await eventually(
      'its paystub',
      async () => (await as('GET', `/v1/paystubs?payroll_id=${ids.payroll}`)).body.data.paystubs[0]?.paystub_id,
    );
    ids.event = await eventually(
      'its event',
      async () => (await as('GET', `/v1/events?payroll_id=${ids.payroll}`)).body.data.events[0]?.id,
    );
    await eventually("the owner's audit log", async () =>
      (await as('GET', '/v1/logs?limit=1')).body.data.logs.length > 0 ? true : undefined,
    );
    await eventually(
      'the expiry',
      async () =>
        (await stack.request('GET', '/v1/employees', { token: expiredToken })).status === 401 ? true : undefined,
      10_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiring.body.data.expires_at));

    const keyIds = (await as('GET', '/v1/api-keys?limit=100')).body.data.api_keys.map(
      (k: { api_key_id: string }) => k.api_key_id,
    );
    ownerSecrets = [
      owner.organization_id,
      ...Object.values(ids),
      ...keyIds,
      owner.token,
      expiredToken,
      revokedToken,
      victimToken,
      'olive.owner@example.com',
      '77001122',
    ];
    for (const [k, v] of await ownerViews()) before.set(k, v);
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
  });

  it('knows the resource behind every path parameter and every resource filter of the route table', () => {
    const unknownPath = withIds.flatMap((r) =>
      pathParameters(r.path)
        .filter((p) => !(p in PATH_PARAMETERS))
        .map((p) => `${r.method} ${r.path}: ${p}`),
    );
    const unknownQuery = collections.flatMap((r) =>
      resourceQueryParameters(r)
        .filter((q) => !(q in QUERY_PARAMETERS))
        .map((q) => `${r.method} ${r.path}: ?${q}`),
    );
    expect([...unknownPath, ...unknownQuery]).toEqual([]);
    // The tables the it.each blocks run over are never empty: a filter gone wrong would skip them silently.
    expect(authenticated).toHaveLength(42);
    expect(withIds).toHaveLength(24);
    expect(collections).toHaveLength(11);
    // Every kind of resource the table names is made for real in the owner's organization.
    expect(new Set(withIds.flatMap((r) => pathParameters(r.path).map((p) => PATH_PARAMETERS[p])))).toEqual(
      new Set(Object.keys(ids)),
    );
  });

  it.each(collections.map((r) => [`${r.method} ${r.path}`, r] as const))(
    "%s with another organization's token shows none of the owner's data",
    async (_, route) => {
      const mine = await stack.request('GET', route.path, { token: owner.token });
      expect(mine.status).toBe(200);
      // A list (it pages) must show the owner something of its own, or its emptiness for the intruder would prove nothing.
      if ('next_page_token' in mine.body.data)
        expect(
          ownerSecrets.some((s) => mine.text.includes(s)),
          'the owner sees its own items',
        ).toBe(true);
      const filters = [{}, ...resourceQueryParameters(route).map((name) => ({ [name]: ids[QUERY_PARAMETERS[name]!] }))];
      for (const filter of filters) {
        const qs = new URLSearchParams(filter).toString();
        const theirs = await stack.request('GET', `${route.path}${qs ? `?${qs}` : ''}`, { token: intruder.token });
        expect(theirs.status, qs).toBe(200);
        for (const secret of ownerSecrets) expect(theirs.text, `${qs}: ${secret}`).not.toContain(secret);
      }
    },
  );

  it.each(withIds.map((r) => [`${r.method} ${r.path}`, r] as const))(
    "%s with another organization's token: 404 as for an unknown id, and no effect",
    async (_, route) => {
      const foreign = await stack.request(route.method, ownerPath(route), {
        token: intruder.token,
        body: exampleBody(route),
      });
      const unknown = await stack.request(route.method, ownerPath(route, true), {
        token: intruder.token,
        body: exampleBody(route),
      });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({
        status: 404,
        error: { code: 'not_found', message: expect.any(String), details: expect.any(Array) },
        request_id: foreign.headers['x-request-id'],
      });
      // Indistinguishable from an id that exists nowhere: ids cannot be probed.
      expect(foreign.body.error).toEqual(unknown.body.error);
      expect(Object.keys(foreign.headers).sort()).toEqual(Object.keys(unknown.headers).sort());
      for (const secret of ownerSecrets) expect(foreign.text).not.toContain(secret);
    },
  );

  it("POST /v1/disbursement-returns with another organization's token: the owner's trace numbers are unknown to it", async () => {
    const trace = (await stack.request('GET', `/v1/paystubs/${ids.paystub}`, { token: owner.token })).body.data.payment
      .trace_number;
    expect(trace).toMatch(/^\d{15}$/);
    const res = await stack.request('POST', '/v1/disbursement-returns', {
      token: intruder.token,
      body: {
        returns: [{ trace_number: trace, code: 'R03' }],
        corrections: [{ trace_number: trace, code: 'C01', corrected_data: '99887766' }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.outcomes.map((o: { outcome: string }) => o.outcome)).toEqual([
      'unknown_trace',
      'unknown_trace',
    ]);
    for (const secret of ownerSecrets) expect(res.text).not.toContain(secret);
    // And the owner's payment, run and employee are untouched: checked by 'left every resource of the owner as it was'.
  });

  it.each(authenticated.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s: 401 with an expired token',
    async (_, route) => {
      const res = await stack.request(route.method, pathParameters(route.path).length ? ownerPath(route) : route.path, {
        token: expiredToken,
        body: exampleBody(route),
      });
      expect401(res, 'expired', 'The token has expired');
    },
  );

  it.each(authenticated.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s: 401 with a revoked token',
    async (_, route) => {
      const res = await stack.request(route.method, pathParameters(route.path).length ? ownerPath(route) : route.path, {
        token: revokedToken,
        body: exampleBody(route),
      });
      expect401(res, 'revoked', 'The token is unknown or revoked');
    },
  );

  it('left every resource of the owner as it was', async () => {
    const after = await ownerViews();
    expect(before.size).toBeGreaterThan(0);
    for (const [k, v] of before) expect(after.get(k), k).toBe(v);
    expect((await stack.request('GET', '/v1/employees', { token: victimToken })).status).toBe(200);
  });
});

describe('API keys', () => {
  const admin = () => typedClient(stack, org.token);
  const employeesWith = async (token: string) => (await typedClient(stack, token).GET('/v1/employees')).response.status;

  it('creates a key whose token is shown once, lists keys without tokens, and revokes at once', async () => {
    const created = await admin().POST('/v1/api-keys', { body: { name: 'CI deploys', type: 'payroll-submitter' } });
    expect(created.response.status).toBe(201);
    expect(created.data!.data).toMatchObject({
      name: 'CI deploys',
      type: 'payroll-submitter',
      scopes: ['read:employees', 'read:payroll', 'write:payroll', 'read:paystubs'],
      revoked_at: null,
    });
    const { token, api_key_id } = created.data!.data;
    expect(token).toMatch(/^pk_sandbox_[0-9A-Za-z]{43}$/);
    expect(created.response.headers.get('location')).toBe(`/v1/api-keys/${api_key_id}`);
    expect(await employeesWith(token)).toBe(200);

    const list = await admin().GET('/v1/api-keys', { params: { query: { limit: 100 } } });
    expect(list.response.status).toBe(200);
    const listed = list.data!.data.api_keys.find((k) => k.api_key_id === api_key_id)!;
    expect(listed.token_hint).toBe(`pk_sandbox_…${token.slice(-4)}`);
    expect(asReceived(list.response).text).not.toMatch(/pk_sandbox_[0-9A-Za-z]{43}/);

    const revoked = await admin().DELETE('/v1/api-keys/{id}', { params: { path: { id: api_key_id } } });
    expect(revoked.response.status).toBe(200);
    expect(revoked.data!.data.revoked_at).not.toBeNull();
    // At once on the function that revoked it and on those that served it a moment before.
    const sameFunction = await typedClient(stack, token).GET('/v1/api-keys');
    expect(sameFunction.response.status).toBe(401);
    expect(sameFunction.error!.error.code).toBe('unauthorized');
    await refusedEverywhere(token);
  });

  it('refuses a token once it has expired', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const created = await admin().POST('/v1/api-keys', {
      body: { name: 'short-lived', type: 'read-only', expires_at: expiresAt },
    });
    expect(created.response.status).toBe(201);
    const { token } = created.data!.data;
    expect(await employeesWith(token)).toBe(200);
    // Await the expiry condition with a bound rather than sleeping a fixed time.
    const status = await vi.waitFor(
      async () => {
        const current = await employeesWith(token);
        if (current === 200)
          throw new Error(`the token expiring at ${expiresAt} was still accepted after 10000 ms of polling`);
        return current;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(status).toBe(401);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
  });

  it("validates key creation and hides other organizations' keys", async () => {
    // Values the schema refuses: hostile input the typed client cannot express, sent raw.
    const bad = await stack.request('POST', '/v1/api-keys', {
      token: org.token,
      body: { name: '', type: 'superuser', expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'expires_at',
      'name',
      'type',
    ]);
    const stranger = typedClient(stack, (await stack.createOrganization('Stranger')).token);
    const theirs = await stranger.GET('/v1/api-keys');
    const mine = await admin().GET('/v1/api-keys');
    const mineIds = mine.data!.data.api_keys.map((k) => k.api_key_id);
    expect(theirs.data!.data.api_keys.some((k) => mineIds.includes(k.api_key_id))).toBe(false);
    expect(
      (await stranger.DELETE('/v1/api-keys/{id}', { params: { path: { id: mineIds[0]! } } })).response.status,
    ).toBe(404);
  });

  it('issues tokens from the admin CLI as JSON alone on stdout', async () => {
    const res = await stack.admin('token', 'create', '--org', org.organization_id, '--type', 'read-only', '--json');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({
      api_key_id: expect.stringMatching(/^key_/),
      token: expect.stringMatching(/^pk_sandbox_/),
      scopes: SCOPES_BY_TYPE['read-only'],
    });
    expect((await typedClient(stack, out.token).GET('/v1/employees')).response.status).toBe(200);
    // An empty body: refused for its scope before it is read.
    expect((await stack.request('POST', '/v1/employees', { token: out.token, body: {} })).status).toBe(403);

    const usage = await stack.admin('token', 'create', '--org', org.organization_id, '--type', 'root');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--type read-only|payroll-submitter|admin');
    const missing = await stack.admin('token', 'create', '--org', 'org_nope', '--type', 'admin', '--json');
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('error: No organization org_nope');
  });
});

describe('the local stack process', () => {
  it('keeps its state across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payroll-restart-'));
    try {
      const first = await startLocalStack({ dir });
      const o = await first.createOrganization('Durable');
      const created = await first.request('POST', '/v1/employees', {
        token: o.token,
        body: {
          first_name: 'Katherine',
          last_name: 'Johnson',
          email: 'kj@example.com',
          employment_type: 'full_time',
          pay_group: 'default',
          pay_schedule: 'monthly',
          start_date: '2026-02-01',
          bank_account: { account_number: '55554444', routing_number: '011000015', account_type: 'savings' },
        },
      });
      expect(created.status).toBe(201);
      await first.stop();
      const second = await startLocalStack({ dir });
      const got = await second.request('GET', `/v1/employees/${created.body.data.employee_id}`, { token: o.token });
      expect(got.status).toBe(200);
      expect(got.body.data).toEqual(created.body.data);
      await second.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says in one line that a port is busy', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'payroll-busy-'));
    try {
      const res = await runToEnd([join(import.meta.dirname, '../../local/start.ts')], {
        ...process.env,
        PAYROLL_DATA_DIR: dir,
        PAYROLL_HTTPS_PORT: String(port),
        PAYROLL_HTTP_PORT: '0',
        PAYROLL_SANDBOX_BANK_PORT: '0',
      });
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toBe(
        `npm start: Port ${port} is already in use: stop whatever uses it, or choose another with PAYROLL_HTTPS_PORT`,
      );
    } finally {
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says in one line that Java is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payroll-nojava-'));
    try {
      const res = await runToEnd([join(import.meta.dirname, '../../local/start.ts')], {
        ...process.env,
        PATH: '/nonexistent',
        JAVA_HOME: '',
        PAYROLL_DATA_DIR: dir,
        PAYROLL_HTTPS_PORT: '0',
        PAYROLL_HTTP_PORT: '0',
        PAYROLL_SANDBOX_BANK_PORT: '0',
      });
      expect(res.code).toBe(1);
      const lines = res.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^npm start: .*Java/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
