import {
  Aws,
  CfnOutput,
  Duration,
  type IAspect,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import {
  AccountRootPrincipal,
  AnyPrincipal,
  type CfnRole,
  Effect,
  Policy,
  PolicyDocument,
  PolicyStatement,
  Role,
} from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct, IConstruct } from 'constructs';
import type { KeyPurpose } from '../shared/adapters/envelope-encryption.js';
import { WORK_FILE_PREFIX } from '../shared/adapters/object-store.js';
import { QUEUE_DEFINITIONS, TABLE_DEFINITION } from '../shared/data/table-definition.js';
import type { PayrollFunction } from './constructs/payroll-function.js';
import { QueueWithDlq } from './constructs/queue-with-dlq.js';
import { acknowledgeAutoDeleteObjects, logBucket } from './constructs/log-bucket.js';
import { Alarms, alarmTopic } from './constructs/monitoring.js';
import { controlTower, deploymentName, pascal } from './names.js';

/** Days the disbursement bucket keeps an object version after a write replaced it or a delete hid it. */
export const NONCURRENT_VERSION_DAYS = 30;
/**
 * Days a processor work file (`WORK_FILE_PREFIX`) may outlive its run before the bucket expires it: longer than any
 * queue keeps a message (SQS: 14 days at most), so a message redriven after an outage still finds its files.
 */
export const WORK_FILE_DAYS = 21;

export type DeploymentEnvironment = 'sandbox' | 'production';
export type QueueName = keyof typeof QUEUE_DEFINITIONS;

/** The envelope purpose whose use of the key the key policy confines to named roles (see `keyPolicy`). */
const BANK_ACCOUNT: KeyPurpose = 'bank-account';

/** What a role does with bank account data keys: `decrypt` roles may also encrypt (their IAM policy says which). */
export type BankAccountKeyUse = 'encrypt' | 'decrypt';

/**
 * The IAM path of the roles that may use the key with `purpose=bank-account`, e.g.
 * `/payroll/production/main/bank-account-decrypt/`. A role ARN carries its path
 * (`arn:aws:iam::<account>:role/<path><name>`), and so does `aws:PrincipalArn` for a role's sessions, so the key
 * policy can name these roles by pattern without referring to them: the roles live in the API and workers stacks,
 * which depend on this one, and a reference back would be a dependency cycle.
 */
