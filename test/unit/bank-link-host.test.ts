import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import type { Resolver } from '../../shared/adapters/outbound-host.js';
import { BankHostRefusedError, sftpConnector, type SftpTarget } from '../../shared/adapters/sftp-transport.js';
import { resetConfigForTests } from '../../shared/config/env.js';
import type { BankLinkRepository } from '../../shared/data/bank-link-repository.js';
import type { OrganizationRepository } from '../../shared/data/organization-repository.js';
import type { BankLink } from '../../shared/domain/bank-link.js';
import { InvalidRequestError } from '../../shared/domain/errors.js';
import { defaultSettings, type OrganizationSettings } from '../../shared/domain/settings.js';
import type { UpdateSettingsInput } from '../../shared/schemas/settings.js';
import { type BankLinkServices, serveBankLink } from '../../shared/use-cases/bank-link/serve-bank-link.js';
import { updateSettings } from '../../shared/use-cases/settings.js';

/**
 * The bank link's host is guarded like a webhook URL: when the link is set (a 400 on `bank_link.host`) and again at
 * every connection, which then opens to the address it checked, never to the name a second time.
 */

/** What the SFTP client was asked to connect to; the client itself never reaches a network. */
const sftp = vi.hoisted(() => ({ connects: [] as Record<string, unknown>[] }));
vi.mock('ssh2-sftp-client', () => ({
  default: class {
    async connect(options: Record<string, unknown>) {
      sftp.connects.push(options);
    }
    async end() {}
  },
}));

const PUBLIC = '93.184.216.34';
const NOW = new Date('2026-11-29T12:00:00Z');
const ORG = 'org_01jd0000000000000000000000';
const table: Record<string, string[]> = {
  'sftp.bank.test': [PUBLIC],
  'internal.bank.test': ['10.20.30.40'],
  'mixed.bank.test': [PUBLIC, '192.168.1.10'],
  'metadata.bank.test': ['169.254.169.254'],
  'loopback.bank.test': ['127.0.0.1'],
};
let lookups: string[] = [];
const resolve: Resolver = async (name) => {
  lookups.push(name);
  const found = table[name];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  return found;
};

const link = (host: string, extra: Partial<NonNullable<UpdateSettingsInput['bank_link']>> = {}) => ({
  host,
  port: 22,
  username: 'acme',
  remote_inbound_dir: '/inbound',
  remote_outbound_dir: '/outbound',
  host_key_fingerprint: `SHA256:${'A'.repeat(43)}`,
  cutoff_time: '15:00',
  password: 'secret',
  ...extra,
});

/** updateSettings over one organization's settings in memory. */
function settingsWorld(policy?: 'sandbox' | 'production') {
  let stored: OrganizationSettings = defaultSettings({ id: ORG, name: 'Acme' }, 'sandbox', NOW);
  const organizations = {
    getSettings: async () => stored,
    putSettings: async (_: string, next: OrganizationSettings) => {
      stored = next;
    },
  } as unknown as OrganizationRepository;
  const encryptor = { encrypt: async (text: string) => `sealed:${text}` } as unknown as FieldEncryptor;
  const deps = { now: () => NOW, newId: () => 'id' };
  const set = (bankLink: ReturnType<typeof link>) =>
    updateSettings(
      { organizations, encryptor, deps, ...(policy && { bankHost: { policy, resolve } }) },
      { organizationId: ORG, environment: 'sandbox' },
      { bank_link: bankLink },
    );
  return { set, stored: () => stored };
}

async function refusal(work: Promise<unknown>) {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidRequestError);
  return (err as InvalidRequestError).details;
}

beforeEach(() => {
  lookups = [];
  sftp.connects.length = 0;
});

/** The deployment's policy is read from the environment, parsed once: parsed again after a change. */
function stubEnv(values: Record<string, string>) {
  for (const [name, value] of Object.entries(values)) vi.stubEnv(name, value);
  resetConfigForTests();
}

afterEach(() => {
  vi.unstubAllEnvs();
  resetConfigForTests();
});

