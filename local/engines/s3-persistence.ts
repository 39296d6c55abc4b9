import { createHash } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { findInNodeModules } from './node-modules.js';

/**
 * Makes fauxqs' S3 store durable: every object and bucket is mirrored to a directory, written through before the
 * S3 response leaves, and read back into the store before the server listens. fauxqs itself still serves the S3
 * wire protocol and the service still talks to it through the real SDK; only the store's memory gets a disk copy.
 *
 * Why this and not s3rver (file-backed, but a child process needing `--openssl-legacy-provider` for its DES
 * continuation tokens, plus one more engine to start and reap) and not a Fastify onSend/onResponse hook:
 * - Wrapping the store's mutating methods catches every path that changes an object (PutObject, CopyObject,
 *   CompleteMultipartUpload, DeleteObject, DeleteObjects, bucket create/delete, the programmatic reset helpers)
 *   without re-parsing requests, aws-chunked bodies or multipart XML in a second place.
 * - The writes are synchronous inside the store call, which runs inside the request handler before the reply is
 *   sent (an onResponse hook would run after it: a crash window): when the SDK sees 200/204, the file is already
 *   renamed into place. A kill -9 right after loses nothing (the
 *   kernel keeps the page cache; we do not fsync, so a power cut could, which a dev stack accepts). A failed write
 *   rolls the in-memory change back and throws, so the client gets a 500 and retries instead of a false success.
 *   The price is the event loop blocked for the write, mostly creating the file (measured 0.6–1.2 ms per new
 *   object on a small VM, ~7 ms for 3 MB); a payroll run writes a few objects per chunk, so that is acceptable
 *   for a dev stack and buys an ordering and error story with no moving parts.
 * - One ordering, no queue: requests mutate store and disk in the same tick, so concurrent writes to one key
 *   cannot land on disk in a different order than in memory.
 *
 * Layout under `dir`:
 *   <hex(bucket name)>/bucket.json            { name, createdAt }
 *   <hex(bucket name)>/objects/<sha256(key)>  one line of JSON (key, content type, metadata, ETag, …), '\n', body
 * Hex and SHA-256 names hold nothing but [0-9a-f]: no traversal, no separator, no case-folding clash on macOS'
 * case-insensitive volumes, and no 255-byte name limit for S3's 1024-byte keys. The real key lives in the header
 * (and is checked against the name on load). Header and body share one file so a single rename publishes both.
 * Temporary files end in `.tmp` and deleted buckets are renamed to `.trash-*` first; a start sweeps both away.
 *
 * Not persisted: multipart uploads still in progress (a client restarting after a restart gets NoSuchUpload and
 * starts over). Relies on S3Store internals (`buckets`, `bucketCreationDates`, `multipartUploads`); fauxqs is
 * pinned, and `persistS3Store` refuses a store that lacks them rather than silently staying in memory.
 */

/** The S3Store members this module relies on (fauxqs 1.9.2, dist/s3/s3Store.js). */
interface StoredObject {
  key: string;
  body: Buffer;
  contentType: string;
  contentLength: number;
  etag: string;
  lastModified: Date;
  metadata: Record<string, string>;
}

interface FauxqsS3Store {
  buckets: Map<string, Map<string, StoredObject>>;
  bucketCreationDates: Map<string, Date>;
  multipartUploads: Map<string, { bucket: string; key: string }>;
  createBucket(name: string): void;
  deleteBucket(name: string): void;
  hasBucket(name: string): boolean;
  putObject(
    bucket: string,
    key: string,
    body: Buffer,
    contentType?: string,
    metadata?: Record<string, string>,
  ): StoredObject;
  deleteObject(bucket: string, key: string): void;
  completeMultipartUpload(uploadId: string, parts: unknown): StoredObject;
  emptyBucket(name: string): void;
  clearObjects(): void;
  purgeAll(): void;
}

interface ObjectHeader {
  v: 1;
  key: string;
  contentType: string;
  contentLength: number;
  etag: string;
  lastModified: string;
  metadata: Record<string, string>;
}

