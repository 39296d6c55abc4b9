import { ACCOUNT, covers, keyPolicyAllows, REGION, renderPolicy } from '../support/key-policy.js';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DecryptCommand, KMSClient } from '@aws-sdk/client-kms';
import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { App, CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { CfnRole } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { Context, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiStack } from '../../infra/api-stack.js';
import { addPayrollStacks, deploymentContext, type PayrollStacks } from '../../infra/app.js';
import type { PayrollFunction } from '../../infra/constructs/payroll-function.js';
import { PROCESSOR_BATCH_SIZE, PROCESSOR_MAX_CONCURRENCY } from '../../infra/constructs/payroll-processor.js';
import { DISBURSEMENT_OBJECT_PREFIX } from '../../infra/constructs/service-access.js';
import { PARTITIONS, TABLE_ACCESS, type ComputeName, type TableAccess } from '../../shared/api/table-access.js';
import {
  DELIVERER_BATCH_SIZE,
  DELIVERER_MAX_CONCURRENCY,
  DELIVERER_TIMEOUT,
  WEBHOOK_RETRY_DELAYS_S,
  WebhookDeliverer,
} from '../../infra/constructs/webhook-deliverer.js';
import { FieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { objectKeys, WORK_FILE_PREFIX } from '../../shared/adapters/object-store.js';
import { GSI2, keys } from '../../shared/data/keys.js';
import { MAX_DELIVERY_ATTEMPTS } from '../../shared/domain/events.js';
import { QUEUE_DEFINITIONS, TABLE_DEFINITION } from '../../shared/data/table-definition.js';
import type { Access, FunctionName, RouteDef } from '../../shared/api/route.js';
import { FUNCTIONS, ROUTES, routeById } from '../../shared/api/routes.js';
import { accessOf, apiHandlerOf, WORKER_HANDLERS } from '../../infra/lambda-functions.js';
import { handlerEnvironment, type StackState } from '../../local/stack-state.js';
import { bankAccountRolePath } from '../../infra/stateful-stack.js';
import { DEFAULT_WAF_RATE_LIMIT_PER_5_MIN, webAclSettings } from '../../infra/constructs/web-acl.js';
import { WORK_FILE_DAYS, WORK_FILE_NONCURRENT_DAYS } from '../../infra/stateful-stack.js';
import { SERVICE_NAME } from '../../shared/adapters/metric-names.js';
import { queueVisibilityTimeout } from '../../infra/queue-consumers.js';

/**
 * The stacks are built exactly as `cdk synth` builds them (same entry function, same cdk.json feature flags),
 * minus esbuild: `aws:cdk:bundling-stacks: []` leaves the function code unbundled, which changes nothing the
 * templates say about the functions.
 */
const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }
).context;

function appWith(context: Record<string, unknown>, builtinCloudFormationValidation = false): App {
  return new App({
    context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context },
    builtinCloudFormationValidation,
  });
}

interface Synthesized extends PayrollStacks {
  app: App;
  statefulTemplate: Template;
  apiTemplate: Template;
  workersTemplate: Template;
}

function synthesize(environment: 'sandbox' | 'production', builtinCloudFormationValidation = false): Synthesized {
  const app = appWith({ environment, stage: 'test' }, builtinCloudFormationValidation);
  const stacks = addPayrollStacks(app);
  // Template.fromStack synthesizes the whole app, which runs the registered cdk-nag plugin: an unacknowledged
  // AwsSolutions error would throw right here.
  return {
    app,
    ...stacks,
    statefulTemplate: Template.fromStack(stacks.stateful),
    apiTemplate: Template.fromStack(stacks.api),
    workersTemplate: Template.fromStack(stacks.workers),
  };
}

// Synthesized once per environment; the sandbox also runs CDK's built-in CloudFormation schema validation, as `cdk synth` does.
const sandbox = synthesize('sandbox', true);
const production = synthesize('production');

type Resources = Record<
  string,
  {
    Type: string;
    Properties?: Record<string, any>;
    DeletionPolicy?: string;
    UpdateReplacePolicy?: string;
    DependsOn?: string[];
  }
>;
const resourcesOf = (template: Template): Resources => template.toJSON().Resources as Resources;
const logicalId = (construct: IConstruct): string => {
  const child = construct instanceof CfnResource ? construct : construct.node.defaultChild;
  return Stack.of(construct).getLogicalId(child as CfnResource);
};
const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** Every statement of every IAM policy attached to a role. */
function statementsOfRole(template: Template, roleLogicalId: string): Statement[] {
  return Object.values(resourcesOf(template))
    .filter(
      (r) =>
        r.Type === 'AWS::IAM::Policy' &&
        asArray<{ Ref?: string }>(r.Properties!.Roles).some((role) => role.Ref === roleLogicalId),
    )
    .flatMap((r) => asArray<Statement>(r.Properties!.PolicyDocument.Statement));
}

const actionsOf = (statements: Statement[]): string[] => statements.flatMap((s) => asArray(s.Action));
/** Statements a function can use by calling the service itself, not only through DynamoDB or S3 on its behalf. */
const direct = (statements: Statement[]): Statement[] =>
  statements.filter((s) => !s.Condition?.StringEquals?.['kms:ViaService']);

function idsOf(fn: PayrollFunction) {
  return {
    fn,
    functionId: logicalId(fn.function.node.defaultChild as CfnFunction),
    roleId: logicalId(fn.role.node.defaultChild as CfnRole),
  };
}

/** The function of a route (by route id) or by its name (`employees`, `docs`…). */
function functionOf(stacks: { api: ApiStack }, id: string) {
  const name = ((routeById as Record<string, RouteDef>)[id]?.function ?? id) as FunctionName;
  const fn = stacks.api.functions[name];
  if (!fn) throw new Error(`No function for ${id}`);
  return idsOf(fn);
}

function environmentOf(template: Template, functionLogicalId: string): Record<string, unknown> {
  return (resourcesOf(template)[functionLogicalId]!.Properties!.Environment?.Variables ?? {}) as Record<
    string,
    unknown
  >;
}

/**
 * The function is told the disbursement bucket's name, and its S3 statements name that bucket (ListBucket) or its
 * objects under the service prefix, never another resource or a destructive version-level action.
 */
function expectBucketConfined(template: Template, roleId: string, functionId: string): void {
  const bucketId = logicalId(sandbox.stateful.disbursementBucket);
  const statements = statementsOfRole(template, roleId);
  const s3 = statements.filter((st) => actionsOf([st]).some((a) => a.startsWith('s3:')));
  expect(s3.length).toBeGreaterThan(0);
  for (const statement of s3) {
    const actions = actionsOf([statement]);
    expect(actions.every((a) => a.startsWith('s3:'))).toBe(true);
    const resources = asArray(statement.Resource);
    expect(resources.length).toBe(1);
    if (actions.includes('s3:ListBucket')) {
      expect(actions).toEqual(['s3:ListBucket']);
      expect(JSON.stringify(resources[0])).toContain(bucketId);
    } else {
      expect(resources[0]).toEqual({
        'Fn::Join': [
          '',
          [
            { 'Fn::ImportValue': `${sandbox.stateful.stackName}-DisbursementBucketArn` },
            `/${DISBURSEMENT_OBJECT_PREFIX}*`,
          ],
        ],
      });
    }
  }
  expect(actionsOf(s3)).not.toContain('s3:DeleteObjectVersion');
  // Objects are under the service key; only S3 may use it for the function.
  const kmsForS3 = statements.filter((st) => JSON.stringify(st.Condition ?? {}).includes('s3.'));
  expect(kmsForS3.length).toBeGreaterThan(0);
  expect(JSON.stringify(environmentOf(template, functionId).DISBURSEMENT_BUCKET)).toContain(bucketId);
}

/**
 * The function bundles carry the AWS SDK themselves (infra/bundling/options.ts): no stack has a layer, and no
 * function lists one.
 */
