import * as openpgp from 'openpgp';
import { describe, expect, it } from 'vitest';
import type { FieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { encryptForBank, readBankPublicKey } from '../../shared/adapters/pgp.js';
import type { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { InvalidRequestError } from '../../shared/domain/errors.js';
import { defaultSettings, type OrganizationSettings } from '../../shared/domain/settings.js';
import { updateSettingsBody } from '../../shared/schemas/settings.js';
import { settingsView, updateSettings } from '../../shared/use-cases/settings.js';

/**
 * The bank's PGP key as the bank link reads it, and files encrypted to it, checked by decrypting with OpenPGP.js and
 * the private half. Keys are ECC (curve25519): generated in milliseconds.
 */

const DAY_S = 86_400;
type KeyShape = Omit<openpgp.KeyOptions, 'userIDs' | 'format'>;
const options = (shape: KeyShape) => ({
  type: 'curve25519' as const,
  userIDs: [{ name: 'Bank', email: 'files@bank.example' }],
  ...shape,
});
const keyPair = (shape: KeyShape = {}) => openpgp.generateKey({ ...options(shape), format: 'armored' });
const keyObjects = (shape: KeyShape = {}) => openpgp.generateKey({ ...options(shape), format: 'object' });
const keyBytes = (shape: KeyShape = {}) => openpgp.generateKey({ ...options(shape), format: 'binary' });

describe('readBankPublicKey', () => {
  it('reads a public key able to encrypt: its fingerprint in upper-case hex', async () => {
    const { publicKey } = await keyPair();
    const fingerprint = (await openpgp.readKey({ armoredKey: publicKey })).getFingerprint().toUpperCase();
    expect(await readBankPublicKey(publicKey)).toEqual({ ok: true, fingerprint, expires_at: null });
    expect(fingerprint).toMatch(/^[0-9A-F]{40}$/);
  });

  it('gives when a key that expires will stop being usable', async () => {
    const now = new Date('2026-11-29T12:00:00Z');
    const { publicKey } = await keyPair({ date: now, keyExpirationTime: 30 * DAY_S });
    const reading = await readBankPublicKey(publicKey, now);
    expect(reading).toMatchObject({ ok: true, expires_at: '2026-12-29T12:00:00.000Z' });
  });

  it.each([
    ['garbage', 'not a key'],
    ['an empty armor', '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n'],
    ['a truncated key', 'TRUNCATED'],
  ])('refuses %s as unreadable', async (_, text) => {
    const armored = text === 'TRUNCATED' ? (await keyPair()).publicKey.slice(0, 200) : text;
    expect(await readBankPublicKey(armored)).toEqual({ ok: false, reason: expect.stringMatching(/Not a readable/) });
  });

  it('refuses a private key, whatever its armor header says', async () => {
    const { privateKey } = await keyPair();
    expect(await readBankPublicKey(privateKey)).toEqual({ ok: false, reason: expect.stringMatching(/private key/) });
    const relabelled = privateKey.replaceAll('PRIVATE KEY BLOCK', 'PUBLIC KEY BLOCK');
    expect(await readBankPublicKey(relabelled)).toEqual({ ok: false, reason: expect.stringMatching(/private key/) });
  });

  it('refuses an expired key, naming the day it expired', async () => {
    const created = new Date('2026-01-01T00:00:00Z');
    const { publicKey } = await keyPair({ date: created, keyExpirationTime: DAY_S });
    expect(await readBankPublicKey(publicKey, new Date('2026-03-01T00:00:00Z'))).toEqual({
      ok: false,
      reason: 'This key expired on 2026-01-02',
    });
  });

  it('refuses a revoked key', async () => {
    const { privateKey } = await keyObjects();
    const { publicKey } = await openpgp.revokeKey({ key: privateKey, format: 'armored' });
    expect(await readBankPublicKey(publicKey)).toEqual({ ok: false, reason: 'This key is revoked' });
  });

  it('refuses a signing-only key (no encryption subkey)', async () => {
    const { publicKey } = await keyPair({ subkeys: [] });
    expect(await readBankPublicKey(publicKey)).toEqual({
      ok: false,
      reason: expect.stringMatching(/no valid encryption subkey/),
    });
  });

  it('refuses two keys, in one armored block or in two: which one the bank meant is not guessed', async () => {
    const [a, b] = await Promise.all([keyBytes(), keyBytes()]);
    const oneBlock = openpgp.armor(openpgp.enums.armor.publicKey, Buffer.concat([a.publicKey, b.publicKey]));
    expect(await readBankPublicKey(oneBlock)).toEqual({ ok: false, reason: 'One key is expected, this block holds 2' });
    const twoBlocks = [a, b].map((k) => openpgp.armor(openpgp.enums.armor.publicKey, k.publicKey)).join('\n');
    expect(await readBankPublicKey(twoBlocks)).toEqual({ ok: false, reason: expect.stringMatching(/several/) });
  });
});

describe('encryptForBank', () => {
  it('gives a binary OpenPGP message that the private key decrypts back to the same bytes', async () => {
    const { publicKey, privateKey } = await keyPair();
    const file = Buffer.from(`${'1'.repeat(94)}\n${'9'.repeat(94)}\n`, 'ascii');
    const encrypted = await encryptForBank(file, publicKey);
    expect(Buffer.isBuffer(encrypted)).toBe(true);
    expect(encrypted.toString('latin1')).not.toContain('-----BEGIN PGP MESSAGE-----');
    expect(encrypted.includes(file)).toBe(false);
    const { data } = await openpgp.decrypt({
      message: await openpgp.readMessage({ binaryMessage: new Uint8Array(encrypted) }),
      decryptionKeys: await openpgp.readPrivateKey({ armoredKey: privateKey }),
      format: 'binary',
    });
    expect(Buffer.from(data).equals(file)).toBe(true);
  });

  it('throws for a key that cannot encrypt (signing only)', async () => {
    const { publicKey } = await keyPair({ subkeys: [] });
    await expect(encryptForBank(Buffer.from('x'), publicKey)).rejects.toThrow();
  });
});

describe("the bank link's pgp_public_key setting", () => {
  const NOW = new Date('2026-11-29T12:00:00Z');
  const link = (pgp_public_key?: string | null) => ({
    host: '127.0.0.1',
    port: 2222,
    username: 'acme',
    remote_inbound_dir: '/inbound',
    remote_outbound_dir: '/outbound',
    host_key_fingerprint: `SHA256:${'A'.repeat(43)}`,
    cutoff_time: '15:00',
    password: 'secret',
    ...(pgp_public_key !== undefined && { pgp_public_key }),
  });
  const issuesOf = (body: unknown) => {
    const parsed = updateSettingsBody.safeParse(body);
    return parsed.success ? [] : parsed.error.issues.map((i) => i.path.join('.'));
  };

  it('the schema takes armored public key text or null, and refuses any other shape on the field', async () => {
    const { publicKey, privateKey } = await keyPair();
    expect(issuesOf({ bank_link: link(publicKey) })).toEqual([]);
    expect(issuesOf({ bank_link: link(null) })).toEqual([]);
    expect(issuesOf({ bank_link: link() })).toEqual([]);
    for (const bad of [privateKey, 'not a key', `${publicKey}${' '.repeat(20_000)}`, 42])
      expect(issuesOf({ bank_link: link(bad as string) })).toEqual(['bank_link.pgp_public_key']);
  });

  it('is read when the link is set: kept with its fingerprint and answered; refused with a reason; removed by null', async () => {
    let stored: OrganizationSettings = defaultSettings({ id: 'org_1', name: 'Acme' }, 'sandbox', NOW);
    const organizations = {
      getSettings: async () => stored,
      putSettings: async (_: string, next: OrganizationSettings) => {
        stored = next;
      },
    } as unknown as OrganizationRepository;
    const services = {
      organizations,
      encryptor: { encrypt: async (text: string) => `sealed:${text}` } as unknown as FieldEncryptor,
      deps: { now: () => NOW, newId: () => 'id' },
      bankHost: { policy: 'sandbox' as const },
    };
    const caller = { organizationId: 'org_1', environment: 'sandbox' as const };
    const { publicKey } = await keyPair({ date: new Date('2026-11-01T00:00:00Z') });
    const fingerprint = (await openpgp.readKey({ armoredKey: publicKey })).getFingerprint().toUpperCase();

    const set = await updateSettings(services, caller, { bank_link: link(publicKey) });
    expect(settingsView(set, 'sandbox').bank_link).toMatchObject({
      pgp_public_key: publicKey,
      pgp_key_fingerprint: fingerprint,
    });

    const expired = await keyPair({ date: new Date('2026-01-01T00:00:00Z'), keyExpirationTime: DAY_S });
    const refused = await updateSettings(services, caller, { bank_link: link(expired.publicKey) }).catch((e) => e);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect((refused as InvalidRequestError).details).toEqual([
      { field: 'bank_link.pgp_public_key', code: 'invalid_pgp_key', message: 'This key expired on 2026-01-02' },
    ]);
    expect(stored.bank_link?.pgp_key_fingerprint).toBe(fingerprint);

    const cleared = await updateSettings(services, caller, { bank_link: link(null) });
    expect(settingsView(cleared, 'sandbox').bank_link).toMatchObject({
      pgp_public_key: null,
      pgp_key_fingerprint: null,
    });
  });
});
