import { Aws, CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  type MetricOptions,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { AnyPrincipal, Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC_NAMES, SERVICE_NAME } from '../../shared/adapters/metric-names.js';
import type { PayrollFunction } from './payroll-function.js';

/**
 * When the alarms fire (docs/deploy.md, "Alarms and runbook", says what to do about each):
 * - `api5xxPercent`: more than 5 % of a 5-minute window's requests answered 5xx, once the window has at least
 *   `apiMinRequests` requests (below that one failed request out of three is noise, not an outage); with fewer
 *   requests, `apiMinErrors` 5xx answers in the window page on their own, so a quiet API failing every request pages.
 * - `apiP99LatencyMs`: p99 above 10 s for two 5-minute windows. The slowest requests measured (a 25,000-employee
 *   submit, a page of 100 paystubs) take 4-5 s; at 10 s requests are closing on the 29 s integration timeout.
 * - `payrollQueueAgeSeconds`: the oldest payroll message 10 minutes old. A healthy message (start, chunk of 1,000
 *   employees, finalize) is received within seconds and deleted once processed, well inside a minute; an attempt
 *   takes at most the processor's 5-minute timeout, and a message that failed or timed out stays invisible for the
 *   queue's 30-minute visibility timeout (six times the processor's timeout, queue-consumers.ts) and keeps ageing
 *   meanwhile. So 600 s, above any attempt in progress and below the visibility timeout (the stateful stack checks
 *   both), pages during a stuck message's first failed attempt, before it is even retried, instead of after its 5
 *   receives (5 × 30 minutes) have taken it to the dead-letter queue.
 * - `tableThrottledMinutes`: throttled reads or writes in 3 of 5 minutes. The SDK retries a throttled request, so
 *   one throttled minute costs latency; throttling that lasts is a hot partition or a limit retries do not absorb.
 * - any Lambda error or throttle, any message parked in a dead-letter or failure queue, any run ending `failed`.
 */
export const ALARM_THRESHOLDS = {
  api5xxPercent: 5,
  apiMinRequests: 20,
  apiMinErrors: 5,
  apiP99LatencyMs: 10_000,
  payrollQueueAgeSeconds: 600,
  tableThrottledMinutes: 3,
} as const;

const FIVE_MINUTES = Duration.minutes(5);
const ONE_MINUTE = Duration.minutes(1);
/** Where an alarm's description sends whoever it pages. */
export const RUNBOOK = 'Runbook: docs/deploy.md, "Alarms and runbook"';

export interface AlarmTopicProps {
  /** The deployment's name (names.ts `deploymentName`), for the topic's display name. */
  readonly deployment: string;
  /** `-c alarmEmail=ops@example.com`: subscribed to the topic (SNS mails a confirmation link first). */
  readonly email?: string;
}

/**
 * The one topic every alarm of a deployment notifies, in the stateful stack so that a subscription survives
 * redeploying or tearing down the API and workers stacks. Encrypted with a key of its own, not the service key:
 * CloudWatch must be allowed to use the topic's key, and the service key unwraps bank account numbers.
 */
export function alarmTopic(scope: Construct, id: string, props: AlarmTopicProps): Topic {
  // Protects notifications in transit through SNS, nothing at rest: deleted with the stack, whatever the environment.
  const key = new Key(scope, `${id}Key`, {
    description: `${props.deployment}: encrypts the alarm topic`,
    enableKeyRotation: true,
    pendingWindow: Duration.days(7),
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const fromAlarms = {
    StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
    ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:*` },
  };
  const cloudWatch = new ServicePrincipal('cloudwatch.amazonaws.com');
  // CloudWatch publishes to an encrypted topic only with the key's data keys.
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [cloudWatch],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: fromAlarms,
    }),
  );
  // CDK's default key policy delegates kms:* to the account; no one needs to create grants on this key.
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'GrantsForAwsServicesOnly',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['kms:CreateGrant'],
      resources: ['*'],
      conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
    }),
  );
  const topic = new Topic(scope, id, {
    displayName: `${props.deployment} alarms`,
    masterKey: key,
    enforceSSL: true,
  });
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [cloudWatch],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: fromAlarms,
    }),
  );
  if (props.email) topic.addSubscription(new EmailSubscription(props.email));
  new CfnOutput(scope, `${id}Arn`, { value: topic.topicArn, description: 'Subscribe whoever is on call here' });
  return topic;
}

/** The business metric `name` of the deployment whose namespace is `namespace` (shared/adapters/metric-names.ts). */
export function businessMetric(namespace: string, name: string): Metric {
  return new Metric({ namespace, metricName: name, dimensionsMap: { service: SERVICE_NAME }, statistic: 'Sum' });
}

/** Throttled reads and writes of the table and of each of its indexes, summed. */
export function tableThrottles(table: ITable, indexes: readonly string[], period: Duration): MathExpression {
  const usingMetrics: Record<string, IMetric> = {};
  for (const [i, index] of [undefined, ...indexes].entries()) {
    for (const kind of ['Read', 'Write']) {
      usingMetrics[`${kind.toLowerCase()}${i}`] = new Metric({
        namespace: 'AWS/DynamoDB',
        metricName: `${kind}ThrottleEvents`,
        dimensionsMap: { TableName: table.tableName, ...(index && { GlobalSecondaryIndexName: index }) },
        statistic: 'Sum',
        period,
      });
    }
  }
  return new MathExpression({
    // SUM of the list, not a + b: DynamoDB publishes a throttle metric only when something was throttled, and the
    // sum of a list skips the series with no datapoint where `+` would give none at all.
    expression: `SUM([${Object.keys(usingMetrics).join(', ')}])`,
    usingMetrics,
    period,
    label: 'Throttled reads and writes (table and indexes)',
  });
}

/**
 * The alarms of one stack, each notifying the deployment's topic when it fires and when it clears (but
 * `PayrollQueueAge`, which notifies only when it fires). A stack makes one and hands it what it owns; an alarm lives
 * beside what it watches, so it comes and goes with it.
 */
export class Alarms extends Construct {
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, topic: ITopic) {
    super(scope, id);
    this.action = new SnsAction(topic);
  }

  /** Sends an alarm made elsewhere (a dead-letter queue's) to the topic, firing and clearing. */
  notify(...alarms: Alarm[]): void {
    for (const alarm of alarms) {
      alarm.addAlarmAction(this.action);
      alarm.addOkAction(this.action);
    }
  }

  /** Errors and throttles of each function: any unhandled error (the API's handlers answer 500 without one) or throttle. */
  functions(functions: readonly PayrollFunction[]): void {
    for (const fn of functions) {
      const name = `${fn.handler} (${fn.node.path})`;
      this.add(`${fn.node.id}Errors`, fn.function.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }), 1, {
        description: `${name} threw, timed out or crashed.`,
      });
      this.add(`${fn.node.id}Throttles`, fn.function.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }), 1, {
        description: `${name} was throttled: its reserved concurrency, or the account's or region's concurrency, ran out.`,
      });
    }
  }

  /** The stage's 5xx rate and p99 latency. */
  api(stage: Stage): void {
    const { api5xxPercent, apiMinRequests, apiMinErrors, apiP99LatencyMs } = ALARM_THRESHOLDS;
    // The API's handlers answer 500 without throwing (no Lambda error): on a quiet API, only the errors' count pages.
    const rate = new MathExpression({
      expression: `IF(requests >= ${apiMinRequests}, 100 * errors / requests, IF(errors >= ${apiMinErrors}, 100, 0))`,
      usingMetrics: {
        errors: stage.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
        requests: stage.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' }),
      },
      period: FIVE_MINUTES,
      label: '5xx %',
    });
    this.add('Api5xxRate', rate, api5xxPercent, {
      description: `More than ${api5xxPercent} % of the API's requests answered 5xx in 5 minutes (or ${apiMinErrors} 5xx among fewer than ${apiMinRequests} requests).`,
      strictlyAbove: true,
    });
    this.add('ApiLatencyP99', stage.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }), apiP99LatencyMs, {
      description: `The API's p99 latency stayed above ${apiP99LatencyMs / 1000} s for 10 minutes.`,
      periods: 2,
      strictlyAbove: true,
    });
  }

  /** The age of the payroll queue's oldest message (ALARM_THRESHOLDS.payrollQueueAgeSeconds says why 10 minutes). */
  payrollQueueAge(queue: IQueue): void {
    const age = queue.metricApproximateAgeOfOldestMessage({ period: ONE_MINUTE, statistic: 'Maximum' });
    // No OK action: SQS leaves a message received three times or more out of ApproximateAgeOfOldestMessage (the
    // metric then follows the next-oldest message), so on a poison message (30-minute visibility timeout, 5 receives)
    // this alarm fires at ~10 minutes and clears at ~an hour while the run is still stuck: an "OK" mail would be false.
    // Only the payroll DLQ alarm and GET /v1/payroll/{id} tell that the run is done.
    this.add('PayrollQueueAge', age, ALARM_THRESHOLDS.payrollQueueAgeSeconds, {
      description: `A payroll message has waited ${ALARM_THRESHOLDS.payrollQueueAgeSeconds / 60} minutes: a run is stuck.`,
      okAction: false,
    });
  }

  tableThrottles(table: ITable, indexes: readonly string[]): void {
    const { tableThrottledMinutes } = ALARM_THRESHOLDS;
    this.add('TableThrottles', tableThrottles(table, indexes, ONE_MINUTE), 1, {
      description: `The table throttled reads or writes in ${tableThrottledMinutes} of the last 5 minutes.`,
      periods: 5,
      datapoints: tableThrottledMinutes,
    });
  }

  /**
   * Any run ending `failed` (PayrollsFailed): the processor gave up on it (an error on its message's last receive, a
   * disbursement file that cannot be written) or, in a sandbox, `simulate:fail`. Returned deposits never fail a run.
   */
  payrollsFailed(namespace: string): void {
    const failed = businessMetric(namespace, METRIC_NAMES.payrollsFailed).with({ period: FIVE_MINUTES });
    this.add('PayrollsFailed', failed, 1, { description: 'A payroll run ended failed: its employees were not paid.' });
  }

  /**
   * An alarm at or above `threshold` (strictly above if asked). No datapoint is healthy: Lambda, SQS, DynamoDB and
   * the business metrics publish nothing while nothing happens.
   */
  private add(
    id: string,
    metric: IMetric,
    threshold: number,
    opts: {
      description: string;
      periods?: number;
      datapoints?: number;
      strictlyAbove?: boolean;
      /** `false`: the topic hears only that it fired, not that it cleared. */
      okAction?: boolean;
    },
  ): Alarm {
    const alarm = new Alarm(this, id, {
      metric,
      threshold,
      comparisonOperator: opts.strictlyAbove
        ? ComparisonOperator.GREATER_THAN_THRESHOLD
        : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: opts.periods ?? 1,
      datapointsToAlarm: opts.datapoints ?? opts.periods ?? 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `${opts.description} ${RUNBOOK}, ${id}.`,
    });
    if (opts.okAction === false) alarm.addAlarmAction(this.action);
    else this.notify(alarm);
    return alarm;
  }
}

