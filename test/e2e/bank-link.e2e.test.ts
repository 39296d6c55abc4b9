import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { asReceived, typedClient } from '../support/typed-client.js';

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
    const { token } = await stack.createOrganization('Bank Link Co');
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
    expect(set.data!.data.bank_link).toEqual({ ...LINK, credential: 'password' });
    expect(asReceived(set.response).text).not.toContain(secret);
    const read = await api.GET('/v1/settings');
    expect(read.data!.data.bank_link).toEqual({ ...LINK, credential: 'password' });
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
