import {
  ACCOUNT,
  asArray,
  covers,
  keyPolicyAllows,
  matchesAny,
  REGION,
  renderPolicy,
  type PolicyStatement,
} from '../support/key-policy.js';
import { readFileSync } from 'node:fs';
import { App, CfnResource, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { addPayrollStacks, type PayrollStacks } from '../../infra/app.js';
import { ALARM_THRESHOLDS } from '../../infra/constructs/monitoring.js';
import type { PayrollFunction } from '../../infra/constructs/payroll-function.js';
import { PayrollProcessor } from '../../infra/constructs/payroll-processor.js';
import { COMMON_RULE_SET_COUNT_ONLY, MANAGED_RULE_GROUPS } from '../../infra/constructs/web-acl.js';
import { DELIVERER_TIMEOUT, WebhookDeliverer } from '../../infra/constructs/webhook-deliverer.js';
import { BANK_LINK_OBJECT_PREFIX, objectKeys, WORK_FILE_PREFIX } from '../../shared/adapters/object-store.js';
import type { Access } from '../../shared/api/route.js';
import { FUNCTIONS } from '../../shared/api/routes.js';
import { accessOf } from '../../infra/lambda-functions.js';

/**
 * What guards the bank data at rest and the service at its edge, read from the synthesized templates of both
 * environments as `cdk synth` builds them (minus esbuild; cdk-nag and cfn-guard run, an unacknowledged finding throws):
 * the NACHA files' own key and who may use it, no role that deletes an object, Object Lock and a lifecycle that never
 * reaches a NACHA file, the web ACL's managed rules and logs, queues that outlast their consumers six times over,
 * log groups a re-created stack does not collide with, and the audit log's partition.
 */
const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }
).context;

type Resource = {
  Type: string;
  Properties?: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};
type Resources = Record<string, Resource>;
interface Template {
  Resources: Resources;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: string } }>;
}
type Statement = PolicyStatement;

function build(environment: 'sandbox' | 'production') {
  const app = new App({
    context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], environment, stage: 'test' },
  });
  const stacks = addPayrollStacks(app);
  const assembly = app.synth();
  const templates = new Map(assembly.stacks.map((s) => [s.stackName, s.template as Template] as const));
  return { environment, app, stacks, templates };
}
type Deployment = ReturnType<typeof build>;

const sandbox = build('sandbox');
const production = build('production');
const deployments = [
  ['sandbox', sandbox],
  ['production', production],
] as const;

const logicalId = (construct: IConstruct): string => {
  const child = construct instanceof CfnResource ? construct : construct.node.defaultChild;
  return Stack.of(construct).getLogicalId(child as CfnResource);
};
const templateOf = (d: Deployment, stack: Stack): Template => d.templates.get(stack.stackName)!;
const resourcesOf = (d: Deployment, stack: Stack): Resources => templateOf(d, stack).Resources;
/** Every resource of every stack of the deployment. */
const all = (d: Deployment) =>
  [...d.templates.entries()].flatMap(([stack, t]) =>
    Object.entries(t.Resources).map(([id, r]) => ({ stack, id, ...r })),
  );

const render = renderPolicy;

const keyPolicyOf = (d: Deployment, key: IConstruct): Statement[] =>
  (
    render(resourcesOf(d, d.stacks.stateful)[logicalId(key)]!.Properties!.KeyPolicy) as {
      Statement: Statement[];
    }
  ).Statement;

/** Every IAM role of the deployment, with the ARN IAM gives its sessions (`aws:PrincipalArn`): its path, then a name. */
const rolesOf = (d: Deployment) =>
  all(d)
    .filter((r) => r.Type === 'AWS::IAM::Role')
    .map((r) => ({
      stack: r.stack,
      id: r.id,
      arn: `arn:aws:iam::${ACCOUNT}:role${(r.Properties!.Path as string | undefined) ?? '/'}${r.id}-AbCdEf123456`,
    }));

/** Every statement of every identity policy in the deployment: policies, managed policies and roles' inline ones. */
const identityStatements = (d: Deployment) =>
  all(d).flatMap((r) => {
    const documents =
      r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy'
        ? [
            {
              roles: asArray<{ Ref: string }>(r.Properties!.Roles).map((x) => x.Ref),
              doc: r.Properties!.PolicyDocument,
            },
          ]
        : r.Type === 'AWS::IAM::Role'
          ? asArray<{ PolicyDocument: unknown }>(r.Properties!.Policies).map((p) => ({
              roles: [r.id],
              doc: p.PolicyDocument,
            }))
          : [];
    return documents.flatMap(({ roles, doc }) =>
      asArray((doc as { Statement: Statement | Statement[] }).Statement).map((statement) => ({
        stack: r.stack,
        policy: r.id,
        roles,
        statement,
      })),
    );
  });