export interface S3PersistenceStats {
  dir: string;
  buckets: number;
  objects: number;
  bytes: number;
  /** Files that could not be read back (logged and left in place for inspection). */
  skipped: number;
  loadMs: number;
}

const FORMAT_VERSION = 1;
const OBJECT_FILE = /^[0-9a-f]{64}$/;
const BUCKET_DIR = /^(?:[0-9a-f]{2})+$/;
const TRASH_PREFIX = '.trash-';
const BUCKET_MARKER = 'bucket.json';
const FILE_MODE = 0o600; // NACHA files carry account numbers: keep them as private as secrets.json.
const DIR_MODE = 0o700;

const bucketDirName = (bucket: string) => Buffer.from(bucket, 'utf8').toString('hex');
const objectFileName = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

let tmpSequence = 0;

function writeAll(fd: number, data: Buffer): void {
  for (let offset = 0; offset < data.length; ) offset += writeSync(fd, data, offset, data.length - offset);
}

/** Writes to a sibling temporary file, then renames over `file`: readers see the old content or the new, whole. */
function writeFileAtomic(file: string, ...parts: Buffer[]): void {
  const tmp = `${file}.${process.pid}.${++tmpSequence}.tmp`;
  const fd = openSync(tmp, 'w', FILE_MODE);
  try {
    try {
      for (const part of parts) writeAll(fd, part);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

function unlinkIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * fauxqs offers no persistence of its own ("All state is in-memory"), so this module wraps S3Store internals of
 * the version it was written against. Another version fails the start, loudly, rather than risk a store whose
 * members still exist but mean something else: upgrading fauxqs means checking this module first.
 */
export const SUPPORTED_FAUXQS = /^1\.9\./;

/** The installed fauxqs' version (it exports no `package.json` to import). */
function installedFauxqsVersion(): string {
  const { path } = findInNodeModules(join('fauxqs', 'package.json'));
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

export function assertSupportedFauxqs(version = installedFauxqsVersion()): void {
  if (!SUPPORTED_FAUXQS.test(version)) {
    throw new Error(
      `fauxqs ${version}: the local S3 persistence wraps fauxqs 1.9's S3Store internals; check local/engines/s3-persistence.ts before upgrading`,
    );
  }
}

function assertStoreShape(store: unknown): asserts store is FauxqsS3Store {
  const s = store as Partial<FauxqsS3Store> | undefined;
  const methods = [
    'createBucket',
    'deleteBucket',
    'hasBucket',
    'putObject',
    'deleteObject',
    'completeMultipartUpload',
    'emptyBucket',
    'clearObjects',
    'purgeAll',
  ] as const;
  if (
    !s ||
    !(s.buckets instanceof Map) ||
    !(s.bucketCreationDates instanceof Map) ||
    !(s.multipartUploads instanceof Map) ||
    methods.some((m) => typeof s[m] !== 'function')
  ) {
    throw new Error('fauxqs S3Store internals changed: cannot persist S3 objects (check the pinned fauxqs version)');
  }
}

class S3Directory {
  constructor(readonly root: string) {}

  bucketDir(bucket: string): string {
    return join(this.root, bucketDirName(bucket));
  }

  objectFile(bucket: string, key: string): string {
    return join(this.bucketDir(bucket), 'objects', objectFileName(key));
  }

  writeBucket(bucket: string, createdAt: Date): void {
    mkdirSync(join(this.bucketDir(bucket), 'objects'), { recursive: true, mode: DIR_MODE });
    const marker = JSON.stringify({ name: bucket, createdAt: createdAt.toISOString() });
    writeFileAtomic(join(this.bucketDir(bucket), BUCKET_MARKER), Buffer.from(`${marker}\n`));
  }

  writeObject(bucket: string, object: StoredObject): void {
    const header: ObjectHeader = {
      v: FORMAT_VERSION,
      key: object.key,
      contentType: object.contentType,
      contentLength: object.body.length,
      etag: object.etag,
      lastModified: object.lastModified.toISOString(),
      metadata: object.metadata,
    };
    // JSON.stringify escapes every newline inside strings, so the first '\n' always ends the header.
    writeFileAtomic(this.objectFile(bucket, object.key), Buffer.from(`${JSON.stringify(header)}\n`), object.body);
  }

  deleteObject(bucket: string, key: string): void {
    unlinkIfPresent(this.objectFile(bucket, key));
  }

  /** Renames first so a crash mid-removal cannot leave a half-deleted bucket that comes back on the next start. */
  removeTree(dir: string): void {
    const trash = join(this.root, `${TRASH_PREFIX}${process.pid}-${++tmpSequence}`);
    try {
      renameSync(dir, trash);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    rmSync(trash, { recursive: true, force: true });
  }

  deleteBucket(bucket: string): void {
    this.removeTree(this.bucketDir(bucket));
  }

  emptyBucket(bucket: string): void {
    const objects = join(this.bucketDir(bucket), 'objects');
    this.removeTree(objects);
    mkdirSync(objects, { recursive: true, mode: DIR_MODE });
  }
}

function readObject(file: string, name: string): StoredObject {
  const data = readFileSync(file);
  const newline = data.indexOf(0x0a);
  if (newline < 0) throw new Error('no header line');
  const header = JSON.parse(data.subarray(0, newline).toString('utf8')) as Partial<ObjectHeader>;
  if (header.v !== FORMAT_VERSION) throw new Error(`unknown format version ${String(header.v)}`);
  if (typeof header.key !== 'string' || objectFileName(header.key) !== name) {
    throw new Error('key does not match file name');
  }
  const body = data.subarray(newline + 1);
  if (body.length !== header.contentLength) {
    throw new Error(`body is ${body.length} bytes, header says ${String(header.contentLength)}`);
  }
  return {
    key: header.key,
    body,
    contentType: header.contentType ?? 'application/octet-stream',
    contentLength: body.length,
    etag: header.etag ?? `"${createHash('md5').update(body).digest('hex')}"`,
    lastModified: new Date(header.lastModified ?? Date.now()),
    metadata: header.metadata ?? {},
  };
}

/** Fills the (empty) store from disk, sweeping leftovers of writes and deletions a crash interrupted. */
function load(store: FauxqsS3Store, disk: S3Directory, stats: S3PersistenceStats): void {
  const warn = (what: string, error: unknown) => {
    stats.skipped++;
    console.warn(`local S3: skipped ${what}: ${error instanceof Error ? error.message : String(error)}`);
  };
  for (const entry of readdirSync(disk.root, { withFileTypes: true })) {
    const path = join(disk.root, entry.name);
    if (entry.name.startsWith(TRASH_PREFIX)) {
      rmSync(path, { recursive: true, force: true });
      continue;
    }
    if (!entry.isDirectory() || !BUCKET_DIR.test(entry.name)) continue;
    const bucket = Buffer.from(entry.name, 'hex').toString('utf8');
    if (bucketDirName(bucket) !== entry.name) continue; // not UTF-8 we wrote: someone else's directory
    let createdAt: Date;
    try {
      const marker = JSON.parse(readFileSync(join(path, BUCKET_MARKER), 'utf8')) as { createdAt?: string };
      createdAt = new Date(marker.createdAt ?? statSync(path).mtime);
    } catch {
      createdAt = statSync(path).mtime;
    }
    store.createBucket(bucket);
    store.bucketCreationDates.set(bucket, createdAt);
    stats.buckets++;

    const objects = store.buckets.get(bucket)!;
    const objectsDir = join(path, 'objects');
    let names: string[];
    try {
      names = readdirSync(objectsDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    for (const name of names) {
      const file = join(objectsDir, name);
      if (name.endsWith('.tmp')) {
        rmSync(file, { force: true }); // a write the crash interrupted; the previous version (if any) is intact
        continue;
      }
      if (!OBJECT_FILE.test(name)) continue;
      try {
        const object = readObject(file, name);
        objects.set(object.key, object);
        stats.objects++;
        stats.bytes += object.contentLength;
      } catch (error) {
        warn(file, error);
      }
    }
  }
}

/** Swaps the store's mutating methods for ones that change the disk copy in the same call (see the top). */
function writeThrough(store: FauxqsS3Store, disk: S3Directory): void {
  const original = {
    createBucket: store.createBucket.bind(store),
    deleteBucket: store.deleteBucket.bind(store),
    putObject: store.putObject.bind(store),
    deleteObject: store.deleteObject.bind(store),
    completeMultipartUpload: store.completeMultipartUpload.bind(store),
    emptyBucket: store.emptyBucket.bind(store),
    clearObjects: store.clearObjects.bind(store),
    purgeAll: store.purgeAll.bind(store),
  };

  /** Runs the in-memory change, then the disk write; if the write fails, puts the previous object back. */
  const storeObject = (bucket: string, key: string, change: () => StoredObject): StoredObject => {
    const previous = store.buckets.get(bucket)?.get(key);
    const object = change();
    try {
      disk.writeObject(bucket, object);
    } catch (error) {
      const objects = store.buckets.get(bucket);
      if (previous) objects?.set(key, previous);
      else objects?.delete(key);
      throw error;
    }
    return object;
  };

  store.createBucket = (name) => {
    if (store.hasBucket(name)) return original.createBucket(name);
    original.createBucket(name);
    try {
      disk.writeBucket(name, store.bucketCreationDates.get(name) ?? new Date());
    } catch (error) {
      store.buckets.delete(name);
      store.bucketCreationDates.delete(name);
      throw error;
    }
  };

  store.deleteBucket = (name) => {
    original.deleteBucket(name); // throws NoSuchBucket / BucketNotEmpty before anything is removed from disk
    disk.deleteBucket(name);
  };

  store.putObject = (bucket, key, body, contentType, metadata) =>
    storeObject(bucket, key, () => original.putObject(bucket, key, body, contentType, metadata));

  store.completeMultipartUpload = (uploadId, parts) => {
    const upload = store.multipartUploads.get(uploadId);
    if (!upload) return original.completeMultipartUpload(uploadId, parts); // throws NoSuchUpload
    return storeObject(upload.bucket, upload.key, () => original.completeMultipartUpload(uploadId, parts));
  };

  // Disk first: if the unlink fails the object stays in memory too, instead of coming back after a restart.
  // S3Store.deleteObjects calls this.deleteObject, so DeleteObjects is covered as well.
  store.deleteObject = (bucket, key) => {
    if (store.hasBucket(bucket)) disk.deleteObject(bucket, key);
    original.deleteObject(bucket, key);
  };

  store.emptyBucket = (name) => {
    if (store.hasBucket(name)) disk.emptyBucket(name);
    original.emptyBucket(name);
  };

  store.clearObjects = () => {
    for (const name of store.buckets.keys()) disk.emptyBucket(name);
    original.clearObjects();
  };

  store.purgeAll = () => {
    for (const name of store.buckets.keys()) disk.deleteBucket(name);
    original.purgeAll();
  };
}

/**
 * Loads every bucket and object under `dir` into `store` (a fresh fauxqs S3Store), then makes its changes write
 * through to `dir`. Call before the server accepts requests.
 */
export function persistS3Store(store: unknown, dir: string): S3PersistenceStats {
  const start = performance.now();
  assertSupportedFauxqs();
  assertStoreShape(store);
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  const disk = new S3Directory(dir);
  const stats: S3PersistenceStats = { dir, buckets: 0, objects: 0, bytes: 0, skipped: 0, loadMs: 0 };
  load(store, disk, stats);
  writeThrough(store, disk);
  stats.loadMs = Math.round(performance.now() - start);
  return stats;
}

/** Where an object's file lives under `dir`, for tests and for a person looking for one. */
export function s3ObjectPath(dir: string, bucket: string, key: string): string {
  return new S3Directory(dir).objectFile(bucket, key);
}
