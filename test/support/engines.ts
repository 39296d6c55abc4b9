import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { createDocumentClient } from '../../shared/adapters/dynamo.js';
import {
  ensureBucket,
  ensureQueues,
  ensureTable,
  localDynamoDbClient,
  localS3Client,
  localSqsClient,
  LOCAL_CREDENTIALS,
} from '../../local/engines/provision.js';
import type { StackState } from '../../local/stack-state.js';

/** What test/support/global-setup.ts provides to every test file. */
export interface TestEngines {
  region: string;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  s3Endpoint: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    engines: TestEngines;
  }
}

export function testEngines(): TestEngines {
  const engines = inject('engines');
  if (!engines) throw new Error('no engines provided: run the tests through vitest.config.ts (globalSetup)');
  return engines;
}

/** A name no other test in this run will pick; lower-case hex so it suits tables, queues and buckets alike. */
export function uniqueName(prefix = 't'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

// One client of each kind per test file: they are cheap to share and keep sockets alive between tests.
let dynamo: DynamoDBClient | undefined;
let sqs: SQSClient | undefined;
let s3: S3Client | undefined;

export function testDynamoClient(): DynamoDBClient {
  const { dynamodbEndpoint, region } = testEngines();
  dynamo ??= localDynamoDbClient(dynamodbEndpoint, region);
  return dynamo;
}

export function testSqsClient(): SQSClient {
  const { sqsEndpoint, region } = testEngines();
  sqs ??= localSqsClient(sqsEndpoint, region);
  return sqs;
}

/** Path-style, as fauxqs needs. */
export function testS3Client(): S3Client {
  const { s3Endpoint, region } = testEngines();
  s3 ??= localS3Client(s3Endpoint, region);
  return s3;
}

export interface TestTable {
  tableName: string;
  /** Built with the application's own createDocumentClient, so marshalling matches the handlers'. */
  doc: DynamoDBDocumentClient;
  client: DynamoDBClient;
}

/** A fresh table with the production shape (both GSIs, TTL): one per test keeps tests independent. */
export async function createTestTable(prefix = 'payroll'): Promise<TestTable> {
  const client = testDynamoClient();
  const tableName = uniqueName(prefix);
  await ensureTable(client, tableName);
  return { tableName, doc: createDocumentClient(client), client };
}

/** The payroll and webhook queues with their DLQs, under a unique prefix. */
export async function createTestQueues(prefix = uniqueName('q')): Promise<StackState['queues']> {
  return ensureQueues(testSqsClient(), prefix);
}

export async function createTestBucket(prefix = 'bucket'): Promise<string> {
  const bucket = uniqueName(prefix);
  await ensureBucket(testS3Client(), bucket);
  return bucket;
}

/**
 * The SDK-level variables a handler needs to reach the test engines (as local/stack-state.ts handlerEnvironment
 * sets them for the local stack); merge with TABLE_NAME, queue URLs and secrets for the resources of the test.
 */
export function engineEnvironment(): Record<string, string> {
  const { region, dynamodbEndpoint, sqsEndpoint, s3Endpoint } = testEngines();
  return {
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: dynamodbEndpoint,
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_S3: s3Endpoint,
  };
}