function expectNoLayers(resources: Resources, functionCount: number) {
  expect(Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::LayerVersion')).toEqual([]);
  const functions = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
  expect(functions).toHaveLength(functionCount);
  for (const fn of functions) expect(fn.Properties!.Layers).toBeUndefined();
}

/**
 * With no layer to keep in step with the bundle, a function is its own self-contained code: callers (API
 * integrations, permissions, event source mappings, schedule targets, log subscriptions) invoke the function itself.
 * No alias, no published version: nothing a caller could be pointed at instead.
 */
function expectInvokedDirectly(resources: Resources) {
  expect(
    Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Alias' || r.Type === 'AWS::Lambda::Version'),
  ).toEqual([]);
  const callers = Object.entries(resources).filter(([, r]) =>
    [
      'AWS::ApiGateway::Method',
      'AWS::Lambda::Permission',
      'AWS::Lambda::EventSourceMapping',
      'AWS::Events::Rule',
      'AWS::Scheduler::Schedule',
      'AWS::Logs::SubscriptionFilter',
    ].includes(r.Type),
  );
  expect(callers.length).toBeGreaterThan(0);
  for (const [id, r] of callers) expect(JSON.stringify(r.Properties), `${id} (${r.Type})`).not.toContain(':live');
}

describe('deployment context', () => {
  it('defaults to a sandbox named dev and puts environment and stage in the stack names', () => {
    const app = appWith({});
    expect(deploymentContext(app)).toEqual({ environment: 'sandbox', stage: 'dev' });
    expect(sandbox.stateful.stackName).toBe('Payroll-sandbox-test-Stateful');
    expect(sandbox.api.stackName).toBe('Payroll-sandbox-test-Api');
    expect(sandbox.workers.stackName).toBe('Payroll-sandbox-test-Workers');
  });

  it('keeps the API and the workers independent of each other: both depend on the stateful stack alone', () => {
    expect(sandbox.api.dependencies).toEqual([sandbox.stateful]);
    expect(sandbox.workers.dependencies).toEqual([sandbox.stateful]);
    // The dashboard's site only needs to know where the API is.
    expect(sandbox.dashboard.dependencies).toEqual([sandbox.api]);
    expect(sandbox.dashboard.stackName).toBe('Payroll-sandbox-test-Dashboard');
  });

  it('takes one CORS origin for the API from the context, or none (any origin)', () => {
    expect(deploymentContext(appWith({})).corsAllowOrigin).toBeUndefined();
    expect(deploymentContext(appWith({ corsAllowOrigin: 'https://dashboard.example.com' })).corsAllowOrigin).toBe(
      'https://dashboard.example.com',
    );
    expect(() => deploymentContext(appWith({ corsAllowOrigin: 'http://dashboard.example.com' }))).toThrow(
      /corsAllowOrigin/,
    );
    expect(() => deploymentContext(appWith({ corsAllowOrigin: 'https://a.example.com/path' }))).toThrow(
      /corsAllowOrigin/,
    );
  });

  it('rejects an unknown environment and a stage that cannot name an API Gateway stage', () => {
    expect(() => deploymentContext(appWith({ environment: 'staging' }))).toThrow(/sandbox or production/);
    expect(() => deploymentContext(appWith({ stage: 'Alice Smith' }))).toThrow(/stage/);
  });
});

describe('stateful stack', () => {
  const resources = resourcesOf(sandbox.statefulTemplate);
  const keyId = logicalId(sandbox.stateful.key);

  it("has the service's customer-managed KMS key, the disbursement file key and the alarm topic's, each with rotation on", () => {
    // The service key, the file key and the alarm topic's own (stateful-stack.ts and constructs/monitoring.ts say
    // why apart), each rotated.
    const topicKey = resources[logicalId(sandbox.stateful.alarmTopic)]!.Properties!.KmsMasterKeyId['Fn::GetAtt'][0];
    const keys = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::KMS::Key');
    expect(keys.map(([id]) => id).sort()).toEqual([keyId, logicalId(sandbox.stateful.fileKey), topicKey].sort());
    for (const [, key] of keys) expect(key.Properties!.EnableKeyRotation).toBe(true);
  });

  it('has one on-demand table shaped by TABLE_DEFINITION, with PITR, TTL and the customer-managed key', () => {
    sandbox.statefulTemplate.resourceCountIs('AWS::DynamoDB::Table', 1);
    sandbox.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE_DEFINITION.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_DEFINITION.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: TABLE_DEFINITION.ttlAttribute, Enabled: true },
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } },
    });
  });

  it('has every GSI of TABLE_DEFINITION with string keys and ALL projection', () => {
    const table = Object.values(resources).find((r) => r.Type === 'AWS::DynamoDB::Table')!.Properties!;
    const indexes = table.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown; Projection: unknown }[];
    expect(indexes.map((i) => i.IndexName).sort()).toEqual(
      TABLE_DEFINITION.globalSecondaryIndexes.map((i) => i.indexName).sort(),
    );
    for (const def of TABLE_DEFINITION.globalSecondaryIndexes) {
      expect(indexes.find((i) => i.IndexName === def.indexName)).toEqual({
        IndexName: def.indexName,
        KeySchema: [
          { AttributeName: def.partitionKey, KeyType: 'HASH' },
          { AttributeName: def.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      });
    }
    const definitions = table.AttributeDefinitions as { AttributeName: string; AttributeType: string }[];
    expect(definitions.every((d) => d.AttributeType === 'S')).toBe(true);
  });

  it('keeps disbursement files private, versioned, KMS-encrypted with the key and access-logged', () => {
    const bucket = resources[logicalId(sandbox.stateful.disbursementBucket)]!.Properties!;
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration).toEqual([
      {
        BucketKeyEnabled: true,
        ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { 'Fn::GetAtt': [keyId, 'Arn'] } },
      },
    ]);
    expect(bucket.LoggingConfiguration.DestinationBucketName).toEqual({
      Ref: logicalId(sandbox.stateful.accessLogsBucket),
    });
  });

  it("expires the processor's work files and their old versions by their prefix, and nothing else", () => {
    for (const stacks of [sandbox, production]) {
      const bucket =
        stacks.statefulTemplate.toJSON().Resources[logicalId(stacks.stateful.disbursementBucket)].Properties;
      expect(bucket.LifecycleConfiguration.Rules).toEqual([
        {
          Id: 'AbortIncompleteUploads',
          Status: 'Enabled',
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
          ExpiredObjectDeleteMarker: true,
        },
        {
          Id: 'ExpireWorkFiles',
          Status: 'Enabled',
          Prefix: WORK_FILE_PREFIX,
          ExpirationInDays: WORK_FILE_DAYS,
          NoncurrentVersionExpiration: { NoncurrentDays: WORK_FILE_NONCURRENT_DAYS },
        },
        {
          Id: 'ExpireBankLinkStaging',
          Status: 'Enabled',
          Prefix: 'bank-link/',
          ExpirationInDays: 1,
          NoncurrentVersionExpiration: { NoncurrentDays: WORK_FILE_NONCURRENT_DAYS },
        },
      ]);
    }
    // Lifecycle prefixes are literal: the work files alone start with this one, never a run's own objects.
    expect(objectKeys.chunkEntries('org_x', 'pay_y', 0).startsWith(WORK_FILE_PREFIX)).toBe(true);
    for (const key of [
      objectKeys.submission('org_x', 'pay_y'),
      objectKeys.chunk('org_x', 'pay_y', 0),
      objectKeys.disbursement('org_x', 'pay_y'),
    ]) {
      expect(key.startsWith(WORK_FILE_PREFIX), key).toBe(false);
    }
  });

  it('blocks public access on every bucket and denies every request not made over TLS', () => {
    const buckets = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::S3::Bucket');
    expect(buckets.length).toBe(2);
    for (const [id, bucket] of buckets) {
      expect(bucket.Properties!.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      sandbox.statefulTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });

  it('gives every queue of QUEUE_DEFINITIONS its own DLQ with the configured maxReceiveCount', () => {
    // The visibility timeout is six times the consumer's timeout (queue-consumers.ts; bank-data-guards.test.ts).
    for (const [name, def] of Object.entries(QUEUE_DEFINITIONS) as [
      keyof typeof QUEUE_DEFINITIONS,
      (typeof QUEUE_DEFINITIONS)[keyof typeof QUEUE_DEFINITIONS],
    ][]) {
      const { queue, deadLetterQueue } = sandbox.stateful.queues[name];
      const props = resources[logicalId(queue)]!.Properties!;
      expect(props.VisibilityTimeout).toBe(queueVisibilityTimeout(name).toSeconds());
      expect(props.RedrivePolicy).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(deadLetterQueue), 'Arn'] },
        maxReceiveCount: def.maxReceiveCount,
      });
      expect(resources[logicalId(deadLetterQueue)]!.Properties!.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    }
    // Each work queue has a DLQ of its own; no queue is left without either role.
    const queues = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::SQS::Queue');
    const withRedrive = queues.filter(([, r]) => r.Properties!.RedrivePolicy);
    expect(withRedrive.length).toBe(Object.keys(QUEUE_DEFINITIONS).length);
    const targets = new Set(
      withRedrive.map(([, r]) => (r.Properties!.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'] as string[])[0]),
    );
    expect(targets.size).toBe(withRedrive.length);
    expect(queues.length).toBe(withRedrive.length * 2);
  });

  it('encrypts every queue and denies every request not made over TLS', () => {
    const queues = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::SQS::Queue');
    for (const [id, queue] of queues) {
      expect(queue.Properties!.SqsManagedSseEnabled ?? queue.Properties!.KmsMasterKeyId).toBeTruthy();
      sandbox.statefulTemplate.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 'sqs:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });

  it('alarms as soon as one message is visible in each DLQ', () => {
    for (const name of Object.keys(QUEUE_DEFINITIONS) as (keyof typeof QUEUE_DEFINITIONS)[]) {
      sandbox.statefulTemplate.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [logicalId(sandbox.stateful.queues[name].deadLetterQueue), 'QueueName'] },
          },
        ],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
      });
    }
    const depthAlarms = Object.values(resources).filter(
      (r) => r.Type === 'AWS::CloudWatch::Alarm' && r.Properties!.MetricName === 'ApproximateNumberOfMessagesVisible',
    );
    expect(depthAlarms).toHaveLength(Object.keys(QUEUE_DEFINITIONS).length);
  });

  it('generates a 64-character page-token signing secret', () => {
    sandbox.statefulTemplate.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ PasswordLength: 64 }),
    });
  });

  it('outputs what the operator CLI and operators read', () => {
    const outputs = Object.keys(sandbox.statefulTemplate.toJSON().Outputs as object);
    const queueOutputs = Object.keys(QUEUE_DEFINITIONS).map(
      (name) => `${name[0]!.toUpperCase()}${name.slice(1)}QueueUrl`,
    );
    expect(outputs).toEqual(expect.arrayContaining(['TableName', 'Environment', 'BucketName', ...queueOutputs]));
    sandbox.statefulTemplate.hasOutput('TableName', { Value: { Ref: logicalId(sandbox.stateful.table) } });
  });

  it('lets a sandbox be deleted with everything in it', () => {
    const table = resources[logicalId(sandbox.stateful.table)]!;
    expect(table.DeletionPolicy).toBe('Delete');
    expect(table.Properties!.DeletionProtectionEnabled).toBeFalsy();
    sandbox.statefulTemplate.resourceCountIs('Custom::S3AutoDeleteObjects', 2);
    expect(sandbox.stateful.terminationProtection).toBe(false);
  });

  it('protects production data: deletion protection, RETAIN, termination protection, no auto-delete', () => {
    // Retained on delete; the key and the secret not by a create that rolls back (stateful-stack.ts says why).
    const prod = resourcesOf(production.statefulTemplate);
    const table = prod[logicalId(production.stateful.table)]!;
    expect(table.Properties!.DeletionProtectionEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    for (const construct of [production.stateful.disbursementBucket, production.stateful.accessLogsBucket]) {
      expect(prod[logicalId(construct)]!.DeletionPolicy).toBe('Retain');
    }
    for (const construct of [production.stateful.key, production.stateful.signingSecret]) {
      expect(prod[logicalId(construct)]!.DeletionPolicy).toBe('RetainExceptOnCreate');
      expect(prod[logicalId(construct)]!.UpdateReplacePolicy).toBe('Retain');
    }
    production.statefulTemplate.resourceCountIs('Custom::S3AutoDeleteObjects', 0);
    expect(production.stateful.terminationProtection).toBe(true);
    production.statefulTemplate.hasOutput('Environment', { Value: 'production' });
  });
});

