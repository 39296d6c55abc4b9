import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { controlTower } from '../names.js';

export interface ParkingQueueProps {
  /** What the alarm tells the operator to do with a parked message. */
  readonly alarmDescription: string;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * Where work that failed for good waits for an operator: a dead-letter queue, or a Lambda failure destination.
 * Messages are kept as long as SQS allows (two weeks to fix the cause and redrive), and an alarm fires as soon
 * as one arrives, since each is a payroll, a webhook or an audit line that will not happen on its own.
 *
 * SQS-managed encryption rather than the service's KMS key: with the key, every producer would need kms:Decrypt
 * on it, and that key also unwraps bank account numbers; messages carry ids, not secrets.
 */
export class ParkingQueue extends Construct {
  readonly queue: Queue;
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string, props: ParkingQueueProps) {
    super(scope, id);
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.queue).acknowledge({
      id: controlTower('sqs_dlq_check'),
      reason:
        'This queue is where failed work is parked for an operator (a dead-letter queue or a failure destination); nothing consumes it automatically, so a dead-letter queue behind it would never receive anything.',
    });
    this.alarm = new Alarm(this, 'Alarm', {
      alarmDescription: props.alarmDescription,
      metric: this.queue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // SQS stops publishing metrics for an idle queue; an empty queue is the healthy state, not an unknown one.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
