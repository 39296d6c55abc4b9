import { ArnFormat, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { type CfnLogGroup, FilterPattern, type IFilterPattern } from 'aws-cdk-lib/aws-logs';
import { LambdaDestination } from 'aws-cdk-lib/aws-logs-destinations';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RUNBOOK } from './monitoring.js';
import { ParkingQueue } from './parking-queue.js';
import { PayrollFunction } from './payroll-function.js';
import { grantTable, type ServiceResources } from './service-access.js';
import { WORKER_HANDLERS } from '../lambda-functions.js';
import { TABLE_ACCESS } from '../../shared/api/table-access.js';
import { controlTower } from '../names.js';

/** The audit lines of shared/adapters/audit-sink.ts, and nothing else a function logs. */
export const AUDIT_FILTER_PATTERN: IFilterPattern = FilterPattern.stringValue('$.audit_event', '=', 'request');

/** Lambda's own retries of an asynchronous invocation (the most it allows), before the delivery is parked. */
export const AUDIT_INGEST_RETRY_ATTEMPTS = 2;

export interface AuditLogIngestionProps {
  readonly resources: Pick<ServiceResources, 'table' | 'key'>;
  /** The functions whose audit lines are ingested: every API route function. */
  readonly sources: readonly PayrollFunction[];
  /** The prefix every source's log group name has, and no other log group of the account: CloudWatch Logs may invoke the function from these alone. */
  readonly sourceLogGroupPrefix: string;
  readonly environment: Record<string, string>;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The deployed audit pipeline. A request only writes its audit line to its own log (no table write on the
 * request path); CloudWatch Logs keeps it durably and delivers the matching lines, batched, to the ingest
 * function through a subscription filter on each route's log group.
 *
 * CloudWatch Logs invokes a Lambda destination asynchronously. A delivery the function fails is retried by Lambda,
 * and one that still fails is parked in the failure queue with its full payload (`requestPayload`), where an alarm
 * calls an operator, who invokes the function with that payload again once the cause is fixed (writes are
 * idempotent). Nothing is dropped silently.
 *
 * The subscriptions live in the same stack as the log groups: a route removed from the table takes its
 * subscription with it in the same deployment, with no cross-stack export left to untangle.
 */
export class AuditLogIngestion extends Construct {
  readonly function: PayrollFunction;
  readonly failures: Queue;
  readonly failureAlarm: Alarm;

  constructor(scope: Construct, id: string, props: AuditLogIngestionProps) {
    super(scope, id);

    const parked = new ParkingQueue(this, 'Failures', {
      alarmDescription: `Audit log deliveries failed to reach the table and wait in ${this.node.path}/Failures: fix the cause, then invoke the ingest function again with each message's requestPayload. ${RUNBOOK}.`,
      removalPolicy: props.removalPolicy,
    });
    this.failures = parked.queue;
    this.failureAlarm = parked.alarm;
    Validations.of(this.failures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the failure destination of the audit ingest function; nothing consumes it automatically, so a dead-letter queue behind it would never receive anything.',
    });

    this.function = new PayrollFunction(this, 'Ingest', {
      handler: WORKER_HANDLERS.auditIngest,
      description: "Writes the audit lines of the API functions' logs to the table",
      environment: props.environment,
      removalPolicy: props.removalPolicy,
    });
    // Least privilege: the function only ever writes audit lines, in batches.
    grantTable(this.function, props.resources, TABLE_ACCESS['audit-ingest']!);
    this.function.function.configureAsyncInvoke({
      retryAttempts: AUDIT_INGEST_RETRY_ATTEMPTS,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(this.failures),
    });

    // One invoke permission for all the subscriptions, scoped to the sources' log group prefix, rather than one per
    // log group: the API stack stays well within CloudFormation's 500 resources.
    const stack = Stack.of(this);
    this.function.function.addPermission('LogsInvoke', {
      principal: new ServicePrincipal('logs.amazonaws.com'),
      sourceAccount: stack.account,
      sourceArn: stack.formatArn({
        service: 'logs',
        resource: 'log-group',
        resourceName: `${props.sourceLogGroupPrefix}*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    });
    const permission = this.function.function.node.findChild('LogsInvoke');
    Validations.of(permission).acknowledge({
      id: controlTower('lambda_function_public_access_prohibited_check'),
      reason:
        "The permission names CloudWatch Logs with this account (SourceAccount) and this stack's route log groups (SourceArn), both rendered as references the rule does not read as values; it admits no other caller.",
    });
    // Without CDK's own permission (addPermissions: false) CDK no longer orders each subscription after the one
    // above, and CloudWatch Logs refuses a subscription it cannot yet invoke ("Could not execute the lambda
    // function"): a fresh stack could fail on that race. So each subscription depends on the permission.
    const destination = new LambdaDestination(this.function.function, { addPermissions: false });
    for (const source of props.sources) {
      if (!(source.logGroup.node.defaultChild as CfnLogGroup).logGroupName?.startsWith(props.sourceLogGroupPrefix)) {
        throw new Error(
          `${source.node.path}: its log group is not named under ${props.sourceLogGroupPrefix}, so the ingest function could not be invoked from it`,
        );
      }
      source.logGroup
        .addSubscriptionFilter('AuditLog', {
          destination,
          filterPattern: AUDIT_FILTER_PATTERN,
          filterName: 'audit-log',
        })
        .node.addDependency(permission);
    }
  }
}
