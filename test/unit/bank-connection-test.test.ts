import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type BankConnect,
  BankHostRefusedError,
  type BankTransport,
  HostKeyMismatchError,
  type RemoteFile,
  type SftpTarget,
} from '../../shared/adapters/bank-transport.js';
import { FieldEncryptor, LocalDataKeyProvider } from '../../shared/adapters/envelope-encryption.js';
import type { OrganizationRepository } from '../../shared/data/organization-repository.js';
import type { BankLink } from '../../shared/domain/bank-link.js';
import { BankLinkNotConfiguredError } from '../../shared/domain/errors.js';
import { testBankConnection } from '../../shared/use-cases/bank-link/test-connection.js';

/**
 * The connection test: what the bank's server answers is its outcome, each failure told apart, every step bounded in
 * time, and the session closed whatever happened (even one that opens after the test gave up on it).
 */

const ORG = 'org_01jd0000000000000000000000';
const PINNED = `SHA256:${'p'.repeat(43)}`;
const encryptor = new FieldEncryptor(new LocalDataKeyProvider(randomBytes(32).toString('base64')));
const BUDGET = { connectMs: 100, totalMs: 200 };

async function linkWith(secret: string): Promise<BankLink> {
  return {
    host: 'sftp.bank.test',
    port: 2222,
    username: 'acme',
    remote_inbound_dir: '/in',
    remote_outbound_dir: '/out',
    host_key_fingerprint: PINNED,
    cutoff_time: '14:00',
    credential: { kind: 'password', ciphertext: await encryptor.encrypt(secret, ORG) },
  };
}

/** A server whose directories hold `dirs`; `hang` names the steps that never answer. */
function server(dirs: Record<string, RemoteFile[]>, hang: { connect?: true; list?: string } = {}) {
  const seen = { targets: [] as SftpTarget[], ended: 0 };
  const never = new Promise<never>(() => undefined);
  const transport: BankTransport = {
    list: async (dir) => {
      if (hang.list === dir) return never;
      const files = dirs[dir];
      if (!files) throw new Error(`list: No such file ${dir}`);
      return files;
    },
    put: async () => {
      throw new Error('the test sends nothing');
    },
    get: async () => {
      throw new Error('the test fetches nothing');
    },
    end: async () => {
      seen.ended++;
    },
  };
  let open: (t: BankTransport) => void = () => undefined;
  const late = new Promise<BankTransport>((resolve) => {
    open = resolve;
  });
  const connect: BankConnect = async (target) => {
    seen.targets.push(target);
    return hang.connect ? late : transport;
  };
  return { connect, seen, openLate: () => open(transport) };
}

const services = (link: BankLink | null, connect: BankConnect) => ({
  organizations: { getSettings: async () => ({ bank_link: link }) } as unknown as OrganizationRepository,
  encryptor,
  connect,
  deps: { now: () => new Date() },
});

