import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client, DeleteObjectCommand } from '@aws-sdk/client-s3';
import { required } from '../config/env.js';

/**
 * The disbursement bucket: payroll bodies, chunk work files, NACHA files. Objects are written whole and
 * deterministically (the same key always receives the same bytes), so a retried write is harmless.
 */
export class ObjectStore {
  constructor(private readonly s3: S3Client, private readonly bucket: string) {}

  async putText(key: string, body: string, contentType = 'application/json'): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }));
  }

  async getText(key: string): Promise<string | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return await out.Body!.transformToString('utf8');
    } catch (err) {
      if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.putText(key, JSON.stringify(value));
  }

  async getJson<T>(key: string): Promise<T | undefined> {
    const text = await this.getText(key);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  async delete(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}

let store: ObjectStore | undefined;

export function defaultObjectStore(): ObjectStore {
  // Path-style addressing works with S3 and with the local engine alike.
  store ??= new ObjectStore(new S3Client({ forcePathStyle: true, maxAttempts: 5 }), required('DISBURSEMENT_BUCKET'));
  return store;
}

/** Where each object of a payroll lives. */
export const objectKeys = {
  submission: (org: string, payroll: string) => `payrolls/${org}/${payroll}/submission.json`,
  chunk: (org: string, payroll: string, chunk: number) => `payrolls/${org}/${payroll}/chunks/${String(chunk).padStart(5, '0')}.json`,
  chunkEntries: (org: string, payroll: string, chunk: number) => `payrolls/${org}/${payroll}/entries/${String(chunk).padStart(5, '0')}.ach`,
  disbursement: (org: string, payroll: string) => `payrolls/${org}/${payroll}/disbursement.ach`,
};
