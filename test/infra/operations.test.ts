import { FUNCTIONS } from '../../shared/api/routes.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, CfnResource, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { addPayrollStacks, ControlTowerChecks, deploymentContext, GUARD_CACHE } from '../../infra/app.js';
import { ALARM_THRESHOLDS } from '../../infra/constructs/monitoring.js';
import { PayrollFunction } from '../../infra/constructs/payroll-function.js';
import { METRIC_NAMES, SERVICE_NAME } from '../../shared/adapters/metric-names.js';
import { QUEUE_DEFINITIONS, TABLE_DEFINITION } from '../../shared/data/table-definition.js';

/**
 * What a first deploy, an operator and an auditor need of the templates: no race or leftover that fails a fresh
 * stack, alarms that reach a person, one dashboard, logs kept as long as payroll records, and the outside checks
 * (cdk-nag, cfn-guard's Control Tower rules) passing with reasoned acknowledgments only. Built as `cdk synth`
 * builds the app, minus esbuild.
 */
const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }
).context;

type Resource = {
  Type: string;
  Properties?: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string | string[];
};
type Resources = Record<string, Resource>;

interface Suppressed {
  ruleName: string;
  acknowledgedAt: string;
  violatingConstructs: { constructPath: string }[];
}
interface PluginReport {
  pluginName: string;
  conclusion: string;
  violations: unknown[];
  suppressedViolations?: Suppressed[];
}

function build(environment: 'sandbox' | 'production', context: Record<string, unknown> = {}) {
  const app = new App({
    context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], environment, stage: 'test', ...context },
  });
  const stacks = addPayrollStacks(app);
  // Runs cdk-nag and cfn-guard: an unacknowledged finding of either throws here.
  const assembly = app.synth();
  const templates = new Map(
    assembly.stacks.map((s) => [s.stackName, (s.template as { Resources: Resources }).Resources] as const),
  );
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
    pluginReports: PluginReport[];
  };
  return { app, stacks, templates, report };
}

const sandbox = build('sandbox', { alarmEmail: 'ops@example.com' });
const production = build('production');
const deployments = [
  ['sandbox', sandbox],
  ['production', production],
] as const;

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const logicalId = (construct: IConstruct): string => {
  const child = construct instanceof CfnResource ? construct : construct.node.defaultChild;
  return Stack.of(construct).getLogicalId(child as CfnResource);
};
const resourcesOf = (d: typeof sandbox, stack: Stack): Resources => d.templates.get(stack.stackName)!;
const all = (d: typeof sandbox) =>
  [...d.templates.entries()].flatMap(([stack, resources]) =>
    Object.entries(resources).map(([id, r]) => ({ stack, id, ...r })),
  );
const functionsOf = (d: typeof sandbox) =>
  d.app.node.findAll().filter((c): c is PayrollFunction => c instanceof PayrollFunction);

