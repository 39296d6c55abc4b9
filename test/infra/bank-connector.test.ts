import { ACCOUNT, asArray, covers, keyPolicyAllows, REGION, renderPolicy } from '../support/key-policy.js';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { App, CfnResource, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { addPayrollStacks } from '../../infra/app.js';
import { stageBank } from '../../infra/constructs/bank-connector.js';
import { BANK_LINK_METRICS, FAILING_PASS_MINUTES } from '../../infra/constructs/bank-link-worker.js';
import { SERVICE_NAME } from '../../shared/adapters/metric-names.js';

/**
 * The bank link's Transfer Family side, read from the templates as `cdk synth` builds them (minus esbuild; cdk-nag and
 * cfn-guard run, an unacknowledged finding throws): the stage's connector with the host key it trusts, its secret and
 * the egress addresses banks allow-list; the roles connectors use; the worker's schedule, alarms and grants, each
 * held to what the bank link needs.
 */
const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }
).context;

type Resource = { Type: string; Properties?: Record<string, any>; DeletionPolicy?: string };
type Resources = Record<string, Resource>;
interface Template {
  Resources: Resources;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
}
interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** An ECDSA host key line (`ecdsa-sha2-nistp256 <base64>`), as `ssh-keyscan` prints it without the host. */
function ecdsaKeyLine(): string {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  const blob = Buffer.concat([field(Buffer.from('ecdsa-sha2-nistp256')), field(Buffer.from('nistp256')), field(point)]);
  return `ecdsa-sha2-nistp256 ${blob.toString('base64')}`;
}

const HOST_KEY = ecdsaKeyLine();
const BANK = { url: 'sftp://sftp.bank.example:22', username: 'acme-payroll', trustedHostKeys: [HOST_KEY] };

function build(environment: 'sandbox' | 'production', context: Record<string, unknown> = {}) {
  const app = new App({
    context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], environment, stage: 'test', ...context },
  });
  const stacks = addPayrollStacks(app);
  const assembly = app.synth();
  const templates = new Map(assembly.stacks.map((s) => [s.stackName, s.template as Template] as const));
  const workers = templates.get(stacks.workers.stackName)!;
  return { app, stacks, templates, workers, resources: workers.Resources };
}

// The bank as `-c bank='…'` passes it: a JSON string.
const withBank = build('sandbox', { bank: JSON.stringify(BANK) });
const withoutBank = build('production');