describe('api stack', () => {
  const template = sandbox.apiTemplate;
  const resources = resourcesOf(template);

  it('is a REGIONAL REST API on the execute-api endpoint with a TLS 1.2 floor', () => {
    template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
    template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      EndpointConfiguration: { Types: ['REGIONAL'] },
      DisableExecuteApiEndpoint: false,
      SecurityPolicy: 'TLS_1_2',
    });
  });

  it('has a stage named after the stage context, with JSON access logs, X-Ray, error logging and throttling', () => {
    const stage = Object.values(resources).find((r) => r.Type === 'AWS::ApiGateway::Stage')!.Properties!;
    expect(stage.StageName).toBe('test');
    expect(stage.TracingEnabled).toBe(true);
    expect(stage.AccessLogSetting.DestinationArn).toBeDefined();
    const format = JSON.parse(stage.AccessLogSetting.Format as string) as Record<string, string>;
    expect(format.requestId).toBe('$context.requestId');
    expect(format.status).toBe('$context.status');
    expect(stage.MethodSettings).toEqual([
      expect.objectContaining({
        HttpMethod: '*',
        ResourcePath: '/*',
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
        ThrottlingRateLimit: 1000,
        ThrottlingBurstLimit: 2000,
      }),
    ]);
  });

  it('has one function per resource (docs answering what no route claims) and the audit ingester, all nodejs22.x on arm64 with active tracing', () => {
    expect(FUNCTIONS.map((f) => f.name)).toEqual([
      'employees',
      'payroll',
      'disbursements',
      'returns',
      'paystubs',
      'webhooks',
      'admin',
      'bank-link-api',
      'docs',
    ]);
    template.resourceCountIs('AWS::Lambda::Function', FUNCTIONS.length + 1);
    const functions = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        MemorySize: expect.any(Number),
        Timeout: 29,
        Environment: {
          Variables: expect.objectContaining({
            NODE_OPTIONS: '--enable-source-maps',
            POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
            POWERTOOLS_METRICS_NAMESPACE: 'Payroll-sandbox-test',
            PAYROLL_ENVIRONMENT: 'sandbox',
          }),
        },
      });
      // Its own log group, with a retention, rather than one created on first write and kept forever.
      const logGroupId = (fn.Properties!.LoggingConfig.LogGroup as { Ref: string }).Ref;
      expect(resources[logGroupId]!.Properties!.RetentionInDays).toBe(30);
    }
  });

  it('gives no function a layer: each bundle carries the AWS SDK it uses', () => {
    expectNoLayers(resources, FUNCTIONS.length + 1);
  });

  it('has every caller invoke a function directly: no alias, no published version', () => {
    expectInvokedDirectly(resources);
    for (const template of [production.apiTemplate, production.workersTemplate])
      expectInvokedDirectly(resourcesOf(template));
  });

  it('stays within 350 of the 500 resources CloudFormation allows a stack, with room for more routes', () => {
    // A route costs its method (and a resource per new path segment, with its ANY): about two. A resource group
    // costs a function, its role, two policies, a log group, an invoke permission and a subscription filter.
    const count = Object.keys(resources).length;
    console.log(`API stack: ${count} resources`);
    expect(count).toBeLessThanOrEqual(350);
    const byType = (type: string) => Object.values(resources).filter((r) => r.Type === type).length;
    expect(byType('AWS::ApiGateway::Method')).toBe(ROUTES.length + byType('AWS::ApiGateway::Resource') + 1);
    expect(byType('AWS::Lambda::Permission')).toBe(FUNCTIONS.length + 1);
  });

  /** Full path of every API Gateway resource, by logical id ('' for the root). */
  const pathsById = (): Map<string, string> => {
    const apiResources = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::ApiGateway::Resource');
    const paths = new Map<string, string>();
    const pathOf = (id: string): string => {
      const known = paths.get(id);
      if (known !== undefined) return known;
      const props = resources[id]!.Properties!;
      const parent = props.ParentId as { Ref?: string };
      const path = `${parent.Ref ? pathOf(parent.Ref) : ''}/${props.PathPart as string}`;
      paths.set(id, path);
      return path;
    };
    for (const [id] of apiResources) pathOf(id);
    return paths;
  };
  const methods = () => {
    const paths = pathsById();
    return Object.values(resources)
      .filter((r) => r.Type === 'AWS::ApiGateway::Method')
      .map((r) => {
        const resourceId = r.Properties!.ResourceId as { Ref?: string };
        const uri = JSON.stringify(r.Properties!.Integration.Uri);
        return {
          path: resourceId.Ref ? paths.get(resourceId.Ref)! : '/',
          method: r.Properties!.HttpMethod as string,
          uri,
          props: r.Properties!,
        };
      });
  };

  it("routes each entry of ROUTES to its resource's function, by its path as given", () => {
    const all = methods();
    for (const route of ROUTES) {
      const { functionId } = functionOf(sandbox, route.id);
      const method = all.find((m) => m.path === route.path && m.method === route.method);
      expect(method, `${route.method} ${route.path}`).toBeDefined();
      expect(method!.uri).toContain(functionId);
      expect(method!.props.Integration.Type).toBe('AWS_PROXY');
      expect(method!.props.AuthorizationType).toBe('NONE');
    }
  });

  it('sends every other method and path to the fallback: ANY on each resource, the root and a root {proxy+}', () => {
    const { functionId } = functionOf(sandbox, 'docs');
    const all = methods();
    const expectedPaths = new Set(['/', '/{proxy+}']);
    for (const route of ROUTES) {
      const segments = route.path.split('/').filter(Boolean);
      for (let i = 0; i < segments.length; i++) expectedPaths.add(`/${segments.slice(0, i + 1).join('/')}`);
    }
    const anyMethods = all.filter((m) => m.method === 'ANY');
    expect(new Set(anyMethods.map((m) => m.path))).toEqual(expectedPaths);
    for (const m of anyMethods) expect(m.uri).toContain(functionId);
    // The docs function, which is the fallback, sees no other function's routed method.
    const docsPaths = ROUTES.filter((r) => r.function === 'docs').map((r) => `${r.method} ${r.path}`);
    for (const m of all.filter((x) => x.method !== 'ANY' && !docsPaths.includes(`${x.method} ${x.path}`)))
      expect(m.uri).not.toContain(`"${functionId}"`);
  });

  it('answers CORS for the dashboard on another origin: the origin on every answer, preflights by the fallback', () => {
    // No OPTIONS method of API Gateway's own: the fallback's ANY takes the preflights (shared/http/cors.ts).
    expect(methods().filter((m) => m.method === 'OPTIONS')).toEqual([]);
    for (const id of [...ROUTES.map((r) => r.id), 'docs']) {
      expect(environmentOf(sandbox.apiTemplate, functionOf(sandbox, id).functionId).PAYROLL_CORS_ALLOW_ORIGIN, id).toBe(
        '*',
      );
    }
    for (const r of Object.values(resources).filter((x) => x.Type === 'AWS::ApiGateway::GatewayResponse')) {
      expect(r.Properties!.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe("'*'");
    }
  });

  it('answers API Gateway errors in the service envelope with X-Request-Id', () => {
    const responses = Object.values(resources)
      .filter((r) => r.Type === 'AWS::ApiGateway::GatewayResponse')
      .map((r) => r.Properties!);
    const byType = new Map(responses.map((r) => [r.ResponseType as string, r]));
    for (const [type, status] of [
      ['DEFAULT_4XX', 400],
      ['DEFAULT_5XX', 500],
      ['ACCESS_DENIED', 403],
      ['THROTTLED', 429],
      ['REQUEST_TOO_LARGE', 413],
      ['MISSING_AUTHENTICATION_TOKEN', 404],
    ] as const) {
      expect(byType.get(type), type).toBeDefined();
      expect(byType.get(type)!.StatusCode).toBe(String(status));
    }
    for (const response of responses) {
      expect(response.ResponseParameters['gatewayresponse.header.X-Request-Id']).toBe('context.requestId');
      const body = JSON.parse(response.ResponseTemplates['application/json'] as string) as {
        status: number;
        error: { code: string; message: string };
        request_id: string;
      };
      expect(body.status).toBe(Number(response.StatusCode));
      expect(body.error.code).toMatch(/^[a-z_]+$/);
      expect(body.error.message).not.toBe('');
      expect(body.request_id).toBe('$context.requestId');
    }
    expect(JSON.parse(byType.get('THROTTLED')!.ResponseTemplates['application/json'] as string).error.code).toBe(
      'rate_limited',
    );
  });

  it('outputs the API URL ending in the stage, for clients to append /v1/…', () => {
    const url = (template.toJSON().Outputs as Record<string, { Value: { 'Fn::Join': [string, unknown[]] } }>).ApiUrl!
      .Value['Fn::Join'][1];
    expect(url[0]).toBe('https://');
    expect(url[url.length - 1]).toEqual({ Ref: logicalId(sandbox.api.api.deploymentStage) });
  });
});

