import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ensureBucket, ensureTable } from '../../local/engines/provision.js';
import { GSI2, TTL_ATTRIBUTE } from '../../shared/data/keys.js';
import { QUEUE_DEFINITIONS } from '../../shared/data/table-definition.js';
import {
  createTestBucket,
  createTestQueues,
  createTestTable,
  engineEnvironment,
  testS3Client,
  testSqsClient,
} from '../support/engines.js';

// Every test makes its own table, queues or bucket, so they can all run at once.
describe.concurrent('local engines', () => {
  it('creates the table with its one GSI projecting ALL and TTL on, idempotently', async ({ expect }) => {
    const { tableName, client } = await createTestTable();
    await ensureTable(client, tableName);

    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    const indexes = Object.fromEntries((Table?.GlobalSecondaryIndexes ?? []).map((gsi) => [gsi.IndexName, gsi]));
    expect(Object.keys(indexes)).toEqual([GSI2.name]);
    for (const gsi of [GSI2]) {
      expect(indexes[gsi.name]?.Projection?.ProjectionType).toBe('ALL');
      expect(indexes[gsi.name]?.KeySchema).toEqual([
        { AttributeName: gsi.pk, KeyType: 'HASH' },
        { AttributeName: gsi.sk, KeyType: 'RANGE' },
      ]);
    }

    const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    expect(TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: TTL_ATTRIBUTE });
  });

  it('cancels a transaction whose condition fails, with a reason per item', async ({ expect }) => {
    const { tableName, doc } = await createTestTable();
    await doc.send(
      new PutCommand({ TableName: tableName, Item: { PK: 'ORG#1', SK: 'EMAIL#a@example.com', owner: 'e1' } }),
    );

    const attempt = doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: { PK: 'ORG#1', SK: 'EMAIL#a@example.com', owner: 'e2' },
              ConditionExpression: 'attribute_not_exists(PK)',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          { Put: { TableName: tableName, Item: { PK: 'ORG#1', SK: 'EMP#e2' } } },
        ],
      }),
    );

    const error = await attempt.then(
      () => undefined,
      (e: unknown) => e as { name: string; CancellationReasons?: { Code?: string; Item?: Record<string, unknown> }[] },
    );
    expect(error?.name).toBe('TransactionCanceledException');
    expect(error?.CancellationReasons?.map((reason) => reason.Code)).toEqual(['ConditionalCheckFailed', 'None']);
    expect(error?.CancellationReasons?.[0]?.Item).toMatchObject({ owner: { S: 'e1' } });
    const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: { PK: 'ORG#1', SK: 'EMP#e2' } }));
    expect(Item).toBeUndefined();
  });

  it('moves a message to the DLQ after maxReceiveCount receives', async ({ expect }) => {
    const sqs = testSqsClient();
    const queues = await createTestQueues();
    const { maxReceiveCount, visibilityTimeoutSeconds } = QUEUE_DEFINITIONS.webhooks;

    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queues.webhooks,
        AttributeNames: ['VisibilityTimeout', 'RedrivePolicy'],
      }),
    );
    expect(Attributes?.VisibilityTimeout).toBe(String(visibilityTimeoutSeconds));
    expect(Number(JSON.parse(Attributes?.RedrivePolicy ?? '{}').maxReceiveCount)).toBe(maxReceiveCount);

    await sqs.send(new SendMessageCommand({ QueueUrl: queues.webhooks, MessageBody: 'evt_1' }));
    // VisibilityTimeout 0 hands the message straight back, standing in for a consumer that keeps failing.
    let received = 0;
    for (let i = 0; i <= maxReceiveCount; i++) {
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queues.webhooks, VisibilityTimeout: 0, WaitTimeSeconds: 0 }),
      );
      received += Messages?.length ?? 0;
    }
    expect(received).toBe(maxReceiveCount);

    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queues.webhooks_dlq, WaitTimeSeconds: 5 }),
    );
    expect(Messages?.map((m) => m.Body)).toEqual(['evt_1']);
  });

  it('round-trips an object through S3, and ensureBucket is idempotent', async ({ expect }) => {
    const s3 = testS3Client();
    const bucket = await createTestBucket();
    await ensureBucket(s3, bucket);

    const body = 'batch header\nentry detail\n';
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'nacha/run-1.ach', Body: body, ContentType: 'text/plain' }),
    );
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'nacha/run-1.ach' }));
    expect(await object.Body?.transformToString()).toBe(body);
    expect(object.ContentType).toBe('text/plain');
  });
});

// Handlers get their endpoints only from AWS_ENDPOINT_URL_*; these prove the provisioned URLs work that way too.
describe('clients configured from the environment alone, as the handlers are', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('reaches a queue by its URL', async () => {
    const queues = await createTestQueues();
    for (const [name, value] of Object.entries(engineEnvironment())) vi.stubEnv(name, value);
    const sqs = new SQSClient({});
    await sqs.send(new SendMessageCommand({ QueueUrl: queues.payroll, MessageBody: 'run_1' }));
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queues.payroll, WaitTimeSeconds: 5 }));
    expect(Messages?.map((m) => m.Body)).toEqual(['run_1']);
    sqs.destroy();
  });

  it('reaches a bucket without forcePathStyle', async () => {
    const bucket = await createTestBucket();
    for (const [name, value] of Object.entries(engineEnvironment())) vi.stubEnv(name, value);
    const s3 = new S3Client({});
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' }));
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' }));
    expect(await object.Body?.transformToString()).toBe('v');
    s3.destroy();
  });
});
