import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RUNBOOK } from './monitoring.js';
import { ParkingQueue } from './parking-queue.js';

export interface QueueWithDlqProps {
  /** How long a received message stays hidden from other consumers: at least the consumer's timeout. */
  readonly visibilityTimeout: Duration;
  /** Failed receives before a message is moved to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * A work queue and its dead-letter queue (a ParkingQueue: kept two weeks, alarmed on the first message). Both use
 * SQS-managed encryption, for the reason ParkingQueue gives.
 */
export class QueueWithDlq extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps) {
    super(scope, id);

    const parked = new ParkingQueue(this, 'DeadLetter', {
      alarmDescription: `Messages are waiting in the dead-letter queue of ${this.node.path}: inspect them, fix the cause, then redrive. ${RUNBOOK}.`,
      removalPolicy: props.removalPolicy,
    });
    this.deadLetterQueue = parked.queue;
    this.deadLetterAlarm = parked.alarm;

    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
      removalPolicy: props.removalPolicy,
    });
  }
}
