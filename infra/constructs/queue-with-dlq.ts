import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface QueueWithDlqProps {
  /** How long a received message stays hidden from other consumers: at least the consumer's timeout. */
  readonly visibilityTimeout: Duration;
  /** Failed receives before a message is moved to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * A work queue, its dead-letter queue, and an alarm that fires as soon as one message is dead-lettered: a
 * message there is a payroll or webhook that will not happen without an operator.
 *
 * Both queues use SQS-managed encryption rather than the service's KMS key. With the key, every producer would
 * need kms:Decrypt on it, and that key also unwraps bank account numbers; messages carry ids, not secrets.
 */
export class QueueWithDlq extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps) {
    super(scope, id);

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS allows, so an operator has two weeks to inspect and redrive.
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });

    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
      removalPolicy: props.removalPolicy,
    });

    this.deadLetterAlarm = new Alarm(this, 'DeadLetterAlarm', {
      alarmDescription: `Messages are waiting in the dead-letter queue of ${this.node.path}: inspect them, fix the cause, then redrive.`,
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // SQS stops publishing metrics for an idle queue; an empty DLQ is the healthy state, not an unknown one.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
