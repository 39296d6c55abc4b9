import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  BucketAlreadyExists,
  BucketAlreadyOwnedByYou,
  CreateBucketCommand,
  type BucketLocationConstraint,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { QUEUE_DEFINITIONS, TABLE_DEFINITION } from '../../shared/data/table-definition.js';
import type { StackState } from '../stack-state.js';

/**
 * Idempotent provisioning of the local stack's table, queues and bucket through the real SDK clients, from the
 * same definitions the CDK stateful stack reads. Safe to run on every start and from several processes at once.
 */

export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
export const DEFAULT_REGION = 'us-east-1';

export function localDynamoDbClient(endpoint: string, region = DEFAULT_REGION): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region, credentials: LOCAL_CREDENTIALS });
}

/** An explicit endpoint also stops the SDK from routing by the queue URL's host. */
export function localSqsClient(endpoint: string, region = DEFAULT_REGION): SQSClient {
  return new SQSClient({ endpoint, region, credentials: LOCAL_CREDENTIALS });
}

/** fauxqs serves buckets by path; virtual-hosted names (bucket.127.0.0.1) do not resolve. */
export function localS3Client(endpoint: string, region = DEFAULT_REGION): S3Client {
  return new S3Client({ endpoint, region, credentials: LOCAL_CREDENTIALS, forcePathStyle: true });
}

const POLL_MS = 50;
const ACTIVE_TIMEOUT_MS = 30_000;

async function tableStatus(client: DynamoDBClient, tableName: string): Promise<string | undefined> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    return Table?.TableStatus;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  const deadline = Date.now() + ACTIVE_TIMEOUT_MS;
  while ((await tableStatus(client, tableName)) !== 'ACTIVE') {
    if (Date.now() > deadline) throw new Error(`table ${tableName} not ACTIVE after ${ACTIVE_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * Creates the table unless it exists, waits until ACTIVE, then makes sure TTL is on. TTL is checked on an existing
 * table too, so a start interrupted between CreateTable and UpdateTimeToLive heals on the next one.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const { partitionKey, sortKey, ttlAttribute, globalSecondaryIndexes } = TABLE_DEFINITION;
  if ((await tableStatus(client, tableName)) === undefined) {
    const keyNames = [
      partitionKey,
      sortKey,
      ...globalSecondaryIndexes.flatMap((gsi) => [gsi.partitionKey, gsi.sortKey]),
    ];
    try {
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [...new Set(keyNames)].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
          KeySchema: [
            { AttributeName: partitionKey, KeyType: 'HASH' },
            { AttributeName: sortKey, KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: globalSecondaryIndexes.map((gsi) => ({
            IndexName: gsi.indexName,
            KeySchema: [
              { AttributeName: gsi.partitionKey, KeyType: 'HASH' },
              { AttributeName: gsi.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          })),
        }),
      );
    } catch (error) {
      // Another process created it between our DescribeTable and CreateTable.
      if (!(error instanceof ResourceInUseException)) throw error;
    }
  }
  await waitUntilActive(client, tableName);
  await addMissingIndexes(client, tableName);

  const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  const status = TimeToLiveDescription?.TimeToLiveStatus;
  if (status !== 'ENABLED' && status !== 'ENABLING') {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    );
  }
}

/**
 * A data folder made by an older version lacks the indexes added since: create them in place (one at a time, as
 * DynamoDB requires), so `npm start` upgrades the local table instead of failing on a query.
 */
async function addMissingIndexes(client: DynamoDBClient, tableName: string): Promise<void> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
  for (const gsi of TABLE_DEFINITION.globalSecondaryIndexes) {
    if (present.has(gsi.indexName)) continue;
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: gsi.partitionKey, AttributeType: 'S' },
          { AttributeName: gsi.sortKey, AttributeType: 'S' },
        ],
        GlobalSecondaryIndexUpdates: [
          {
            Create: {
              IndexName: gsi.indexName,
              KeySchema: [
                { AttributeName: gsi.partitionKey, KeyType: 'HASH' },
                { AttributeName: gsi.sortKey, KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: 'ALL' },
            },
          },
        ],
      }),
    );
    await waitUntilActive(client, tableName);
  }
}

type QueueDefinition = (typeof QUEUE_DEFINITIONS)[keyof typeof QUEUE_DEFINITIONS];

/** CreateQueue, or, if the queue exists with other attributes (a changed definition), update it in place. */
async function ensureQueue(sqs: SQSClient, name: string, attributes: Record<string, string>): Promise<string> {
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    if (!QueueUrl) throw new Error(`CreateQueue ${name} returned no QueueUrl`);
    return QueueUrl;
  } catch (error) {
    // The JSON protocol says QueueNameExists, the query-compatible code QueueAlreadyExists.
    const code = (error as { name?: string }).name;
    if (code !== 'QueueNameExists' && code !== 'QueueAlreadyExists') throw error;
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    if (!QueueUrl) throw new Error(`GetQueueUrl ${name} returned no QueueUrl`);
    if (Object.keys(attributes).length > 0) {
      await sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: attributes }));
    }
    return QueueUrl;
  }
}

async function ensureQueuePair(
  sqs: SQSClient,
  prefix: string,
  definition: QueueDefinition,
): Promise<{ url: string; dlqUrl: string }> {
  const name = prefix ? `${prefix}-${definition.name}` : definition.name;
  const dlqUrl = await ensureQueue(sqs, `${name}-dlq`, {});
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
  );
  const deadLetterTargetArn = Attributes?.QueueArn;
  if (!deadLetterTargetArn) throw new Error(`no QueueArn for ${dlqUrl}`);
  const url = await ensureQueue(sqs, name, {
    VisibilityTimeout: String(definition.visibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn, maxReceiveCount: definition.maxReceiveCount }),
  });
  return { url, dlqUrl };
}

/**
 * Each queue of QUEUE_DEFINITIONS with its dead-letter queue `<name>-dlq`; `prefix` (joined with '-') keeps
 * several sets apart on one engine, as the tests do.
 */
export async function ensureQueues(sqs: SQSClient, prefix = ''): Promise<StackState['queues']> {
  const [payroll, webhooks] = await Promise.all([
    ensureQueuePair(sqs, prefix, QUEUE_DEFINITIONS.payroll),
    ensureQueuePair(sqs, prefix, QUEUE_DEFINITIONS.webhooks),
  ]);
  return { payroll: payroll.url, payroll_dlq: payroll.dlqUrl, webhooks: webhooks.url, webhooks_dlq: webhooks.dlqUrl };
}

export async function ensureBucket(s3: S3Client, name: string): Promise<void> {
  const region = await s3.config.region();
  try {
    await s3.send(
      new CreateBucketCommand({
        Bucket: name,
        // us-east-1 is the one region where a LocationConstraint is refused.
        ...(region !== 'us-east-1' && {
          CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint },
        }),
      }),
    );
  } catch (error) {
    if (error instanceof BucketAlreadyOwnedByYou || error instanceof BucketAlreadyExists) return;
    throw error;
  }
}
