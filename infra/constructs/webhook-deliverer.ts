import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { MAX_DELIVERY_ATTEMPTS } from '../../shared/domain/events.js';
import { PayrollFunction } from './payroll-function.js';
import { grantAccess, grantTable, type ServiceResources } from './service-access.js';
import { WORKER_HANDLERS } from '../lambda-functions.js';
import { TABLE_ACCESS } from '../../shared/api/table-access.js';
import { CONSUMER_TIMEOUTS, checkConsumerFits } from '../queue-consumers.js';

/** Messages per invocation; Powertools delivers a batch's records in parallel, each succeeding or failing alone. */
export const DELIVERER_BATCH_SIZE = 10;
/**
 * Concurrent deliverer invocations the SQS event source may run: up to 100 deliveries in flight at once. One slow
 * customer endpoint holds one record for its 10 s, not the queue; the cap keeps a burst of events from taking
 * the account's concurrency away from the API.
 */
export const DELIVERER_MAX_CONCURRENCY = 10;
/**
 * Concurrent executions reserved for the deliverer: exactly what its event source may use, for the reasons
 * PROCESSOR_RESERVED_CONCURRENCY gives (payroll-processor.ts): API traffic cannot starve deliveries, and a burst of
 * events cannot take more than this from the API.
 */
export const DELIVERER_RESERVED_CONCURRENCY = DELIVERER_MAX_CONCURRENCY;
/**
 * The records of a batch are delivered in parallel, so an invocation lasts about one delivery: the POST, whose
 * 10 s budget (`deliverEvent`'s default) covers DNS, connect, TLS, request and response, plus the reads before it
 * (endpoint, delivery, event, the secret's KMS unwrap) and the writes after it, with the SDK's retries. 30 s
 * covers that with room to spare. The webhook queue's visibility timeout is six times it (queue-consumers.ts, where
 * the number lives; checked below and in the tests).
 */
export const DELIVERER_TIMEOUT: Duration = CONSUMER_TIMEOUTS.webhooks;
/** Seconds before the 2nd and the 3rd attempt (PAYROLL_WEBHOOK_RETRY_DELAYS_S); the handler sets them as the message's visibility. */
export const WEBHOOK_RETRY_DELAYS_S = [30, 300] as const;

/**
 * The retry delays as the handlers read them: the deliverer waits them out, and the sweeper must know them too, to
 * re-send only a delivery idle for longer than the longest.
 */
export const WEBHOOK_RETRY_ENVIRONMENT = { PAYROLL_WEBHOOK_RETRY_DELAYS_S: WEBHOOK_RETRY_DELAYS_S.join(',') };
/** The longest visibility timeout SQS accepts, so the longest retry delay ChangeMessageVisibility can set. */
const SQS_MAX_VISIBILITY_S = 12 * 3600;
/**
 * The fewest receives the webhook queue may allow: AWS advises at least 5 for a queue a Lambda event source
 * consumes, as a throttled invocation returns its messages and counts a receive; and more than the attempts, since
 * a receive that faults before its POST is not one.
 */
export const WEBHOOK_MIN_RECEIVES = Math.max(5, MAX_DELIVERY_ATTEMPTS + 1);

export interface WebhookDelivererProps {
  readonly resources: ServiceResources;
  /** The webhook queue's visibility timeout (queue-consumers.ts): at least six times the deliverer's timeout. */
  readonly queueVisibilityTimeout: Duration;
  /** The webhook queue's maxReceiveCount (QUEUE_DEFINITIONS): the attempts, and room for receives that are not. */
  readonly maxReceiveCount: number;
  readonly environment: Record<string, string>;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The webhook deliverer: consumes the webhook-delivery queue (one message per event and endpoint, sent by whatever
 * records events: the processor, the sweeper, submit, cancel and redeliver) and POSTs each event, signed, to its
 * endpoint.
 *
 * Retries ride on the queue; the attempts are counted in the delivery record. A failed POST sets the message's
 * visibility to the next retry delay itself (ChangeMessageVisibility) and reports the record failed, so the message
 * comes back after 30 s, then 300 s; the third failed POST closes the delivery `failed` and the message is
 * acknowledged. A receive that makes no POST (a throttled invocation, a fault before the POST) spends no attempt,
 * only a receive: the queue's maxReceiveCount must leave room for those (at least WEBHOOK_MIN_RECEIVES), and what
 * outlives them all is in real trouble, for the dead-letter queue and its alarm. Hence the checks.
 *
 * Not in a VPC, deliberately: it calls customers' endpoints on the internet, and a Lambda function outside a VPC
 * reaches the internet without a NAT gateway. What keeps it from being pointed at anything else (SSRF) is in the
 * code, not the network: shared/adapters/webhook-url.ts resolves the endpoint's name once, refuses unless every
 * address is public (deployed, even in a sandbox: 127.0.0.1:9001 in a Lambda is the runtime API), connects to that
 * pinned address and never follows redirects. The function's role is its only other reach (table, key, its queue).
 */
export class WebhookDeliverer extends Construct {
  readonly deliverer: PayrollFunction;
  readonly eventSource: SqsEventSource;