const roleIdOf = (fn: PayrollFunction) => logicalId(fn.role);
const functionProps = (d: Deployment, fn: PayrollFunction) =>
  resourcesOf(d, Stack.of(fn))[logicalId(fn.function)]!.Properties!;

/** The functions whose routes (or, for the workers, whose grants) ask for a disbursement-file access. */
function fileKeyUsers(stacks: PayrollStacks) {
  const routes = FUNCTIONS.filter((f) =>
    (accessOf(f.routes) as readonly Access[]).some((a) => a.endsWith(':disbursement-file')),
  ).map((f) => ({ fn: stacks.api.functions[f.name]!, access: accessOf(f.routes) as readonly Access[] }));
  // The bank link opens the files it sends to the bank; it writes none.
  return { processor: stacks.workers.functions.processor, bankLink: stacks.workers.functions.bankLink, routes };
}

describe.each(deployments)('the disbursement file key, in %s', (environment, d) => {
  const statements = keyPolicyOf(d, d.stacks.stateful.fileKey);
  const purpose = { 'kms:EncryptionContext:purpose': 'disbursement-file' };
  const crypto = ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:GenerateDataKeyWithoutPlaintext'];
  const roles = rolesOf(d);
  const arnOf = (fn: PayrollFunction) => roles.find((r) => r.id === roleIdOf(fn))!.arn;
  const { processor, bankLink, routes } = fileKeyUsers(d.stacks);

  it('is a key of its own, rotated, that the bucket is not encrypted with', () => {
    const stateful = resourcesOf(d, d.stacks.stateful);
    const fileKeyId = logicalId(d.stacks.stateful.fileKey);
    expect(fileKeyId).not.toBe(logicalId(d.stacks.stateful.key));
    expect(stateful[fileKeyId]!.Properties!.EnableKeyRotation).toBe(true);
    const bucket = stateful[logicalId(d.stacks.stateful.disbursementBucket)]!.Properties!;
    expect(JSON.stringify(bucket.BucketEncryption)).not.toContain(fileKeyId);
  });

  it('gives no principal cryptographic use without a role path on aws:PrincipalArn, and no use through a service', () => {
    const root = `arn:aws:iam::${ACCOUNT}:role/payroll/${environment}/test/`;
    for (const st of statements.filter((x) => x.Effect === 'Allow' && crypto.some((a) => covers(x, a)))) {
      const patterns = asArray(st.Condition?.StringLike?.['aws:PrincipalArn'] as string | string[] | undefined);
      expect(patterns.length, `${st.Sid} allows use to the whole account`).toBeGreaterThan(0);
      for (const p of patterns) {
        expect(p.startsWith(root), p).toBe(true);
        expect(p.slice(root.length), p).toMatch(/^([a-z-]+\/)*disbursement-file-(write|read)\/\*$/);
      }
      expect(st.Condition?.StringEquals?.['kms:EncryptionContext:purpose']).toBe('disbursement-file');
    }
    expect(JSON.stringify(statements)).not.toContain('kms:ViaService');
    expect(statements.some((st) => st.Effect === 'Allow' && covers(st, 'kms:CreateGrant'))).toBe(false);
    for (const st of statements.filter((x) => x.Effect === 'Allow'))
      expect(asArray(st.Action).filter((a) => a === '*' || a === 'kms:*')).toEqual([]);

    // Whoever holds AdministratorAccess, the account root, or a role under the bank-account path alone.
    const outsiders = [
      `arn:aws:iam::${ACCOUNT}:role/Administrator`,
      `arn:aws:iam::${ACCOUNT}:root`,
      `arn:aws:iam::${ACCOUNT}:role/payroll/${environment}/test/bank-account-decrypt/Impostor`,
      `arn:aws:iam::${ACCOUNT}:role/payroll/${environment}/test/Impostor`,
      `arn:aws:iam::${ACCOUNT}:role/payroll/${environment}/other/disbursement-file-write/Impostor`,
    ];
    for (const principal of outsiders) {
      for (const action of [...crypto, 'kms:ReEncryptFrom', 'kms:CreateGrant']) {
        const contexts: Record<string, string>[] = [{}, purpose, { 'kms:ViaService': `s3.${REGION}.amazonaws.com` }];
        for (const context of contexts)
          expect(keyPolicyAllows(statements, principal, action, context), `${principal} ${action}`).toBe(false);
      }
    }
    // Administration stays with the account: the key never becomes unmanageable.
    for (const action of ['kms:PutKeyPolicy', 'kms:DescribeKey', 'kms:ScheduleKeyDeletion', 'kms:EnableKeyRotation'])
      expect(keyPolicyAllows(statements, outsiders[0]!, action), action).toBe(true);
  });

  it('lets the processor and the disbursements function (re-debits, reversals) seal NACHA files, the functions that serve them open them, and no other role', () => {
    // The route table says who serves and writes files: the payroll function serves a run's file, the
    // disbursements function every file, and writes re-debits and reversals.
    expect([...new Set(routes.map((r) => r.fn.node.id))].sort()).toEqual(['DisbursementsFunction', 'PayrollFunction']);
    const allowedTo = (action: string) =>
      roles.filter((r) => keyPolicyAllows(statements, r.arn, action, purpose)).map((r) => r.id);
    const unique = (ids: string[]) => [...new Set(ids)].sort();
    const readers = unique(
      routes.filter((r) => r.access.includes('kms:decrypt:disbursement-file')).map((r) => roleIdOf(r.fn)),
    );
    const writers = unique(
      routes.filter((r) => r.access.includes('kms:encrypt:disbursement-file')).map((r) => roleIdOf(r.fn)),
    );
    expect(readers).toHaveLength(2);
    expect(writers).toHaveLength(1);
    expect(readers).toContain(writers[0]);
    expect(allowedTo('kms:Decrypt').sort()).toEqual([roleIdOf(processor), roleIdOf(bankLink), ...readers].sort());
    for (const action of ['kms:GenerateDataKey', 'kms:Encrypt'])
      expect(allowedTo(action).sort(), action).toEqual([roleIdOf(processor), ...writers].sort());
    // Not without the file purpose either (a data key made for another purpose cannot be unwrapped here).
    expect(keyPolicyAllows(statements, arnOf(processor), 'kms:Decrypt')).toBe(false);
    expect(
      keyPolicyAllows(statements, arnOf(processor), 'kms:Decrypt', { 'kms:EncryptionContext:purpose': 'bank-account' }),
    ).toBe(false);

    // And IAM agrees: only those roles' policies name the file key, each conditioned on the purpose.
    const fileKeyId = logicalId(d.stacks.stateful.fileKey);
    const onFileKey = identityStatements(d).filter(
      (s) => s.statement.Effect === 'Allow' && JSON.stringify(s.statement.Resource ?? '').includes(fileKeyId),
    );
    const actionsOfRole = (roleId: string) =>
      new Set(onFileKey.filter((s) => s.roles.includes(roleId)).flatMap((s) => asArray(s.statement.Action)));
    expect([...new Set(onFileKey.flatMap((s) => s.roles))].sort()).toEqual(
      [roleIdOf(processor), roleIdOf(bankLink), ...readers].sort(),
    );
    expect(actionsOfRole(roleIdOf(bankLink))).toEqual(new Set(['kms:Decrypt']));
    expect(actionsOfRole(roleIdOf(processor))).toEqual(new Set(['kms:GenerateDataKey', 'kms:Encrypt', 'kms:Decrypt']));
    for (const writer of writers)
      expect(actionsOfRole(writer)).toEqual(new Set(['kms:GenerateDataKey', 'kms:Encrypt', 'kms:Decrypt']));
    for (const reader of readers.filter((r) => !writers.includes(r)))
      expect(actionsOfRole(reader)).toEqual(new Set(['kms:Decrypt']));
    for (const s of onFileKey)
      expect(s.statement.Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': 'disbursement-file' } });
  });

  it('tells exactly the functions that seal or open files which key to use', () => {
    const users = new Set([processor, bankLink, ...routes.map((r) => r.fn)]);
    const functions = [
      ...Object.values(d.stacks.api.functions),
      d.stacks.api.auditLog.function,
      ...Object.values(d.stacks.workers.functions),
    ];
    const fileKeyId = logicalId(d.stacks.stateful.fileKey);
    for (const fn of functions) {
      const variable = functionProps(d, fn).Environment?.Variables?.PAYROLL_FILE_KMS_KEY_ID;
      if (users.has(fn)) expect(JSON.stringify(variable), fn.node.path).toContain(fileKeyId);
      else expect(variable, fn.node.path).toBeUndefined();
    }
  });

  it("lets no administrator read the bucket's objects through S3 with the service key", () => {
    const service = keyPolicyOf(d, d.stacks.stateful.key);
    const viaS3 = { 'kms:ViaService': `s3.${REGION}.amazonaws.com` };
    for (const st of service.filter(
      (x) => x.Effect === 'Allow' && JSON.stringify(x.Condition ?? {}).includes(viaS3['kms:ViaService']),
    ))
      expect(st.Condition?.StringLike?.['aws:PrincipalArn'], st.Sid).toBeDefined();
    for (const principal of [`arn:aws:iam::${ACCOUNT}:role/Administrator`, `arn:aws:iam::${ACCOUNT}:root`])
      expect(keyPolicyAllows(service, principal, 'kms:Decrypt', viaS3), principal).toBe(false);
    // The roles with bucket grants, and no other role, may have S3 decrypt their objects.
    const bucketRoles = identityStatements(d)
      .filter(
        (s) =>
          asArray(s.statement.Action).some((a) => a.startsWith('s3:GetObject')) &&
          JSON.stringify(s.statement.Resource).includes('DisbursementBucketArn'),
      )
      .flatMap((s) => s.roles);
    const decrypting = roles.filter((r) => keyPolicyAllows(service, r.arn, 'kms:Decrypt', viaS3)).map((r) => r.id);
    expect(decrypting.sort()).toEqual([...new Set(bucketRoles)].sort());
    expect(decrypting).toContain(roleIdOf(processor));
  });
});

describe.each(deployments)('deleting objects, in %s', (environment, d) => {
  const deletes = ['s3:DeleteObject', 's3:DeleteObjectVersion'];

  it('lets no role of the service delete an object or an object version, nor lift a retention lock', () => {
    const granting = identityStatements(d).filter(
      (s) =>
        s.statement.Effect === 'Allow' &&
        [...deletes, 's3:BypassGovernanceRetention'].some((a) => covers(s.statement, a)),
    );
    // Only CDK's own function that syncs the dashboard's static site into its bucket (pruning old files), on that
    // bucket alone: no data of the service is there.
    const siteBucket = logicalId(d.stacks.dashboard.siteBucket);
    for (const s of granting) {
      expect(s.stack, s.policy).toBe(d.stacks.dashboard.stackName);
      expect(s.policy, s.policy).toMatch(/^CustomCDKBucketDeployment/);
      expect(covers(s.statement, 's3:BypassGovernanceRetention')).toBe(false);
      for (const resource of asArray(s.statement.Resource)) {
        const text = JSON.stringify(resource);
        expect(text.includes(siteBucket) || text.includes('cdk-'), text).toBe(true);
        expect(text).not.toContain(logicalId(d.stacks.stateful.disbursementBucket));
      }
    }
    // Not one of the service's functions: none may remove or hide a submission, a chunk or a NACHA file.
    const serviceRoles = new Set(
      [
        ...Object.values(d.stacks.api.functions),
        d.stacks.api.auditLog.function,
        ...Object.values(d.stacks.workers.functions),
      ].map(roleIdOf),
    );
    expect(granting.filter((s) => s.roles.some((r) => serviceRoles.has(r)))).toEqual([]);
  });

  it("lets nothing delete the disbursement bucket's objects by its bucket policy, but a sandbox's emptying on delete", () => {
    const bucketId = logicalId(d.stacks.stateful.disbursementBucket);
    const policies = all(d).filter(
      (r) => r.Type === 'AWS::S3::BucketPolicy' && JSON.stringify(r.Properties!.Bucket).includes(bucketId),
    );
    const allowingDelete = policies.flatMap((p) =>
      asArray<Statement>(p.Properties!.PolicyDocument.Statement).filter(
        (st) => st.Effect === 'Allow' && deletes.some((a) => covers(st, a)),
      ),
    );
    if (environment === 'production') expect(allowingDelete).toEqual([]);
    // CDK's custom resource that empties a sandbox's bucket when its stack is deleted.
    else
      for (const st of allowingDelete)
        expect(JSON.stringify(st.Principal)).toContain('CustomS3AutoDeleteObjectsCustomResourceProviderRole');
  });

  it('lets the roles that write objects put the Object Lock retention they write NACHA files with', () => {
    // Where runs' objects live (`payrolls/`); the bank link's staging prefix holds no record and locks nothing.
    const writers = identityStatements(d).filter(
      (s) =>
        s.statement.Effect === 'Allow' &&
        asArray(s.statement.Action).includes('s3:PutObject') &&
        !JSON.stringify(s.statement.Resource).includes(`/${BANK_LINK_OBJECT_PREFIX}/`),
    );
    expect(writers.flatMap((s) => s.roles)).toContain(roleIdOf(d.stacks.workers.functions.processor));
    for (const s of writers) expect(asArray(s.statement.Action), s.policy).toContain('s3:PutObjectRetention');
  });
});

describe.each(deployments)('the disbursement bucket, in %s', (_, d) => {
  const bucket = resourcesOf(d, d.stacks.stateful)[logicalId(d.stacks.stateful.disbursementBucket)]!.Properties!;

  it('has Object Lock on, versioning kept, and no default retention (the processor locks each NACHA file)', () => {
    expect(bucket.ObjectLockEnabled).toBe(true);
    expect(bucket.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.ObjectLockConfiguration?.Rule).toBeUndefined();
  });

  it('has no lifecycle rule that could expire or purge a NACHA file, current or noncurrent', () => {
    const nacha = objectKeys.disbursement('org_x', 'pay_y');
    expect(nacha).toBe('payrolls/org_x/pay_y/disbursement.ach');
    const rules = bucket.LifecycleConfiguration.Rules as Record<string, any>[];
    const removing = rules.filter(
      (r) =>
        r.NoncurrentVersionExpiration !== undefined ||
        r.NoncurrentVersionExpirationInDays !== undefined ||
        r.ExpirationInDays !== undefined ||
        r.ExpirationDate !== undefined ||
        r.Transitions !== undefined,
    );
    expect(removing.length).toBeGreaterThan(0);
    for (const rule of removing) {
      // A prefix (lifecycle filters are literal prefixes), never a tag filter a writer could set.
      const prefix = rule.Prefix ?? rule.Filter?.Prefix;
      expect(typeof prefix === 'string' && prefix.length > 0, rule.Id).toBe(true);
      expect(rule.TagFilters, rule.Id).toBeUndefined();
      expect(nacha.startsWith(prefix), rule.Id).toBe(false);
      expect([WORK_FILE_PREFIX, `${BANK_LINK_OBJECT_PREFIX}/`], rule.Id).toContain(prefix);
    }
    // The noncurrent versions purged are the work files' and the bank link's staged copies alone.
    expect(rules.filter((r) => r.NoncurrentVersionExpiration).map((r) => r.Prefix)).toEqual([
      WORK_FILE_PREFIX,
      `${BANK_LINK_OBJECT_PREFIX}/`,
    ]);
  });
});

describe.each(deployments)('the web ACL, in %s', (environment, d) => {
  const api = resourcesOf(d, d.stacks.api);
  const acl = api[logicalId(d.stacks.api.webAcl!.webAcl)]!.Properties!;
  const rules = acl.Rules as Record<string, any>[];

  it('runs the AWS managed common, known-bad-inputs and IP reputation groups after the rate rule', () => {
    expect(rules.map((r) => r.Name)).toEqual([
      'RateLimitPerSourceIp',
      'AWSManagedRulesCommonRuleSet',
      'AWSManagedRulesKnownBadInputsRuleSet',
      'AWSManagedRulesAmazonIpReputationList',
    ]);
    expect(rules.map((r) => r.Priority)).toEqual([0, 1, 2, 3]);
    expect(rules[0]!.Action.Block.CustomResponse.ResponseCode).toBe(429);
    expect(rules[0]!.Statement.RateBasedStatement).toBeDefined();
    for (const rule of rules.slice(1)) {
      // The groups' own actions: none overridden to count as a whole.
      expect(rule.OverrideAction).toEqual({ None: {} });
      expect(rule.Action).toBeUndefined();
      expect(rule.Statement.ManagedRuleGroupStatement).toMatchObject({ VendorName: 'AWS', Name: rule.Name });
      expect(rule.VisibilityConfig).toEqual({
        CloudWatchMetricsEnabled: true,
        SampledRequestsEnabled: true,
        MetricName: `payroll-${environment}-test-api-${rule.Name}`,
      });
    }
    expect(new Set(rules.map((r) => r.VisibilityConfig.MetricName)).size).toBe(rules.length);
    expect(MANAGED_RULE_GROUPS).toHaveLength(3);
  });

  it('only counts the common rules lawful requests trip: large bodies, webhook URLs with IP hosts, no User-Agent', () => {
    const common = rules.find((r) => r.Name === 'AWSManagedRulesCommonRuleSet')!;
    expect(common.Statement.ManagedRuleGroupStatement.RuleActionOverrides).toEqual([
      { Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } },
      { Name: 'GenericRFI_BODY', ActionToUse: { Count: {} } },
      { Name: 'NoUserAgent_HEADER', ActionToUse: { Count: {} } },
    ]);
    expect(COMMON_RULE_SET_COUNT_ONLY).toEqual(['SizeRestrictions_BODY', 'GenericRFI_BODY', 'NoUserAgent_HEADER']);
    for (const rule of rules.filter(
      (r) => r.Name !== 'AWSManagedRulesCommonRuleSet' && r.Statement.ManagedRuleGroupStatement,
    ))
      expect(rule.Statement.ManagedRuleGroupStatement.RuleActionOverrides).toBeUndefined();
  });

  it('logs every request to an aws-waf-logs- log group kept as the other logs, the authorization header redacted', () => {
    const configs = Object.values(api).filter((r) => r.Type === 'AWS::WAFv2::LoggingConfiguration');
    expect(configs).toHaveLength(1);
    const config = configs[0]!.Properties!;
    expect(config.ResourceArn).toEqual({ 'Fn::GetAtt': [logicalId(d.stacks.api.webAcl!.webAcl), 'Arn'] });
    expect(config.RedactedFields).toEqual([{ SingleHeader: { Name: 'authorization' } }]);
    const groupId = logicalId(d.stacks.api.webAcl!.logGroup);
    // The log group's ARN as WAF takes it: no `:*` at the end.
    expect(config.LogDestinationConfigs).toHaveLength(1);
    const [destination] = config.LogDestinationConfigs as { 'Fn::Join': [string, unknown[]] }[];
    const parts = destination!['Fn::Join'][1];
    expect((render(parts.slice(0, -1)) as string[]).join('')).toBe(`arn:aws:logs:${REGION}:${ACCOUNT}:log-group:`);
    expect(parts.at(-1)).toEqual({ Ref: groupId });
    const group = api[groupId]!;
    const name = group.Properties!.LogGroupName as { 'Fn::Join': [string, unknown[]] };
    expect(name['Fn::Join'][1][0]).toBe(`aws-waf-logs-payroll-${environment}-test-api-`);
    expect(group.Properties!.RetentionInDays).toBe(environment === 'production' ? 365 : 30);
    expect(group.Properties!.KmsKeyId).toBeUndefined();
    if (environment === 'production') expect(group.DeletionPolicy).toBe('RetainExceptOnCreate');
  });
});