describe('least privilege', () => {
  const template = sandbox.apiTemplate;

  it('gives no function a wildcard action', () => {
    const all = [...Object.values(resourcesOf(template)), ...Object.values(resourcesOf(sandbox.workersTemplate))]
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) => actionsOf(asArray<Statement>(r.Properties!.PolicyDocument.Statement)));
    expect(all.filter((action) => action === '*' || action.endsWith(':*'))).toEqual([]);
  });

  const authenticated = FUNCTIONS.filter((f) => f.name !== 'docs');
  it.each(authenticated.map((f) => [f.name, f] as const))(
    "%s gets the table and exactly its routes' access",
    (name, f) => {
      const { roleId, functionId } = functionOf(sandbox, name);
      const statements = statementsOfRole(template, roleId);
      const actions = actionsOf(statements);
      const directKms = actionsOf(direct(statements)).filter((a) => a.startsWith('kms:'));
      const access = new Set<Access>(accessOf(f.routes));

      expect(actions).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query']),
      );
      expect(actions).not.toContain('dynamodb:Scan');
      const kmsAccess = [...access].filter((a) => a.startsWith('kms:'));
      expect(directKms.includes('kms:GenerateDataKey')).toBe(kmsAccess.some((a) => a.startsWith('kms:encrypt:')));
      expect(directKms.includes('kms:Decrypt')).toBe(kmsAccess.some((a) => a.startsWith('kms:decrypt:')));
      // Each direct key grant is confined to the purposes the route's access names.
      const purposes = direct(statements)
        .filter((st) => actionsOf([st]).some((a) => a.startsWith('kms:')))
        .map((st) => st.Condition?.StringEquals?.['kms:EncryptionContext:purpose']);
      expect(new Set(purposes)).toEqual(new Set(kmsAccess.map((a) => a.split(':')[2])));
      expect(actions.includes('secretsmanager:GetSecretValue')).toBe(access.has('secret:signing'));
      expect(actions.includes('s3:GetObject')).toBe(access.has('bucket:read'));
      expect(actions.includes('s3:PutObject')).toBe(access.has('bucket:write'));
      expect(actions.some((a) => a.startsWith('s3:'))).toBe(access.has('bucket:read') || access.has('bucket:write'));
      expect(actions.includes('sqs:SendMessage')).toBe(
        access.has('queue:payroll:send') || access.has('queue:webhooks:send'),
      );

      const env = environmentOf(template, functionId);
      expect(env.TABLE_NAME).toBeDefined();
      // The service key for bank accounts and webhook secrets, the file key for NACHA files.
      const fileAccess = kmsAccess.filter((a) => a.endsWith(':disbursement-file'));
      expect('PAYROLL_KMS_KEY_ID' in env).toBe(kmsAccess.length > fileAccess.length);
      expect('PAYROLL_FILE_KMS_KEY_ID' in env).toBe(fileAccess.length > 0);
      expect('PAYROLL_SIGNING_SECRET_ARN' in env).toBe(access.has('secret:signing'));
      expect('DISBURSEMENT_BUCKET' in env).toBe(access.has('bucket:read') || access.has('bucket:write'));
      expect('PAYROLL_QUEUE_URL' in env).toBe(access.has('queue:payroll:send'));
      expect('WEBHOOK_QUEUE_URL' in env).toBe(access.has('queue:webhooks:send'));
    },
  );

  const bucketRoutes = ROUTES.filter((r) => r.access.some((a) => a.startsWith('bucket:')));
  it('has the routes that reach the bucket: submit, get, disbursement, approve, cancel, the bank report, files and money back', () => {
    expect(bucketRoutes.map((r) => r.id).sort()).toEqual([
      'approvePayroll',
      'cancelPayroll',
      'getDisbursement',
      'getDisbursementFile',
      'getPayroll',
      'postDisbursementReturns',
      'redebitFunding',
      'reversePayments',
      'submitPayroll',
    ]);
  });
  it.each(bucketRoutes.map((r) => [r.id, r] as const))(
    '%s reaches the disbursement bucket and nothing else in S3',
    (_, route) => {
      const { roleId, functionId } = functionOf(sandbox, route.id);
      expectBucketConfined(template, roleId, functionId);
    },
  );

  it('gives kms:Decrypt on the key directly only to routes with kms:decrypt access (and the processor and the deliverer)', () => {
    // The service key's statements (the file key has its own tests: bank-data-guards.test.ts).
    const onServiceKey = (statements: Statement[]) =>
      statements.filter((st) => JSON.stringify(st.Resource).includes(logicalId(sandbox.stateful.key)));
    const decrypting = ROUTES.filter((route) =>
      actionsOf(direct(onServiceKey(statementsOfRole(template, functionOf(sandbox, route.id).roleId)))).includes(
        'kms:Decrypt',
      ),
    );
    // One role per function: every route of a function one of whose routes unwraps a secret can.
    const decryptingFunctions = FUNCTIONS.filter((f) =>
      accessOf(f.routes).some((a) => a.startsWith('kms:decrypt:') && !a.endsWith(':disbursement-file')),
    ).map((f) => f.name);
    expect(decrypting.map((r) => r.id)).toEqual(
      ROUTES.filter((r) => decryptingFunctions.includes(r.function)).map((r) => r.id),
    );
    // No route reads bank account numbers back (only the processor does): the bank link's function unwraps the link's
    // own password or key, for its connection test.
    expect(decryptingFunctions).toEqual(['bank-link-api']);
    const decryptingWorkers = (Object.entries(sandbox.workers.functions) as [string, PayrollFunction][])
      .filter(([, fn]) =>
        actionsOf(direct(onServiceKey(statementsOfRole(sandbox.workersTemplate, idsOf(fn).roleId)))).includes(
          'kms:Decrypt',
        ),
      )
      .map(([name]) => name);
    // Bank account numbers (processor), webhook signing secrets (deliverer), the bank link's own password (bank
    // link, under the same purpose); never the sweeper.
    expect(decryptingWorkers.sort()).toEqual(['bankLink', 'deliverer', 'processor']);
  });

  // submit, cancel, redeliver, the bank report and a test event fan events out (shared/use-cases/events.ts): the
  // organization's webhooks by a base-table Query, each delivery opened by a transaction of Updates, events Put in
  // the state change's transaction (a test event's in one of its own).
  const dispatching = ROUTES.filter((r) => (r.access as readonly Access[]).includes('queue:webhooks:send'));
  it('has the routes that dispatch events: submit, approve, cancel, redeliver, the bank report, reversals and a test event', () => {
    expect(dispatching.map((r) => r.id).sort()).toEqual([
      'approvePayroll',
      'cancelPayroll',
      'postDisbursementReturns',
      'redeliverEvent',
      'reversePayments',
      'sendTestEvent',
      'submitPayroll',
    ]);
  });
  it.each(dispatching.map((r) => [r.id, r] as const))(
    '%s can do what the event fan-out does, sending to the webhook queue alone',
    (_, route) => {
      const { roleId, functionId } = functionOf(sandbox, route.id);
      const statements = statementsOfRole(template, roleId);
      // Statements on the base table itself (index ARNs end in /index/<name>).
      const onTable = statements.filter((st) =>
        asArray(st.Resource).some(
          (r) =>
            JSON.stringify(r).includes(logicalId(sandbox.stateful.table)) && !JSON.stringify(r).includes('/index/'),
        ),
      );
      expect(actionsOf(onTable)).toEqual(
        expect.arrayContaining(['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']),
      );
      const webhookQueueId = logicalId(sandbox.stateful.queues.webhooks.queue);
      const sends = statements.filter((st) => actionsOf([st]).includes('sqs:SendMessage'));
      expect(sends.filter((st) => JSON.stringify(st.Resource).includes(webhookQueueId)).length).toBe(1);
      expect(JSON.stringify(environmentOf(template, functionId).WEBHOOK_QUEUE_URL)).toContain(webhookQueueId);
    },
  );

  /**
   * What each role could do in the table, read from the synthesized template alone: every (action, partition
   * prefix) its statements allow, and the indexes it may Query. Compared with the declarations the local stack
   * enforces on every call the end-to-end suite makes (shared/api/table-access.ts), so a template granting more
   * than the code was shown to need fails here.
   */
  function tableReach(statements: Statement[]) {
    const tableId = logicalId(sandbox.stateful.table);
    const onTable = statements.filter(
      (st) => actionsOf([st]).some((a) => a.startsWith('dynamodb:')) && JSON.stringify(st.Resource).includes(tableId),
    );
    const reach = new Set<string>();
    const indexes = new Set<string>();
    for (const st of onTable) {
      const resource = JSON.stringify(st.Resource);
      if (resource.includes('/index/')) {
        expect(actionsOf([st])).toEqual(['dynamodb:Query']);
        for (const r of asArray(st.Resource)) indexes.add(/\/index\/(\w+)/.exec(JSON.stringify(r))![1]!);
        continue;
      }
      // Every statement on the base table is held to partition prefixes: none reaches the whole table.
      const leading = st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
      expect(leading, `${JSON.stringify(st.Action)} without a LeadingKeys condition`).toBeDefined();
      for (const a of actionsOf([st])) for (const prefix of asArray(leading as string[])) reach.add(`${a} ${prefix}`);
    }
    return { reach, indexes };
  }

  function declaredReach(access: TableAccess | null) {
    const reach = new Set<string>();
    if (!access) return { reach, indexes: new Set<string>() };
    for (const a of access.readActions)
      for (const p of new Set([...access.reads, ...access.writes])) reach.add(`dynamodb:${a} ${PARTITIONS[p]}*`);
    for (const a of access.writeActions) for (const p of access.writes) reach.add(`dynamodb:${a} ${PARTITIONS[p]}*`);
    return { reach, indexes: new Set<string>(access.indexes) };
  }

  const computes: [ComputeName, () => { template: Template; roleId: string }][] = [
    ...FUNCTIONS.map((f): [ComputeName, () => { template: Template; roleId: string }] => [
      f.name,
      () => ({ template, roleId: functionOf(sandbox, f.name).roleId }),
    ]),
    [
      'processor',
      () => ({ template: sandbox.workersTemplate, roleId: idsOf(sandbox.workers.functions.processor).roleId }),
    ],
    ['sweeper', () => ({ template: sandbox.workersTemplate, roleId: idsOf(sandbox.workers.functions.sweeper).roleId })],
    [
      'deliverer',
      () => ({ template: sandbox.workersTemplate, roleId: idsOf(sandbox.workers.functions.deliverer).roleId }),
    ],
    ['audit-ingest', () => ({ template, roleId: idsOf(sandbox.api.auditLog.function).roleId })],
  ];
  it.each(computes)('grants %s exactly the table reach it declares, by partition prefix', (name, find) => {
    const { template: t, roleId } = find();
    const granted = tableReach(statementsOfRole(t, roleId));
    const declared = declaredReach(TABLE_ACCESS[name]);
    expect([...granted.reach].sort()).toEqual([...declared.reach].sort());
    expect([...granted.indexes].sort()).toEqual([...declared.indexes].sort());
  });

  it('lets no role but the admin function write a token item, and the docs function touch no table', () => {
    const writers = computes.filter(([, find]) => {
      const { template: t, roleId } = find();
      return [...tableReach(statementsOfRole(t, roleId)).reach].some((r) =>
        /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem) TOKEN#\*$/.test(r),
      );
    });
    expect(writers.map(([name]) => name)).toEqual(['admin']);
    const docs = statementsOfRole(template, functionOf(sandbox, 'docs').roleId);
    expect(actionsOf(docs).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
  });

  it('names every object the service writes under the prefix the object grants cover', () => {
    for (const key of [
      objectKeys.submission('o', 'p'),
      objectKeys.chunk('o', 'p', 1),
      objectKeys.chunkEntries('o', 'p', 1),
      objectKeys.disbursement('o', 'p'),
    ]) {
      expect(key.startsWith(DISBURSEMENT_OBJECT_PREFIX), key).toBe(true);
    }
  });

  it('only lets DynamoDB use the key on behalf of a function without kms access', () => {
    const withoutKms = authenticated.find(
      (f) => !accessOf(f.routes).some((a) => a.startsWith('kms:') || a.startsWith('bucket:')),
    )!;
    const statements = statementsOfRole(template, functionOf(sandbox, withoutKms.name).roleId);
    const kms = statements.filter((s) => actionsOf([s]).some((a) => a.startsWith('kms:')));
    expect(kms.length).toBe(1);
    expect(JSON.stringify(kms[0]!.Condition)).toContain('dynamodb.');
  });

  it('gives the docs function, which is the fallback, nothing but its own logs and X-Ray', () => {
    const { roleId, functionId } = functionOf(sandbox, 'docs');
    const actions = actionsOf(statementsOfRole(template, roleId));
    expect(new Set(actions)).toEqual(
      new Set(['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTraceSegments', 'xray:PutTelemetryRecords']),
    );
    expect(environmentOf(template, functionId).TABLE_NAME).toBeUndefined();
  });

  it('attaches no managed policy to any function role', () => {
    const lambdaRoles = (t: Template) =>
      Object.values(resourcesOf(t)).filter(
        (r) =>
          r.Type === 'AWS::IAM::Role' &&
          JSON.stringify(r.Properties!.AssumeRolePolicyDocument).includes('lambda.amazonaws.com'),
      );
    // One per resource function, and the audit ingester.
    expect(lambdaRoles(template).length).toBe(FUNCTIONS.length + 1);
    expect(lambdaRoles(sandbox.workersTemplate).length).toBe(4);
    for (const role of [...lambdaRoles(template), ...lambdaRoles(sandbox.workersTemplate)])
      expect(role.Properties!.ManagedPolicyArns).toBeUndefined();
  });

  // No route uses every kind of access yet, so one table that does checks each grant and its variable.
  describe('for every kind of access', () => {
    const everyAccess: Access[] = [
      'kms:encrypt:bank-account',
      'kms:decrypt:bank-account',
      'kms:encrypt:webhook-secret',
      'kms:decrypt:webhook-secret',
      'kms:encrypt:disbursement-file',
      'kms:decrypt:disbursement-file',
      'secret:signing',
      'bucket:read',
      'bucket:write',
      'queue:payroll:send',
      'queue:webhooks:send',
    ];
    // Each probe route in a function of its own (the names are not real resources: only the grants are read).
    const routes: RouteDef[] = everyAccess.map((access, i) => ({
      ...ROUTES[0]!,
      id: `probe${i}`,
      function: `probe${i}` as FunctionName,
      method: 'GET',
      path: `/v1/probe${i}`,
      scope: null,
      bucket: null,
      summary: access,
      access: [access],
    }));
    const app = appWith({ environment: 'sandbox', stage: 'probe' });
    const { stateful } = addPayrollStacks(app);
    const probe = new ApiStack(app, 'Probe', {
      environment: 'sandbox',
      stage: 'probe',
      routes,
      table: stateful.table,
      key: stateful.key,
      fileKey: stateful.fileKey,
      disbursementBucket: stateful.disbursementBucket,
      signingSecret: stateful.signingSecret,
      queues: { payroll: stateful.queues.payroll.queue, webhooks: stateful.queues.webhooks.queue },
      alarmTopic: stateful.alarmTopic,
    });
    const probeTemplate = Template.fromStack(probe);
    const expected: Record<Access, { actions: string[]; env: string }> = {
      'kms:encrypt:bank-account': { actions: ['kms:GenerateDataKey'], env: 'PAYROLL_KMS_KEY_ID' },
      'kms:decrypt:bank-account': { actions: ['kms:Decrypt'], env: 'PAYROLL_KMS_KEY_ID' },
      'kms:encrypt:webhook-secret': { actions: ['kms:GenerateDataKey'], env: 'PAYROLL_KMS_KEY_ID' },
      'kms:decrypt:webhook-secret': { actions: ['kms:Decrypt'], env: 'PAYROLL_KMS_KEY_ID' },
      'kms:encrypt:disbursement-file': { actions: ['kms:GenerateDataKey'], env: 'PAYROLL_FILE_KMS_KEY_ID' },
      'kms:decrypt:disbursement-file': { actions: ['kms:Decrypt'], env: 'PAYROLL_FILE_KMS_KEY_ID' },
      'secret:signing': { actions: ['secretsmanager:GetSecretValue'], env: 'PAYROLL_SIGNING_SECRET_ARN' },
      'bucket:read': { actions: ['s3:GetObject', 's3:ListBucket'], env: 'DISBURSEMENT_BUCKET' },
      'bucket:write': { actions: ['s3:PutObject'], env: 'DISBURSEMENT_BUCKET' },
      'queue:payroll:send': { actions: ['sqs:SendMessage'], env: 'PAYROLL_QUEUE_URL' },
      'queue:webhooks:send': { actions: ['sqs:SendMessage'], env: 'WEBHOOK_QUEUE_URL' },
    };

    it.each(routes.map((r) => [r.summary, r] as const))('%s', (_, route) => {
      const { roleId, functionId } = functionOf({ api: probe }, route.id);
      const statements = statementsOfRole(probeTemplate, roleId);
      const access = route.access[0]!;
      expect(actionsOf(statements)).toEqual(expect.arrayContaining(expected[access].actions));
      const env = environmentOf(probeTemplate, functionId);
      expect(Object.keys(env).filter((k) => Object.values(expected).some((e) => e.env === k))).toEqual([
        expected[access].env,
      ]);
      // Bucket objects are under the key, but only S3 may use it for the function.
      if (access.startsWith('bucket:'))
        expect(actionsOf(direct(statements)).filter((a) => a.startsWith('kms:'))).toEqual([]);
    });

    it('sets every variable the local stack gives the handlers, except the local-only ones', () => {
      const state = {
        region: 'r',
        table_name: 't',
        dynamodb_endpoint: 'e',
        sqs_endpoint: 'e',
        s3_endpoint: 'e',
        bucket: 'b',
        queues: { payroll: 'q', payroll_dlq: 'q', webhooks: 'q', webhooks_dlq: 'q' },
        environment: 'sandbox',
      } as StackState;
      const localOnly =
        /^(AWS_ENDPOINT_URL_|AWS_ACCESS_KEY_ID$|AWS_SECRET_ACCESS_KEY$|AWS_REGION$|PAYROLL_LOCAL_MASTER_KEY$|PAYROLL_SIGNING_SECRET$|PAYROLL_LOCAL_STACK$|PAYROLL_RESERVED_LOOPBACK_PORTS$)/;
      const needed = Object.keys(handlerEnvironment(state, { master_key: 'm', signing_secret: 's' })).filter(
        (k) => !localOnly.test(k),
      );
      const deployed = new Set(
        Object.values(resourcesOf(probeTemplate))
          .filter((r) => r.Type === 'AWS::Lambda::Function')
          .flatMap((r) => Object.keys(r.Properties!.Environment?.Variables ?? {})),
      );
      for (const name of needed) expect(deployed, name).toContain(name);
    });
  });
});