export function bankAccountRolePath(environment: DeploymentEnvironment, stage: string, use: BankAccountKeyUse): string {
  return `/payroll/${environment}/${stage}/bank-account-${use}/`;
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

/**
 * The key policy, in place of CDK's default (`kms:*` for the account), which lets any principal whose IAM policy
 * says `kms:*` unwrap bank account data keys. Here the account (that is, IAM) keeps:
 * - administration (KEY_ADMIN_ACTIONS), so the key can never become unmanageable, but no cryptographic use;
 * - grants, only when an AWS service creates them for its resource (DynamoDB creates one for the table);
 * - the use DynamoDB and S3 make of the key on a caller's behalf (kms:ViaService): the table and the
 *   disbursement bucket are encrypted with it (grantTable and the bucket grants in service-access.ts);
 * - envelope encryption with a `purpose` encryption context (shared/adapters/envelope-encryption.ts).
 * On top of which two denies confine `purpose=bank-account`, for every principal (account root, administrators
 * and AWS services included) whose ARN is not under the roles' path (`bankAccountRolePath`): decrypting (and
 * re-encrypting, which would move a data key under another context) to the `decrypt` roles, encrypting and
 * generating data keys to the `encrypt` and `decrypt` roles. IAM then says which of those roles may do what.
 *
 * An administrator can still rewrite this policy (kms:PutKeyPolicy must stay, or the key is unmanageable); that
 * is a deliberate, logged act (CloudTrail), unlike reading bank account numbers with an account-wide `kms:*`.
 */
function keyPolicy(environment: DeploymentEnvironment, stage: string, denyOthers: boolean): PolicyDocument {
  const account = new AccountRootPrincipal();
  const roleArnsUnder = (...uses: BankAccountKeyUse[]) =>
    uses.map(
      (use) => `arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:role${bankAccountRolePath(environment, stage, use)}*`,
    );
  const bankAccount = { 'kms:EncryptionContext:purpose': BANK_ACCOUNT };
  return new PolicyDocument({
    statements: [
      new PolicyStatement({
        sid: 'KeyAdministration',
        principals: [account],
        actions: [...KEY_ADMIN_ACTIONS],
        resources: ['*'],
      }),
      new PolicyStatement({
        sid: 'GrantsForAwsResourcesOnly',
        principals: [account],
        actions: ['kms:CreateGrant'],
        resources: ['*'],
        conditions: { Bool: { 'kms:GrantIsForAWSResource': 'true' } },
      }),
      new PolicyStatement({
        sid: 'UseThroughDynamoDbAndS3',
        principals: [account],
        actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*'],
        resources: ['*'],
        conditions: {
          StringEquals: {
            'kms:ViaService': [`dynamodb.${Aws.REGION}.amazonaws.com`, `s3.${Aws.REGION}.amazonaws.com`],
            'kms:CallerAccount': Aws.ACCOUNT_ID,
          },
        },
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
      ...(denyOthers ? bankAccountDenies(bankAccount, roleArnsUnder) : []),
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
  bankAccount: Record<string, string>,
  roleArnsUnder: (...uses: BankAccountKeyUse[]) => string[],
): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'BankAccountDecryptOnlyByDecryptRoles',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['kms:Decrypt', 'kms:ReEncrypt*'],
      resources: ['*'],
      conditions: { StringEquals: bankAccount, StringNotLike: { 'aws:PrincipalArn': roleArnsUnder('decrypt') } },
    }),
    new PolicyStatement({
      sid: 'BankAccountEncryptOnlyByServiceRoles',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['kms:Encrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: {
        StringEquals: bankAccount,
        StringNotLike: { 'aws:PrincipalArn': roleArnsUnder('encrypt', 'decrypt') },
      },
    }),
  ];
}

/**
 * Puts every service function whose IAM policy lets it use the key with `purpose=bank-account` (the access
 * 'kms:encrypt:bank-account' / 'kms:decrypt:bank-account', service-access.ts) under the role path the key policy
 * admits, and no other. Derived from the grants themselves, at synthesis, so a route that gains or loses the
 * access moves its role without anyone editing the key policy. Added to the app by addPayrollStacks (app.ts).
 */
export class BankAccountKeyRoles implements IAspect {
  constructor(
    private readonly environment: DeploymentEnvironment,
    private readonly stage: string,
  ) {}

  visit(node: IConstruct): void {
    // A PayrollFunction (its role and access policy), recognised by shape: importing the class here would load
    // the route table with the stateful stack.
    const role = node.node.tryFindChild('Role');
    if (!(role instanceof Role) || !(node.node.tryFindChild('AccessPolicy') instanceof Policy)) return;
    const use = bankAccountKeyUseOf(node as PayrollFunction);
    if (use) (role.node.defaultChild as CfnRole).path = bankAccountRolePath(this.environment, this.stage, use);
  }
}

/** What the function's access policy lets it do with bank account data keys, if anything. */
export function bankAccountKeyUseOf(fn: PayrollFunction): BankAccountKeyUse | undefined {
  const policy = fn.node.tryFindChild('AccessPolicy');
  if (!(policy instanceof Policy)) return undefined;
  interface RenderedStatement {
    readonly Effect?: string;
    readonly Action?: string | string[];
    readonly Condition?: { readonly StringEquals?: Record<string, string | string[]> };
  }
  const asArray = <T>(value: T | T[] | undefined): T[] =>
    value === undefined ? [] : Array.isArray(value) ? value : [value];
  const rendered = policy.document.toJSON() as { Statement?: RenderedStatement | RenderedStatement[] } | undefined;
  const actions = asArray(rendered?.Statement)
    .filter(
      (st) =>
        st.Effect === 'Allow' &&
        asArray(st.Condition?.StringEquals?.['kms:EncryptionContext:purpose']).includes(BANK_ACCOUNT),
    )
    .flatMap((st) => asArray(st.Action));
  if (actions.some((a) => a === 'kms:Decrypt' || a.startsWith('kms:ReEncrypt'))) return 'decrypt';
  if (actions.some((a) => a === 'kms:Encrypt' || a.startsWith('kms:GenerateDataKey'))) return 'encrypt';
  return undefined;
}

/** `-c bankAccountKeyDeny=false`: the key policy without its Deny statements, for the upgrade deploy only. */
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
  readonly key: Key;
  readonly table: Table;
  readonly disbursementBucket: Bucket;
  readonly accessLogsBucket: Bucket;
  readonly queues: Record<QueueName, QueueWithDlq>;
  readonly signingSecret: Secret;
  /** Every alarm of the deployment notifies it (constructs/monitoring.ts). */
  readonly alarmTopic: Topic;

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
      lifecycleRules: [
        {
          // Versioning keeps what a write replaced or a delete hid: kept 30 days (to undo a mistake), then gone.
          id: 'ExpireNoncurrentVersions',
          abortIncompleteMultipartUploadAfter: Duration.days(7),
          noncurrentVersionExpiration: Duration.days(NONCURRENT_VERSION_DAYS),
          expiredObjectDeleteMarker: true,
        },
        {
          // The processor's work files (no account numbers: the runs' pending entries) are deleted when their run
          // ends; this expires any a run left behind (one cancelled where no processor step saw it), and the
          // versions deletes leave. No run is processing a week after it started.
          id: 'ExpireWorkFiles',
          prefix: WORK_FILE_PREFIX,
          expiration: Duration.days(WORK_FILE_DAYS),
          noncurrentVersionExpiration: Duration.days(1),
        },
        // No rule for the runs' own objects (`payrolls/<org>/<run>/…`: the submitted body, chunks, the NACHA file):
        // they are the run's record for as long as the run is kept. A body stored by a submit that then failed is
        // deleted by that request (its version then expires with the rule above); only when that delete fails too is
        // a body left that no record points at, and it can only be told from a live one by looking the run up
        // (docs/deploy.md, "Work files").
      ],
      removalPolicy,
      autoDeleteObjects: !production,
    });
    Validations.of(this.disbursementBucket).acknowledge(
      {
        id: controlTower('s3_event_notifications_enabled_check'),
        reason:
          'The service writes and reads its objects itself, through the run records and the payroll queue; nothing reacts to an object appearing in the bucket.',
      },
      {
        id: controlTower('s3_bucket_object_lock_enabled_check'),
        reason:
          'The processor deletes its work files when a run ends and the lifecycle expires leftovers and old versions; Object Lock would keep them. Versioning already protects every object against overwrite and deletion for 30 days.',
      },
    );
    acknowledgeAutoDeleteObjects(this);

    this.queues = Object.fromEntries(
      (Object.entries(QUEUE_DEFINITIONS) as [QueueName, (typeof QUEUE_DEFINITIONS)[QueueName]][]).map(([name, def]) => [
        name,
        new QueueWithDlq(this, pascal(def.name), {
          visibilityTimeout: Duration.seconds(def.visibilityTimeoutSeconds),
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
    alarms.payrollQueueAge(this.queues.payroll.queue);
    alarms.tableThrottles(
      this.table,
      TABLE_DEFINITION.globalSecondaryIndexes.map((i) => i.indexName),
    );

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
