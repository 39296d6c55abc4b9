import { Aws, Fn, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { KeyPurpose } from '../../shared/adapters/envelope-encryption.js';
import type { Access } from '../../shared/api/route.js';
import { PARTITIONS, type Partition, type TableAccess } from '../../shared/api/table-access.js';
import type { QueueName } from '../stateful-stack.js';
import type { PayrollFunction } from './payroll-function.js';
import { pascal } from '../names.js';

/** What the stateful stack holds that functions may be granted. */
export interface ServiceResources {
  readonly table: ITable;
  readonly key: IKey;
  /** The disbursement file key: the per-file data keys that seal NACHA files (stateful-stack.ts). */
  readonly fileKey: IKey;
  readonly disbursementBucket: IBucket;
  readonly signingSecret: ISecret;
  readonly queues: Record<QueueName, IQueue>;
}

/**
 * Every object the service writes lives under this prefix (`objectKeys` in shared/adapters/object-store.ts; the
 * infra tests check the two agree), so object grants name `<bucket>/payrolls/*`, not the whole bucket.
 */
export const DISBURSEMENT_OBJECT_PREFIX = 'payrolls/';

/** Entries per processor chunk, given to whatever enqueues payroll runs (a run keeps the size it was submitted with). */
export const PAYROLL_CHUNK_SIZE = 1000;

const OBJECTS_WILDCARD_REASON = `Object-level S3 actions can only name objects by key pattern; the pattern covers the ${DISBURSEMENT_OBJECT_PREFIX} prefix of the disbursement bucket alone, which holds nothing but this service's payroll bodies, chunk files and NACHA files.`;

/**
 * A function's table access (shared/api/table-access.ts) as IAM statements: read actions on the partitions it
 * reads or writes, write actions on those it writes, each held to those partition key prefixes by a
 * `dynamodb:LeadingKeys` condition (`ForAllValues`: every key a batch or transaction names must match), and Query
 * on each index it names, by the index's own ARN (never `index/*`). Never Scan. A transaction is authorized per
 * contained action (Put → PutItem, Update → UpdateItem, Delete → DeleteItem, ConditionCheck → ConditionCheckItem):
 * IAM has no TransactWriteItems or TransactGetItems action.
 */
export function tableStatements(tableArn: string, access: TableAccess): PolicyStatement[] {
  const prefixes = (partitions: readonly Partition[]) =>
    [...new Set(partitions)].map((p) => `${PARTITIONS[p]}*`).sort();
  const statements: PolicyStatement[] = [];
  const readable = [...access.reads, ...access.writes];
  if (access.readActions.length > 0 && readable.length > 0) {
    statements.push(
      new PolicyStatement({
        sid: 'TableRead',
        actions: access.readActions.map((a) => `dynamodb:${a}`),
        resources: [tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes(readable) } },
      }),
    );
  }
  if (access.writeActions.length > 0 && access.writes.length > 0) {
    statements.push(
      new PolicyStatement({
        sid: 'TableWrite',
        actions: access.writeActions.map((a) => `dynamodb:${a}`),
        resources: [tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes(access.writes) } },
      }),
    );
  }
  if (access.indexes.length > 0) {
    statements.push(
      new PolicyStatement({
        sid: 'TableIndexes',
        actions: ['dynamodb:Query'],
        resources: access.indexes.map((indexName) => `${tableArn}/index/${indexName}`),
      }),
    );
  }
  return statements;
}