  constructor(scope: Construct, id: string, props: WebhookDelivererProps) {
    super(scope, id);
    const { resources } = props;
    checkConsumerFits('The webhook deliverer', props.queueVisibilityTimeout, DELIVERER_TIMEOUT);
    if (DELIVERER_MAX_CONCURRENCY > DELIVERER_RESERVED_CONCURRENCY) {
      throw new Error("The deliverer's event source may not invoke beyond its reserved concurrency");
    }
    if (props.maxReceiveCount < WEBHOOK_MIN_RECEIVES) {
      throw new Error(
        `The webhook queue's maxReceiveCount (${props.maxReceiveCount}) must be at least ${WEBHOOK_MIN_RECEIVES}: the ${MAX_DELIVERY_ATTEMPTS} delivery attempts and receives that make no attempt (throttles, faults)`,
      );
    }
    if (
      WEBHOOK_RETRY_DELAYS_S.length !== MAX_DELIVERY_ATTEMPTS - 1 ||
      WEBHOOK_RETRY_DELAYS_S.some((d) => d < 0 || d > SQS_MAX_VISIBILITY_S)
    ) {
      throw new Error(
        `One retry delay per attempt after the first, each 0 to ${SQS_MAX_VISIBILITY_S} s; got ${WEBHOOK_RETRY_DELAYS_S.join(', ')}`,
      );
    }

    this.deliverer = new PayrollFunction(this, 'Deliverer', {
      handler: WORKER_HANDLERS.deliverer,
      description: 'Webhook deliverer: POSTs each event of the webhook-delivery queue, signed, to its endpoint',
      environment: { ...props.environment, ...WEBHOOK_RETRY_ENVIRONMENT },
      // Mostly waiting on customers' endpoints, and the wait is billed by memory.
      memorySize: 256,
      timeout: DELIVERER_TIMEOUT,
      reservedConcurrentExecutions: DELIVERER_RESERVED_CONCURRENCY,
      removalPolicy: props.removalPolicy,
      // No `vpc`: see the class comment.
    });

    // Exactly what shared/use-cases/events.ts `deliverEvent` calls: the endpoint, the delivery and the event are read
    // by key (GetItem); recordAttempt is a transaction of Updates (the delivery, the event, the endpoint's failure
    // count), which IAM authorizes as dynamodb:UpdateItem (there is no dynamodb:TransactWriteItems action);
    // pauseIfUnreliable is UpdateItem. No Query (it reads no lists), no Put or Delete, no index.
    grantTable(this.deliverer, resources, TABLE_ACCESS.deliverer!);
    // The endpoint's signing secrets are envelope-encrypted under the key; unwrapping them is kms:Decrypt.
    grantAccess(this.deliverer, 'kms:decrypt:webhook-secret', resources);
    // The handler sets each retry's delay itself. The event source below grants ChangeMessageVisibility too, but for
    // its own use; this statement is the handler's, and stays if the event source's grants ever change.
    // Not 'queue:webhooks:send': the deliverer never enqueues (only the fan-out does), so it gets no SendMessage.
    this.deliverer.addToAccessPolicy(
      new PolicyStatement({
        sid: 'WebhookQueueRetryDelay',
        actions: ['sqs:ChangeMessageVisibility'],
        resources: [resources.queues.webhooks.queueArn],
      }),
    );
    this.deliverer.function.addEnvironment('WEBHOOK_QUEUE_URL', resources.queues.webhooks.queueUrl);

    // The event source grants what consuming takes (ReceiveMessage, DeleteMessage, ChangeMessageVisibility,
    // GetQueueAttributes, GetQueueUrl) on this queue alone.
    this.eventSource = new SqsEventSource(resources.queues.webhooks, {
      batchSize: DELIVERER_BATCH_SIZE,
      reportBatchItemFailures: true,
      maxConcurrency: DELIVERER_MAX_CONCURRENCY,
    });
    this.deliverer.function.addEventSource(this.eventSource);
  }
}
