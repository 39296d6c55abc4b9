import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildAppOptions, buildApp } from 'fauxqs';
import { persistS3Store, type S3PersistenceStats } from './s3-persistence.js';

/**
 * fauxqs serves SQS and S3 from one in-process Fastify server. Its state lives in memory: queues and messages are
 * gone when the process ends, so the local stack re-provisions them on every start. S3 objects can be made durable
 * with `s3Dir` (see s3-persistence.ts): the local stack does, the test harness does not (speed, isolation).
 *
 * We build the app with fauxqs' exported `buildApp` rather than `startFauxqs`, because `startFauxqs` always
 * listens on 0.0.0.0 (its `host` option only names the host written into queue URLs); `buildApp` lets us listen
 * on 127.0.0.1.
 *
 * Queue URLs: by default fauxqs writes `http://sqs.<region>.localhost:<port>/…`, a name this machine's resolver
 * does not know. An SQS client configured only through AWS_ENDPOINT_URL_SQS (as the handlers are) follows the
 * queue URL's host and fails with ENOTFOUND. Giving fauxqs its own SqsStore with an empty `host` makes it write
 * the request's Host instead, i.e. `http://127.0.0.1:<port>/000000000000/<name>`, which every client reaches.
 * The store classes are not in fauxqs' package exports, so they are imported by file URL; the version is pinned.
 * The same own S3Store is what s3-persistence.ts loads from disk and writes through.
 */
export interface FauxqsEngineOptions {
  /** Fixed port; 0 or absent lets the OS pick one. */
  port?: number;
  region?: string;
  /**
   * Keep S3 buckets and objects under this directory: loaded before the server listens, written through on each
   * change. Absent: in memory only.
   */
  s3Dir?: string;
}

export interface FauxqsEngine {
  /** One endpoint for both SQS and S3 (S3 clients need `forcePathStyle: true`). */
  endpoint: string;
  port: number;
  /** What was read back from `s3Dir` at start; absent when S3 is in memory only. */
  s3Persistence?: S3PersistenceStats;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

type Stores = NonNullable<BuildAppOptions['stores']>;

function fauxqsDist(): string {
  for (const start of [dirname(fileURLToPath(import.meta.url)), process.cwd()]) {
    for (let dir = start; ; dir = dirname(dir)) {
      const candidate = join(dir, 'node_modules', 'fauxqs', 'dist');
      if (existsSync(join(candidate, 'app.js'))) return candidate;
      if (dirname(dir) === dir) break;
    }
  }
  throw new Error('node_modules/fauxqs not found: run npm install');
}

async function storesWithRequestHostQueueUrls(): Promise<Stores | undefined> {
  try {
    const dist = fauxqsDist();
    const load = (path: string) => import(pathToFileURL(join(dist, path)).href);
    const [{ SqsStore }, { SnsStore }, { S3Store }] = await Promise.all([
      load('sqs/sqsStore.js'),
      load('sns/snsStore.js'),
      load('s3/s3Store.js'),
    ]);
    const stores = { sqsStore: new SqsStore(), snsStore: new SnsStore(), s3Store: new S3Store() } as Stores;
    stores.sqsStore.host = '';
    return stores;
  } catch (error) {
    console.warn(
      `fauxqs internals moved (${String(error)}): queue URLs will use sqs.<region>.localhost, ` +
        'so every SQS client needs an explicit endpoint',
    );
    return undefined;
  }
}

export async function startFauxqsEngine(options: FauxqsEngineOptions = {}): Promise<FauxqsEngine> {
  const stores = await storesWithRequestHostQueueUrls();
  let s3Persistence: S3PersistenceStats | undefined;
  if (options.s3Dir !== undefined) {
    // Serving from a store we cannot persist would let objects vanish on restart without anyone noticing.
    if (!stores) throw new Error('fauxqs internals moved: cannot persist S3 objects (check the pinned fauxqs version)');
    // Before listen, so no request sees a half-loaded store.
    s3Persistence = persistS3Store(stores.s3Store, options.s3Dir);
  }
  const app = buildApp({ logger: false, defaultRegion: options.region ?? 'us-east-1', ...(stores && { stores }) });
  await app.listen({ port: options.port ?? 0, host: HOST });
  const address = app.server.address();
  if (!address || typeof address !== 'object') {
    await app.close();
    throw new Error('fauxqs did not report a TCP address');
  }
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://${HOST}:${address.port}`,
    port: address.port,
    ...(s3Persistence && { s3Persistence }),
    stop: () => (stopped ??= app.close().then(() => undefined)),
  };
}
