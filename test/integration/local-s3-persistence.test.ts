import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_BUCKET, startEngines } from '../../local/engines/index.js';
import { startFauxqsEngine } from '../../local/engines/fauxqs.js';
import { ensureBucket, localS3Client } from '../../local/engines/provision.js';
import { assertSupportedFauxqs } from '../../local/engines/s3-persistence.js';
import { s3ObjectPath } from '../../local/engines/s3-persistence.js';

/**
 * The local stack's S3 (fauxqs plus s3-persistence.ts) keeps objects under `<data dir>/s3`: across a stop and a
 * start, across a kill -9, and not at all in memory mode. Everything goes through the real SDK over HTTP, as the
 * handlers' ObjectStore does. These tests start their own engines on temporary directories, not the shared ones.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Written {
  key: string;
  body: Buffer;
  contentType: string;
  metadata?: Record<string, string>;
  etag?: string;
}

const temporaryDirs: string[] = [];
function temporaryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'payroll-s3-'));
  temporaryDirs.push(dir);
  return dir;
}

afterEach(() => {
  vi.restoreAllMocks();
  for (const dir of temporaryDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function put(s3: S3Client, bucket: string, object: Written): Promise<Written> {
  const { ETag } = await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: object.key,
      Body: object.body,
      ContentType: object.contentType,
      Metadata: object.metadata,
    }),
  );
  return { ...object, etag: ETag };
}

async function expectObject(s3: S3Client, bucket: string, expected: Written): Promise<void> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: expected.key }));
  const body = Buffer.from(await out.Body!.transformToByteArray());
  expect(body.length, expected.key).toBe(expected.body.length);
  expect(body.equals(expected.body), `bytes of ${expected.key}`).toBe(true);
  expect(out.ContentType, expected.key).toBe(expected.contentType);
  expect(out.ETag, expected.key).toBe(expected.etag);
  if (expected.metadata) expect(out.Metadata).toEqual(expected.metadata);
}

async function expectNoSuchKey(s3: S3Client, bucket: string, key: string): Promise<void> {
  const error = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })).then(
    () => undefined,
    (e: unknown) => e as { name?: string },
  );
  expect(error?.name).toBe('NoSuchKey');
}

async function listKeys(s3: S3Client, bucket: string): Promise<string[]> {
  const { Contents } = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (Contents ?? []).map((c) => c.Key!).sort();
}

describe('local S3 persistence', () => {
  it('brings objects back byte-identical after stop and start, and keeps deletions', async () => {
    const dataDir = temporaryDir();
    const s3Dir = join(dataDir, 's3');
    const bucket = DEFAULT_BUCKET;

    const first = await startEngines({ dataDir, queuePrefix: 'p' });
    let objects: Written[];
    try {
      expect(first.s3Persistence).toMatchObject({ dir: s3Dir, objects: 0 });
      const s3 = localS3Client(first.state.s3_endpoint, first.state.region);
      const submission = 'payrolls/org_1/pr_1/submission.json';
      objects = await Promise.all([
        put(s3, bucket, {
          key: 'payrolls/org_1/pr_1/disbursement.ach',
          body: Buffer.from('101 091000019 1234567890\n5200ACME\n'.repeat(40)),
          contentType: 'text/plain',
        }),
        put(s3, bucket, {
          key: 'big/blob.bin',
          body: randomBytes(3 * 1024 * 1024),
          contentType: 'application/octet-stream',
          metadata: { run: 'pr_1', 'checksum-kind': 'none' },
        }),
        // Slashes, spaces, non-ASCII, URL-significant characters, a traversal attempt and an overlong key: all must
        // land under the bucket's directory and come back under the same key.
        put(s3, bucket, {
          key: 'odd/../../ key with spaces/ünïcødé+%20&=;,$@~!()[].json',
          body: Buffer.from('{"odd":true}'),
          contentType: 'application/json',
        }),
        put(s3, bucket, { key: `long/${'k'.repeat(900)}`, body: Buffer.from('long'), contentType: 'text/plain' }),
      ]);
      // Overwritten: the second body is the one that must survive.
      await put(s3, bucket, { key: submission, body: Buffer.from('{"v":1}'), contentType: 'application/json' });
      objects.push(
        await put(s3, bucket, { key: submission, body: Buffer.from('{"v":2}'), contentType: 'application/json' }),
      );

      // The other ways an object comes to be: CopyObject and a (one-part) multipart upload, whose ETag differs.
      const source = objects[0]!;
      const copy = await s3.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: 'copies/disbursement.ach',
          CopySource: `${bucket}/${source.key}`,
        }),
      );
      objects.push({ ...source, key: 'copies/disbursement.ach', etag: copy.CopyObjectResult?.ETag });
      const multipart = { key: 'multipart/part.bin', body: randomBytes(4096), contentType: 'application/x-ach' };
      const target = { Bucket: bucket, Key: multipart.key };
      const { UploadId } = await s3.send(
        new CreateMultipartUploadCommand({ ...target, ContentType: multipart.contentType }),
      );
      const part = await s3.send(new UploadPartCommand({ ...target, UploadId, PartNumber: 1, Body: multipart.body }));
      const completed = await s3.send(
        new CompleteMultipartUploadCommand({
          ...target,
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
        }),
      );
      expect(completed.ETag).toMatch(/-1"$/);
      objects.push({ ...multipart, etag: completed.ETag });

      // Write-through, not write-at-shutdown: the file is in place as soon as the request has returned.
      for (const object of objects) {
        expect(existsSync(s3ObjectPath(s3Dir, bucket, object.key)), object.key).toBe(true);
      }

      const doomed = ['payrolls/org_1/pr_1/chunks/00000.json', 'payrolls/org_1/pr_1/chunks/00001.json'];
      for (const key of doomed)
        await put(s3, bucket, { key, body: Buffer.from('[]'), contentType: 'application/json' });
      expect(doomed.every((key) => existsSync(s3ObjectPath(s3Dir, bucket, key)))).toBe(true);
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: doomed[0] }));
      await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: doomed[1] }] } }));
      expect(doomed.some((key) => existsSync(s3ObjectPath(s3Dir, bucket, key)))).toBe(false);

      // Nothing escaped the bucket's directory, whatever the keys said.
      const bucketDir = dirname(dirname(s3ObjectPath(s3Dir, bucket, 'x')));
      expect(readdirSync(s3Dir)).toEqual([bucketDir.split('/').pop()]);
      expect(readdirSync(join(bucketDir, 'objects'))).toHaveLength(objects.length);
      s3.destroy();
    } finally {
      await first.stop();
    }

    const second = await startEngines({ dataDir, queuePrefix: 'p' });
    try {
      expect(second.s3Persistence).toMatchObject({ objects: objects.length, skipped: 0 });
      const s3 = localS3Client(second.state.s3_endpoint, second.state.region);
      for (const object of objects) await expectObject(s3, bucket, object);
      await expectNoSuchKey(s3, bucket, 'payrolls/org_1/pr_1/chunks/00000.json');
      await expectNoSuchKey(s3, bucket, 'payrolls/org_1/pr_1/chunks/00001.json');
      expect(await listKeys(s3, bucket)).toEqual(objects.map((o) => o.key).sort());
      s3.destroy();
    } finally {
      await second.stop();
    }
  });

  it('loses nothing acknowledged when the process is killed with SIGKILL', async () => {
    const s3Dir = join(temporaryDir(), 's3');
    const bucket = 'crash-bucket';
    const child = await startFauxqsInChild(s3Dir);
    let objects: Written[];
    try {
      const s3 = localS3Client(child.endpoint);
      await ensureBucket(s3, bucket);
      objects = await Promise.all(
        ['a.json', 'nested/path/b.ach', 'c'].map((key, i) =>
          put(s3, bucket, {
            key,
            body: randomBytes(1024 * (i + 1)),
            contentType: i === 1 ? 'text/plain' : 'application/json',
          }),
        ),
      );
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'c' }));
      objects.pop();
      s3.destroy();
    } finally {
      await child.kill();
    }

    const engine = await startFauxqsEngine({ s3Dir });
    try {
      expect(engine.s3Persistence).toMatchObject({ buckets: 1, objects: 2, skipped: 0 });
      const s3 = localS3Client(engine.endpoint);
      for (const object of objects) await expectObject(s3, bucket, object);
      await expectNoSuchKey(s3, bucket, 'c');
      s3.destroy();
    } finally {
      await engine.stop();
    }
  });

  it('starts over what a crash left behind: temporary files, half-removed buckets, damaged objects', async () => {
    const s3Dir = join(temporaryDir(), 's3');
    const bucket = 'leftovers';
    const first = await startFauxqsEngine({ s3Dir });
    let good: Written;
    try {
      const s3 = localS3Client(first.endpoint);
      await ensureBucket(s3, bucket);
      const json = (key: string, text: string) => ({ key, body: Buffer.from(text), contentType: 'application/json' });
      good = await put(s3, bucket, json('good.json', '{"ok":1}'));
      await put(s3, bucket, json('damaged.json', '{"ok":2}'));
      s3.destroy();
    } finally {
      await first.stop();
    }
    const goodFile = s3ObjectPath(s3Dir, bucket, 'good.json');
    const damagedFile = s3ObjectPath(s3Dir, bucket, 'damaged.json');
    writeFileSync(damagedFile, readFileSync(damagedFile).subarray(0, -3)); // truncated body
    writeFileSync(`${goodFile}.123.1.tmp`, 'a write interrupted by a crash');
    mkdirSync(join(s3Dir, '.trash-123-4', 'objects'), { recursive: true });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);

    const second = await startFauxqsEngine({ s3Dir });
    try {
      expect(second.s3Persistence).toMatchObject({ buckets: 1, objects: 1, skipped: 1 });
      expect(warn).toHaveBeenCalledWith(expect.stringContaining(damagedFile));
      expect(existsSync(`${goodFile}.123.1.tmp`)).toBe(false);
      expect(existsSync(join(s3Dir, '.trash-123-4'))).toBe(false);
      const s3 = localS3Client(second.endpoint);
      await expectObject(s3, bucket, good);
      await expectNoSuchKey(s3, bucket, 'damaged.json');
      s3.destroy();
    } finally {
      await second.stop();
    }
  });

  it('refuses, loudly, a fauxqs version whose internals it was not written against', () => {
    expect(() => assertSupportedFauxqs()).not.toThrow(); // the pinned one
    expect(() => assertSupportedFauxqs('1.10.0')).toThrow(
      /fauxqs 1\.10\.0: the local S3 persistence wraps fauxqs 1\.9/,
    );
    expect(() => assertSupportedFauxqs('2.0.0')).toThrow(/check local\/engines\/s3-persistence\.ts/);
  });

  it('writes nothing to the data dir in memory mode', async () => {
    const dataDir = temporaryDir();
    const engines = await startEngines({ dataDir, inMemory: true, queuePrefix: 'm' });
    try {
      expect(engines.s3Persistence).toBeUndefined();
      const s3 = localS3Client(engines.state.s3_endpoint, engines.state.region);
      await put(s3, DEFAULT_BUCKET, { key: 'k', body: Buffer.from('v'), contentType: 'text/plain' });
      s3.destroy();
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      await engines.stop();
    }
  });
});

/** fauxqs with persistence in a separate Node process, so the test can SIGKILL it like a crashed `npm start`. */
async function startFauxqsInChild(s3Dir: string): Promise<{ endpoint: string; kill(): Promise<void> }> {
  const script = join(temporaryDir(), 'fauxqs-child.mts');
  const engineModule = pathToFileURL(join(repoRoot, 'local/engines/fauxqs.ts')).href;
  writeFileSync(
    script,
    [
      `import { startFauxqsEngine } from ${JSON.stringify(engineModule)};`,
      `const engine = await startFauxqsEngine({ s3Dir: ${JSON.stringify(s3Dir)} });`,
      'process.stdout.write(JSON.stringify({ endpoint: engine.endpoint }) + "\\n");',
      'setInterval(() => undefined, 60_000);', // stays up until killed
    ].join('\n'),
  );
  // `--import tsx` resolves from cwd: the repository's own tsx loads the TypeScript sources.
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  try {
    const line = await new Promise<string>((done, fail) => {
      createInterface({ input: child.stdout! }).once('line', done);
      void exited.then(() => fail(new Error(`fauxqs child exited before it was ready: ${stderr}`)));
    });
    return { endpoint: (JSON.parse(line) as { endpoint: string }).endpoint, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}
