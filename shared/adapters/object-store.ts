import type { S3Client } from '@aws-sdk/client-s3';
import { required } from '../config/env.js';
import { traced } from './observability.js';

/**
 * The S3 client's module, imported on the first object operation instead of when the function loads. S3's client
 * is the largest the functions use (about 180 KB of bundled SDK code, a third of what such a function would load;
 * esbuild splits it into a chunk of the function's asset).
 * Some requests to the functions that can touch the bucket never do (the JSON form of GET …/disbursement, a cancel
 * before processing began, GET /v1/payroll/{id} of a run the container has read before); submit and the processor
 * use it on every request, and for them this moves the cost from the load to their first request, once per
 * container (BENCHMARKS.md gives both). A failed import is not cached: the next operation tries again.
 */
async function importS3() {
  const { S3Client, GetObjectCommand, PutObjectCommand, NoSuchKey } = await import('@aws-sdk/client-s3');
  return { S3Client, GetObjectCommand, PutObjectCommand, NoSuchKey };
}
type S3Sdk = Awaited<ReturnType<typeof importS3>>;
let s3Sdk: Promise<S3Sdk> | undefined;
const loadS3 = (): Promise<S3Sdk> =>
  (s3Sdk ??= importS3().catch((err: unknown) => {
    s3Sdk = undefined;
    throw err;
  }));

/**
 * The disbursement bucket: payroll bodies, chunk work files, NACHA files. Objects are written whole and
 * deterministically (the same key always receives the same bytes), so a retried write is harmless. No object but a
 * run's NACHA file (`disbursement.ach`) ever holds a full account number.
 */
export class ObjectStore {
  private clientPromise?: Promise<S3Client>;

  /** `clientOrFactory`: a client, or how to make one once the S3 module is loaded (on first use). */
  constructor(
    private readonly clientOrFactory: S3Client | ((sdk: S3Sdk) => S3Client),
    private readonly bucket: string,
  ) {}

  /** The client, made on first use; a failed attempt is forgotten, so the next call tries again. */
  client(): Promise<S3Client> {
    if (!this.clientPromise) {
      const make = this.clientOrFactory;
      const pending = typeof make === 'function' ? loadS3().then(make) : Promise.resolve(make);
      this.clientPromise = pending;
      pending.catch(() => {
        if (this.clientPromise === pending) this.clientPromise = undefined;
      });
    }
    return this.clientPromise;
  }

  /**
   * `retainUntil`: an Object Lock retention in governance mode, so the object version cannot be deleted or overwritten
   * before then by anyone without the governance-bypass permission (no runtime role has it).
   */
  async putText(
    key: string,
    body: string,
    contentType = 'application/json',
    options: { retainUntil?: Date } = {},
  ): Promise<void> {
    const [s3, { PutObjectCommand }] = await Promise.all([this.client(), loadS3()]);
    await s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
        ...(options.retainUntil && { ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: options.retainUntil }),
      }),
    );
  }

  async getText(key: string): Promise<string | undefined> {
    const [s3, { GetObjectCommand, NoSuchKey }] = await Promise.all([this.client(), loadS3()]);
    try {
      const out = await s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
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
}

let store: ObjectStore | undefined;

export function defaultObjectStore(): ObjectStore {
  // Path-style addressing works with S3 and with the local engine alike; traced when tracing is on (observability.ts).
  store ??= new ObjectStore(
    ({ S3Client }) => traced(new S3Client({ forcePathStyle: true, maxAttempts: 5 })),
    required('DISBURSEMENT_BUCKET'),
  );
  return store;
}

/**
 * Where the processor keeps a run's work files (its chunks' pending NACHA entries, no account numbers): apart from
 * the runs' own `payrolls/<org>/…` objects, so the bucket's lifecycle expires them by this literal prefix (an
 * organization id always starts `org_`, never `work`); no runtime role deletes an object.
 */
export const WORK_FILE_PREFIX = 'payrolls/work/';
/**
 * Where the deployed bank link stages what its connectors move: files being sent, directory listings, files picked
 * up. Copies and listings only (the record of each file is its own object under `payrolls/`): they expire.
 */
export const BANK_LINK_OBJECT_PREFIX = 'bank-link';

/** Where each object of a payroll lives. */
export const objectKeys = {
  submission: (org: string, payroll: string) => `payrolls/${org}/${payroll}/submission.json`,
  chunk: (org: string, payroll: string, chunk: number) =>
    `payrolls/${org}/${payroll}/chunks/${String(chunk).padStart(5, '0')}.json`,
  /** A chunk's NACHA entries, without account numbers (process-payroll.ts `EntriesFile`); expired by the lifecycle. */
  chunkEntries: (org: string, payroll: string, chunk: number) =>
    `${WORK_FILE_PREFIX}${org}/${payroll}/entries/${String(chunk).padStart(5, '0')}.json`,
  disbursement: (org: string, payroll: string) => `payrolls/${org}/${payroll}/disbursement.ach`,
  /** A further file written for a run: a re-debit of its funding, a reversal of its payments. */
  runFile: (org: string, payroll: string, file: string) => `payrolls/${org}/${payroll}/files/${file}.ach`,
};