describe.each(deployments)('queues and their consumers, in %s', (_, d) => {
  /** Every SQS event source of the deployment: the function it invokes and the queue it reads, resolved across stacks. */
  const sources = () => {
    const outputs = [...d.templates.values()].flatMap((t) => Object.values(t.Outputs ?? {}));
    const queueOf = (arn: unknown): Resource => {
      const imported = (arn as { 'Fn::ImportValue'?: string })['Fn::ImportValue'];
      const value = imported ? outputs.find((o) => o.Export?.Name === imported)!.Value : arn;
      const [id] = (value as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
      return all(d).find((r) => r.id === id && r.Type === 'AWS::SQS::Queue')!;
    };
    return all(d)
      .filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping')
      .filter((m) => JSON.stringify(m.Properties!.EventSourceArn).includes('Queue'))
      .map((m) => {
        const fnId = (m.Properties!.FunctionName as { Ref: string }).Ref;
        const fn = d.templates.get(m.stack)!.Resources[fnId]!;
        return {
          functionId: fnId,
          fn: fn.Properties!,
          mapping: m.Properties!,
          queue: queueOf(m.Properties!.EventSourceArn),
        };
      });
  };

  it('hides a received message for at least six times the timeout of the function that consumes it', () => {
    const found = sources();
    expect(found.map((s) => s.functionId).sort()).toEqual(
      [d.stacks.workers.functions.processor, d.stacks.workers.functions.deliverer]
        .map((f) => logicalId(f.function))
        .sort(),
    );
    for (const { functionId, fn, queue } of found) {
      const timeout = (fn.Timeout as number | undefined) ?? 3;
      const visibility = (queue.Properties!.VisibilityTimeout as number | undefined) ?? 30;
      expect(visibility, functionId).toBeGreaterThanOrEqual(6 * timeout);
      // And within what SQS allows (12 hours).
      expect(visibility).toBeLessThanOrEqual(12 * 3600);
    }
  });

  it('reserves concurrency for the processor and the deliverer, at least what their event sources may use', () => {
    for (const { functionId, fn, mapping } of sources()) {
      expect(fn.ReservedConcurrentExecutions, functionId).toBeGreaterThanOrEqual(
        mapping.ScalingConfig.MaximumConcurrency as number,
      );
    }
    expect(functionProps(d, d.stacks.workers.functions.processor).ReservedConcurrentExecutions).toBe(20);
    expect(functionProps(d, d.stacks.workers.functions.deliverer).ReservedConcurrentExecutions).toBe(10);
    // Lambda keeps 100 of an account's executions unreserved: a deployment reserves little of the default 1,000.
    const reserved = all(d)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .reduce((sum, r) => sum + ((r.Properties!.ReservedConcurrentExecutions as number | undefined) ?? 0), 0);
    expect(reserved).toBeLessThanOrEqual(100);
  });

  it("pages on the payroll queue's age after an attempt's timeout and before a failed message comes back", () => {
    const processor = functionProps(d, d.stacks.workers.functions.processor);
    const queue = resourcesOf(d, d.stacks.stateful)[logicalId(d.stacks.stateful.queues.payroll.queue)]!.Properties!;
    expect(ALARM_THRESHOLDS.payrollQueueAgeSeconds).toBeGreaterThan(processor.Timeout as number);
    expect(ALARM_THRESHOLDS.payrollQueueAgeSeconds).toBeLessThan(queue.VisibilityTimeout as number);
  });
});

describe('a consumer and a queue too short for it', () => {
  it('are refused at synthesis, for the processor and the deliverer alike', () => {
    const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
    const { stateful } = addPayrollStacks(app);
    const stack = new Stack(app, 'TooShort');
    const resources = stateful.serviceResources();
    const common = { resources, environment: {}, removalPolicy: RemovalPolicy.DESTROY };
    // What the queues had before: twice the deliverer's timeout, and the processor's plus a minute.
    expect(
      () =>
        new WebhookDeliverer(stack, 'Deliverer', {
          ...common,
          queueVisibilityTimeout: Duration.seconds(2 * DELIVERER_TIMEOUT.toSeconds()),
          maxReceiveCount: 10,
        }),
    ).toThrow(/at least 6 times/);
    expect(
      () => new PayrollProcessor(stack, 'Processor', { ...common, queueVisibilityTimeout: Duration.minutes(15) }),
    ).toThrow(/at least 6 times/);
  });
});

describe.each(deployments)('log groups, in %s', (_, d) => {
  /**
   * A name a create of the stack under the same stack name would give again: made of literals and the pseudo
   * parameters every instance shares (not the stack's own id, AWS::StackId), with no Ref or GetAtt of a resource.
   */
  const sameOnEveryCreate = (value: unknown) =>
    value !== undefined && !/"Ref":"AWS::StackId"|"Ref":"(?!AWS::)|"Fn::GetAtt"/.test(JSON.stringify(value));

  it('names no log group a deleted stack keeps the way its next create would name one', () => {
    const kept = all(d).filter(
      (r) =>
        r.Type === 'AWS::Logs::LogGroup' &&
        (r.DeletionPolicy === 'Retain' || r.DeletionPolicy === 'RetainExceptOnCreate'),
    );
    expect(kept.length).toBeGreaterThan(0);
    for (const group of kept)
      expect(sameOnEveryCreate(group.Properties!.LogGroupName), `${group.stack} ${group.id}`).toBe(false);
  });

  it("keeps the route log groups under one prefix per stack instance, the audit subscriptions' invoke permission on it", () => {
    const api = resourcesOf(d, d.stacks.api);
    const prefix = Stack.of(d.stacks.api).resolve(d.stacks.api.routeLogGroupPrefix);
    expect(JSON.stringify(prefix)).toContain('"Ref":"AWS::StackId"');
    const authenticated = FUNCTIONS.filter((f) => f.name !== 'docs');
    for (const f of authenticated) {
      const name = api[logicalId(d.stacks.api.functions[f.name]!.logGroup)]!.Properties!.LogGroupName;
      expect(JSON.stringify(name), f.name).toContain('"Ref":"AWS::StackId"');
      expect(JSON.stringify(name)).toContain(`/payroll/${d.stacks.api.stackName}/routes/`);
    }
    const permission = Object.values(api).find(
      (r) => r.Type === 'AWS::Lambda::Permission' && r.Properties!.Principal === 'logs.amazonaws.com',
    )!;
    expect(JSON.stringify(permission.Properties!.SourceArn)).toContain('"Ref":"AWS::StackId"');
  });
});

describe.each(deployments)("an organization's audit log, in %s", (_, d) => {
  const WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
  const tableId = logicalId(d.stacks.stateful.table);
  /** Per role, the partition key patterns its statements let it write on the table (`*` where no LeadingKeys holds it). */
  const writableKeys = () => {
    const byRole = new Map<string, string[]>();
    for (const s of identityStatements(d)) {
      const st = s.statement;
      if (st.Effect !== 'Allow' || !WRITES.some((a) => covers(st, a))) continue;
      const resources = asArray(st.Resource).map((r) => JSON.stringify(r));
      if (!resources.some((r) => r.includes(tableId) || r === '"*"') || resources.every((r) => r.includes('/index/')))
        continue;
      const leading = st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] as string[] | undefined;
      for (const role of s.roles) byRole.set(role, [...(byRole.get(role) ?? []), ...(leading ?? ['*'])]);
    }
    return byRole;
  };
  const writersOf = (pk: string) =>
    [...writableKeys().entries()].filter(([, patterns]) => matchesAny(patterns, pk)).map(([role]) => role);

  it("lets exactly the audit writer's role write a key under AUDIT#ORG#, and every role write what it did", () => {
    const ingest = roleIdOf(d.stacks.api.auditLog.function);
    expect(writersOf('AUDIT#ORG#org_x')).toEqual([ingest]);
    expect(writersOf('AUDIT#UNAUTHENTICATED#203.0.113.7')).toEqual([ingest]);
    // The audit writer writes nothing an organization's work reads.
    expect(writableKeys().get(ingest)!.sort()).toEqual(['AUDIT#ORG#*', 'AUDIT#UNAUTHENTICATED#*']);
    for (const pk of ['ORG#org_x', 'TOKEN#abc', 'STUB#stub_1', 'RATE#key'])
      expect(writersOf(pk), pk).not.toContain(ingest);
  });

  it('keeps the ORG# grants nine roles hold out of the audit partition: StringLike matches from the start', () => {
    const orgWriters = [...writableKeys().entries()].filter(([, patterns]) => patterns.includes('ORG#*'));
    expect(orgWriters.length).toBeGreaterThanOrEqual(9);
    expect(matchesAny(['ORG#*'], 'ORG#org_x')).toBe(true);
    expect(matchesAny(['ORG#*'], 'AUDIT#ORG#org_x')).toBe(false);
    for (const [role, patterns] of orgWriters) expect(matchesAny(patterns, 'AUDIT#ORG#org_x'), role).toBe(false);
    // No role writes the table without a LeadingKeys condition.
    for (const [role, patterns] of writableKeys()) expect(patterns, role).not.toContain('*');
  });
});

describe('the key policy upgrade switch', () => {
  it("also leaves the service key's use through S3 account-wide, for the one deploy that moves roles under their paths", () => {
    const s3Statement = (context: Record<string, unknown>) => {
      const app = new App({
        context: {
          ...CDK_CONTEXT,
          'aws:cdk:bundling-stacks': [],
          environment: 'production',
          stage: 'upgrade',
          ...context,
        },
      });
      const stacks = addPayrollStacks(app);
      const template = app.synth().getStackByName(stacks.stateful.stackName).template as Template;
      const policy = template.Resources[logicalId(stacks.stateful.key)]!.Properties!.KeyPolicy.Statement as Statement[];
      return policy.find((st) => st.Sid === 'UseThroughS3ByBucketRoles')!;
    };
    expect(s3Statement({}).Condition?.StringLike?.['aws:PrincipalArn']).toBeDefined();
    expect(s3Statement({ bankAccountKeyDeny: 'false' }).Condition?.StringLike).toBeUndefined();
  });
});