describe('setting a bank link in production', () => {
  it.each([
    ['10.0.0.1', 'address 10.0.0.1 is not public'],
    ['172.16.5.4', 'address 172.16.5.4 is not public'],
    ['192.168.0.10', 'address 192.168.0.10 is not public'],
    ['127.0.0.1', 'address 127.0.0.1 is not public'],
    ['169.254.169.254', 'address 169.254.169.254 is not public'],
    ['100.64.0.1', 'address 100.64.0.1 is not public'],
    ['0.0.0.0', 'address 0.0.0.0 is not public'],
    ['203.0.113.7', 'address 203.0.113.7 is not public'],
    ['localhost', 'localhost is not allowed here'],
    ['sftp.localhost', 'localhost is not allowed here'],
    ['internal.bank.test', 'hostname resolves to an address that is not public'],
    ['mixed.bank.test', 'hostname resolves to an address that is not public'],
    ['metadata.bank.test', 'hostname resolves to an address that is not public'],
    ['loopback.bank.test', 'hostname resolves to an address that is not public'],
    ['nowhere.bank.test', 'hostname did not resolve'],
  ])('refuses %s: %s', async (host, reason) => {
    const world = settingsWorld('production');
    expect(await refusal(world.set(link(host)))).toEqual([
      { field: 'bank_link.host', code: 'unsafe_host', message: reason },
    ]);
    expect(world.stored().bank_link).toBeUndefined();
  });

  it('judges the address a numeric host name stands for, as the system resolver reads it', async () => {
    stubEnv({ PAYROLL_ENVIRONMENT: 'production' });
    const world = settingsWorld();
    // 2130706433 is 127.0.0.1 written as one number: no resolver is injected, the system's reads it.
    expect(await refusal(world.set(link('2130706433')))).toEqual([
      expect.objectContaining({ field: 'bank_link.host', code: 'unsafe_host' }),
    ]);
  });

  it('accepts a name resolving to public addresses only', async () => {
    const world = settingsWorld('production');
    await world.set(link('SFTP.bank.test'));
    expect(world.stored().bank_link).toMatchObject({ host: 'SFTP.bank.test', pgp_public_key: null });
    expect(lookups).toEqual(['sftp.bank.test']);
  });

  it('by default follows the deployment, as webhook URLs do: loopback only on a sandbox local stack', async () => {
    const world = settingsWorld();
    stubEnv({ PAYROLL_ENVIRONMENT: 'sandbox', PAYROLL_LOCAL_STACK: 'false' });
    expect(await refusal(world.set(link('127.0.0.1', { port: 2222 })))).toEqual([
      { field: 'bank_link.host', code: 'unsafe_host', message: 'address 127.0.0.1 is not public' },
    ]);
    stubEnv({ PAYROLL_LOCAL_STACK: 'true', PAYROLL_RESERVED_LOOPBACK_PORTS: '8443' });
    await world.set(link('127.0.0.1', { port: 2222 }));
    expect(world.stored().bank_link?.host).toBe('127.0.0.1');
  });

  it('reports the host and an unusable PGP key together', async () => {
    const world = settingsWorld('production');
    const notAKey = '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot a key\n-----END PGP PUBLIC KEY BLOCK-----\n';
    const details = await refusal(world.set(link('10.0.0.1', { pgp_public_key: notAKey })));
    expect(details.map((d) => [d.field, d.code])).toEqual([
      ['bank_link.host', 'unsafe_host'],
      ['bank_link.pgp_public_key', 'invalid_pgp_key'],
    ]);
  });
});

