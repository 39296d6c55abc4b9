import { randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { FieldEncryptor, KmsDataKeyProvider, LocalDataKeyProvider } from '../../shared/adapters/envelope-encryption.js';

const master = randomBytes(32).toString('base64');

describe('envelope encryption of bank account numbers', () => {
  it('round-trips and never stores the plaintext', async () => {
    const enc = new FieldEncryptor(new LocalDataKeyProvider(master));
    const ciphertext = await enc.encrypt('123456789012', 'org_a');
    expect(ciphertext).not.toContain('123456789012');
    expect(ciphertext.startsWith('v1.')).toBe(true);
    expect(await enc.decrypt(ciphertext, 'org_a')).toBe('123456789012');
  });

  it('binds the ciphertext to its organization', async () => {
    const enc = new FieldEncryptor(new LocalDataKeyProvider(master));
    const ciphertext = await enc.encrypt('123456789012', 'org_a');
    await expect(enc.decrypt(ciphertext, 'org_b')).rejects.toThrow();
  });

  it('decrypts in another container that shares only the master key', async () => {
    const a = new FieldEncryptor(new LocalDataKeyProvider(master));
    const b = new FieldEncryptor(new LocalDataKeyProvider(master));
    expect(await b.decrypt(await a.encrypt('000123', 'org'), 'org')).toBe('000123');
  });

  it('asks KMS for one data key for many encryptions, and again once it is old', async () => {
    const kms = mockClient(KMSClient);
    const dataKey = randomBytes(32);
    kms.on(GenerateDataKeyCommand).resolves({ Plaintext: dataKey, CiphertextBlob: Buffer.from('wrapped-by-kms') });
    kms.on(DecryptCommand).resolves({ Plaintext: dataKey });
    let now = 0;
    const enc = new FieldEncryptor(new KmsDataKeyProvider('alias/test', 'bank-account', new KMSClient({})), () => now);
    const first = await enc.encrypt('11112222', 'org');
    await enc.encrypt('33334444', 'org');
    expect(kms.commandCalls(GenerateDataKeyCommand)).toHaveLength(1);
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]!.args[0].input).toMatchObject({
      KeySpec: 'AES_256',
      EncryptionContext: { purpose: 'bank-account' },
    });
    now = 6 * 60_000;
    await enc.encrypt('55556666', 'org');
    expect(kms.commandCalls(GenerateDataKeyCommand)).toHaveLength(2);
    const other = new FieldEncryptor(new KmsDataKeyProvider('alias/test', 'bank-account', new KMSClient({})));
    expect(await other.decrypt(first, 'org')).toBe('11112222');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
    kms.restore();
  });

  it('names what it protects in the KMS encryption context, so grants can be confined to one kind of secret', async () => {
    const kms = mockClient(KMSClient);
    const dataKey = randomBytes(32);
    kms.on(GenerateDataKeyCommand).resolves({ Plaintext: dataKey, CiphertextBlob: Buffer.from('wrapped') });
    kms.on(DecryptCommand).resolves({ Plaintext: dataKey });
    const sealed = await new FieldEncryptor(
      new KmsDataKeyProvider('alias/test', 'webhook-secret', new KMSClient({})),
    ).encrypt('whsec_x', 'org');
    expect(
      await new FieldEncryptor(new KmsDataKeyProvider('alias/test', 'webhook-secret', new KMSClient({}))).decrypt(
        sealed,
        'org',
      ),
    ).toBe('whsec_x');
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]!.args[0].input.EncryptionContext).toEqual({
      purpose: 'webhook-secret',
    });
    expect(kms.commandCalls(DecryptCommand)[0]!.args[0].input.EncryptionContext).toEqual({ purpose: 'webhook-secret' });
    kms.restore();
  });
});