describe('workers stack', () => {
  const template = sandbox.workersTemplate;
  const resources = resourcesOf(template);
  const processor = idsOf(sandbox.workers.functions.processor);
  const sweeper = idsOf(sandbox.workers.functions.sweeper);
  const deliverer = idsOf(sandbox.workers.functions.deliverer);
  const bankLink = idsOf(sandbox.workers.functions.bankLink);
  const payrollQueueId = logicalId(sandbox.stateful.queues.payroll.queue);
  const webhookQueueId = logicalId(sandbox.stateful.queues.webhooks.queue);
  const tableId = logicalId(sandbox.stateful.table);
  const keyId = logicalId(sandbox.stateful.key);
  const fnProps = (id: string) => resources[id]!.Properties!;
  /** The event source mapping that invokes a function (its FunctionName is the function itself, unqualified). */
  const mappingOf = (functionId: string) => {
    const mappings = Object.values(resources).filter(
      (r) =>
        r.Type === 'AWS::Lambda::EventSourceMapping' &&
        JSON.stringify(r.Properties!.FunctionName) === JSON.stringify({ Ref: functionId }),
    );
    expect(mappings.length).toBe(1);
    return mappings[0]!.Properties!;
  };
  /** The statements of a role that mention a service (`sqs:`), and the resources each names. */
  const statementsFor = (roleId: string, prefix: string) =>
    statementsOfRole(template, roleId).filter((st) => actionsOf([st]).some((a) => a.startsWith(prefix)));
  const onQueue = (st: Statement, queueId: string) => JSON.stringify(st.Resource).includes(queueId);

  it('has the processor, the sweeper, the deliverer and the bank link, nodejs22.x on arm64 with active tracing and their own log groups', () => {
    template.resourceCountIs('AWS::Lambda::Function', 4);
    for (const { functionId } of [processor, sweeper, deliverer, bankLink]) {
      expect(fnProps(functionId)).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        Environment: {
          Variables: expect.objectContaining({
            NODE_OPTIONS: '--enable-source-maps',
            POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
            POWERTOOLS_METRICS_NAMESPACE: 'Payroll-sandbox-test',
            PAYROLL_ENVIRONMENT: 'sandbox',
          }),
        },
      });
      const logGroupId = (fnProps(functionId).LoggingConfig.LogGroup as { Ref: string }).Ref;
      expect(resources[logGroupId]!.Properties!.RetentionInDays).toBe(30);
    }
    expect(fnProps(processor.functionId).Handler).toBe('index.handler');
    expect(fnProps(processor.functionId).MemorySize).toBe(1024);
    expect(fnProps(sweeper.functionId).Timeout).toBe(60);
    expect(fnProps(deliverer.functionId).MemorySize).toBe(256);
    expect(fnProps(deliverer.functionId).Timeout).toBe(30);
    // One pass at a time: two would list the same folders and race to send the same file.
    expect(fnProps(bankLink.functionId)).toMatchObject({ Timeout: 300, ReservedConcurrentExecutions: 1 });
  });

  it('gives no function a layer: each bundle carries the AWS SDK it uses', () => {
    expectNoLayers(resources, 4);
  });

  it('has every caller invoke a function directly: no alias, no published version', () => {
    expectInvokedDirectly(resources);
  });

  it('feeds the processor from the payroll queue in batches, reporting failures per message, with bounded concurrency', () => {
    // The processor's and the deliverer's; the API consumes nothing.
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    sandbox.apiTemplate.resourceCountIs('AWS::Lambda::EventSourceMapping', 0);
    const mapping = mappingOf(processor.functionId);
    expect(JSON.stringify(mapping.EventSourceArn)).toContain(payrollQueueId);
    expect(mapping.BatchSize).toBe(10);
    expect(PROCESSOR_BATCH_SIZE).toBe(10);
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping.ScalingConfig).toEqual({ MaximumConcurrency: PROCESSOR_MAX_CONCURRENCY });
  });

  it('never lets a payroll message reappear while the processor may still be working on it', () => {
    const queue = resourcesOf(sandbox.statefulTemplate)[payrollQueueId]!.Properties!;
    const timeout = fnProps(processor.functionId).Timeout as number;
    // Six times the processor's timeout, as AWS advises for an event source (throttled invocations retried).
    expect(queue.VisibilityTimeout).toBe(6 * timeout);
    expect(timeout).toBe(300);
  });

  it('feeds the deliverer from the webhook queue in batches of 10, reporting failures per message, with bounded concurrency', () => {
    const mapping = mappingOf(deliverer.functionId);
    expect(JSON.stringify(mapping.EventSourceArn)).toContain(webhookQueueId);
    expect(JSON.stringify(mapping.EventSourceArn)).not.toContain(payrollQueueId);
    expect(mapping.BatchSize).toBe(10);
    expect(DELIVERER_BATCH_SIZE).toBe(10);
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping.ScalingConfig).toEqual({ MaximumConcurrency: DELIVERER_MAX_CONCURRENCY });
  });

  it('never lets a delivery message reappear while the deliverer may still be working on it', () => {
    const queue = resourcesOf(sandbox.statefulTemplate)[webhookQueueId]!.Properties!;
    const timeout = fnProps(deliverer.functionId).Timeout as number;
    expect(timeout).toBe(DELIVERER_TIMEOUT.toSeconds());
    expect(queue.VisibilityTimeout).toBe(6 * timeout);
    // A batch is delivered in parallel, each POST within 10 s: the invocation outlasts one delivery with room.
    expect(timeout).toBeGreaterThanOrEqual(2 * 10);
  });

  it('leaves the webhook queue receives beyond the three attempts (counted in the delivery record), each retry delayed by the handler', () => {
    const queue = resourcesOf(sandbox.statefulTemplate)[webhookQueueId]!.Properties!;
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(10);
    expect(QUEUE_DEFINITIONS.webhooks.maxReceiveCount).toBe(10);
    // Receives that make no POST (a throttled invocation, a fault before the POST) spend no attempt, only a receive.
    expect(QUEUE_DEFINITIONS.webhooks.maxReceiveCount).toBeGreaterThanOrEqual(Math.max(5, MAX_DELIVERY_ATTEMPTS + 1));
    const env = environmentOf(template, deliverer.functionId);
    expect(env.PAYROLL_WEBHOOK_RETRY_DELAYS_S).toBe('30,300');
    expect(WEBHOOK_RETRY_DELAYS_S.length).toBe(MAX_DELIVERY_ATTEMPTS - 1);
  });

  it('keeps the deliverer out of any VPC: it calls customer endpoints on the internet (SSRF is refused in code)', () => {
    expect(fnProps(deliverer.functionId).VpcConfig).toBeUndefined();
    expect(Object.values(resources).filter((r) => r.Type.startsWith('AWS::EC2::'))).toEqual([]);
    // Deployed, the URL policy is always production's (public addresses only): the local-stack switch is never set.
    for (const { functionId } of [processor, sweeper, deliverer])
      expect(environmentOf(template, functionId).PAYROLL_LOCAL_STACK).toBeUndefined();
  });

  it('invokes the sweeper every five minutes, and the bank link every minute', () => {
    // The sweeper by an EventBridge rule, the bank link by EventBridge Scheduler (test/infra/bank-connector.test.ts).
    template.resourceCountIs('AWS::Events::Rule', 1);
    const rules = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Events::Rule');
    const targetOf = (fn: { functionId: string }) =>
      rules.find(([, r]) => JSON.stringify(r.Properties!.Targets).includes(fn.functionId))!;
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Target: Match.objectLike({ Arn: { 'Fn::GetAtt': [bankLink.functionId, 'Arn'] } }),
    });
    const rule = targetOf(sweeper);
    expect(rule[1].Properties).toMatchObject({
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [expect.objectContaining({ Arn: { 'Fn::GetAtt': [sweeper.functionId, 'Arn'] } })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [sweeper.functionId, 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [rule[0], 'Arn'] },
    });
    // The next sweep (or pass) redoes a failed one; retrying it would only overlap them.
    const invokeConfig = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::EventInvokeConfig');
    expect(invokeConfig).toHaveLength(2);
    expect(invokeConfig.map((c) => c.Properties!.FunctionName)).toEqual(
      expect.arrayContaining([{ Ref: sweeper.functionId }, { Ref: bankLink.functionId }]),
    );
    for (const c of invokeConfig) expect(c.Properties).toMatchObject({ MaximumRetryAttempts: 0 });
    // The unqualified function: what the schedule invokes.
    expect(invokeConfig[0]!.Properties!.Qualifier).toBe('$LATEST');
  });

  it('tells the processor, the sweeper and the deliverer what they read', () => {
    const env = environmentOf(template, processor.functionId);
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        'TABLE_NAME',
        'DISBURSEMENT_BUCKET',
        'PAYROLL_QUEUE_URL',
        'WEBHOOK_QUEUE_URL',
        'PAYROLL_ENVIRONMENT',
        'PAYROLL_KMS_KEY_ID',
        'PAYROLL_CHUNK_SIZE',
        'POWERTOOLS_SERVICE_NAME',
      ]),
    );
    expect(env.PAYROLL_CHUNK_SIZE).toBe('1000');
    expect(JSON.stringify(env.PAYROLL_QUEUE_URL)).toContain(payrollQueueId);
    expect(JSON.stringify(env.WEBHOOK_QUEUE_URL)).toContain(webhookQueueId);
    expect(JSON.stringify(env.PAYROLL_KMS_KEY_ID)).toContain(keyId);
    const sweeperEnv = environmentOf(template, sweeper.functionId);
    expect(Object.keys(sweeperEnv)).toEqual(
      expect.arrayContaining(['TABLE_NAME', 'PAYROLL_QUEUE_URL', 'WEBHOOK_QUEUE_URL']),
    );
    expect(JSON.stringify(sweeperEnv.WEBHOOK_QUEUE_URL)).toContain(webhookQueueId);
    // It touches no object and no bank account.
    expect(sweeperEnv.DISBURSEMENT_BUCKET).toBeUndefined();
    expect(sweeperEnv.PAYROLL_KMS_KEY_ID).toBeUndefined();
    const delivererEnv = environmentOf(template, deliverer.functionId);
    // The sweeper re-sends only deliveries idle longer than the deliverer's longest retry delay: the same delays.
    expect(sweeperEnv.PAYROLL_WEBHOOK_RETRY_DELAYS_S).toBe('30,300');
    expect(sweeperEnv.PAYROLL_WEBHOOK_RETRY_DELAYS_S).toBe(delivererEnv.PAYROLL_WEBHOOK_RETRY_DELAYS_S);
    expect(Object.keys(delivererEnv).sort()).toEqual([
      'NODE_OPTIONS',
      'PAYROLL_ENVIRONMENT',
      'PAYROLL_KMS_KEY_ID',
      'PAYROLL_WEBHOOK_RETRY_DELAYS_S',
      'POWERTOOLS_METRICS_NAMESPACE',
      'POWERTOOLS_SERVICE_NAME',
      'TABLE_NAME',
      'WEBHOOK_QUEUE_URL',
    ]);
    expect(JSON.stringify(delivererEnv.WEBHOOK_QUEUE_URL)).toContain(webhookQueueId);
    expect(JSON.stringify(delivererEnv.PAYROLL_KMS_KEY_ID)).toContain(keyId);
  });

  it('lets the processor do exactly what processing and the event fan-out take', () => {
    const statements = statementsOfRole(template, processor.roleId);
    const actions = actionsOf(statements);
    const dynamo = statementsFor(processor.roleId, 'dynamodb:');
    // PutItem: events written in the status change's transaction; Query: the organization's webhooks (base table).
    expect(new Set(actionsOf(dynamo))).toEqual(
      new Set([
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:BatchWriteItem',
      ]),
    );
    for (const st of dynamo) expect(JSON.stringify(st.Resource)).toContain(tableId);
    // No index: a run's paystubs are written, found and voided by primary key.
    const indexes = dynamo.filter((st) => JSON.stringify(st.Resource).includes('/index/'));
    expect(indexes).toEqual([]);
    // Bank account numbers: decrypt only, the key named, bank-account data keys alone (never a webhook secret).
    const directKms = direct(statements).filter(
      (st) => actionsOf([st]).some((a) => a.startsWith('kms:')) && JSON.stringify(st.Resource).includes(keyId),
    );
    expect(actionsOf(directKms)).toEqual(['kms:Decrypt']);
    expect(directKms[0]!.Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': 'bank-account' } });
    // NACHA files: sealed and opened with data keys of the file key alone (bank-data-guards.test.ts).
    const fileKeyId = logicalId(sandbox.stateful.fileKey);
    const fileKms = statements.filter((st) => JSON.stringify(st.Resource).includes(fileKeyId));
    expect(new Set(actionsOf(fileKms))).toEqual(new Set(['kms:GenerateDataKey', 'kms:Encrypt', 'kms:Decrypt']));
    for (const st of fileKms)
      expect(st.Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': 'disbursement-file' } });
    // Its own queue: send (chunk and finalize messages) and consume. The webhook queue: send only.
    const sqs = statementsFor(processor.roleId, 'sqs:');
    expect(new Set(actionsOf(sqs))).toEqual(
      new Set([
        'sqs:SendMessage',
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
      ]),
    );
    for (const st of sqs) expect(onQueue(st, payrollQueueId) !== onQueue(st, webhookQueueId)).toBe(true);
    expect(actionsOf(sqs.filter((st) => onQueue(st, webhookQueueId)))).toEqual(['sqs:SendMessage']);
    expect(actions.filter((a) => a.startsWith('secretsmanager:'))).toEqual([]);
    expectBucketConfined(template, processor.roleId, processor.functionId);
  });

  it('lets the sweeper resume runs and fan out undispatched events, nothing more', () => {
    const statements = statementsOfRole(template, sweeper.roleId);
    expect(new Set(actionsOf(statements))).toEqual(
      new Set([
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'kms:Decrypt',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'kms:DescribeKey',
        'sqs:SendMessage',
      ]),
    );
    const dynamo = statementsFor(sweeper.roleId, 'dynamodb:');
    // GSI2 (ACTIVE_PAYROLLS, UNDISPATCHED_EVENTS) by its own ARN; the base table for webhooks and the fan-out's writes.
    const index = dynamo.find((st) => JSON.stringify(st.Resource).includes('/index/'))!;
    expect(actionsOf([index])).toEqual(['dynamodb:Query']);
    expect(asArray(index.Resource)).toEqual([
      {
        'Fn::Join': [
          '',
          [expect.objectContaining({ 'Fn::ImportValue': expect.stringContaining(tableId) }), `/index/${GSI2.name}`],
        ],
      },
    ]);
    const table = dynamo.filter((st) => st !== index);
    expect(new Set(actionsOf(table))).toEqual(new Set(['dynamodb:Query', 'dynamodb:UpdateItem']));
    for (const st of table)
      expect(asArray(st.Resource)).toEqual([{ 'Fn::ImportValue': expect.stringContaining(tableId) }]);
    // The key only through DynamoDB: the sweeper never sees a bank account or a webhook secret.
    expect(actionsOf(direct(statements)).filter((a) => a.startsWith('kms:'))).toEqual([]);
    const sqs = statementsFor(sweeper.roleId, 'sqs:');
    expect(sqs.filter((st) => onQueue(st, payrollQueueId)).length).toBe(1);
    expect(sqs.filter((st) => onQueue(st, webhookQueueId)).length).toBe(1);
  });

  it('lets the deliverer do exactly what delivery takes: no sending, no queries, the key to unwrap secrets', () => {
    const statements = statementsOfRole(template, deliverer.roleId);
    expect(new Set(actionsOf(statements))).toEqual(
      new Set([
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        // Endpoint, delivery and event by key; recordAttempt's transaction of two Updates is authorized as UpdateItem.
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'kms:Decrypt',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'kms:DescribeKey',
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
      ]),
    );
    const dynamo = statementsFor(deliverer.roleId, 'dynamodb:');
    for (const st of dynamo)
      expect(asArray(st.Resource)).toEqual([{ 'Fn::ImportValue': expect.stringContaining(tableId) }]);
    // Webhook secrets are envelope-encrypted under the key: kms:Decrypt directly, on that key alone, and only for
    // data keys made for webhook secrets: the deliverer cannot unwrap a bank account number.
    const directKms = direct(statements).filter((st) => actionsOf([st]).some((a) => a.startsWith('kms:')));
    expect(actionsOf(directKms)).toEqual(['kms:Decrypt']);
    expect(asArray(directKms[0]!.Resource)).toEqual([{ 'Fn::ImportValue': expect.stringContaining(keyId) }]);
    expect(directKms[0]!.Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-secret' } });
    // The webhook queue alone, and never sendMessage: the deliverer retries by visibility, it does not enqueue.
    const sqs = statementsFor(deliverer.roleId, 'sqs:');
    for (const st of sqs)
      expect(asArray(st.Resource)).toEqual([{ 'Fn::ImportValue': expect.stringContaining(webhookQueueId) }]);
    expect(actionsOf(sqs)).not.toContain('sqs:SendMessage');
    // Its own statement for the retry delays, apart from the event source's consume grant.
    const own = sqs.filter((st) => actionsOf([st]).length === 1);
    expect(actionsOf(own)).toEqual(['sqs:ChangeMessageVisibility']);
  });

  it('keeps production logs when the stack goes', () => {
    const prod = resourcesOf(production.workersTemplate);
    const logGroups = Object.values(prod).filter((r) => r.Type === 'AWS::Logs::LogGroup');
    expect(logGroups.length).toBe(4);
    // Not when a first create rolls back, though (api-stack.ts says why).
    for (const group of logGroups)
      expect([group.DeletionPolicy, group.UpdateReplacePolicy]).toEqual(['RetainExceptOnCreate', 'Retain']);
  });

  it('refuses a webhook queue whose visibility timeout the deliverer could outlast', () => {
    const app = appWith({ environment: 'sandbox', stage: 'short' });
    const { stateful } = addPayrollStacks(app);
    const stack = new Stack(app, 'ShortVisibility');
    const resourcesForDeliverer = stateful.serviceResources();
    const props = { resources: resourcesForDeliverer, environment: {}, removalPolicy: RemovalPolicy.DESTROY };
    expect(
      () =>
        new WebhookDeliverer(stack, 'Short', {
          ...props,
          queueVisibilityTimeout: Duration.seconds(20),
          maxReceiveCount: 3,
        }),
    ).toThrow(/visibility timeout/);
    expect(
      () =>
        new WebhookDeliverer(stack, 'Four', {
          ...props,
          queueVisibilityTimeout: Duration.seconds(6 * DELIVERER_TIMEOUT.toSeconds()),
          maxReceiveCount: 4,
        }),
    ).toThrow(/maxReceiveCount/);
  });
});

/**
 * Deployed functions get only the variables their grants come with, while the local stack gives every handler all
 * of them. Each function builds its clients and repositories at module scope (its composition root), so each is
 * loaded here with exactly its deployed variables: a variable its code needs and its grants do not bring fails its
 * cold start, and fails here.
 */
describe('deployed environment', () => {
  const workerId = (name: keyof typeof sandbox.workers.functions) => idsOf(sandbox.workers.functions[name]).functionId;
  const cases: [string, Template, string, string][] = [
    ...FUNCTIONS.map(
      (f) =>
        [f.name, sandbox.apiTemplate, functionOf(sandbox, f.name).functionId, apiHandlerOf(f.name)] as [
          string,
          Template,
          string,
          string,
        ],
    ),
    ['processor', sandbox.workersTemplate, workerId('processor'), WORKER_HANDLERS.processor],
    ['sweeper', sandbox.workersTemplate, workerId('sweeper'), WORKER_HANDLERS.sweeper],
    ['deliverer', sandbox.workersTemplate, workerId('deliverer'), WORKER_HANDLERS.deliverer],
  ];
  const configVariable = /^(TABLE_NAME|DISBURSEMENT_BUCKET|PAYROLL_|WEBHOOK_QUEUE_URL|AWS_ENDPOINT_URL)/;
  /** What a token (an import, a reference) stands for in the deployed variables. */
  const deployed = (name: string) => `deployed-${name}`;

  /** Runs `body` in fresh modules with exactly the function's deployed variables (tokens replaced by placeholders). */
  async function withDeployedVariables<T>(template: Template, functionId: string, body: () => Promise<T>): Promise<T> {
    const saved = { ...process.env };
    try {
      for (const name of Object.keys(process.env)) if (configVariable.test(name)) delete process.env[name];
      for (const [name, value] of Object.entries(environmentOf(template, functionId)))
        process.env[name] = typeof value === 'string' ? value : deployed(name);
      process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
      vi.resetModules();
      return await body();
    } finally {
      process.env = saved;
      vi.resetModules();
    }
  }

  it.each(cases)(
    '%s loads (builds its services) with its deployed variables alone',
    async (_, template, functionId, entry) => {
      await withDeployedVariables(template, functionId, async () => {
        const module = (await import(new URL(`../../functions/${entry}.ts`, import.meta.url).href)) as {
          handler: { routes?: readonly RouteDef[] };
        };
        expect(typeof module.handler).toBe('function');
        // An API function serves exactly the routes declared for it: one left out of its router would be sent
        // there by API Gateway and answered 404.
        const declared = FUNCTIONS.find((f) => apiHandlerOf(f.name) === entry)?.routes;
        if (entry.startsWith('api/')) {
          expect(declared).toBeDefined();
          expect(module.handler.routes?.map((r) => r.id).sort()).toEqual(declared!.map((r) => r.id).sort());
        }
      });
    },
  );

  /**
   * The workers build their services lazily and the fan-out swallows its errors (the sweeper retries it), so a
   * missing variable would only show as events never delivered. Their handlers run here instead, against mocked
   * AWS clients, with the deployed variables only.
   */
  describe('the worker handlers, run with their deployed variables', () => {
    const ORG = 'org_01jaaaaaaaaaaaaaaaaaaaaaaa';
    const AT = '2026-01-01T00:00:00.000Z';
    const webhookItem = (secrets: { ciphertext: string; created_at: string; expires_at: null }[]) => ({
      ...keys.webhook(ORG, 'whk_1'),
      entity: 'webhook',
      webhook_id: 'whk_1',
      organization_id: ORG,
      url: 'https://127.0.0.1/hook',
      events: null,
      description: null,
      status: 'active',
      secrets,
      consecutive_failures: 0,
      version: 1,
      created_at: AT,
      updated_at: AT,
    });
    const eventItem = {
      ...keys.event(ORG, 'evt_1'),
      entity: 'event',
      event_id: 'evt_1',
      organization_id: ORG,
      type: 'payroll.completed',
      payroll_id: null,
      data: {},
      created_at: AT,
      deliveries: {},
    };
    let mocks: { restore(): void }[] = [];
    afterEach(() => {
      for (const m of mocks) m.restore();
      mocks = [];
    });

    it('sweeper: resumes nothing, fans one undispatched event out to the webhook queue', async () => {
      const ddb = mockClient(DynamoDBDocumentClient);
      const sqs = mockClient(SQSClient);
      mocks = [ddb, sqs];
      ddb
        .on(QueryCommand)
        .callsFake((input: { IndexName?: string; ExpressionAttributeValues: Record<string, string> }) => {
          const values = input.ExpressionAttributeValues;
          if (input.IndexName === GSI2.name)
            return {
              Items:
                values[':pk'] === keys.undispatchedEventsIndex
                  ? [{ ...eventItem, GSI2PK: values[':pk'], GSI2SK: `${AT}#evt_1` }]
                  : [],
            };
          return { Items: values[':prefix'] === keys.webhookPrefix ? [webhookItem([])] : [] };
        });
      ddb.on(TransactWriteCommand).resolves({});
      ddb.on(UpdateCommand).resolves({});
      sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });

      const result = await withDeployedVariables(sandbox.workersTemplate, workerId('sweeper'), async () => {
        const { handler } = await import('../../functions/processor/resume-stuck-payrolls.js');
        return handler();
      });
      expect(result).toEqual({ resumed: 0, dispatched: 1, redelivered: 0, abandoned: 0 });
      const sends = sqs.commandCalls(SendMessageBatchCommand);
      expect(sends.map((c) => c.args[0].input.QueueUrl)).toEqual([deployed('WEBHOOK_QUEUE_URL')]);
      expect(ddb.commandCalls(UpdateCommand).length).toBe(1); // the outbox marker cleared
    });

    it('deliverer: unwraps the secret with the key, refuses a loopback URL as deployed, and delays the retry itself', async () => {
      // A real envelope: the data key "unwrapped" by the mocked KMS below decrypts it.
      const dataKey = randomBytes(32);
      const wrapped = Buffer.from('wrapped-data-key');
      const sealer = new FieldEncryptor({
        generate: async () => ({ plaintext: dataKey, wrapped }),
        unwrap: async () => dataKey,
      });
      const ciphertext = await sealer.encrypt(`whsec_${randomBytes(24).toString('base64')}`, ORG);

      const ddb = mockClient(DynamoDBDocumentClient);
      const sqs = mockClient(SQSClient);
      const kms = mockClient(KMSClient);
      mocks = [ddb, sqs, kms];
      ddb.on(GetCommand).callsFake((input: { Key: { SK: string } }) => {
        const sk = input.Key.SK;
        if (sk.startsWith(keys.webhookPrefix))
          return { Item: webhookItem([{ ciphertext, created_at: AT, expires_at: null }]) };
        if (sk.includes('#DELIVERY#')) {
          return {
            Item: {
              ...keys.delivery(ORG, 'evt_1', 'whk_1'),
              entity: 'delivery',
              event_id: 'evt_1',
              webhook_id: 'whk_1',
              organization_id: ORG,
              url: 'https://127.0.0.1/hook',
              status: 'pending',
              attempts: [],
              created_at: AT,
              updated_at: AT,
            },
          };
        }
        return { Item: { ...eventItem, deliveries: { whk_1: 'pending' } } };
      });
      ddb.on(TransactWriteCommand).resolves({});
      kms.on(DecryptCommand).resolves({ Plaintext: new Uint8Array(dataKey) });
      sqs.on(ChangeMessageVisibilityCommand).resolves({});

      const record = {
        messageId: 'm1',
        receiptHandle: 'r1',
        body: JSON.stringify({ organization_id: ORG, event_id: 'evt_1', webhook_id: 'whk_1' }),
        attributes: { ApproximateReceiveCount: '1' },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:r:1:webhook-delivery',
        awsRegion: 'r',
      };
      const response = await withDeployedVariables(sandbox.workersTemplate, workerId('deliverer'), async () => {
        const { handler } = await import('../../functions/webhooks/deliver-event.js');
        return handler(
          { Records: [record] } as unknown as SQSEvent,
          { awsRequestId: 'test', getRemainingTimeInMillis: () => 30_000 } as unknown as Context,
        );
      });

      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
      expect(kms.commandCalls(DecryptCommand).map((c) => c.args[0].input)).toEqual([
        expect.objectContaining({
          KeyId: deployed('PAYROLL_KMS_KEY_ID'),
          EncryptionContext: { purpose: 'webhook-secret' },
        }),
      ]);
      // The attempt is recorded, refused before any connection: deployed, loopback is not a public address.
      const attempt = (
        ddb.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems![0]!.Update!.ExpressionAttributeValues![
          ':a'
        ] as { status_code: number | null; error: string }[]
      )[0]!;
      expect(attempt.status_code).toBeNull();
      expect(attempt.error).toMatch(/public|loopback|not allowed|refused/i);
      // The first retry's delay (PAYROLL_WEBHOOK_RETRY_DELAYS_S) set on the message, on the deployed queue URL; nothing sent.
      expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input)).toEqual([
        { QueueUrl: deployed('WEBHOOK_QUEUE_URL'), ReceiptHandle: 'r1', VisibilityTimeout: WEBHOOK_RETRY_DELAYS_S[0] },
      ]);
      expect(sqs.commandCalls(SendMessageBatchCommand).length + sqs.commandCalls(SendMessageCommand).length).toBe(0);
    });
  });
});