const logicalId = (construct: IConstruct): string => {
  const child = construct instanceof CfnResource ? construct : construct.node.defaultChild;
  return Stack.of(construct).getLogicalId(child as CfnResource);
};
const ofType = (resources: Resources, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
/** Every statement a role holds: its inline policies and the policies attached to it. */
function statementsOf(resources: Resources, roleId: string): Statement[] {
  const inline = (resources[roleId]!.Properties!.Policies ?? []).flatMap((p: any) =>
    asArray(p.PolicyDocument.Statement),
  );
  const attached = ofType(resources, 'AWS::IAM::Policy')
    .filter(([, r]) => asArray<{ Ref?: string }>(r.Properties!.Roles).some((role) => role.Ref === roleId))
    .flatMap(([, r]) => asArray<Statement>(r.Properties!.PolicyDocument.Statement));
  return [...inline, ...attached] as Statement[];
}
const actionsOf = (statements: Statement[]) => statements.flatMap((s) => asArray(s.Action));
const resourcesOfStatement = (s: Statement) => asArray(renderPolicy(s.Resource) as unknown);

describe('the stage connector (with -c bank)', () => {
  const connector = withBank.stacks.workers.bankConnector;
  const connectorId = logicalId(connector.connector!);
  const secretId = logicalId(connector.secret!);

  it('connects to the bank with the trusted host key, its credential secret and the two roles', () => {
    expect(ofType(withBank.resources, 'AWS::Transfer::Connector')).toHaveLength(1);
    expect(withBank.resources[connectorId]!.Properties).toMatchObject({
      Url: BANK.url,
      AccessRole: { 'Fn::GetAtt': [logicalId(connector.accessRole), 'Arn'] },
      LoggingRole: { 'Fn::GetAtt': [logicalId(connector.loggingRole), 'Arn'] },
      SftpConfig: { UserSecretId: { Ref: secretId }, TrustedHostKeys: [HOST_KEY] },
    });
  });

  it('keeps the credential in a secret of its own, generated until the operator puts the bank’s in', () => {
    expect(withBank.resources[secretId]!.Properties!.GenerateSecretString).toMatchObject({
      SecretStringTemplate: JSON.stringify({ Username: BANK.username }),
      GenerateStringKey: 'Password',
    });
    // The connector's role may read it; nothing else in the stack names it.
    const readers = ofType(withBank.resources, 'AWS::IAM::Role').filter(([id]) =>
      JSON.stringify(statementsOf(withBank.resources, id)).includes(`"Ref":"${secretId}"`),
    );
    expect(readers.map(([id]) => id)).toEqual([logicalId(connector.accessRole)]);
  });

  it('outputs the egress addresses for the bank’s allow-list, the connector id and the secret', () => {
    const outputs = withBank.workers.Outputs!;
    expect(outputs.BankConnectorEgressIps!.Value).toEqual({
      'Fn::Join': [',', { 'Fn::GetAtt': [connectorId, 'ServiceManagedEgressIpAddresses'] }],
    });
    expect(outputs.BankConnectorEgressIps!.Description).toContain('allow-list');
    expect(outputs.BankConnectorId!.Value).toEqual({ 'Fn::GetAtt': [connectorId, 'ConnectorId'] });
    expect(outputs.BankConnectorSecretArn!.Value).toEqual({ Ref: secretId });
  });

  it('keeps its log group, named after the connector, as long as the worker’s', () => {
    const group = withBank.resources[logicalId(connector.logGroup!)]!.Properties!;
    expect(group.LogGroupName).toEqual({
      'Fn::Join': ['', ['/aws/transfer/', { 'Fn::GetAtt': [connectorId, 'ConnectorId'] }]],
    });
    expect(group.RetentionInDays).toBe(30);
  });

  it('is not made without a bank: the roles alone, no connector, secret or address output', () => {
    expect(ofType(withoutBank.resources, 'AWS::Transfer::Connector')).toEqual([]);
    expect(withoutBank.stacks.workers.bankConnector.secret).toBeUndefined();
    expect(Object.keys(withoutBank.workers.Outputs ?? {}).filter((k) => k.startsWith('BankConnector'))).toEqual([]);
    expect(withoutBank.resources[logicalId(withoutBank.stacks.workers.bankConnector.accessRole)]).toBeDefined();
  });
});

describe('the bank context', () => {
  const appWith = (bank: unknown) => new App({ context: { bank } });

  it('reads the bank from a JSON string or an object, and nothing when absent', () => {
    expect(stageBank(appWith(JSON.stringify(BANK)))).toEqual(BANK);
    expect(stageBank(appWith(BANK))).toEqual(BANK);
    expect(stageBank(new App())).toBeUndefined();
  });

  it.each([
    ['not JSON', '{url:'],
    ['another scheme', { ...BANK, url: 'ftp://sftp.bank.example' }],
    ['a path in the URL', { ...BANK, url: 'sftp://sftp.bank.example/inbound' }],
    ['a port out of range', { ...BANK, url: 'sftp://sftp.bank.example:70000' }],
    ['a username with a space', { ...BANK, username: 'acme payroll' }],
    ['no trusted key', { ...BANK, trustedHostKeys: [] }],
    ['a key with its host', { ...BANK, trustedHostKeys: [`sftp.bank.example ${HOST_KEY}`] }],
    [
      'an ed25519 key, which a connector does not trust',
      { ...BANK, trustedHostKeys: [`ssh-ed25519 ${'A'.repeat(68)}`] },
    ],
    ['a blob of another type', { ...BANK, trustedHostKeys: [`ssh-rsa ${HOST_KEY.split(' ')[1]}`] }],
    ['an unknown field', { ...BANK, password: 'x' }],
  ])('refuses %s', (_, bank) => {
    expect(() => stageBank(appWith(bank))).toThrow(/Context "bank"/);
  });
});

describe('the connector roles', () => {
  const { resources } = withBank;
  const connector = withBank.stacks.workers.bankConnector;
  const accessId = logicalId(connector.accessRole);
  const loggingId = logicalId(connector.loggingRole);
  const bucketArn = `${withBank.stacks.stateful.stackName}-DisbursementBucketArn`;

  it('are assumed by Transfer Family for this account only', () => {
    for (const id of [accessId, loggingId]) {
      expect(resources[id]!.Properties!.AssumeRolePolicyDocument.Statement).toEqual([
        {
          Action: 'sts:AssumeRole',
          Effect: 'Allow',
          Principal: { Service: 'transfer.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
        },
      ]);
    }
  });

  it('let connectors read and write the bank-link prefix of the bucket and nothing else of it, never deleting', () => {
    const s3 = statementsOf(resources, accessId).filter((s) => actionsOf([s]).some((a) => a.startsWith('s3:')));
    expect(s3.length).toBeGreaterThan(0);
    for (const statement of s3) {
      const resource = statement.Resource as any;
      if (actionsOf([statement]).includes('s3:ListBucket')) {
        expect(actionsOf([statement])).toEqual(['s3:ListBucket']);
        expect(resource).toEqual({ 'Fn::ImportValue': bucketArn });
        expect(statement.Condition).toEqual({ StringLike: { 's3:prefix': ['bank-link/*'] } });
      } else {
        expect(resource).toEqual({ 'Fn::Join': ['', [{ 'Fn::ImportValue': bucketArn }, '/bank-link/*']] });
      }
    }
    expect(actionsOf(s3).filter((a) => /delete|bypass/i.test(a))).toEqual([]);
  });

  it('let connectors read the connector secrets alone: the organizations’ prefix and the stage’s secret', () => {
    const secrets = statementsOf(resources, accessId).filter((s) =>
      actionsOf([s]).some((a) => a.startsWith('secretsmanager:')),
    );
    expect(actionsOf(secrets)).toEqual(['secretsmanager:GetSecretValue']);
    expect(resourcesOfStatement(secrets[0]!)).toEqual([
      `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:payroll/sandbox/test/bank-link/*`,
      { Ref: logicalId(connector.secret!) },
    ]);
  });

  it('put the access role where the service key policy lets S3 use the key for it, and the logging role nowhere', () => {
    const keyPolicy = renderPolicy(
      withBank.templates.get(withBank.stacks.stateful.stackName)!.Resources[logicalId(withBank.stacks.stateful.key)]!
        .Properties!.KeyPolicy.Statement,
    ) as Parameters<typeof keyPolicyAllows>[0];
    const arnOf = (id: string) =>
      `arn:aws:iam::${ACCOUNT}:role${(resources[id]!.Properties!.Path as string | undefined) ?? '/'}${id}-AbCdEf123456`;
    const throughS3 = { 'kms:ViaService': `s3.${REGION}.amazonaws.com` };
    for (const action of ['kms:Decrypt', 'kms:GenerateDataKey']) {
      expect(keyPolicyAllows(keyPolicy, arnOf(accessId), action, throughS3), action).toBe(true);
      expect(keyPolicyAllows(keyPolicy, arnOf(loggingId), action, throughS3), action).toBe(false);
      // Never for bank account data keys.
      expect(
        keyPolicyAllows(keyPolicy, arnOf(accessId), action, { 'kms:EncryptionContext:purpose': 'bank-account' }),
      ).toBe(false);
    }
    const kms = statementsOf(resources, accessId).filter((s) => actionsOf([s]).some((a) => a.startsWith('kms:')));
    expect(kms.map((s) => renderPolicy(s.Condition))).toEqual([
      { StringEquals: { 'kms:ViaService': `s3.${REGION}.amazonaws.com` } },
    ]);
  });

  it('let connectors write their logs under /aws/transfer/ only', () => {
    const statements = statementsOf(resources, loggingId);
    expect(actionsOf(statements).every((a) => a.startsWith('logs:'))).toBe(true);
    expect(statements.flatMap(resourcesOfStatement)).toEqual([
      `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/transfer/*`,
      `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/transfer/*:log-stream:*`,
    ]);
  });
});

describe('the bank link worker', () => {
  const { resources, stacks } = withBank;
  const worker = stacks.workers.bankLink.worker;
  const functionId = logicalId(worker.function);
  const roleId = logicalId(worker.role);
  const connector = stacks.workers.bankConnector;
  const statements = statementsOf(resources, roleId);
  const deployment = 'Payroll-sandbox-test';

  it('runs every minute on EventBridge Scheduler, not retried, by a role that may invoke exactly it', () => {
    expect(ofType(resources, 'AWS::Events::Rule').filter(([, r]) => JSON.stringify(r).includes(functionId))).toEqual(
      [],
    );
    const schedules = ofType(resources, 'AWS::Scheduler::Schedule');
    expect(schedules).toHaveLength(1);
    const schedule = schedules[0]![1].Properties!;
    expect(schedule).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: { 'Fn::GetAtt': [functionId, 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 120 },
      },
    });
    const scheduleRoleId = (schedule.Target.RoleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;
    expect(resources[scheduleRoleId]!.Properties!.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      },
    ]);
    expect(statementsOf(resources, scheduleRoleId)).toEqual([
      { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: { 'Fn::GetAtt': [functionId, 'Arn'] } },
    ]);
  });

  it('drops an invocation the last pass held up (one at a time) rather than queueing it', () => {
    const configs = ofType(resources, 'AWS::Lambda::EventInvokeConfig').filter(([, r]) =>
      JSON.stringify(r.Properties).includes(functionId),
    );
    expect(configs.map(([, r]) => r.Properties)).toEqual([
      expect.objectContaining({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 120 }),
    ]);
  });

  it('may wrap a corrected account number a change notice brings (a new data key under the bank-account purpose)', () => {
    const wrapping = statements.filter(
      (s) =>
        covers(s as any, 'kms:GenerateDataKey') &&
        JSON.stringify(s.Condition ?? {}).includes('"kms:EncryptionContext:purpose":"bank-account"'),
    );
    expect(wrapping).toHaveLength(1);
  });

  it('is told to go through the connectors, with their roles, secret prefix and deployment', () => {
    expect(resources[functionId]!.Properties!.Environment.Variables).toMatchObject({
      PAYROLL_BANK_TRANSPORT: 'connector',
      PAYROLL_BANK_CONNECTOR_ACCESS_ROLE_ARN: { 'Fn::GetAtt': [logicalId(connector.accessRole), 'Arn'] },
      PAYROLL_BANK_CONNECTOR_LOGGING_ROLE_ARN: { 'Fn::GetAtt': [logicalId(connector.loggingRole), 'Arn'] },
      PAYROLL_BANK_CONNECTOR_SECRET_PREFIX: 'payroll/sandbox/test/bank-link',
      PAYROLL_BANK_CONNECTOR_DEPLOYMENT: deployment,
    });
  });

  it('may pass exactly the two connector roles, and only to Transfer Family', () => {
    const passing = statements.filter((s) => covers(s as any, 'iam:PassRole'));
    expect(passing).toHaveLength(1);
    expect(passing[0]).toMatchObject({
      Action: 'iam:PassRole',
      Resource: [
        { 'Fn::GetAtt': [logicalId(connector.accessRole), 'Arn'] },
        { 'Fn::GetAtt': [logicalId(connector.loggingRole), 'Arn'] },
      ],
      Condition: { StringEquals: { 'iam:PassedToService': 'transfer.amazonaws.com' } },
    });
  });

  it("makes and uses only its deployment's connectors", () => {
    const transfer = statements.filter((s) => actionsOf([s]).some((a) => a.startsWith('transfer:')));
    const bySid = Object.fromEntries(transfer.map((s) => [s.Sid, s]));
    expect(Object.keys(bySid).sort()).toEqual(['ConnectorCreate', 'ConnectorTag', 'ConnectorUse']);
    expect(bySid.ConnectorCreate).toMatchObject({
      Action: 'transfer:CreateConnector',
      Condition: { StringEquals: { 'aws:RequestTag/payroll-deployment': deployment } },
    });
    expect(bySid.ConnectorTag).toMatchObject({
      Action: 'transfer:TagResource',
      Condition: { StringEquals: { 'aws:RequestTag/payroll-deployment': deployment } },
    });
    expect(bySid.ConnectorUse!.Condition).toEqual({
      StringEquals: { 'aws:ResourceTag/payroll-deployment': deployment },
    });
    expect(asArray(bySid.ConnectorUse!.Action).sort()).toEqual(
      [
        'transfer:DescribeConnector',
        'transfer:ListFileTransferResults',
        'transfer:StartDirectoryListing',
        'transfer:StartFileTransfer',
        'transfer:TestConnection',
        'transfer:UpdateConnector',
      ].sort(),
    );
    for (const sid of ['ConnectorTag', 'ConnectorUse'])
      expect(resourcesOfStatement(bySid[sid]!)).toEqual([`arn:aws:transfer:${REGION}:${ACCOUNT}:connector/*`]);
    expect(actionsOf(transfer).filter((a) => /Delete|\*/.test(a))).toEqual([]);
  });

  it('writes connector secrets under its prefix only, and reads none', () => {
    const secrets = statements.filter((s) => actionsOf([s]).some((a) => a.startsWith('secretsmanager:')));
    expect(actionsOf(secrets).sort()).toEqual(['secretsmanager:CreateSecret', 'secretsmanager:PutSecretValue']);
    expect(secrets.flatMap(resourcesOfStatement)).toEqual([
      `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:payroll/sandbox/test/bank-link/*`,
    ]);
  });

  it('writes objects under the bank-link prefix only, beside what it already reads, and deletes none', () => {
    const bucketArn = { 'Fn::ImportValue': `${stacks.stateful.stackName}-DisbursementBucketArn` };
    const writes = statements.filter((s) => actionsOf([s]).some((a) => /^s3:Put/.test(a)));
    expect(writes).toEqual([
      {
        Sid: 'BankLinkObjects',
        Action: ['s3:GetObject', 's3:PutObject'],
        Effect: 'Allow',
        Resource: { 'Fn::Join': ['', [bucketArn, '/bank-link/*']] },
      },
    ]);
    expect(actionsOf(statements).filter((a) => /^s3:.*(Delete|Bypass)/.test(a))).toEqual([]);
  });
});

