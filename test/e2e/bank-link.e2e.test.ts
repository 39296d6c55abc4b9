import { createHash } from 'node:crypto';
import SftpClient from 'ssh2-sftp-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localSecrets } from '../../local/stack-state.js';
import { sandboxBankAccount } from '../../local/sandbox-bank-link.js';
import { transmitBy } from '../../shared/domain/bank-link.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { asReceived, typedClient, type TypedClient } from '../support/typed-client.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * Setting a bank link over HTTPS: validated as strictly as a connection needs, the password write-only, the link's
 * status and inbound files readable by admin keys alone.
 */

let stack: RunningStack;
const FINGERPRINT = `SHA256:${'q'.repeat(42)}A`;
const LINK = {
  host: 'sftp.bank.example',
  port: 2222,
  username: 'acme-payroll',
  remote_inbound_dir: '/inbound',
  remote_outbound_dir: '/outbound/acme',
  host_key_fingerprint: FINGERPRINT,
  cutoff_time: '14:30',
};

beforeAll(async () => {
  stack = await startLocalStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('the bank link settings', () => {
  it('validates the link, keeps the password write-only, and answers the link status and inbound files', async () => {
    // An organization with no link yet (the admin CLI links sandbox organizations to the sandbox bank unless told not to).
    const created = await stack.admin('org', 'create', '--name', 'Bank Link Co', '--without-bank-link', '--json');
    const { token } = JSON.parse(created.stdout) as { token: string };
    expect((await typedClient(stack, token).GET('/v1/settings')).data!.data.bank_link).toBeNull();
    const api = typedClient(stack, token);
    const fieldsOf = (details: { field?: string }[]) => new Set(details.map((d) => d.field));
    const bad = await api.PATCH('/v1/settings', {
      body: {
        bank_link: {
          ...LINK,
          host_key_fingerprint: 'MD5:aa:bb',
          remote_inbound_dir: '/inbound/../etc',
          cutoff_time: '25:00',
          password: 'p',
          private_key: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n',
        },
      },
    });
    expect(bad.response.status).toBe(400);
    expect(fieldsOf(bad.error!.error.details as { field?: string }[])).toEqual(
      new Set([
        'bank_link.host_key_fingerprint',
        'bank_link.remote_inbound_dir',
        'bank_link.cutoff_time',
        'bank_link.password',
      ]),
    );

    const secret = 'correct horse battery staple';
    const set = await api.PATCH('/v1/settings', { body: { bank_link: { ...LINK, password: secret } } });
    expect(set.response.status, asReceived(set.response).text).toBe(200);
    expect(set.data!.data.bank_link).toEqual({
      ...LINK,
      credential: 'password',
      pgp_public_key: null,
      pgp_key_fingerprint: null,
    });
    expect(asReceived(set.response).text).not.toContain(secret);
    const read = await api.GET('/v1/settings');
    expect(read.data!.data.bank_link).toEqual({
      ...LINK,
      credential: 'password',
      pgp_public_key: null,
      pgp_key_fingerprint: null,
    });
    expect(asReceived(read.response).text).not.toContain(secret);

    const status = await api.GET('/v1/bank-link');
    expect(status.data!.data).toEqual({ configured: true, state: null, reason: null, checked_at: null });
    const inbound = await api.GET('/v1/bank-link/inbound-files');
    expect(inbound.data!.data).toEqual({ inbound_files: [], next_page_token: null });

    const key = await api.POST('/v1/api-keys', { body: { name: 'submitter', type: 'payroll-submitter' } });
    const submitter = typedClient(stack, key.data!.data.token);
    expect((await submitter.GET('/v1/bank-link')).response.status).toBe(403);
    expect((await submitter.GET('/v1/bank-link/inbound-files')).response.status).toBe(403);

    const removed = await api.PATCH('/v1/settings', { body: { bank_link: null } });
    expect(removed.data!.data.bank_link).toBeNull();
    expect((await api.GET('/v1/bank-link')).data!.data.configured).toBe(false);
  });
});

const at = (id: string) => ({ params: { path: { id } } });
let seq = 0;

async function hire(api: TypedClient, account: string): Promise<string> {
  const n = seq++;
  const res = await api.POST('/v1/employees', {
    body: {
      first_name: 'Bank',
      last_name: `Link ${n}`,
      email: `bank-link${n}@example.com`,
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2020-01-06',
      bank_account: { account_number: account, routing_number: '011000015', account_type: 'checking' },
    },
  });
  expect(res.response.status, asReceived(res.response).text).toBe(201);
  return res.data!.data.employee_id;
}

describe('the local sandbox bank', () => {
  it('receives the file of a run by itself, byte for byte, acknowledges it, and returns the deposit to 000000000 with no call to the returns intake', async () => {
    const { organization_id: orgId, token } = await stack.createOrganization('Sandbox Bank Co');
    const api = typedClient(stack, token);
    // Linked at creation to the stack's sandbox bank, under an account of its own.
    const settings = (await api.GET('/v1/settings')).data!.data;
    expect(settings.bank_link).toMatchObject({
      host: '127.0.0.1',
      port: stack.state.sandbox_bank.port,
      username: orgId,
      host_key_fingerprint: stack.state.sandbox_bank.host_key_fingerprint,
      credential: 'password',
    });
    // Its account at the bank opens on its first sign-in: reachable at once, before any pass served it.
    const tested = await api.POST('/v1/bank-link/test');
    expect(tested.data!.data).toMatchObject({ ok: true });
    const receiver = await startReceiver();
    await api.POST('/v1/webhooks', { body: { url: receiver.url, events: ['payment.returned'] } });
    const bounce = await hire(api, '000000000');
    const fine = await hire(api, '70000123');
    // A pay date ahead, so the file is due at the bank (its release day's cut-off) after it is sent.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const submitted = await api.POST('/v1/payroll', {
      body: {
        pay_period_start: day(-4),
        pay_period_end: day(9),
        pay_date: day(14),
        employees: [
          { employee_id: bounce, gross_pay: 1500, hours_worked: 80 },
          { employee_id: fine, gross_pay: 1600, hours_worked: 80 },
        ],
      },
    });
    expect(submitted.response.status, asReceived(submitted.response).text).toBe(202);
    const payrollId = (submitted.data!.data as { payroll_id: string }).payroll_id;

    // The file goes to the bank and is acknowledged, with nobody calling anything.
    const file = await vi.waitFor(
      async () => {
        const list = await api.GET('/v1/disbursement-files', { params: { query: { payroll_id: payrollId } } });
        const found = list.data?.data.files[0];
        if (found?.status !== 'acknowledged') throw new Error(`file: ${found?.status ?? 'none yet'}`);
        return found;
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(file.remote_name).toBe(`${file.file_id}.ach`);
    expect(Date.parse(file.transmitted_at!)).toBeLessThanOrEqual(Date.parse(file.acknowledged_at!));
    expect(Date.parse(file.transmitted_at!)).toBeLessThan(transmitBy(file.release_by, '16:00').getTime());

    // What the bank holds is what the API answers, byte for byte (read over SFTP with the organization's account).
    const text = asReceived(
      (await api.GET('/v1/disbursement-files/{id}', { ...at(file.file_id), parseAs: 'text' })).response,
    ).text;
    // The test's own SFTP client (not the service's adapter), checking the host key it was given.
    const bank = new SftpClient('e2e');
    await bank.connect({
      host: '127.0.0.1',
      port: stack.state.sandbox_bank.port,
      username: orgId,
      password: sandboxBankAccount(localSecrets(stack.dir), orgId).password,
      hostVerifier: (key: Buffer) =>
        `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}` ===
        stack.state.sandbox_bank.host_key_fingerprint,
    });
    try {
      expect(((await bank.get(`/inbound/${file.remote_name}`)) as Buffer).toString('latin1')).toBe(text);
      const outbound = (await bank.list('/outbound')).map((f) => f.name).sort();
      expect(outbound).toEqual([`${file.remote_name}.ack`, expect.stringMatching(/^RET_.*\.ach$/)].sort());
    } finally {
      await bank.end();
    }

    // The bank's R03 of the magic account came back through the link: the event, the paystub, the run, the account.
    const [delivery] = await receiver.waitFor((all) => all.length >= 1);
    await receiver.close();
    expect(JSON.parse(delivery!.body)).toMatchObject({
      type: 'payment.returned',
      data: { code: 'R03', employee_id: bounce, payroll_id: payrollId },
    });
    const run = (await api.GET('/v1/payroll/{id}', at(payrollId))).data!.data;
    expect(run).toMatchObject({ status: 'completed', returns: { count: 1 } });
    expect((await api.GET('/v1/employees/{id}', at(bounce))).data!.data.bank_account!.status).toBe('invalid');
    expect((await api.GET('/v1/employees/{id}', at(fine))).data!.data.bank_account!.status).toBe('active');

    // Each file the bank left is recorded once, with what came of it.
    const inbound = await vi.waitFor(async () => {
      const list = (await api.GET('/v1/bank-link/inbound-files')).data!.data.inbound_files;
      if (list.length < 2) throw new Error(`${list.length} inbound files`);
      return list;
    });
    expect(inbound.map((f) => [f.kind, f.outcome]).sort()).toEqual([
      ['acknowledgement', 'acknowledged'],
      ['returns', 'applied'],
    ]);
    expect((await api.GET('/v1/bank-link')).data!.data).toMatchObject({ configured: true, state: 'ok', reason: null });
    // Pointed at another server, the link has no outcome yet: the last one was the sandbox bank's.
    const moved = await api.PATCH('/v1/settings', { body: { bank_link: { ...LINK, password: 'another' } } });
    expect(moved.response.status).toBe(200);
    expect((await api.GET('/v1/bank-link')).data!.data).toMatchObject({ configured: true, state: null });
    // Nothing was posted to the returns intake: the audit log has no such request.
    const logs = (await api.GET('/v1/logs', { params: { query: { limit: 100 } } })).data!.data;
    expect(JSON.stringify(logs)).not.toContain('/v1/disbursement-returns');
  });
});

describe('the connection test', () => {
  it('signs in with the stored link and lists both directories; a missing directory, a wrong pinned key, no link and a non-admin key are told apart', async () => {
    const { organization_id: orgId, token } = await stack.createOrganization('Connection Test Co');
    const api = typedClient(stack, token);
    // A run, so the link is served at once: the pass registers the organization's account with the sandbox bank (it
    // keeps passwords in memory) and delivers the run's file, which the bank acknowledges.
    const employee = await hire(api, '70000456');
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const submitted = await api.POST('/v1/payroll', {
      body: {
        type: 'off_cycle',
        pay_period_start: day(-4),
        pay_period_end: day(9),
        pay_date: day(14),
        employees: [{ employee_id: employee, gross_pay: 1700, hours_worked: 80 }],
      },
    });
    expect(submitted.response.status, asReceived(submitted.response).text).toBe(202);
    const payrollId = (submitted.data!.data as { payroll_id: string }).payroll_id;
    const file = await vi.waitFor(
      async () => {
        const list = await api.GET('/v1/disbursement-files', { params: { query: { payroll_id: payrollId } } });
        const found = list.data?.data.files[0];
        if (found?.status !== 'acknowledged') throw new Error(`file: ${found?.status ?? 'none yet'}`);
        return found;
      },
      { timeout: 30_000, interval: 100 },
    );
    const sent = asReceived(
      (await api.GET('/v1/disbursement-files/{id}', { ...at(file.file_id), parseAs: 'text' })).response,
    ).raw;

    const tested = await api.POST('/v1/bank-link/test');
    expect(tested.response.status, asReceived(tested.response).text).toBe(200);
    expect(tested.data!.message).toBe('Connection tested');
    const outcome = tested.data!.data;
    expect(outcome).toEqual({
      ok: true,
      checked_at: expect.any(String),
      inbound: { dir: '/inbound', files: [{ name: `${file.file_id}.ach`, size: sent.length }], truncated: false },
      outbound: {
        dir: '/outbound',
        files: [{ name: `${file.file_id}.ach.ack`, size: expect.any(Number) }],
        truncated: false,
      },
    });
    const password = sandboxBankAccount(localSecrets(stack.dir), orgId).password;
    expect(asReceived(tested.response).text).not.toContain(password);
    const relink = async (change: Record<string, string>) => {
      const changed = await api.PATCH('/v1/settings', {
        body: {
          bank_link: {
            host: '127.0.0.1',
            port: stack.state.sandbox_bank.port,
            username: orgId,
            remote_inbound_dir: '/inbound',
            remote_outbound_dir: '/outbound',
            host_key_fingerprint: stack.state.sandbox_bank.host_key_fingerprint,
            cutoff_time: '16:00',
            password,
            ...change,
          },
        },
      });
      expect(changed.response.status, asReceived(changed.response).text).toBe(200);
    };

    // Signed in, but a directory the bank does not have: which one, and why.
    await relink({ remote_outbound_dir: '/outbound/elsewhere' });
    const unlisted = await api.POST('/v1/bank-link/test');
    expect(unlisted.data!.data).toEqual({
      ok: false,
      checked_at: expect.any(String),
      reason: 'listing_failed',
      message: expect.stringContaining('/outbound/elsewhere'),
    });

    // The same server under a pinned key it does not hold: refused before signing in, and the key it showed named.
    const wrong = `SHA256:${'B'.repeat(43)}`;
    await relink({ host_key_fingerprint: wrong, password: 'not the password either' });
    const mismatch = await api.POST('/v1/bank-link/test');
    expect(mismatch.response.status, asReceived(mismatch.response).text).toBe(200);
    expect(mismatch.data!.data).toEqual({
      ok: false,
      checked_at: expect.any(String),
      reason: 'host_key_mismatch',
      message: expect.stringMatching(/nothing was sent/),
      presented_fingerprint: stack.state.sandbox_bank.host_key_fingerprint,
    });
    const said = JSON.stringify(mismatch.data!.data);
    expect(said).toContain(`host key ${stack.state.sandbox_bank.host_key_fingerprint}, not the pinned ${wrong}`);

    // A payroll submitter may not test the link.
    const key = await api.POST('/v1/api-keys', { body: { name: 'submitter', type: 'payroll-submitter' } });
    const submitter = typedClient(stack, key.data!.data.token);
    const refused = await submitter.POST('/v1/bank-link/test');
    expect(refused.response.status).toBe(403);
    expect(refused.error!.error.code).toBe('insufficient_scope');

    // No link: a conflict with the organization's state, not a diagnostic.
    const created = await stack.admin('org', 'create', '--name', 'No Link Co', '--without-bank-link', '--json');
    const unlinked = typedClient(stack, (JSON.parse(created.stdout) as { token: string }).token);
    const none = await unlinked.POST('/v1/bank-link/test');
    expect(none.response.status).toBe(409);
    expect(none.error!.error.code).toBe('bank_link_not_configured');
  });
});