describe('cdk-nag AwsSolutions', () => {
  it.each([
    ['sandbox', sandbox],
    ['production', production],
  ] as const)('reports no unacknowledged error in %s', (_, synthesized) => {
    // cdk-nag 3 reports through CDK's policy-validation framework, not annotations; validateScope gives the same report.
    const report = new AwsSolutionsChecks().validateScope(synthesized.app);
    const errors = report.violations
      .filter((v) => v.severity === 'error')
      .map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
    expect(errors).toEqual([]);
  });

  it('fails the synthesis of the app infra/app.ts builds when a finding is not acknowledged', () => {
    const app = appWith({ environment: 'sandbox', stage: 'nag' });
    const { stateful } = addPayrollStacks(app);
    new Bucket(stateful, 'UnloggedBucket');
    expect(() => app.synth()).toThrow(/AwsSolutions-S1/);
  });

  it('carries a specific reason on every acknowledgment', () => {
    const acknowledgments: { path: string; id: string; reason: string }[] = [];
    const visit = (construct: IConstruct) => {
      for (const entry of construct.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const [id, reason] of Object.entries(entry.data as Record<string, string>))
          acknowledgments.push({ path: construct.node.path, id, reason });
      }
      construct.node.children.forEach(visit);
    };
    visit(sandbox.app);
    expect(acknowledgments.length).toBeGreaterThan(0);
    for (const a of acknowledgments) {
      // cdk-nag's, and the Control Tower rules' that cfn-guard checks (test/infra/operations.test.ts).
      expect(a.id, a.path).toMatch(/AwsSolutions-|^cdk-validator-cfnguard::/);
      expect(a.reason.length, `${a.path} ${a.id}`).toBeGreaterThanOrEqual(60);
    }
  });
});

