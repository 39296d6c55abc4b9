import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { QUEUE_DEFINITIONS, TABLE_DEFINITION } from '../shared/data/table-definition.js';
import { QueueWithDlq } from './constructs/queue-with-dlq.js';
import { logBucket } from './constructs/log-bucket.js';
import { pascal } from './names.js';

export type DeploymentEnvironment = 'sandbox' | 'production';
export type QueueName = keyof typeof QUEUE_DEFINITIONS;

export interface StatefulStackProps extends StackProps {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
}

/**
 * Everything that holds data (key, table, bucket, queues, the signing secret), apart from the stateless API so
 * the API can be torn down and redeployed freely. In production every resource here is retained on delete and
 * the table refuses deletion; a sandbox cleans up after itself.
 */
export class StatefulStack extends Stack {
  readonly key: Key;
  readonly table: Table;
  readonly disbursementBucket: Bucket;
  readonly accessLogsBucket: Bucket;
  readonly queues: Record<QueueName, QueueWithDlq>;
  readonly signingSecret: Secret;

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    const production = props.environment === 'production';
    const removalPolicy = production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.key = new Key(this, 'Key', {
      description: `Payroll ${props.environment}/${props.stage}: bank account envelope encryption, the table, disbursement files`,
      alias: `alias/payroll-${props.environment}-${props.stage}`,
      enableKeyRotation: true,
      removalPolicy,
      pendingWindow: Duration.days(production ? 30 : 7),
    });

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_DEFINITION.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_DEFINITION.sortKey, type: AttributeType.STRING },
      timeToLiveAttribute: TABLE_DEFINITION.ttlAttribute,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: this.key,
      deletionProtection: production,
      removalPolicy,
    });
    for (const index of TABLE_DEFINITION.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }

    this.accessLogsBucket = logBucket(this, 'AccessLogsBucket', {
      production,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy,
      logsOf: 'the disbursement bucket',
    });

    this.disbursementBucket = new Bucket(this, 'DisbursementBucket', {
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      // One data key per bucket instead of one KMS call per object.
      bucketKeyEnabled: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'disbursement-bucket/',
      lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(7) }],
      removalPolicy,
      autoDeleteObjects: !production,
    });

    this.queues = Object.fromEntries(
      (Object.entries(QUEUE_DEFINITIONS) as [QueueName, (typeof QUEUE_DEFINITIONS)[QueueName]][]).map(([name, def]) => [
        name,
        new QueueWithDlq(this, pascal(def.name), {
          visibilityTimeout: Duration.seconds(def.visibilityTimeoutSeconds),
          maxReceiveCount: def.maxReceiveCount,
          removalPolicy,
        }),
      ]),
    ) as Record<QueueName, QueueWithDlq>;

    // Encrypted with the account's aws/secretsmanager key rather than the service key: reading the secret must
    // not also hand out kms:Decrypt on the key that unwraps bank account numbers.
    this.signingSecret = new Secret(this, 'SigningSecret', {
      description: `Payroll ${props.environment}/${props.stage}: HMAC secret that signs page tokens`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy,
    });
    Validations.of(this.signingSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The secret only signs short-lived pagination tokens (no authentication, no data access); rotating it would just invalidate the page tokens in flight, so it is rotated by hand when needed.',
    });

    // The operator CLI (`npm run admin -- … --stack <this stack>`) finds the table through these output keys.
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'Environment', { value: props.environment });
    new CfnOutput(this, 'KeyArn', { value: this.key.keyArn });
    new CfnOutput(this, 'BucketName', { value: this.disbursementBucket.bucketName });
    new CfnOutput(this, 'SigningSecretArn', { value: this.signingSecret.secretArn });
    for (const [name, queue] of Object.entries(this.queues)) {
      new CfnOutput(this, `${pascal(name)}QueueUrl`, { value: queue.queue.queueUrl });
      new CfnOutput(this, `${pascal(name)}DeadLetterQueueUrl`, { value: queue.deadLetterQueue.queueUrl });
    }
  }
}
