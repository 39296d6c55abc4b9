import { join } from 'node:path';
import { dataDir, type StackState } from '../stack-state.js';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.js';
import { type FauxqsEngine, startFauxqsEngine } from './fauxqs.js';
import type { S3PersistenceStats } from './s3-persistence.js';
import {
  DEFAULT_REGION,
  ensureBucket,
  ensureQueues,
  ensureTable,
  localDynamoDbClient,
  localS3Client,
  localSqsClient,
} from './provision.js';

export { JAVA_REQUIRED_MESSAGE, startDynamoDbLocal } from './dynamodb-local.js';
export type { DynamoDbLocal, DynamoDbLocalOptions } from './dynamodb-local.js';
export { startFauxqsEngine } from './fauxqs.js';
export type { FauxqsEngine, FauxqsEngineOptions } from './fauxqs.js';
export type { S3PersistenceStats } from './s3-persistence.js';
export * from './provision.js';

export interface StartEnginesOptions {
  /**
   * Where DynamoDB Local keeps its file (`<dataDir>/dynamodb`) and S3 its buckets and objects (`<dataDir>/s3`);
   * defaults to PAYROLL_DATA_DIR or .data.
   */
  dataDir?: string;
  /** Keep DynamoDB and S3 in memory instead (SQS always is: unfinished runs are re-driven at start). */
  inMemory?: boolean;
  region?: string;
  tableName?: string;
  bucket?: string;
  /** Prefix for queue names, joined with '-'; empty gives the bare QUEUE_DEFINITIONS names. */
  queuePrefix?: string;
  dynamodbPort?: number;
  fauxqsPort?: number;
}

/** The part of StackState the engines own, ready to spread into the state file. */
export type EngineState = Pick<
  StackState,
  'region' | 'table_name' | 'dynamodb_endpoint' | 'sqs_endpoint' | 's3_endpoint' | 'bucket' | 'queues'
>;

export interface Engines {
  state: EngineState;
  /** True when both engines accept connections from 127.0.0.1 only. */
  loopbackOnly: boolean;
  timings: { dynamodbMs: number; fauxqsMs: number; provisionMs: number; totalMs: number };
  /** What S3 read back from `<dataDir>/s3` (its load time is part of fauxqsMs); absent in memory mode. */
  s3Persistence?: S3PersistenceStats;
  stop(): Promise<void>;
}

export const DEFAULT_TABLE_NAME = 'payroll';
export const DEFAULT_BUCKET = 'payroll-disbursements';

const since = (start: number) => Math.round(performance.now() - start);

/**
 * Starts DynamoDB Local and fauxqs side by side, then provisions table, queues and bucket (idempotently: table,
 * bucket and objects survive restarts when persisted, fauxqs' queues never do). If anything fails, whatever
 * started is stopped before the error propagates, so no JVM is left behind.
 */
export async function startEngines(options: StartEnginesOptions = {}): Promise<Engines> {
  const start = performance.now();
  const region = options.region ?? DEFAULT_REGION;
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  const bucket = options.bucket ?? DEFAULT_BUCKET;
  const dir = options.inMemory ? undefined : (options.dataDir ?? dataDir());

  let dynamodbMs = 0;
  let fauxqsMs = 0;
  const [dynamo, fauxqs] = await Promise.allSettled([
    startDynamoDbLocal({
      port: options.dynamodbPort,
      dbPath: dir === undefined ? undefined : join(dir, 'dynamodb'),
    }).then((engine) => {
      dynamodbMs = since(start);
      return engine;
    }),
    startFauxqsEngine({
      port: options.fauxqsPort,
      region,
      s3Dir: dir === undefined ? undefined : join(dir, 's3'),
    }).then((engine) => {
      fauxqsMs = since(start);
      return engine;
    }),
  ]);
  const started = [dynamo, fauxqs].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async () => {
    await Promise.all(started.map((engine) => engine.stop()));
  };
  if (dynamo.status === 'rejected' || fauxqs.status === 'rejected') {
    await stopAll();
    throw dynamo.status === 'rejected' ? dynamo.reason : (fauxqs as PromiseRejectedResult).reason;
  }
  const ddb: DynamoDbLocal = dynamo.value;
  const fq: FauxqsEngine = fauxqs.value;
  if (ddb.storage && !ddb.storage.tuned)
    console.warn(
      `DynamoDB Local writes with SQLite's defaults (several fsyncs per item: payroll runs about ten times slower): ${ddb.storage.reason}`,
    );

  const provisionStart = performance.now();
  const clients = {
    dynamo: localDynamoDbClient(ddb.endpoint, region),
    sqs: localSqsClient(fq.endpoint, region),
    s3: localS3Client(fq.endpoint, region),
  };
  let queues: StackState['queues'];
  try {
    [, queues] = await Promise.all([
      ensureTable(clients.dynamo, tableName),
      ensureQueues(clients.sqs, options.queuePrefix ?? ''),
      ensureBucket(clients.s3, bucket),
    ]);
  } catch (error) {
    await stopAll();
    throw error;
  } finally {
    for (const client of Object.values(clients)) client.destroy();
  }

  let stopped: Promise<void> | undefined;
  return {
    state: {
      region,
      table_name: tableName,
      dynamodb_endpoint: ddb.endpoint,
      sqs_endpoint: fq.endpoint,
      s3_endpoint: fq.endpoint,
      bucket,
      queues,
    },
    loopbackOnly: ddb.loopbackOnly,
    timings: { dynamodbMs, fauxqsMs, provisionMs: since(provisionStart), totalMs: since(start) },
    ...(fq.s3Persistence && { s3Persistence: fq.s3Persistence }),
    stop: () => (stopped ??= stopAll()),
  };
}