describe('a first deploy', () => {
  it.each(deployments)(
    'makes every log subscription of %s wait for the permission CloudWatch Logs invokes its function with',
    (_, d) => {
      const filters = all(d).filter((r) => r.Type === 'AWS::Logs::SubscriptionFilter');
      // One per function that authenticates (every API function but docs), as the audit log needs.
      expect(filters.length).toBe(FUNCTIONS.filter((f) => f.name !== 'docs').length);
      for (const filter of filters) {
        const resources = d.templates.get(filter.stack)!;
        const permissions = asArray(filter.DependsOn)
          .map((id) => resources[id]!)
          .filter(
            (p) =>
              p.Type === 'AWS::Lambda::Permission' &&
              p.Properties!.Principal === 'logs.amazonaws.com' &&
              JSON.stringify(p.Properties!.FunctionName) === JSON.stringify(filter.Properties!.DestinationArn),
          );
        expect(permissions, filter.id).toHaveLength(1);
      }
    },
  );

  /**
   * A resource kept on delete (DeletionPolicy Retain) is also kept when the stack's first create rolls back; if it
   * has a fixed name, the next create fails with "already exists". Such a resource must be RetainExceptOnCreate
   * (RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE), or have a name CloudFormation generates.
   */
  const NAME_PROPERTIES = [
    'AliasName',
    'BucketName',
    'DashboardName',
    'FunctionName',
    'LogGroupName',
    'Name',
    'QueueName',
    'RoleName',
    'TableName',
    'TopicName',
  ];
  /** Fixed: made of literals and pseudo parameters only, not of anything a create generates (a Ref, a GetAtt). */
  const fixed = (value: unknown) => value !== undefined && !/"Ref":"(?!AWS::)|"Fn::GetAtt"/.test(JSON.stringify(value));

  it.each(deployments)('keeps nothing with a fixed name in %s when a first create rolls back', (_, d) => {
    const retained = all(d).filter((r) => r.DeletionPolicy === 'Retain');
    for (const r of retained) {
      const names = NAME_PROPERTIES.filter((p) => fixed(r.Properties?.[p]));
      expect(names, `${r.stack} ${r.id} (${r.Type})`).toEqual([]);
    }
  });

  it('decides for each kind of retained resource whether a failed first create may delete it', () => {
    const policies = (type: string) =>
      new Set(
        all(production)
          .filter((r) => r.Type === type)
          .map((r) => `${r.DeletionPolicy}/${r.UpdateReplacePolicy}`),
      );
    // Named (the route log groups) or empty after a failed create: deleted by its rollback, retained otherwise.
    for (const type of ['AWS::Logs::LogGroup', 'AWS::SQS::Queue', 'AWS::SecretsManager::Secret']) {
      expect(policies(type), type).toContain('RetainExceptOnCreate/Retain');
    }
    const service = resourcesOf(production, production.stacks.stateful);
    expect(service[logicalId(production.stacks.stateful.key)]!.DeletionPolicy).toBe('RetainExceptOnCreate');
    for (const fn of functionsOf(production)) {
      const group = resourcesOf(production, Stack.of(fn))[logicalId(fn.logGroup)]!;
      expect([group.DeletionPolicy, group.UpdateReplacePolicy], fn.node.path).toEqual([
        'RetainExceptOnCreate',
        'Retain',
      ]);
    }
    // A rollback cannot delete a table with deletion protection, nor a bucket logs have reached: plain Retain, and
    // no fixed name (above).
    expect(service[logicalId(production.stacks.stateful.table)]!.DeletionPolicy).toBe('Retain');
    expect(service[logicalId(production.stacks.stateful.disbursementBucket)]!.DeletionPolicy).toBe('Retain');
    // Every kind still retained plainly is one of these, each with a reason (stateful-stack.ts, api-stack.ts, CDK's
    // bucket deployment): a new one needs a decision.
    const plainly = new Set(
      all(production)
        .filter((r) => r.DeletionPolicy === 'Retain')
        .map((r) => r.Type),
    );
    expect([...plainly].sort()).toEqual([
      'AWS::ApiGateway::Account',
      'AWS::DynamoDB::Table',
      'AWS::IAM::Role',
      'AWS::Logs::LogGroup',
      'AWS::S3::Bucket',
    ]);
  });
});