export interface OperationsDashboardProps {
  /** The deployment's name: the dashboard's, and the namespace of its business metrics. */
  readonly deployment: string;
  /** The REST API's name and its stage's: literals, which the dashboard needs no import for. */
  readonly api: { readonly name: string; readonly stage: string };
  readonly functions: readonly PayrollFunction[];
  /** The work queues, by label: their depth and the age of their oldest message. */
  readonly queues: Readonly<Record<string, IQueue>>;
  /** The dead-letter and failure queues, by label: their depth. */
  readonly parked: Readonly<Record<string, IQueue>>;
  readonly table: ITable;
  readonly indexes: readonly string[];
}

/**
 * One CloudWatch dashboard per deployment with the figures the alarms watch, and the business metrics. It reads
 * names from every other stack, so it lives in a stack of its own that holds nothing else: if an import ever blocks
 * a deploy of the API or workers stack, destroying this stack loses nothing.
 */
export class OperationsDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    const graph = (title: string, left: IMetric[], width = 8) => new GraphWidget({ title, left, width, height: 6 });
    const perFunction = (title: string, metricOf: (fn: PayrollFunction) => IMetric) =>
      graph(title, props.functions.map(metricOf));
    const depth = (queues: Readonly<Record<string, IQueue>>) =>
      Object.entries(queues).map(([label, q]) =>
        q.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', label }),
      );
    const sum = { statistic: 'Sum', period: FIVE_MINUTES };
    const api = (metricName: string, options: MetricOptions) =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiName: props.api.name, Stage: props.api.stage },
        ...options,
      });

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: props.deployment });
    this.dashboard.addWidgets(
      graph('API requests', [api('Count', { ...sum, label: 'requests' })]),
      graph('API 4xx and 5xx', [api('4XXError', { ...sum, label: '4xx' }), api('5XXError', { ...sum, label: '5xx' })]),
      graph('API latency (ms)', [
        api('Latency', { statistic: 'p50', label: 'p50' }),
        api('Latency', { statistic: 'p99', label: 'p99' }),
        api('IntegrationLatency', { statistic: 'p99', label: 'integration p99' }),
      ]),
    );
    this.dashboard.addWidgets(
      perFunction('Function errors', (fn) => fn.function.metricErrors({ ...sum, label: fn.handler })),
      perFunction('Function throttles', (fn) => fn.function.metricThrottles({ ...sum, label: fn.handler })),
      perFunction('Function duration p99 (ms)', (fn) =>
        fn.function.metricDuration({ statistic: 'p99', label: fn.handler }),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Age of the oldest message (s)',
        Object.entries(props.queues).map(([label, q]) =>
          q.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', label }),
        ),
      ),
      graph('Messages waiting', depth(props.queues)),
      graph('Parked: dead-letter and failure queues', depth(props.parked)),
    );
    this.dashboard.addWidgets(
      graph('Table throttles', [tableThrottles(props.table, props.indexes, FIVE_MINUTES)]),
      ...Object.values(METRIC_NAMES).map((name) =>
        graph(name, [businessMetric(props.deployment, name).with({ period: FIVE_MINUTES, label: name })], 4),
      ),
    );
    new CfnOutput(scope, 'DashboardUrl', {
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${props.deployment}`,
      description: "The deployment's CloudWatch dashboard",
    });
  }
}
