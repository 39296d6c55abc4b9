import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { config } from '../config/env.js';
import { traced } from './observability.js';

/**
 * Envelope encryption of bank account numbers and webhook signing secrets: AES-256-GCM under a data key, the data
 * key wrapped by KMS (deployed) or by a local master key (local stack, tests). The organization id is bound in as
 * additional authenticated data, so a ciphertext copied into another organization's item does not decrypt.
 *
 * Each kind of secret has its own encryptor and KMS encryption context (`purpose`), and the functions' grants are
 * conditioned on it: the webhook deliverer can unwrap signing secrets but not a bank account number's data key,
 * and the payroll processor the reverse. Locally one master key wraps both (there is no IAM to separate them).
 *
 * Data keys are reused for a bounded time and count, as the AWS Encryption SDK's caching manager does, so a
 * burst of employee creations costs one KMS call, not one per employee.
 */
export interface DataKeyProvider {
  generate(): Promise<{ plaintext: Buffer; wrapped: Buffer }>;
  unwrap(wrapped: Buffer): Promise<Buffer>;
}

/** What a key protects: the KMS encryption context every grant is conditioned on. */
export type KeyPurpose = 'bank-account' | 'webhook-secret' | 'disbursement-file';

export class KmsDataKeyProvider implements DataKeyProvider {
  constructor(
    private readonly keyId: string,
    private readonly purpose: KeyPurpose,
    private readonly kms = traced(new KMSClient({})),
  ) {}

  async generate() {
    const out = await this.kms.send(
      new GenerateDataKeyCommand({
        KeyId: this.keyId,
        KeySpec: 'AES_256',
        EncryptionContext: { purpose: this.purpose },
      }),
    );
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS returned no data key');
    return { plaintext: Buffer.from(out.Plaintext), wrapped: Buffer.from(out.CiphertextBlob) };
  }

  async unwrap(wrapped: Buffer) {
    const out = await this.kms.send(
      new DecryptCommand({
        KeyId: this.keyId,
        CiphertextBlob: wrapped,
        EncryptionContext: { purpose: this.purpose },
      }),
    );
    if (!out.Plaintext) throw new Error('KMS returned no plaintext');
    return Buffer.from(out.Plaintext);
  }
}

export class LocalDataKeyProvider implements DataKeyProvider {
  private readonly master: Buffer;

  constructor(masterKeyBase64: string) {
    this.master = Buffer.from(masterKeyBase64, 'base64');
    if (this.master.length !== 32) throw new Error('The local master key must be 32 bytes, base64-encoded');
  }

  async generate() {
    const plaintext = randomBytes(32);
    return { plaintext, wrapped: seal(this.master, plaintext, Buffer.from('data-key')) };
  }

  async unwrap(wrapped: Buffer) {
    return open(this.master, wrapped, Buffer.from('data-key'));
  }
}

/** AES-256-GCM: the IV and tag travel with the ciphertext; `aad` must be the same to open it. */
export function seal(key: Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function open(key: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  const iv = sealed.subarray(0, 12);
  const tag = sealed.subarray(12, 28);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
}

const DATA_KEY_MAX_AGE_MS = 5 * 60_000;
const DATA_KEY_MAX_USES = 10_000;
const UNWRAPPED_CACHE_SIZE = 256;

export class FieldEncryptor {
  private current?: { plaintext: Buffer; wrapped: Buffer; createdAt: number; uses: number };
  private readonly unwrapped = new Map<string, Buffer>();

  constructor(
    private readonly provider: DataKeyProvider,
    private readonly now: () => number = Date.now,
  ) {}

  async encrypt(plaintext: string, context: string): Promise<string> {
    const key = await this.dataKey();
    const sealed = seal(key.plaintext, Buffer.from(plaintext, 'utf8'), Buffer.from(context));
    return `v1.${key.wrapped.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  async decrypt(ciphertext: string, context: string): Promise<string> {
    const [version, wrapped, sealed] = ciphertext.split('.');
    if (version !== 'v1' || !wrapped || !sealed) throw new Error('Unrecognized ciphertext format');
    let key = this.unwrapped.get(wrapped);
    if (!key) {
      key = await this.provider.unwrap(Buffer.from(wrapped, 'base64url'));
      if (this.unwrapped.size >= UNWRAPPED_CACHE_SIZE) this.unwrapped.delete(this.unwrapped.keys().next().value!);
      this.unwrapped.set(wrapped, key);
    }
    return open(key, Buffer.from(sealed, 'base64url'), Buffer.from(context)).toString('utf8');
  }

  private async dataKey() {
    const c = this.current;
    if (c && c.uses < DATA_KEY_MAX_USES && this.now() - c.createdAt < DATA_KEY_MAX_AGE_MS) {
      c.uses += 1;
      return c;
    }
    const fresh = await this.provider.generate();
    this.current = { ...fresh, createdAt: this.now(), uses: 1 };
    this.unwrapped.set(fresh.wrapped.toString('base64url'), fresh.plaintext);
    return this.current;
  }
}

const encryptors = new Map<KeyPurpose, FieldEncryptor>();

/** The container's encryptor for one kind of secret: KMS when a key id is configured, else the local master key. */
export function fieldEncryptor(purpose: KeyPurpose): FieldEncryptor {
  let encryptor = encryptors.get(purpose);
  if (!encryptor) {
    const { PAYROLL_KMS_KEY_ID, PAYROLL_LOCAL_MASTER_KEY } = config();
    if (PAYROLL_KMS_KEY_ID) encryptor = new FieldEncryptor(new KmsDataKeyProvider(PAYROLL_KMS_KEY_ID, purpose));
    else if (PAYROLL_LOCAL_MASTER_KEY)
      encryptor = new FieldEncryptor(new LocalDataKeyProvider(PAYROLL_LOCAL_MASTER_KEY));
    else throw new Error('Missing environment variable PAYROLL_KMS_KEY_ID (or PAYROLL_LOCAL_MASTER_KEY locally)');
    encryptors.set(purpose, encryptor);
  }
  return encryptor;
}