describe('the bank link alarms', () => {
  const alarms = ofType(withBank.resources, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties!);
  const on = (metric: string) => {
    const found = alarms.filter((a) => a.MetricName === metric);
    expect(found).toHaveLength(1);
    return found[0]!;
  };
  const topic = `ExportsOutputRefAlarmTopic`;

  it('pages on any file late at the bank (disbursement_file.late), firing and clearing', () => {
    const late = on(BANK_LINK_METRICS.filesLate);
    expect(late).toMatchObject({
      Namespace: 'Payroll-sandbox-test',
      Dimensions: [{ Name: 'service', Value: SERVICE_NAME }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(JSON.stringify(late.AlarmActions)).toContain(topic);
    expect(late.OKActions).toEqual(late.AlarmActions);
    expect(late.AlarmDescription).toContain('disbursement_file.late');
    expect(late.AlarmDescription).toContain('docs/deploy.md');
  });

  it('pages when passes keep failing, not on one a minute later retries', () => {
    const failing = on(BANK_LINK_METRICS.passesFailed);
    expect(failing).toMatchObject({
      Namespace: 'Payroll-sandbox-test',
      Period: 60,
      EvaluationPeriods: 15,
      DatapointsToAlarm: FAILING_PASS_MINUTES,
      Threshold: 1,
    });
    expect(JSON.stringify(failing.AlarmActions)).toContain(topic);
  });

  it('keeps watching the worker’s own errors', () => {
    const errors = alarms.filter(
      (a) =>
        a.MetricName === 'Errors' &&
        JSON.stringify(a.Dimensions).includes(logicalId(withBank.stacks.workers.bankLink.worker.function)),
    );
    expect(errors).toHaveLength(1);
  });
});
