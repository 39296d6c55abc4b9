import { readFileSync } from 'node:fs';
import { App, CfnResource, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { addPayrollStacks } from '../../infra/app.js';
import { AUDIT_INGEST_RETRY_ATTEMPTS, AuditLogIngestion } from '../../infra/constructs/audit-log-ingestion.js';
import { PayrollFunction } from '../../infra/constructs/payroll-function.js';
import { FUNCTIONS, ROUTES } from '../../shared/api/routes.js';

/** The functions that serve authenticated routes: every one but docs. */
const AUTHENTICATED = FUNCTIONS.filter((f) => f.routes.some((r) => r.scope !== null)).map((f) => f.name);

/**
 * The deployed audit pipeline: a subscription on every route function's log group, feeding one ingest function
 * that may only batch-write the table, with failed deliveries parked rather than lost. Built through
 * addPayrollStacks, so cdk-nag runs on it (an unacknowledged finding throws at synthesis).
 */
const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }
).context;
const app = new App({
  context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], environment: 'sandbox', stage: 'test' },
});
const stacks = addPayrollStacks(app);
const template = Template.fromStack(stacks.api);

type Resources = Record<string, { Type: string; Properties?: Record<string, any> }>;
const resources = template.toJSON().Resources as Resources;
const logicalId = (construct: IConstruct): string => {
  const child = construct instanceof CfnResource ? construct : construct.node.defaultChild;
  return Stack.of(construct).getLogicalId(child as CfnResource);
};
const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

const ingest = stacks.api.auditLog.function;
const ingestFunctionId = logicalId(ingest.function);
/** The function's ARN, which the log subscriptions invoke (the function itself, unqualified). */
const ingestArn = { 'Fn::GetAtt': [ingestFunctionId, 'Arn'] };
const ingestRoleId = logicalId(ingest.role);
const failuresId = logicalId(stacks.api.auditLog.failures);

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
const statementsOfRole = (roleId: string): Statement[] =>
  ofType('AWS::IAM::Policy')
    .filter(([, r]) => asArray<{ Ref?: string }>(r.Properties!.Roles).some((role) => role.Ref === roleId))
    .flatMap(([, r]) => asArray<Statement>(r.Properties!.PolicyDocument.Statement));

