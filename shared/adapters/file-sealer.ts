import { config } from '../config/env.js';
import { type DataKeyProvider, KmsDataKeyProvider, LocalDataKeyProvider, open, seal } from './envelope-encryption.js';

/**
 * NACHA files at rest: each file sealed (AES-256-GCM) under a data key of its own, the key wrapped by the disbursement
 * file key (KMS, `purpose=disbursement-file`) and kept on the run's item, never beside the object. Erasing that one
 * wrapped key destroys the file (crypto-shredding) even where the object itself may not be deleted: the bucket's
 * retention lock keeps objects, and no runtime role may delete one.
 */
const FORMAT = 'sealed-nacha.v1.';

export class FileSealer {
  constructor(private readonly provider: DataKeyProvider) {}

  /** A new file key: its wrapped form (base64url) to store, and the key itself to seal with. */
  async newKey(): Promise<{ wrapped: string; key: Buffer }> {
    const { plaintext, wrapped } = await this.provider.generate();
    return { wrapped: wrapped.toString('base64url'), key: plaintext };
  }

  async unwrap(wrapped: string): Promise<Buffer> {
    return this.provider.unwrap(Buffer.from(wrapped, 'base64url'));
  }

  /** `context` names the file (organization and run): a sealed body copied onto another run's object does not open. */
  seal(text: string, key: Buffer, context: string): string {
    return FORMAT + seal(key, Buffer.from(text, 'ascii'), Buffer.from(context)).toString('base64url');
  }

  async open(body: string, wrappedKey: string, context: string): Promise<string> {
    if (!FileSealer.isSealed(body)) throw new Error('Not a sealed file');
    const key = await this.unwrap(wrappedKey);
    return open(key, Buffer.from(body.slice(FORMAT.length), 'base64url'), Buffer.from(context)).toString('ascii');
  }

  static isSealed(body: string): boolean {
    return body.startsWith(FORMAT);
  }
}

let sealer: FileSealer | undefined;

/** The container's sealer: the disbursement file key when deployed, the local master key locally and in tests. */
export function fileSealer(): FileSealer {
  if (!sealer) {
    const { PAYROLL_FILE_KMS_KEY_ID, PAYROLL_LOCAL_MASTER_KEY } = config();
    if (PAYROLL_FILE_KMS_KEY_ID)
      sealer = new FileSealer(new KmsDataKeyProvider(PAYROLL_FILE_KMS_KEY_ID, 'disbursement-file'));
    else if (PAYROLL_LOCAL_MASTER_KEY) sealer = new FileSealer(new LocalDataKeyProvider(PAYROLL_LOCAL_MASTER_KEY));
    else throw new Error('Missing environment variable PAYROLL_FILE_KMS_KEY_ID (or PAYROLL_LOCAL_MASTER_KEY locally)');
  }
  return sealer;
}

/** What a sealed file is bound to: a run's own file by the run's id, any further file by the file's id. */
export const fileContext = (orgId: string, payrollOrFileId: string) => `disbursement:${orgId}:${payrollOrFileId}`;
