import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES_BY_TYPE, TOKEN_TYPES, type TokenType } from '../../shared/domain/scopes.js';
import { ROUTES } from '../../shared/http/routes.js';
import { runToEnd, startLocalStack, type RunningStack } from '../support/local-stack.js';

let stack: RunningStack;
let org: { organization_id: string; token: string };
const tokens = {} as Record<TokenType, string>;

beforeAll(async () => {
  stack = await startLocalStack();
  org = await stack.createOrganization('Auth Co');
  for (const type of TOKEN_TYPES) {
    const res = await stack.request('POST', '/v1/api-keys', { token: org.token, body: { name: `${type} key`, type } });
    expect(res.status).toBe(201);
    tokens[type] = res.body.data.token;
  }
});

afterAll(async () => {
  await stack?.stop();
});

const concrete = (path: string) => path.replace(/\{\w+\}/g, 'x_unknown');
const bodyFor = (method: string) => (method === 'POST' || method === 'PATCH' ? {} : undefined);

/** Generated from the route table: a new route is covered by this matrix without anyone editing it. */
describe('authorization matrix: every route × every token type', () => {
  const cases = ROUTES.filter((r) => r.scope !== null).flatMap((route) => TOKEN_TYPES.map((type) => ({ route, type })));

  it.each(cases.map((c) => [`${c.route.method} ${c.route.path}`, c.type, c] as const))('%s with a %s token', async (_, __, { route, type }) => {
    const res = await stack.request(route.method, concrete(route.path), { token: tokens[type], body: bodyFor(route.method) });
    const allowed = SCOPES_BY_TYPE[type].includes(route.scope!);
    if (allowed) {
      expect([401, 403]).not.toContain(res.status);
    } else {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'insufficient_scope', message: 'Forbidden: Insufficient scope' });
      // Refused for its scope, but authenticated: it counts against the bucket and says so.
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
    }
  });

  it.each(ROUTES.filter((r) => r.scope !== null).map((r) => [`${r.method} ${r.path}`, r] as const))('%s: 401 without, with a malformed and with an unknown token', async (_, route) => {
    for (const headers of [{}, { Authorization: 'Bearer' }, { Authorization: 'Basic dXNlcjpwYXNz' }, { Authorization: 'Bearer pk_sandbox_000' },
      { Authorization: `Bearer pk_sandbox_${'A'.repeat(43)}` }] as Record<string, string>[]) {
      const res = await stack.request(route.method, concrete(route.path), { headers, body: bodyFor(route.method) });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ status: 401, error: { code: 'unauthorized', message: 'Unauthorized' } });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="payroll"/);
    }
  });
});

describe('API keys', () => {
  it('creates a key whose token is shown once, lists keys without tokens, and revokes at once', async () => {
    const created = await stack.request('POST', '/v1/api-keys', { token: org.token, body: { name: 'CI deploys', type: 'payroll-submitter' } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      name: 'CI deploys', type: 'payroll-submitter', scopes: ['read:employees', 'read:payroll', 'write:payroll', 'read:paystubs'], revoked_at: null,
    });
    const { token, api_key_id } = created.body.data;
    expect(token).toMatch(/^pk_sandbox_[0-9A-Za-z]{43}$/);
    expect(created.headers.location).toBe(`/v1/api-keys/${api_key_id}`);
    expect((await stack.request('GET', '/v1/employees', { token })).status).toBe(200);

    const list = await stack.request('GET', '/v1/api-keys?limit=100', { token: org.token });
    expect(list.status).toBe(200);
    const listed = list.body.data.api_keys.find((k: { api_key_id: string }) => k.api_key_id === api_key_id);
    expect(listed.token_hint).toBe(`pk_sandbox_…${token.slice(-4)}`);
    expect(list.text).not.toMatch(/pk_sandbox_[0-9A-Za-z]{43}/);

    const revoked = await stack.request('DELETE', `/v1/api-keys/${api_key_id}`, { token: org.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revoked_at).not.toBeNull();
    const after = await stack.request('GET', '/v1/employees', { token });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');
  });

  it('refuses a token once it has expired', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const created = await stack.request('POST', '/v1/api-keys', { token: org.token, body: { name: 'short-lived', type: 'read-only', expires_at: expiresAt } });
    expect(created.status).toBe(201);
    const { token } = created.body.data;
    expect((await stack.request('GET', '/v1/employees', { token })).status).toBe(200);
    // Await the expiry condition with a bound rather than sleeping a fixed time.
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) status = (await stack.request('GET', '/v1/employees', { token })).status;
    expect(status).toBe(401);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
  });

  it('validates key creation and hides other organizations\' keys', async () => {
    const bad = await stack.request('POST', '/v1/api-keys', { token: org.token, body: { name: '', type: 'superuser', expires_at: '2020-01-01T00:00:00Z' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['expires_at', 'name', 'type']);
    const stranger = await stack.createOrganization('Stranger');
    const theirs = await stack.request('GET', '/v1/api-keys', { token: stranger.token });
    const mine = await stack.request('GET', '/v1/api-keys', { token: org.token });
    const mineIds = mine.body.data.api_keys.map((k: { api_key_id: string }) => k.api_key_id);
    expect(theirs.body.data.api_keys.some((k: { api_key_id: string }) => mineIds.includes(k.api_key_id))).toBe(false);
    expect((await stack.request('DELETE', `/v1/api-keys/${mineIds[0]}`, { token: stranger.token })).status).toBe(404);
  });

  it('issues tokens from the admin CLI as JSON alone on stdout', async () => {
    const res = await stack.admin('token', 'create', '--org', org.organization_id, '--type', 'read-only', '--json');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ api_key_id: expect.stringMatching(/^key_/), token: expect.stringMatching(/^pk_sandbox_/), scopes: SCOPES_BY_TYPE['read-only'] });
    expect((await stack.request('GET', '/v1/employees', { token: out.token })).status).toBe(200);
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
      const created = await first.request('POST', '/v1/employees', { token: o.token, body: {
        first_name: 'Katherine', last_name: 'Johnson', email: 'kj@example.com', employment_type: 'full_time', pay_group: 'default',
        pay_schedule: 'monthly', start_date: '2026-02-01', bank_account: { account_number: '55554444', routing_number: '011000015', account_type: 'savings' },
      } });
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
      const res = await runToEnd([join(import.meta.dirname, '../../local/start.ts')], { ...process.env, PAYROLL_DATA_DIR: dir, PAYROLL_HTTPS_PORT: String(port), PAYROLL_HTTP_PORT: '0' });
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toBe(`npm start: Port ${port} is already in use: stop whatever uses it, or choose another with PAYROLL_HTTPS_PORT`);
    } finally {
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says in one line that Java is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payroll-nojava-'));
    try {
      const res = await runToEnd([join(import.meta.dirname, '../../local/start.ts')], { ...process.env, PATH: '/nonexistent', JAVA_HOME: '', PAYROLL_DATA_DIR: dir, PAYROLL_HTTPS_PORT: '0', PAYROLL_HTTP_PORT: '0' });
      expect(res.code).toBe(1);
      const lines = res.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^npm start: .*Java/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