describe('audit log ingestion', () => {
  it("subscribes every authenticated function's log group, and no other, to the ingest function with the audit filter", () => {
    const filters = ofType('AWS::Logs::SubscriptionFilter').map(([, r]) => r.Properties!);
    expect(AUTHENTICATED).toEqual([
      'employees',
      'payroll',
      'disbursements',
      'returns',
      'paystubs',
      'webhooks',
      'admin',
      'bank-link-api',
    ]);
    expect(filters.length).toBe(AUTHENTICATED.length);
    const subscribed = filters.map((f) => (f.LogGroupName as { Ref: string }).Ref).sort();
    const routeLogGroups = AUTHENTICATED.map((name) => logicalId(stacks.api.functions[name]!.logGroup)).sort();
    expect(subscribed).toEqual(routeLogGroups);
    expect(subscribed).not.toContain(logicalId(stacks.api.functions.docs!.logGroup));
    // Never its own log group: its lines are not audit lines, and a loop would feed on itself.
    expect(subscribed).not.toContain(logicalId(ingest.logGroup));
    for (const f of filters) {
      expect(f.FilterPattern).toBe('{ $.audit_event = "request" }');
      expect(f.DestinationArn).toEqual(ingestArn);
    }
  });

  it("lets CloudWatch Logs invoke the function from the route functions' log groups alone, named under one prefix", () => {
    const permissions = ofType('AWS::Lambda::Permission')
      .map(([, r]) => r.Properties!)
      .filter((p) => p.Principal === 'logs.amazonaws.com');
    // One permission for every subscription: a resource per log group would crowd the stack's 500.
    expect(permissions).toHaveLength(1);
    const [p] = permissions;
    expect(p).toMatchObject({
      Action: 'lambda:InvokeFunction',
      FunctionName: ingestArn,
      SourceAccount: { Ref: 'AWS::AccountId' },
    });
    // `/payroll/<stack>/routes/<the stack instance's id>/`: a stack created again gets new names (api-stack.ts).
    const instance = { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] };
    const head = `/payroll/${stacks.api.stackName}/routes/`;
    expect(stacks.api.resolve(stacks.api.routeLogGroupPrefix)).toEqual({ 'Fn::Join': ['', [head, instance, '/']] });
    const sourceArn = (p!.SourceArn as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    expect(sourceArn.slice(-3)).toEqual([`:log-group:${head}`, instance, '/*']);
    // Every subscribed log group is under the prefix; the fallback's and the ingest function's own are not.
    for (const name of AUTHENTICATED) {
      expect(resources[logicalId(stacks.api.functions[name]!.logGroup)]!.Properties!.LogGroupName).toEqual({
        'Fn::Join': ['', [head, instance, expect.stringMatching(/^\/[A-Za-z]+$/)]],
      });
    }
    for (const other of [stacks.api.functions.docs!.logGroup, ingest.logGroup]) {
      expect(JSON.stringify(resources[logicalId(other)]!.Properties!.LogGroupName ?? '')).not.toContain('/routes/');
    }
  });

  it('refuses a source whose log group is not named under the prefix', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Probe');
    const source = new PayrollFunction(stack, 'Source', {
      handler: 'api/employees',
      removalPolicy: RemovalPolicy.DESTROY,
    });
    expect(
      () =>
        new AuditLogIngestion(stack, 'AuditLog', {
          resources: {
            table: new Table(stack, 'Table', { partitionKey: { name: 'PK', type: AttributeType.STRING } }),
            key: new Key(stack, 'Key'),
          },
          sources: [source],
          sourceLogGroupPrefix: '/payroll/Probe/routes/',
          environment: {},
          removalPolicy: RemovalPolicy.DESTROY,
        }),
    ).toThrow('Source: its log group is not named under /payroll/Probe/routes/');
  });

  it('may write audit lines and burst counts and nothing else of the table: no read, no Scan, no index, the key only through DynamoDB', () => {
    const statements = statementsOfRole(ingestRoleId);
    const tableArn = { 'Fn::ImportValue': expect.stringContaining('Table') };
    const dynamo = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Action: ['dynamodb:BatchWriteItem', 'dynamodb:UpdateItem'],
        Resource: tableArn,
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['AUDIT#ORG#*', 'AUDIT#UNAUTHENTICATED#*'] },
        },
      }),
    ]);
    const kms = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('kms:')));
    expect(kms.length).toBe(1);
    expect(JSON.stringify(kms[0]!.Condition)).toContain('dynamodb.');
    const actions = statements.flatMap((s) => asArray(s.Action));
    expect(
      actions.filter(
        (a) =>
          !/^(dynamodb:(BatchWriteItem|UpdateItem)|kms:|logs:(CreateLogStream|PutLogEvents)|xray:Put|sqs:)/.test(a),
      ),
    ).toEqual([]);
    expect(resources[ingestFunctionId]!.Properties!.Environment.Variables.TABLE_NAME).toBeDefined();
  });

  it('retries a failed delivery and then parks it, with its payload, in an encrypted queue that alarms', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ingestFunctionId },
      // The unqualified function, which the log subscriptions invoke.
      Qualifier: '$LATEST',
      MaximumRetryAttempts: AUDIT_INGEST_RETRY_ATTEMPTS,
      MaximumEventAgeInSeconds: 6 * 3600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [failuresId, 'Arn'] } } },
    });
    const sqs = statementsOfRole(ingestRoleId).filter((s) => asArray(s.Action).some((a) => a.startsWith('sqs:')));
    // What the failure destination needs to send (SqsDestination's grant), on that queue alone.
    expect(sqs.map((s) => s.Resource)).toEqual([{ 'Fn::GetAtt': [failuresId, 'Arn'] }]);
    expect(new Set(sqs.flatMap((s) => asArray(s.Action)))).toEqual(
      new Set(['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl']),
    );
    expect(resources[failuresId]!.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: failuresId }],
      PolicyDocument: {
        Statement: [Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })],
      },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [failuresId, 'QueueName'] } }],
      Threshold: 0,
    });
  });

  it('serves GET /v1/logs from the admin function, admin only, with the page-token secret', () => {
    const route = ROUTES.find((r) => r.id === 'listLogs')!;
    expect(route).toMatchObject({ method: 'GET', path: '/v1/logs', scope: 'admin', access: ['secret:signing'] });
    expect(route.function).toBe('admin');
    const env = resources[logicalId(stacks.api.functions.admin!.function)]!.Properties!.Environment.Variables;
    expect(env.PAYROLL_SIGNING_SECRET_ARN).toBeDefined();
  });
});