describe('binary answers', () => {
  it('lets API Gateway send paystub PDFs as bytes', () => {
    sandbox.apiTemplate.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['application/pdf'] });
  });
});

describe('key policy', () => {
  const render = renderPolicy;

  interface KeyStatement extends Statement {
    Sid?: string;
    Principal: { AWS: string } | '*';
  }
  const policyOf = (s: Synthesized): KeyStatement[] =>
    (
      render(resourcesOf(s.statefulTemplate)[logicalId(s.stateful.key)]!.Properties!.KeyPolicy) as {
        Statement: KeyStatement[];
      }
    ).Statement;

  const allows = (statements: KeyStatement[], principalArn: string, action: string, context?: Record<string, string>) =>
    keyPolicyAllows(statements, principalArn, action, context);

  /** A role's ARN as IAM (and aws:PrincipalArn) gives it: its path, then its (generated) name. */
  const roleArn = (template: Template, fn: PayrollFunction) => {
    const { roleId } = idsOf(fn);
    const path = (resourcesOf(template)[roleId]!.Properties!.Path as string | undefined) ?? '/';
    return `arn:aws:iam::${ACCOUNT}:role${path}${roleId}-AbCdEf123456`;
  };
  const bankAccount = { 'kms:EncryptionContext:purpose': 'bank-account' };
  const webhookSecret = { 'kms:EncryptionContext:purpose': 'webhook-secret' };
  const administrator = `arn:aws:iam::${ACCOUNT}:role/Administrator`;
  const rootUser = `arn:aws:iam::${ACCOUNT}:root`;

  describe.each([
    ['sandbox', sandbox],
    ['production', production],
  ] as const)('in %s', (environment, s) => {
    const statements = policyOf(s);
    const processor = roleArn(s.workersTemplate, s.workers.functions.processor);
    const deliverer = roleArn(s.workersTemplate, s.workers.functions.deliverer);
    const sweeper = roleArn(s.workersTemplate, s.workers.functions.sweeper);
    const employees = roleArn(s.apiTemplate, s.api.functions.employees!);
    const docs = roleArn(s.apiTemplate, s.api.functions.docs!);

    it('gives no principal kms:* and no cryptographic use without a purpose or an AWS service in between', () => {
      const crypto = ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:GenerateDataKeyWithoutPlaintext'];
      for (const st of statements.filter((x) => x.Effect === 'Allow')) {
        expect(asArray(st.Action), st.Sid).not.toContain('kms:*');
        expect(asArray(st.Action), st.Sid).not.toContain('*');
        if (crypto.some((action) => covers(st, action))) {
          const keys = Object.values(st.Condition ?? {}).flatMap((c) => Object.keys(c));
          expect(
            keys.includes('kms:EncryptionContext:purpose') || keys.includes('kms:ViaService'),
            `${st.Sid} allows cryptographic use unconditioned`,
          ).toBe(true);
        }
      }
    });

    it('denies bank account decryption to every principal but the roles under the decrypt path', () => {
      const denies = statements.filter(
        (st) =>
          st.Effect === 'Deny' &&
          covers(st, 'kms:Decrypt') &&
          st.Condition?.StringEquals?.['kms:EncryptionContext:purpose'] === 'bank-account',
      );
      expect(denies).toHaveLength(1);
      expect(denies[0]!.Principal).toEqual({ AWS: '*' });
      expect(denies[0]!.Condition!.StringNotLike).toEqual({
        'aws:PrincipalArn': [`arn:aws:iam::${ACCOUNT}:role${bankAccountRolePath(environment, 'test', 'decrypt')}*`],
      });
      expect(allows(statements, processor, 'kms:Decrypt', bankAccount)).toBe(true);
      for (const principal of [administrator, rootUser, employees, deliverer, sweeper, docs]) {
        expect(allows(statements, principal, 'kms:Decrypt', bankAccount), principal).toBe(false);
        // Nor moving a data key under another context (or key) it could then decrypt.
        expect(allows(statements, principal, 'kms:ReEncryptFrom', bankAccount), principal).toBe(false);
      }
    });

    it('lets only the bank account roles generate bank account data keys', () => {
      for (const principal of [employees, processor])
        expect(allows(statements, principal, 'kms:GenerateDataKey', bankAccount), principal).toBe(true);
      for (const principal of [administrator, rootUser, deliverer, sweeper, docs]) {
        expect(allows(statements, principal, 'kms:GenerateDataKey', bankAccount), principal).toBe(false);
        expect(allows(statements, principal, 'kms:Encrypt', bankAccount), principal).toBe(false);
      }
    });

    it('leaves webhook secrets and the table through DynamoDB to IAM, and the bucket through S3 to the bucket roles', () => {
      expect(allows(statements, deliverer, 'kms:Decrypt', webhookSecret)).toBe(true);
      const via = (service: string) => ({ 'kms:ViaService': `${service}.${REGION}.amazonaws.com` });
      for (const action of ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:Encrypt']) {
        expect(allows(statements, docs, action, via('dynamodb')), `${action} via dynamodb`).toBe(true);
        // S3 uses the key for the roles under the bucket path alone: no administrator reads the bucket's objects.
        expect(allows(statements, processor, action, via('s3')), `${action} via s3`).toBe(true);
        for (const principal of [docs, administrator, rootUser, employees, deliverer, sweeper])
          expect(allows(statements, principal, action, via('s3')), `${principal} ${action} via s3`).toBe(false);
      }
      // Neither with no context through no service, nor through another service.
      expect(allows(statements, administrator, 'kms:Decrypt')).toBe(false);
      expect(
        allows(statements, administrator, 'kms:Decrypt', { 'kms:ViaService': `sqs.${REGION}.amazonaws.com` }),
      ).toBe(false);
    });

    it('keeps key administration with the account, so the key never becomes unmanageable', () => {
      for (const action of [
        'kms:PutKeyPolicy',
        'kms:GetKeyPolicy',
        'kms:DescribeKey',
        'kms:EnableKeyRotation',
        'kms:CreateAlias',
        'kms:UpdateAlias',
        'kms:TagResource',
        'kms:ScheduleKeyDeletion',
        'kms:CancelKeyDeletion',
        'kms:RevokeGrant',
        'kms:ListGrants',
      ])
        expect(allows(statements, administrator, action), action).toBe(true);
    });

    it('lets grants be created only by AWS services for their resources', () => {
      const granting = statements.filter((st) => st.Effect === 'Allow' && covers(st, 'kms:CreateGrant'));
      expect(granting.length).toBeGreaterThan(0);
      for (const st of granting) expect(st.Condition?.Bool).toEqual({ 'kms:GrantIsForAWSResource': 'true' });
      expect(allows(statements, administrator, 'kms:CreateGrant')).toBe(false);
      expect(allows(statements, administrator, 'kms:CreateGrant', { 'kms:GrantIsForAWSResource': 'true' })).toBe(true);
    });

    it("puts exactly the roles granted bank account key use under the key policy's paths", () => {
      // A role with other key uses too has the bank-account path as the start of its own (infra/key-use-paths.ts).
      const pathOf = (template: Template, fn: PayrollFunction) =>
        resourcesOf(template)[idsOf(fn).roleId]!.Properties!.Path as string | undefined;
      const bankPathOf = (template: Template, fn: PayrollFunction) =>
        (['decrypt', 'encrypt'] as const)
          .map((use) => bankAccountRolePath(environment, 'test', use))
          .find((p) => pathOf(template, fn)?.startsWith(p));
      const path = (use: 'encrypt' | 'decrypt') => bankAccountRolePath(environment, 'test', use);
      for (const f of FUNCTIONS) {
        const access = accessOf(f.routes) as readonly Access[];
        const expected = access.includes('kms:decrypt:bank-account')
          ? path('decrypt')
          : access.includes('kms:encrypt:bank-account')
            ? path('encrypt')
            : undefined;
        expect(bankPathOf(s.apiTemplate, s.api.functions[f.name]!), f.name).toBe(expected);
        if (!expected)
          expect(pathOf(s.apiTemplate, s.api.functions[f.name]!) ?? '', f.name).not.toContain('bank-account');
      }
      expect(bankPathOf(s.workersTemplate, s.workers.functions.processor)).toBe(path('decrypt'));
      expect(pathOf(s.workersTemplate, s.workers.functions.deliverer)).toBeUndefined();
      expect(pathOf(s.workersTemplate, s.workers.functions.sweeper)).toBeUndefined();
      // The bank link unwraps its own password, kept under the bank-account purpose.
      expect(bankPathOf(s.workersTemplate, s.workers.functions.bankLink)).toBe(path('decrypt'));
      // Today some routes encrypt account numbers and only the processor reads them back.
      expect(FUNCTIONS.some((f) => accessOf(f.routes).includes('kms:encrypt:bank-account'))).toBe(true);
      // No other role of the app (audit ingester, API Gateway's logging role, custom resources) is under them.
      const underPaths = [s.apiTemplate, s.workersTemplate, s.statefulTemplate].flatMap((t) =>
        Object.values(resourcesOf(t)).filter(
          (r) => r.Type === 'AWS::IAM::Role' && String(r.Properties!.Path ?? '').includes('bank-account'),
        ),
      );
      expect(underPaths).toHaveLength(
        FUNCTIONS.filter((f) =>
          accessOf(f.routes).some((a) => a === 'kms:encrypt:bank-account' || a === 'kms:decrypt:bank-account'),
        ).length + 2,
      );
    });
  });
});

