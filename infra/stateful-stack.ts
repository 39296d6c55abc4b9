import { Aws, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, AnyPrincipal, Effect, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { KeyPurpose } from '../shared/adapters/envelope-encryption.js';
import { BANK_LINK_OBJECT_PREFIX, WORK_FILE_PREFIX } from '../shared/adapters/object-store.js';
import { QUEUE_DEFINITIONS, TABLE_DEFINITION } from '../shared/data/table-definition.js';
import { QueueWithDlq } from './constructs/queue-with-dlq.js';
import type { ServiceResources } from './constructs/service-access.js';
import { acknowledgeAutoDeleteObjects, logBucket } from './constructs/log-bucket.js';
import { ALARM_THRESHOLDS, Alarms, alarmTopic } from './constructs/monitoring.js';
import { type KeyUse, keyUseRolePath, rolePatterns } from './key-use-paths.js';
import { controlTower, deploymentName, pascal } from './names.js';
import { CONSUMER_TIMEOUTS, queueVisibilityTimeout } from './queue-consumers.js';

/** Days a work file's version is kept after a write replaced it or its expiry hid it. */
export const WORK_FILE_NONCURRENT_DAYS = 1;
/**
 * Days a processor work file (`WORK_FILE_PREFIX`) may outlive its run before the bucket expires it: longer than any
 * queue keeps a message (SQS: 14 days at most), so a message redriven after an outage still finds its files.
 */
export const WORK_FILE_DAYS = 21;
/** The bank link's staged copies and listings: a day is every pass's worth of them. */
export const BANK_LINK_STAGING_DAYS = 1;

export type DeploymentEnvironment = 'sandbox' | 'production';
export type QueueName = keyof typeof QUEUE_DEFINITIONS;

/** The envelope purpose whose use of the key the key policy confines to named roles (see `keyPolicy`). */
const BANK_ACCOUNT: KeyPurpose = 'bank-account';
/** The envelope purpose of the disbursement file key's data keys (see `fileKeyPolicy`). */
const DISBURSEMENT_FILE: KeyPurpose = 'disbursement-file';

/** What a role does with bank account data keys: `decrypt` roles may also encrypt (their IAM policy says which). */
export type BankAccountKeyUse = KeyUse<'bank-account'>;

/**
 * The IAM path of the roles whose only key use is `purpose=bank-account`, e.g.
 * `/payroll/production/main/bank-account-decrypt/`; a role with other key uses too has this as the start of its path
 * (key-use-paths.ts). A role ARN carries its path (`arn:aws:iam::<account>:role/<path><name>`), and so does
 * `aws:PrincipalArn` for a role's sessions, so the key policy can name these roles by pattern without referring to
 * them: the roles live in the API and workers stacks, which depend on this one, and a reference back would be a
 * dependency cycle.
 */
export function bankAccountRolePath(environment: DeploymentEnvironment, stage: string, use: BankAccountKeyUse): string {
  return keyUseRolePath(environment, stage, { 'bank-account': use })!;
}

/** CDK's key administrator actions (aws-kms `grantAdmin`), except `kms:Create*`, which also covers CreateGrant. */
const KEY_ADMIN_ACTIONS = [
  'kms:CreateAlias',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
] as const;

/** The account (that is, IAM) keeps administration of a key, so it never becomes unmanageable, but no cryptographic use. */
function keyAdministration(): PolicyStatement {
  return new PolicyStatement({
    sid: 'KeyAdministration',
    principals: [new AccountRootPrincipal()],
    actions: [...KEY_ADMIN_ACTIONS],
    resources: ['*'],
  });
}

/**
 * The service key's policy, in place of CDK's default (`kms:*` for the account), which lets any principal whose IAM
 * policy says `kms:*` unwrap bank account data keys. Here the account (that is, IAM) keeps:
 * - administration (KEY_ADMIN_ACTIONS), so the key can never become unmanageable, but no cryptographic use;
 * - grants, only when an AWS service creates them for its resource (DynamoDB creates one for the table);
 * - the use DynamoDB makes of the key on a caller's behalf (kms:ViaService): the table is encrypted with it
 *   (grantTable in service-access.ts). The table holds bank account numbers only envelope-encrypted (below);
 * - the use S3 makes of it on a caller's behalf, for the roles under the `disbursement-bucket` path alone (the
 *   bucket grants in service-access.ts): the disbursement bucket is encrypted with it, and an account-wide path
 *   through S3 would let any administrator read every object;
 * - envelope encryption with a `purpose` encryption context (shared/adapters/envelope-encryption.ts).
 * On top of which two denies confine `purpose=bank-account`, for every principal (account root, administrators
 * and AWS services included) whose ARN is not under the roles' path (`bankAccountRolePath`): decrypting (and
 * re-encrypting, which would move a data key under another context) to the `decrypt` roles, encrypting and
 * generating data keys to the `encrypt` and `decrypt` roles. IAM then says which of those roles may do what.
 *
 * An administrator can still rewrite this policy (kms:PutKeyPolicy must stay, or the key is unmanageable); that
 * is a deliberate, logged act (CloudTrail), unlike reading bank account numbers with an account-wide `kms:*`.
 */
function keyPolicy(environment: DeploymentEnvironment, stage: string, confined: boolean): PolicyDocument {
  const account = new AccountRootPrincipal();
  const bankAccount = { 'kms:EncryptionContext:purpose': BANK_ACCOUNT };
  const viaS3 = {
    'kms:ViaService': `s3.${Aws.REGION}.amazonaws.com`,
    'kms:CallerAccount': Aws.ACCOUNT_ID,
  };
  return new PolicyDocument({
    statements: [
      keyAdministration(),
      new PolicyStatement({
        sid: 'GrantsForAwsResourcesOnly',
        principals: [account],
        actions: ['kms:CreateGrant'],
        resources: ['*'],
        conditions: { Bool: { 'kms:GrantIsForAWSResource': 'true' } },
      }),
      new PolicyStatement({
        sid: 'UseThroughDynamoDb',
        principals: [account],
        actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*'],
        resources: ['*'],
        conditions: {
          StringEquals: {
            'kms:ViaService': `dynamodb.${Aws.REGION}.amazonaws.com`,
            'kms:CallerAccount': Aws.ACCOUNT_ID,
          },
        },
      }),
      new PolicyStatement({
        sid: 'UseThroughS3ByBucketRoles',
        principals: [account],
        actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: confined
          ? {
              StringEquals: viaS3,
              StringLike: {
                'aws:PrincipalArn': rolePatterns(environment, stage, 'disbursement-bucket', ['objects']),
              },
            }
          : { StringEquals: viaS3 },
      }),
      new PolicyStatement({
        sid: 'EnvelopeEncryptionByPurpose',
        principals: [account],
        actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey'],
        resources: ['*'],
        conditions: {
          StringEquals: { 'kms:EncryptionContext:purpose': [BANK_ACCOUNT, 'webhook-secret'] satisfies KeyPurpose[] },
        },
      }),
      ...(confined ? bankAccountDenies(environment, stage, bankAccount) : []),
    ],
  });
}

/**
 * The two Deny statements that keep bank-account data keys to the roles under their paths. Off only for the one
 * deploy that moves existing roles under those paths (`-c bankAccountKeyDeny=false`, docs/deploy.md): the key's
 * stack deploys before the roles' stacks, so a Deny applied first would refuse the old roles until they are
 * replaced.
 */
function bankAccountDenies(
  environment: DeploymentEnvironment,
  stage: string,
  bankAccount: Record<string, string>,
): PolicyStatement[] {
  const under = (...uses: BankAccountKeyUse[]) => rolePatterns(environment, stage, 'bank-account', uses);
  return [
    new PolicyStatement({
      sid: 'BankAccountDecryptOnlyByDecryptRoles',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['kms:Decrypt', 'kms:ReEncrypt*'],
      resources: ['*'],
      conditions: { StringEquals: bankAccount, StringNotLike: { 'aws:PrincipalArn': under('decrypt') } },
    }),
    new PolicyStatement({
      sid: 'BankAccountEncryptOnlyByServiceRoles',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['kms:Encrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: {
        StringEquals: bankAccount,
        StringNotLike: { 'aws:PrincipalArn': under('encrypt', 'decrypt') },
      },
    }),
  ];
}

/**
 * The disbursement file key's policy. The NACHA files carry every employee's full account number; the service seals
 * each one with a data key of its own under this key (`purpose=disbursement-file`), inside the bucket's own
 * encryption. Only the roles that write or serve the files may use it, named by their IAM path (key-use-paths.ts):
 * `write` roles (the processor) make data keys and unwrap them, `read` roles (the API function that serves
 * `GET /v1/payroll/{id}/disbursement`) unwrap them; IAM then says which of those roles may do what. The account keeps
 * administration alone: no principal has cryptographic use of the key without such a path (the account root,
 * administrators and AWS services included), no statement lets a service use it on a caller's behalf
 * (kms:ViaService), and no grant can be created on it: no statement allows kms:CreateGrant (KEY_ADMIN_ACTIONS leave
 * it out), and one denies it outright to anything but an AWS service granting for its resource, which nothing here
 * asks of one. The file roles need no Deny statements: a key policy that allows nothing else leaves IAM nothing to
 * delegate.
 *
 * Unlike the service key's, this policy needs no upgrade switch: the key is new, so no running role relies on it.
 */
function fileKeyPolicy(environment: DeploymentEnvironment, stage: string): PolicyDocument {
  const account = new AccountRootPrincipal();
  const under = (...uses: KeyUse<'disbursement-file'>[]) => rolePatterns(environment, stage, 'disbursement-file', uses);
  const purpose = { 'kms:EncryptionContext:purpose': DISBURSEMENT_FILE };
  return new PolicyDocument({
    statements: [
      keyAdministration(),
      new PolicyStatement({
        sid: 'SealFilesByWriterRoles',
        principals: [account],
        actions: ['kms:GenerateDataKey', 'kms:Encrypt'],
        resources: ['*'],
        conditions: { StringEquals: purpose, StringLike: { 'aws:PrincipalArn': under('write') } },
      }),
      new PolicyStatement({
        sid: 'OpenFilesByFileRoles',
        principals: [account],
        actions: ['kms:Decrypt'],
        resources: ['*'],
        conditions: { StringEquals: purpose, StringLike: { 'aws:PrincipalArn': under('write', 'read') } },
      }),
      new PolicyStatement({
        sid: 'NoGrants',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['kms:CreateGrant'],
        resources: ['*'],
        conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
      }),
    ],
  });
}

/**
 * `-c bankAccountKeyDeny=false`: the service key's policy without its role-path confinement (the bank-account Deny
 * statements, and the bucket roles' path on its use through S3), for the one deploy that moves existing roles under
 * their paths.
 */
export function bankAccountKeyDeny(scope: Construct): boolean {
  const raw = String(scope.node.tryGetContext('bankAccountKeyDeny') ?? true);
  if (raw !== 'true' && raw !== 'false')
    throw new Error(`Context "bankAccountKeyDeny" must be true or false; got "${raw}"`);
  return raw === 'true';
}

export interface StatefulStackProps extends StackProps {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
  /** `-c alarmEmail=…`: the address the alarm topic mails (app.ts). */
  readonly alarmEmail?: string;
}

/**
 * Everything that holds data (key, table, bucket, queues, the signing secret), apart from the stateless API so
 * the API can be torn down and redeployed freely, and the deployment's alarm topic. In production every resource
 * holding data is retained on delete and the table refuses deletion; a sandbox cleans up after itself.
 *
 * Retained, but not by a create that rolls back: none of these resources has a fixed name, so what a failed first
 * create leaves behind never blocks the next one, but it is left behind. Where CloudFormation can delete it on a
 * rollback (the key, the queues, the secret: empty, since nothing reaches them before the API and workers stacks
 * exist), `RETAIN_ON_UPDATE_OR_DELETE` (DeletionPolicy RetainExceptOnCreate) has it deleted. The table and the
 * buckets keep plain RETAIN: a rollback cannot delete a table with deletion protection, nor a bucket that access
 * logs have already reached, and a failed delete would leave the stack in ROLLBACK_FAILED. After a failed first
 * create of production, delete those by hand (they are empty).
 */
export class StatefulStack extends Stack {
  /** The service key: bank account and webhook secret data keys, the table, the disbursement bucket. */
  readonly key: Key;
  /** The disbursement file key: the per-file data keys that seal NACHA files (`fileKeyPolicy`). */
  readonly fileKey: Key;
  readonly table: Table;
  readonly disbursementBucket: Bucket;
  readonly accessLogsBucket: Bucket;
  readonly queues: Record<QueueName, QueueWithDlq>;
  readonly signingSecret: Secret;
  /** Every alarm of the deployment notifies it (constructs/monitoring.ts). */
  readonly alarmTopic: Topic;

  /** What functions may be granted (infra/constructs/service-access.ts), as every stack and test that grants them. */
  serviceResources(): ServiceResources {
    return {
      table: this.table,
      key: this.key,
      fileKey: this.fileKey,
      disbursementBucket: this.disbursementBucket,
      signingSecret: this.signingSecret,
      queues: { payroll: this.queues.payroll.queue, webhooks: this.queues.webhooks.queue },
    };
  }

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    const production = props.environment === 'production';
    const removalPolicy = production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const retainExceptOnCreate = production ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY;

    this.key = new Key(this, 'Key', {
      description: `Payroll ${props.environment}/${props.stage}: bank account envelope encryption, the table, disbursement files`,
      alias: `alias/payroll-${props.environment}-${props.stage}`,
      enableKeyRotation: true,
      removalPolicy: retainExceptOnCreate,
      pendingWindow: Duration.days(production ? 30 : 7),
      policy: keyPolicy(props.environment, props.stage, bankAccountKeyDeny(this)),
    });
    Validations.of(this.key).acknowledge({
      id: controlTower('kms_create_grant_aws_service_check'),
      reason:
        'The key policy lets no principal create a grant except the account for an AWS resource (GrantsForAwsResourcesOnly, kms:GrantIsForAWSResource), and grants nothing else that could: every grant is already one an AWS service creates for its resource.',
    });

    // A key of its own, not a purpose of the service key: its policy names the file roles alone, with no path through
    // DynamoDB or S3 and no grants, which the service key (the table's and the bucket's) cannot do without.
    this.fileKey = new Key(this, 'FileKey', {
      description: `Payroll ${props.environment}/${props.stage}: the data keys that seal NACHA disbursement files`,
      alias: `alias/payroll-${props.environment}-${props.stage}-disbursement-files`,
      enableKeyRotation: true,
      removalPolicy: retainExceptOnCreate,
      pendingWindow: Duration.days(production ? 30 : 7),
      policy: fileKeyPolicy(props.environment, props.stage),
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
      // The service key, which S3 may use for the bucket roles alone (keyPolicy); the NACHA files inside are sealed
      // again by the service with the file key.
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      // One data key per bucket instead of one KMS call per object.
      bucketKeyEnabled: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      // No default retention: the processor locks each NACHA file itself (GOVERNANCE mode, until the organization's
      // retention ends, two years by default), and nothing else is locked. No role of the service may shorten a lock
      // (s3:BypassGovernanceRetention) or delete an object (service-access.ts).
      objectLockEnabled: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'disbursement-bucket/',
      lifecycleRules: [
        {
          // Whole bucket, but neither rule action removes data: an upload never completed, and a delete marker with
          // no version left behind it.
          id: 'AbortIncompleteUploads',
          abortIncompleteMultipartUploadAfter: Duration.days(7),
          expiredObjectDeleteMarker: true,
        },
        {
          // The processor's work files (no account numbers: the runs' pending entries), and the versions their
          // expiry leaves: nothing deletes them when their run ends (the service's roles cannot delete), so they
          // expire here. No run is processing a week after it started.
          id: 'ExpireWorkFiles',
          prefix: WORK_FILE_PREFIX,
          expiration: Duration.days(WORK_FILE_DAYS),
          noncurrentVersionExpiration: Duration.days(WORK_FILE_NONCURRENT_DAYS),
        },
        {
          // The bank link's staging (deployed: what a connector sends or retrieves, and its directory listings, one a
          // minute per organization): copies of files whose record is elsewhere, not kept past the pass that used them.
          id: 'ExpireBankLinkStaging',
          prefix: `${BANK_LINK_OBJECT_PREFIX}/`,
          expiration: Duration.days(BANK_LINK_STAGING_DAYS),
          noncurrentVersionExpiration: Duration.days(WORK_FILE_NONCURRENT_DAYS),
        },
        // Nothing expires a run's own objects (`payrolls/<org>/<run>/…`: the submitted body, chunks, the NACHA file),
        // current or noncurrent: they are the run's record for as long as the run is kept, and lifecycle filters are
        // prefixes (and tags), so no rule could reach a run's submitted body without reaching its NACHA file beside
        // it. A noncurrent version outside the work files (an object written again, or hidden by a delete marker
        // someone with s3:DeleteObject placed by hand) is kept until someone removes it; a NACHA file's version cannot
        // be removed before its retain-until date at all. A body stored by a submit that then failed stays, with no
        // record pointing at it (docs/deploy.md, "Work files").
      ],
      removalPolicy,
      autoDeleteObjects: !production,
    });
    Validations.of(this.disbursementBucket).acknowledge({
      id: controlTower('s3_event_notifications_enabled_check'),
      reason:
        'The service writes and reads its objects itself, through the run records and the payroll queue; nothing reacts to an object appearing in the bucket.',
    });
    acknowledgeAutoDeleteObjects(this);

    this.queues = Object.fromEntries(
      (Object.entries(QUEUE_DEFINITIONS) as [QueueName, (typeof QUEUE_DEFINITIONS)[QueueName]][]).map(([name, def]) => [
        name,
        new QueueWithDlq(this, pascal(def.name), {
          // Six times its consumer's timeout (queue-consumers.ts), whatever QUEUE_DEFINITIONS says for the local stack.
          visibilityTimeout: queueVisibilityTimeout(name),
          maxReceiveCount: def.maxReceiveCount,
          removalPolicy: retainExceptOnCreate,
        }),
      ]),
    ) as Record<QueueName, QueueWithDlq>;

    // Encrypted with the account's aws/secretsmanager key rather than the service key: reading the secret must
    // not also hand out kms:Decrypt on the key that unwraps bank account numbers.
    this.signingSecret = new Secret(this, 'SigningSecret', {
      description: `Payroll ${props.environment}/${props.stage}: HMAC secret that signs page tokens`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: retainExceptOnCreate,
    });
    Validations.of(this.signingSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The secret only signs short-lived pagination tokens (no authentication, no data access); rotating it would just invalidate the page tokens in flight, so it is rotated by hand when needed.',
    });

    this.alarmTopic = alarmTopic(this, 'AlarmTopic', {
      deployment: deploymentName(props.environment, props.stage),
      email: props.alarmEmail,
    });
    const alarms = new Alarms(this, 'Alarms', this.alarmTopic);
    alarms.notify(...Object.values(this.queues).map((q) => q.deadLetterAlarm));
    // Fires during a stuck message's first failed attempt: later than any attempt in progress may take, sooner than
    // the failed message comes back (monitoring.ts).
    const age = ALARM_THRESHOLDS.payrollQueueAgeSeconds;
    if (age <= CONSUMER_TIMEOUTS.payroll.toSeconds() || age >= queueVisibilityTimeout('payroll').toSeconds()) {
      throw new Error(
        `The payroll queue age alarm (${age} s) must lie between the processor's timeout and the queue's visibility timeout`,
      );
    }
    alarms.payrollQueueAge(this.queues.payroll.queue);
    alarms.tableThrottles(
      this.table,
      TABLE_DEFINITION.globalSecondaryIndexes.map((i) => i.indexName),
    );

    // The operator CLI (`npm run admin -- … --stack <this stack>`) finds the table through these output keys.
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'Environment', { value: props.environment });
    new CfnOutput(this, 'KeyArn', { value: this.key.keyArn });
    new CfnOutput(this, 'FileKeyArn', { value: this.fileKey.keyArn });
    new CfnOutput(this, 'BucketName', { value: this.disbursementBucket.bucketName });
    new CfnOutput(this, 'SigningSecretArn', { value: this.signingSecret.secretArn });
    for (const [name, queue] of Object.entries(this.queues)) {
      new CfnOutput(this, `${pascal(name)}QueueUrl`, { value: queue.queue.queueUrl });
      new CfnOutput(this, `${pascal(name)}DeadLetterQueueUrl`, { value: queue.deadLetterQueue.queueUrl });
    }
  }
}
