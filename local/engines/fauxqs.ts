import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildAppOptions, buildApp } from 'fauxqs';

/**
 * fauxqs serves SQS and S3 from one in-process Fastify server. State lives in memory only: queues, messages and
 * objects are gone when the process ends, so the local stack re-provisions them on every start.
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
 */
export interface FauxqsEngineOptions {
  /** Fixed port; 0 or absent lets the OS pick one. */
  port?: number;
  region?: string;
}

export interface FauxqsEngine {
  /** One endpoint for both SQS and S3 (S3 clients need `forcePathStyle: true`). */
  endpoint: string;
  port: number;
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
    stop: () => (stopped ??= app.close().then(() => undefined)),
  };
}