describe('key policy upgrade switch', () => {
  it('leaves the bank-account Deny out only when asked, for the deploy that moves existing roles under their paths', () => {
    const sids = (context: Record<string, unknown>) => {
      const stacks = addPayrollStacks(appWith({ environment: 'production', stage: 'upgrade', ...context }));
      const policy = Template.fromStack(stacks.stateful).toJSON().Resources[logicalId(stacks.stateful.key)].Properties
        .KeyPolicy.Statement as { Sid?: string; Effect: string }[];
      return policy.filter((st) => st.Effect === 'Deny').map((st) => st.Sid);
    };
    expect(sids({})).toEqual(['BankAccountDecryptOnlyByDecryptRoles', 'BankAccountEncryptOnlyByServiceRoles']);
    expect(sids({ bankAccountKeyDeny: 'false' })).toEqual([]);
    expect(() => sids({ bankAccountKeyDeny: 'maybe' })).toThrow(/bankAccountKeyDeny/);
  });
});

describe('web ACL', () => {
  it.each([
    ['sandbox', sandbox],
    ['production', production],
  ] as const)('puts a regional web ACL with a per-source-IP rate rule on the %s stage by default', (environment, s) => {
    const template = s.apiTemplate;
    template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Name: `payroll-${environment}-test-api`,
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      VisibilityConfig: Match.objectLike({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true }),
      // The rate rule first; the AWS managed rule groups after it (bank-data-guards.test.ts).
      Rules: Match.arrayWith([
        Match.objectLike({
          Action: {
            Block: {
              CustomResponse: {
                ResponseCode: 429,
                CustomResponseBodyKey: 'rate-limited',
                ResponseHeaders: [{ Name: 'Retry-After', Value: '60' }],
              },
            },
          },
          Statement: {
            RateBasedStatement: {
              AggregateKeyType: 'IP',
              Limit: DEFAULT_WAF_RATE_LIMIT_PER_5_MIN,
              EvaluationWindowSec: 300,
            },
          },
          VisibilityConfig: Match.objectLike({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true }),
        }),
      ]),
    });
    // Above what one organization may make at the service's default limits (3 × 500 a minute, 7,500 in 5 minutes).
    expect(DEFAULT_WAF_RATE_LIMIT_PER_5_MIN).toBe(10_000);
    // A blocked address gets the service's 429 envelope, as its own rate limits answer.
    const body = JSON.parse(
      (
        template.findResources('AWS::WAFv2::WebACL') as Record<
          string,
          { Properties: { CustomResponseBodies: Record<string, { Content: string }> } }
        >
      )[logicalId(s.api.webAcl!.webAcl)]!.Properties.CustomResponseBodies['rate-limited']!.Content,
    );
    expect(body).toMatchObject({ status: 429, error: { code: 'rate_limited', retry_after: 60 } });
    // Associated with the stage: arn:<partition>:apigateway:<region>::/restapis/<id>/stages/<stage>.
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [logicalId(s.api.webAcl!.webAcl), 'Arn'] },
      ResourceArn: {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':apigateway:',
            { Ref: 'AWS::Region' },
            '::/restapis/',
            { Ref: logicalId(s.api.api) },
            '/stages/',
            { Ref: logicalId(s.api.api.deploymentStage) },
          ],
        ],
      },
    });
    // cdk-nag finds the association itself: nothing acknowledges AwsSolutions-APIG3 any more.
    const stage = s.api.api.deploymentStage.node.metadata.filter(
      (m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY,
    );
    expect(JSON.stringify(stage)).not.toContain('AwsSolutions-APIG3');
  });

  it('takes the per-IP limit from -c wafRateLimitPer5Min, as the CLI passes it', () => {
    expect(webAclSettings(appWith({ wafRateLimitPer5Min: '500' }), 'sandbox')).toEqual({ rateLimitPer5Min: 500 });
    expect(webAclSettings(appWith({ wafRateLimitPer5Min: 10_000 }), 'production')).toEqual({
      rateLimitPer5Min: 10_000,
    });
    for (const bad of ['abc', '1.5', '5', 0, -1, 3_000_000_000])
      expect(() => webAclSettings(appWith({ wafRateLimitPer5Min: bad }), 'sandbox'), String(bad)).toThrow(
        /wafRateLimitPer5Min/,
      );
    expect(() => webAclSettings(appWith({ waf: 'no' }), 'sandbox')).toThrow(/"waf" must be true or false/);
  });

  it('leaves the web ACL out of a sandbox deployed with -c waf=false, still nag-clean', () => {
    const app = appWith({ environment: 'sandbox', stage: 'nowaf', waf: 'false' });
    const { api } = addPayrollStacks(app);
    expect(api.webAcl).toBeUndefined();
    // Synthesizes the app, cdk-nag included: the stage's APIG3 finding is acknowledged for this case alone.
    const template = Template.fromStack(api);
    template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
  });

  it('refuses -c waf=false for production', () => {
    for (const waf of ['false', false])
      expect(() => addPayrollStacks(appWith({ environment: 'production', stage: 'nowaf', waf }))).toThrow(
        /waf=false.*refused in production/,
      );
  });
});