describe('setting a bank link on a sandbox local stack', () => {
  it('accepts loopback, except the ports of the stack itself', async () => {
    stubEnv({ PAYROLL_RESERVED_LOOPBACK_PORTS: '8000,8443' });
    const world = settingsWorld('sandbox');
    await world.set(link('127.0.0.1', { port: 2222 }));
    await world.set(link('localhost', { port: 2222 }));
    expect(await refusal(world.set(link('127.0.0.1', { port: 8443 })))).toEqual([
      {
        field: 'bank_link.host',
        code: 'unsafe_host',
        message: "port 8443 on loopback is one of the stack's own services, not the bank's SFTP server",
      },
    ]);
  });

  it('still refuses private addresses, but takes a name its resolver does not know yet (each connection checks)', async () => {
    const world = settingsWorld('sandbox');
    expect(await refusal(world.set(link('10.0.0.1')))).toEqual([
      expect.objectContaining({ field: 'bank_link.host', message: 'address 10.0.0.1 is not public' }),
    ]);
    expect(await refusal(world.set(link('internal.bank.test')))).toHaveLength(1);
    await world.set(link('sftp.bank.example'));
    expect(world.stored().bank_link?.host).toBe('sftp.bank.example');
  });
});

describe('connecting to the bank', () => {
  const target = (host: string, port = 22): SftpTarget => ({
    host,
    port,
    username: 'acme',
    hostKeyFingerprint: `SHA256:${'A'.repeat(43)}`,
    password: 'secret',
  });

  it.each([
    ['10.0.0.1', 'address 10.0.0.1 is not public'],
    ['internal.bank.test', 'hostname resolves to an address that is not public'],
    ['nowhere.bank.test', 'hostname did not resolve'],
    ['localhost', 'localhost is not allowed here'],
  ])('in production, refuses %s before opening anything', async (host, reason) => {
    const connect = sftpConnector({ policy: 'production', resolve });
    const err = await connect(target(host)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BankHostRefusedError);
    expect(err).toMatchObject({ host, reason, message: `The bank's host ${host} is refused: ${reason}` });
    expect(sftp.connects).toEqual([]);
  });

  it('connects to the address it checked, resolving the name once', async () => {
    const transport = await sftpConnector({ policy: 'production', resolve })(target('sftp.bank.test'));
    await transport.end();
    expect(lookups).toEqual(['sftp.bank.test']);
    expect(sftp.connects).toEqual([expect.objectContaining({ host: PUBLIC, port: 22, username: 'acme' })]);
  });

  it("in the sandbox, pins localhost to 127.0.0.1 and refuses the stack's own ports", async () => {
    stubEnv({ PAYROLL_RESERVED_LOOPBACK_PORTS: '8443' });
    const connect = sftpConnector({ policy: 'sandbox', resolve });
    await (await connect(target('localhost', 2222))).end();
    expect(sftp.connects).toEqual([expect.objectContaining({ host: '127.0.0.1', port: 2222 })]);
    expect(lookups).toEqual([]);
    await expect(connect(target('127.0.0.1', 8443))).rejects.toBeInstanceOf(BankHostRefusedError);
    await expect(connect(target('10.1.1.1'))).rejects.toThrow(/address 10\.1\.1\.1 is not public/);
  });

  it("a refused host is the pass's failure: the link is marked failing with the reason, nothing is sent", async () => {
    const statuses: unknown[] = [];
    const services = {
      deps: { now: () => NOW, newId: () => 'id' },
      encryptor: { decrypt: async () => 'secret' },
      bankLinks: {
        openFiles: async () => [],
        putStatus: async (_: string, status: unknown) => void statuses.push(status),
      } as unknown as BankLinkRepository,
      connect: sftpConnector({ policy: 'production', resolve }),
    } as unknown as BankLinkServices;
    const stored: BankLink = {
      host: 'internal.bank.test',
      port: 22,
      username: 'acme',
      remote_inbound_dir: '/inbound',
      remote_outbound_dir: '/outbound',
      host_key_fingerprint: `SHA256:${'A'.repeat(43)}`,
      cutoff_time: '15:00',
      credential: { kind: 'password', ciphertext: 'sealed' },
    };
    const outcome = await serveBankLink(services, ORG, stored);
    expect(outcome.sent).toEqual([]);
    expect(outcome.failure).toMatch(
      /internal\.bank\.test is refused: hostname resolves to an address that is not public/,
    );
    expect(statuses).toEqual([{ state: 'failing', reason: outcome.failure, checked_at: NOW.toISOString() }]);
    expect(sftp.connects).toEqual([]);
  });
});