/** Grants `access` on the table, and the table key as far as DynamoDB uses it for the function. */
export function grantTable(
  fn: PayrollFunction,
  { table, key }: Pick<ServiceResources, 'table' | 'key'>,
  access: TableAccess,
): void {
  for (const statement of tableStatements(table.tableArn, access)) fn.addToAccessPolicy(statement);
  // The table is encrypted with the service key, and DynamoDB uses it with the caller's permissions. The
  // kms:ViaService condition keeps this to DynamoDB's own use: the function cannot call KMS with it directly,
  // so it cannot unwrap bank account data keys unless it is also granted 'kms:decrypt:bank-account'.
  fn.addToAccessPolicy(
    new PolicyStatement({
      sid: 'TableKeyViaDynamoDB',
      actions:
        access.writeActions.length === 0
          ? ['kms:Decrypt', 'kms:DescribeKey']
          : ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${Aws.REGION}.amazonaws.com` } },
    }),
  );
  fn.function.addEnvironment('TABLE_NAME', table.tableName);
}

/**
 * Exactly what one `access` entry of the route table allows, with the variable the handler reads it by. The
 * workers are granted through the same vocabulary, so a route and the processor asking for 'bucket:read' get the
 * same reviewed statements. A new Access value fails to compile until it is handled here.
 */
export function grantAccess(fn: PayrollFunction, access: Access, resources: ServiceResources): void {
  const { key, fileKey, disbursementBucket: bucket, signingSecret, queues } = resources;
  const viaS3 = { StringEquals: { 'kms:ViaService': `s3.${Aws.REGION}.amazonaws.com` } };
  switch (access) {
    case 'kms:encrypt:bank-account':
    case 'kms:encrypt:webhook-secret':
    case 'kms:decrypt:bank-account':
    case 'kms:decrypt:webhook-secret': {
      // Only data keys whose encryption context names this purpose (shared/adapters/envelope-encryption.ts): a
      // function that unwraps webhook secrets cannot unwrap a bank account number's key, and the reverse.
      const [, operation, purpose] = access.split(':') as [string, 'encrypt' | 'decrypt', KeyPurpose];
      fn.addToAccessPolicy(
        new PolicyStatement({
          sid: `Envelope${pascal(operation)}${pascal(purpose)}`,
          actions: operation === 'encrypt' ? ['kms:GenerateDataKey', 'kms:Encrypt'] : ['kms:Decrypt'],
          resources: [key.keyArn],
          conditions: { StringEquals: { 'kms:EncryptionContext:purpose': purpose } },
        }),
      );
      fn.function.addEnvironment('PAYROLL_KMS_KEY_ID', key.keyArn);
      return;
    }
    case 'kms:encrypt:disbursement-file':
    case 'kms:decrypt:disbursement-file': {
      // The file key, its own key (stateful-stack.ts), and only data keys made for NACHA files: its key policy admits
      // the roles whose path says they write or read files (infra/key-use-paths.ts puts these roles there).
      const operation = access === 'kms:encrypt:disbursement-file' ? 'encrypt' : 'decrypt';
      const purpose: KeyPurpose = 'disbursement-file';
      fn.addToAccessPolicy(
        new PolicyStatement({
          sid: `FileKey${pascal(operation)}`,
          actions: operation === 'encrypt' ? ['kms:GenerateDataKey', 'kms:Encrypt'] : ['kms:Decrypt'],
          resources: [fileKey.keyArn],
          conditions: { StringEquals: { 'kms:EncryptionContext:purpose': purpose } },
        }),
      );
      fn.function.addEnvironment('PAYROLL_FILE_KMS_KEY_ID', fileKey.keyArn);
      return;
    }
    case 'secret:signing':
      fn.addToAccessPolicy(
        new PolicyStatement({
          sid: 'SigningSecret',
          actions: ['secretsmanager:GetSecretValue'],
          resources: [signingSecret.secretArn],
        }),
      );
      fn.function.addEnvironment('PAYROLL_SIGNING_SECRET_ARN', signingSecret.secretArn);
      return;
    case 'bucket:read': {
      const objects = bucketObjects(fn, bucket);
      // Without ListBucket, S3 answers a missing key with 403 instead of NoSuchKey, which the object store reads as "absent".
      fn.addToAccessPolicy(
        new PolicyStatement({ sid: 'BucketList', actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
      );
      const policy = fn.addToAccessPolicy(
        new PolicyStatement({
          sid: 'BucketRead',
          actions: ['s3:GetObject', 's3:GetObjectVersion'],
          resources: [objects.arn],
        }),
      );
      Validations.of(policy).acknowledge({ id: objects.finding, reason: OBJECTS_WILDCARD_REASON });
      // Objects are encrypted with the service key; only S3 may use it on the function's behalf, and the key policy
      // lets S3 do so for the roles under the bucket path alone (infra/key-use-paths.ts puts this role there).
      fn.addToAccessPolicy(
        new PolicyStatement({
          sid: 'BucketKeyRead',
          actions: ['kms:Decrypt'],
          resources: [key.keyArn],
          conditions: viaS3,
        }),
      );
      fn.function.addEnvironment('DISBURSEMENT_BUCKET', bucket.bucketName);
      return;
    }
    case 'bucket:write': {
      const objects = bucketObjects(fn, bucket);
      // No delete of any kind (DeleteObject, DeleteObjectVersion): a role of the service never removes or hides an
      // object; work files expire by the bucket's lifecycle (stateful-stack.ts). PutObjectRetention: the processor
      // writes each NACHA file with an Object Lock retain-until date (GOVERNANCE mode), which S3 authorizes by it.
      // Never BypassGovernanceRetention, so no role may shorten or lift a lock.
      const policy = fn.addToAccessPolicy(
        new PolicyStatement({
          sid: 'BucketWrite',
          actions: ['s3:PutObject', 's3:PutObjectRetention', 's3:AbortMultipartUpload'],
          resources: [objects.arn],
        }),
      );
      Validations.of(policy).acknowledge({ id: objects.finding, reason: OBJECTS_WILDCARD_REASON });
      // Decrypt too: multipart uploads read back the data key of the parts already sent.
      fn.addToAccessPolicy(
        new PolicyStatement({
          sid: 'BucketKeyWrite',
          actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
          resources: [key.keyArn],
          conditions: viaS3,
        }),
      );
      fn.function.addEnvironment('DISBURSEMENT_BUCKET', bucket.bucketName);
      return;
    }
    case 'queue:payroll:send':
      // SendMessageBatch is authorized by sqs:SendMessage.
      fn.addToAccessPolicy(
        new PolicyStatement({
          sid: 'PayrollQueueSend',
          actions: ['sqs:SendMessage'],
          resources: [queues.payroll.queueArn],
        }),
      );
      fn.function.addEnvironment('PAYROLL_QUEUE_URL', queues.payroll.queueUrl);
      fn.function.addEnvironment('PAYROLL_CHUNK_SIZE', String(PAYROLL_CHUNK_SIZE));
      return;
    case 'queue:webhooks:send':
      fn.addToAccessPolicy(
        new PolicyStatement({
          sid: 'WebhookQueueSend',
          actions: ['sqs:SendMessage'],
          resources: [queues.webhooks.queueArn],
        }),
      );
      fn.function.addEnvironment('WEBHOOK_QUEUE_URL', queues.webhooks.queueUrl);
      return;
    default: {
      const unhandled: never = access;
      throw new Error(`No grant for access ${String(unhandled)}`);
    }
  }
}

/**
 * The ARN pattern of the service's objects in the disbursement bucket, and the id of the cdk-nag finding its `*`
 * raises.
 *
 * An automatic cross-stack reference would render as an export whose name ends in a hash CDK computes during
 * synthesis, so the finding could not be acknowledged by its exact id (cdk-nag 3 matches ids exactly). A
 * named export of the bucket ARN gives the finding a stable id, whichever stack imports it.
 */
function bucketObjects(fn: PayrollFunction, bucket: IBucket): { arn: string; finding: string } {
  const producer = Stack.of(bucket);
  const exportName = `${producer.stackName}-DisbursementBucketArn`;
  if (!producer.node.tryFindChild(`Export${exportName}`)) {
    producer.exportValue(bucket.bucketArn, { name: exportName });
  }
  const consumer = Stack.of(fn);
  if (consumer !== producer) consumer.addStackDependency(producer);
  const pattern = `${DISBURSEMENT_OBJECT_PREFIX}*`;
  return {
    arn: `${Fn.importValue(exportName)}/${pattern}`,
    finding: `AwsSolutions-IAM5[Resource::${exportName}/${pattern}]`,
  };
}