describe('alarms', () => {
  const stateful = (d: typeof sandbox) => resourcesOf(d, d.stacks.stateful);
  const topicId = (d: typeof sandbox) => logicalId(d.stacks.stateful.alarmTopic);
  const alarms = (d: typeof sandbox) => all(d).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
  const alarmOn = (d: typeof sandbox, predicate: (p: Record<string, any>) => boolean) => {
    const found = alarms(d).filter((a) => predicate(a.Properties!));
    expect(found).toHaveLength(1);
    return found[0]!.Properties!;
  };

  it('sends every alarm of every stack to the one topic, when it fires and (but PayrollQueueAge) when it clears', () => {
    for (const [, d] of deployments) {
      expect(all(d).filter((r) => r.Type === 'AWS::SNS::Topic')).toHaveLength(1);
      // Errors and throttles of each function, the API's two, the payroll queue's age, the table's throttles, failed
      // runs, the three parked-message queues, and the bank link's late files and failing passes.
      expect(alarms(d)).toHaveLength(2 * functionsOf(d).length + 2 + 1 + 1 + 1 + 3 + 2);
      for (const alarm of alarms(d)) {
        const { AlarmActions, OKActions, ActionsEnabled } = alarm.Properties!;
        expect(AlarmActions, alarm.id).toHaveLength(1);
        // In the stateful stack the topic itself, elsewhere its export.
        expect(JSON.stringify(AlarmActions), alarm.id).toContain(topicId(d));
        // PayrollQueueAge clears while a poison message is still retried: it has no OK action (the test below).
        if (alarm.Properties!.MetricName === 'ApproximateAgeOfOldestMessage')
          expect(OKActions, alarm.id).toBeUndefined();
        else expect(OKActions, alarm.id).toEqual(AlarmActions);
        expect(ActionsEnabled, alarm.id).not.toBe(false);
        expect(alarm.Properties!.AlarmDescription, alarm.id).toContain('docs/deploy.md');
      }
    }
  });

  it('encrypts the topic with a rotated key CloudWatch may use, refuses plain HTTP, and mails -c alarmEmail', () => {
    for (const [environment, d] of deployments) {
      const resources = stateful(d);
      const topic = resources[topicId(d)]!.Properties!;
      const keyId = (topic.KmsMasterKeyId as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;
      expect(keyId).not.toBe(logicalId(d.stacks.stateful.key));
      const key = resources[keyId]!;
      expect(key.Properties!.EnableKeyRotation).toBe(true);
      const cloudWatch = (statements: { Principal?: unknown; Action: string | string[] }[]) =>
        statements
          .filter((s) => JSON.stringify(s.Principal) === JSON.stringify({ Service: 'cloudwatch.amazonaws.com' }))
          .flatMap((s) => asArray(s.Action));
      expect(cloudWatch(key.Properties!.KeyPolicy.Statement)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey*']);
      const policy = Object.values(resources).find((r) => r.Type === 'AWS::SNS::TopicPolicy')!.Properties!;
      expect(cloudWatch(policy.PolicyDocument.Statement)).toEqual(['sns:Publish']);
      expect(JSON.stringify(policy.PolicyDocument.Statement)).toContain('"aws:SecureTransport":"false"');
      const subscriptions = Object.values(resources).filter((r) => r.Type === 'AWS::SNS::Subscription');
      expect(
        subscriptions.map((s) => [s.Properties!.Protocol, s.Properties!.Endpoint]),
        environment,
      ).toEqual(environment === 'sandbox' ? [['email', 'ops@example.com']] : []);
    }
    expect(() => deploymentContext(new App({ context: { alarmEmail: 'ops' } }))).toThrow(/alarmEmail/);
  });

  it('watches errors and throttles of every function', () => {
    for (const fn of functionsOf(sandbox)) {
      for (const metric of ['Errors', 'Throttles']) {
        const alarm = alarmOn(
          sandbox,
          (p) =>
            p.Namespace === 'AWS/Lambda' &&
            p.MetricName === metric &&
            JSON.stringify(p.Dimensions) ===
              JSON.stringify([{ Name: 'FunctionName', Value: { Ref: logicalId(fn.function) } }]),
        );
        expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
      }
    }
    // The API's functions and the five workers (processor, sweeper, deliverer, audit ingester, bank link).
    expect(functionsOf(sandbox)).toHaveLength(FUNCTIONS.length + 5);
  });

  it("watches the API's 5xx rate and p99 latency", () => {
    const api = { Name: 'ApiName', Value: 'payroll-sandbox-test' };
    const rate = alarmOn(sandbox, (p) => JSON.stringify(p.Metrics ?? []).includes('5XXError'));
    const expression = rate.Metrics[0].Expression as string;
    expect(expression).toBe('IF(requests >= 20, 100 * errors / requests, IF(errors >= 5, 100, 0))');
    expect(rate).toMatchObject({
      Threshold: ALARM_THRESHOLDS.api5xxPercent,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    // The expression is also valid JavaScript once IF is a function: whether it pages, for a window's counts.
    const value = new Function('IF', 'requests', 'errors', `return ${expression};`) as (
      f: (condition: boolean, then: number, otherwise: number) => number,
      requests: number,
      errors: number,
    ) => number;
    const pages = (requests: number, errors: number) =>
      value((c, t, o) => (c ? t : o), requests, errors) > ALARM_THRESHOLDS.api5xxPercent;
    // A quiet API failing every request (its handlers answer 500 without a Lambda error) pages from 5 answers on.
    expect(pages(5, 5)).toBe(true);
    expect(pages(19, 5)).toBe(true);
    expect(pages(4, 4)).toBe(false);
    expect(pages(19, 4)).toBe(false);
    // A busy one by its rate.
    expect(pages(1000, 51)).toBe(true);
    expect(pages(1000, 50)).toBe(false);
    expect(pages(20, 2)).toBe(true);
    expect(pages(0, 0)).toBe(false);
    expect(JSON.stringify(rate.Metrics)).toContain(JSON.stringify(api));
    const latency = alarmOn(sandbox, (p) => p.MetricName === 'Latency');
    expect(latency).toMatchObject({ ExtendedStatistic: 'p99', Threshold: 10_000, EvaluationPeriods: 2 });
  });

  it("pages on a payroll message 10 minutes old: during a stuck message's first attempt, not after 5 × 900 s", () => {
    const payrollQueue = logicalId(sandbox.stacks.stateful.queues.payroll.queue);
    const age = alarmOn(sandbox, (p) => p.MetricName === 'ApproximateAgeOfOldestMessage');
    expect(age).toMatchObject({ Statistic: 'Maximum', Period: 60, Threshold: 600, EvaluationPeriods: 1 });
    expect(age.Dimensions).toEqual([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [payrollQueue, 'QueueName'] } }]);
    // Before a failed message even comes back (its visibility timeout), far before it reaches the DLQ.
    expect(age.Threshold).toBeLessThan(QUEUE_DEFINITIONS.payroll.visibilityTimeoutSeconds);
    expect(age.Period).toBe(60);
    // SQS stops counting a message received 3 times or more, so on a poison message the alarm clears at ~30 minutes
    // while the run is still stuck: it pages when it fires, and says nothing when it clears.
    expect(JSON.stringify(age.AlarmActions)).toContain(topicId(sandbox));
    expect(age.AlarmActions).toHaveLength(1);
    expect(age.OKActions).toBeUndefined();
  });

  it('watches the depth of every dead-letter and failure queue, the webhook DLQ included', () => {
    const parked = [
      sandbox.stacks.stateful.queues.payroll.deadLetterQueue,
      sandbox.stacks.stateful.queues.webhooks.deadLetterQueue,
      sandbox.stacks.api.auditLog.failures,
    ];
    for (const queue of parked) {
      alarmOn(
        sandbox,
        (p) =>
          p.MetricName === 'ApproximateNumberOfMessagesVisible' &&
          JSON.stringify(p.Dimensions).includes(logicalId(queue)),
      );
    }
  });

  it('watches throttled reads and writes of the table and its indexes', () => {
    const throttles = alarmOn(sandbox, (p) => JSON.stringify(p.Metrics ?? []).includes('ThrottleEvents'));
    const metrics = (throttles.Metrics as { MetricStat?: { Metric: { MetricName: string; Dimensions: unknown } } }[])
      .filter((m) => m.MetricStat)
      .map((m) => `${m.MetricStat!.Metric.MetricName} ${JSON.stringify(m.MetricStat!.Metric.Dimensions)}`);
    expect(metrics).toHaveLength(2 * (1 + TABLE_DEFINITION.globalSecondaryIndexes.length));
    for (const index of TABLE_DEFINITION.globalSecondaryIndexes)
      expect(metrics.join()).toContain(`"Value":"${index.indexName}"`);
    expect(throttles).toMatchObject({ EvaluationPeriods: 5, DatapointsToAlarm: 3, Threshold: 1 });
  });

  it("pages when a run ends failed: PayrollsFailed in the deployment's namespace, dimension service", () => {
    for (const [environment, d] of deployments) {
      const failed = alarmOn(d, (p) => p.MetricName === METRIC_NAMES.payrollsFailed);
      expect(failed).toMatchObject({
        Namespace: `Payroll-${environment}-test`,
        Dimensions: [{ Name: 'service', Value: SERVICE_NAME }],
        Statistic: 'Sum',
        Threshold: 1,
      });
    }
  });
});

describe('functions', () => {
  it.each(deployments)(
    'tells every function of %s its service and metric namespace, and traces it with X-Ray',
    (environment, d) => {
      for (const fn of functionsOf(d)) {
        const resources = resourcesOf(d, Stack.of(fn));
        const props = resources[logicalId(fn.function)]!.Properties!;
        expect(props.Environment.Variables, fn.node.path).toMatchObject({
          POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
          POWERTOOLS_METRICS_NAMESPACE: `Payroll-${environment}-test`,
        });
        expect(props.TracingConfig).toEqual({ Mode: 'Active' });
        const actions = Object.values(resources)
          .filter(
            (r) =>
              r.Type === 'AWS::IAM::Policy' &&
              JSON.stringify(r.Properties!.Roles) === JSON.stringify([{ Ref: logicalId(fn.role) }]),
          )
          .flatMap((r) => asArray(r.Properties!.PolicyDocument.Statement).flatMap((s: any) => asArray(s.Action)));
        expect(actions, fn.node.path).toEqual(expect.arrayContaining(['xray:PutTraceSegments']));
      }
    },
  );

  it('keeps production function and API access logs a year (payroll records), a sandbox’s a month', () => {
    for (const [environment, d] of deployments) {
      const groups = [
        ...functionsOf(d).map((fn) => fn.logGroup),
        d.stacks.api.node.findChild('AccessLogs') as IConstruct,
      ];
      for (const group of groups) {
        const days = resourcesOf(d, Stack.of(group))[logicalId(group)]!.Properties!.RetentionInDays as number;
        if (environment === 'production') expect(days, group.node.path).toBeGreaterThanOrEqual(365);
        else expect(days, group.node.path).toBe(30);
      }
    }
  });
});

describe('dashboard', () => {
  it('puts the API, every function, the queues, the table and the business metrics on one dashboard per deployment', () => {
    const resources = resourcesOf(sandbox, sandbox.stacks.monitoring);
    const dashboards = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    expect(dashboards[0]!.Properties!.DashboardName).toBe('Payroll-sandbox-test');
    const body = JSON.stringify(dashboards[0]!.Properties!.DashboardBody);
    for (const figure of ['Count', '5XXError', 'Latency', 'Errors', 'Throttles', 'Duration']) {
      expect(body).toContain(`\\"${figure}\\"`);
    }
    for (const figure of ['ApproximateAgeOfOldestMessage', 'ApproximateNumberOfMessagesVisible', 'ThrottleEvents'])
      expect(body).toContain(figure);
    for (const fn of functionsOf(sandbox)) expect(body, fn.node.path).toContain(logicalId(fn.function));
    const { payroll, webhooks } = sandbox.stacks.stateful.queues;
    for (const queue of [payroll.queue, payroll.deadLetterQueue, webhooks.queue, webhooks.deadLetterQueue])
      expect(body).toContain(logicalId(queue));
    expect(body).toContain(logicalId(sandbox.stacks.api.auditLog.failures));
    for (const name of Object.values(METRIC_NAMES))
      expect(body).toContain(`[\\"Payroll-sandbox-test\\",\\"${name}\\",\\"service\\",\\"${SERVICE_NAME}\\"`);
  });

  it('lives in a stack of its own that the others do not depend on', () => {
    const { monitoring, api, workers, stateful, dashboard } = sandbox.stacks;
    expect(monitoring.stackName).toBe('Payroll-sandbox-test-Monitoring');
    expect(new Set(monitoring.dependencies)).toEqual(new Set([stateful, api, workers]));
    expect(api.dependencies).toEqual([stateful]);
    expect(workers.dependencies).toEqual([stateful]);
    expect(dashboard.dependencies).toEqual([api]);
  });
});

describe("cfn-guard's Control Tower rules", () => {
  const guard = (d: typeof sandbox) => d.report.pluginReports.find((r) => r.pluginName === 'cdk-validator-cfnguard')!;

  it.each(deployments)('run on every synth of %s and find nothing that is not acknowledged', (_, d) => {
    expect(guard(d)).toMatchObject({ conclusion: 'success', violations: [] });
    expect(guard(d).suppressedViolations!.length).toBeGreaterThan(0);
  });

  it("cache their findings in the repository's node_modules/.cache, not in the shared temporary folder", () => {
    // Anyone may write to the temporary folder of a shared machine: a planted `[]` there would pass every template.
    const root = fileURLToPath(new URL('../..', import.meta.url));
    expect(GUARD_CACHE).toBe(join(root, 'node_modules', '.cache', 'payroll-cfn-guard'));
    expect(readdirSync(GUARD_CACHE).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
  });

  it('fail the synth on a new finding', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Probe');
    // An alarm nobody hears (CT.CLOUDWATCH.PR.1), beside an acknowledged one: the acknowledgment covers only its own.
    const metric = new Metric({ namespace: 'Probe', metricName: 'Probe' });
    const heard = new Alarm(stack, 'Acknowledged', { metric, threshold: 1, evaluationPeriods: 1 });
    Validations.of(heard).acknowledge({ id: 'cdk-validator-cfnguard::cloudwatch_alarm_action_check', reason: 'probe' });
    new Alarm(stack, 'Unheard', { metric, threshold: 1, evaluationPeriods: 1 });
    Validations.of(app).addPlugins(new ControlTowerChecks());
    let message = '';
    try {
      app.synth();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/CT\.CLOUDWATCH\.PR\.1[\s\S]*Probe\/Unheard[\s\S]*cloudwatch_alarm_action_check/);
    expect(message).not.toContain('Probe/Acknowledged');
  });

  it('are each acknowledged with a reason, on something the rule reports, for a rule that exists', () => {
    const rulesDir = join(
      new URL('../../node_modules/@cdklabs/cdk-validator-cfnguard/rules/control-tower/cfn-guard', import.meta.url)
        .pathname,
    );
    const ruleText = readdirSync(rulesDir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.guard'))
      .map((f) => readFileSync(join(rulesDir, f), 'utf8'))
      .join('\n');
    const used = new Set(
      deployments.flatMap(([, d]) => guard(d).suppressedViolations!.map((s) => `${s.acknowledgedAt} ${s.ruleName}`)),
    );
    const acknowledgments: { path: string; rule: string; reason: string }[] = [];
    for (const [, d] of deployments) {
      for (const construct of d.app.node.findAll()) {
        for (const entry of construct.node.metadata) {
          if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
          for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
            const [, rule] = id.split('cdk-validator-cfnguard::');
            if (rule) acknowledgments.push({ path: construct.node.path, rule, reason });
          }
        }
      }
    }
    expect(acknowledgments.length).toBeGreaterThan(20);
    for (const a of acknowledgments) {
      expect(a.reason.length, `${a.path} ${a.rule}`).toBeGreaterThanOrEqual(60);
      expect(ruleText, a.rule).toContain(`rule ${a.rule} when`);
      // No acknowledgment left over from a finding that is gone.
      expect(used, `${a.path} ${a.rule}`).toContain(`${a.path} ${a.rule}`);
    }
  });
});