describe('the bank link connection test', () => {
  it('lists both directories by name, at most 100 files each, names printable and bounded, with the stored secret', async () => {
    const many = Array.from({ length: 150 }, (_, i) => ({ name: `f${String(149 - i).padStart(3, '0')}.ach`, size: i }));
    const bank = server({
      '/in': many,
      '/out': [
        { name: `ack\u0007${'x'.repeat(300)}`, size: 12 },
        { name: 'a.ack', size: 3 },
      ],
    });
    const outcome = await testBankConnection(services(await linkWith('s3cret pass'), bank.connect), ORG, BUDGET);
    if (!outcome.ok) throw new Error(outcome.message);
    expect(outcome.inbound.dir).toBe('/in');
    expect(outcome.inbound.files).toHaveLength(100);
    expect(outcome.inbound.files[0]).toEqual({ name: 'f000.ach', size: 149 });
    expect(outcome.inbound.files[99]!.name).toBe('f099.ach');
    expect(outcome.inbound.truncated).toBe(true);
    expect(outcome.outbound.truncated).toBe(false);
    expect(outcome.outbound.files.map((f) => f.name)).toEqual(['a.ack', `ack\uFFFD${'x'.repeat(250)}…`]);
    expect(Array.from(outcome.outbound.files[1]!.name)).toHaveLength(255);
    expect(bank.seen.targets).toEqual([
      { host: 'sftp.bank.test', port: 2222, username: 'acme', hostKeyFingerprint: PINNED, password: 's3cret pass' },
    ]);
    expect(bank.seen.ended).toBe(1);
  });

  it('answers a refused host key with the key the server presented: nothing was sent', async () => {
    const presented = `SHA256:${'q'.repeat(43)}`;
    const refuse: BankConnect = async () => {
      throw new HostKeyMismatchError(presented);
    };
    const outcome = await testBankConnection(services(await linkWith('pw'), refuse), ORG, BUDGET);
    expect(outcome).toEqual({
      ok: false,
      checked_at: expect.any(String),
      reason: 'host_key_mismatch',
      message: expect.stringContaining('nothing was sent'),
      presented_fingerprint: presented,
    });
    if (outcome.ok) return;
    expect(outcome.message).toContain(presented);
    expect(outcome.message).toContain(PINNED);
  });

  it('tells a refused host from a failed connection', async () => {
    const refused: BankConnect = async () => {
      throw new BankHostRefusedError('sftp.bank.test', 'not a public address');
    };
    const failing: BankConnect = async () => {
      throw new Error('connect: All configured authentication methods failed');
    };
    expect(await testBankConnection(services(await linkWith('pw'), refused), ORG, BUDGET)).toMatchObject({
      ok: false,
      reason: 'host_refused',
      message: expect.stringContaining('not a public address'),
    });
    expect(await testBankConnection(services(await linkWith('pw'), failing), ORG, BUDGET)).toEqual({
      ok: false,
      checked_at: expect.any(String),
      reason: 'connection_failed',
      message: 'connect: All configured authentication methods failed',
    });
  });

  it('gives up on a session that does not open in time, and closes it when it does', async () => {
    const bank = server({ '/in': [], '/out': [] }, { connect: true });
    const outcome = await testBankConnection(services(await linkWith('pw'), bank.connect), ORG, BUDGET);
    expect(outcome).toEqual({
      ok: false,
      checked_at: expect.any(String),
      reason: 'connection_failed',
      message: 'No session within 0.1 s',
    });
    expect(bank.seen.ended).toBe(0);
    bank.openLate();
    await expect.poll(() => bank.seen.ended).toBe(1);
  });

  it('answers a directory that cannot be listed, or not in time, as listing_failed naming it, and closes the session', async () => {
    const missing = server({ '/in': [] });
    expect(await testBankConnection(services(await linkWith('pw'), missing.connect), ORG, BUDGET)).toEqual({
      ok: false,
      checked_at: expect.any(String),
      reason: 'listing_failed',
      message: 'Listing /out: list: No such file /out',
    });
    expect(missing.seen.ended).toBe(1);

    const slow = server({ '/in': [], '/out': [] }, { list: '/in' });
    const started = Date.now();
    expect(await testBankConnection(services(await linkWith('pw'), slow.connect), ORG, BUDGET)).toMatchObject({
      ok: false,
      reason: 'listing_failed',
      message: 'Listing /in: No answer within 0.2 s in all',
    });
    expect(Date.now() - started).toBeLessThan(BUDGET.totalMs + 150);
    expect(slow.seen.ended).toBe(1);
  });

  it('refuses an organization without a link', async () => {
    const bank = server({});
    await expect(testBankConnection(services(null, bank.connect), ORG, BUDGET)).rejects.toBeInstanceOf(
      BankLinkNotConfiguredError,
    );
    expect(bank.seen.targets).toEqual([]);
  });
});
