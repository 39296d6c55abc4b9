import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { PayrollFunction } from './payroll-function.js';
import { WEBHOOK_RETRY_ENVIRONMENT } from './webhook-deliverer.js';
import { grantAccess, grantTable, type ServiceResources } from './service-access.js';
import { WORKER_HANDLERS } from '../lambda-functions.js';
import { TABLE_ACCESS } from '../../shared/api/table-access.js';
import { CONSUMER_TIMEOUTS, checkConsumerFits } from '../queue-consumers.js';

/** Messages per invocation. Powertools handles a batch's records in parallel, each succeeding or failing alone. */
export const PROCESSOR_BATCH_SIZE = 10;
/**
 * Concurrent processor invocations the SQS event source may run: a 25,000-employee run is 25 chunks, so 20
 * invocations of up to 10 chunks each take it at once, while leaving the account's concurrency to the API.
 * The event source stops polling at this limit instead of invoking into throttles, so messages are not received
 * (and counted towards maxReceiveCount) for nothing.
 */
export const PROCESSOR_MAX_CONCURRENCY = 20;
/**
 * Concurrent executions reserved for the processor: exactly what its event source may use. Reserved, a burst of API
 * traffic cannot take the concurrency a payroll run needs (the processor would be throttled, its messages received
 * for nothing and counted towards maxReceiveCount); equal to the event source's maximum, the event source never
 * invokes beyond it (AWS: the maximum concurrency must not exceed the reserved concurrency). Lambda keeps at least
 * 100 of the account's executions unreserved: with the deliverer's 10, a deployment reserves 30, which an account
 * at the default quota (1,000) allows many times over; an account still at a new account's lower quota must have it
 * raised (Service Quotas) before the first deploy. Synthesis checks nothing of the account.
 */
export const PROCESSOR_RESERVED_CONCURRENCY = PROCESSOR_MAX_CONCURRENCY;
/** The processor's timeout: the one the payroll queue's visibility timeout is derived from (queue-consumers.ts). */
export const PROCESSOR_TIMEOUT = CONSUMER_TIMEOUTS.payroll;
export const SWEEP_EVERY = Duration.minutes(5);

export interface PayrollProcessorProps {
  readonly resources: ServiceResources;
  /** The payroll queue's visibility timeout (queue-consumers.ts): at least six times the processor's timeout. */
  readonly queueVisibilityTimeout: Duration;
  readonly environment: Record<string, string>;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The payroll pipeline behind the API: the processor consumes the payroll queue (start, chunk and finalize
 * messages, enqueueing the next ones itself) and fans the events of each status change out to the webhook queue;
 * the sweeper, every five minutes, sends `start` again for runs nothing has touched for fifteen and fans out
 * events whose fan-out was interrupted (still in the outbox after a minute).
 *
 * The payroll queue's visibility timeout is six times the processor's timeout (PROCESSOR_TIMEOUT, queue-consumers.ts):
 * Lambda refuses an SQS event source whose queue hides messages for less than the function may run, and AWS advises
 * six times, so a message never reappears (and is processed twice at once) while the event source still holds it,
 * invocation retries after a throttle included. Checked here, on the value the queue was given.
 */
export class PayrollProcessor extends Construct {
  readonly processor: PayrollFunction;
  readonly sweeper: PayrollFunction;
  readonly eventSource: SqsEventSource;
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: PayrollProcessorProps) {
    super(scope, id);
    const { resources } = props;
    const timeout = PROCESSOR_TIMEOUT;
    checkConsumerFits('The payroll processor', props.queueVisibilityTimeout, timeout);
    if (PROCESSOR_MAX_CONCURRENCY > PROCESSOR_RESERVED_CONCURRENCY) {
      throw new Error("The processor's event source may not invoke beyond its reserved concurrency");
    }

    this.processor = new PayrollFunction(this, 'Processor', {
      handler: WORKER_HANDLERS.processor,
      description: 'Payroll processor: start, chunk and finalize messages of the payroll queue',
      environment: props.environment,
      memorySize: 1024,
      timeout,
      reservedConcurrentExecutions: PROCESSOR_RESERVED_CONCURRENCY,
      removalPolicy: props.removalPolicy,
    });
    // Exactly the calls shared/use-cases/process-payroll.ts and the fan-out in events.ts make. Runs and settings
    // are read by key; employees and paystubs go through BatchGet/BatchWrite; markChunkDone and the paystub date
    // bounds are UpdateItem. Each status change writes its events in the same transaction (an Update of the run
    // and a Put per event: IAM authorizes a transaction per contained action, there is no TransactWriteItems
    // action). The fan-out then Queries the organization's webhooks (base table, PK = ORG#…, WEBHOOK# prefix),
    // opens each delivery (a transaction of two Updates) and clears the event's outbox marker (UpdateItem).
    // No Delete, no ConditionCheck, no index.
    grantTable(this.processor, resources, TABLE_ACCESS.processor!);
    // Bank account numbers are decrypted for the NACHA entries; submissions and chunk files are read, chunk and
    // NACHA files written, each NACHA file sealed with a data key of the file key (and opened again, by a finalize
    // that finds its file written); chunk and finalize messages are sent to its own queue, and one delivery message
    // per event and endpoint to the webhook queue.
    for (const access of [
      'kms:decrypt:bank-account',
      'kms:encrypt:disbursement-file',
      'kms:decrypt:disbursement-file',
      'bucket:read',
      'bucket:write',
      'queue:payroll:send',
      'queue:webhooks:send',
    ] as const) {
      grantAccess(this.processor, access, resources);
    }

    // The event source grants the role what consuming takes (ReceiveMessage, DeleteMessage,
    // ChangeMessageVisibility, GetQueueAttributes) on this queue alone.
    this.eventSource = new SqsEventSource(resources.queues.payroll, {
      batchSize: PROCESSOR_BATCH_SIZE,
      reportBatchItemFailures: true,
      maxConcurrency: PROCESSOR_MAX_CONCURRENCY,
    });
    this.processor.function.addEventSource(this.eventSource);

    this.sweeper = new PayrollFunction(this, 'Sweeper', {
      handler: WORKER_HANDLERS.sweeper,
      description:
        'Sweeper: restarts stalled payroll runs, fans out events left in the outbox, re-sends lost deliveries',
      // The deliverer's retry delays: a delivery is only re-sent once it has been idle longer than the longest.
      environment: { ...props.environment, ...WEBHOOK_RETRY_ENVIRONMENT },
      memorySize: 256,
      timeout: Duration.seconds(60),
      removalPolicy: props.removalPolicy,
    });
    // Unfinished runs, undispatched events and stale pending deliveries are the sparse GSI2 partitions
    // ACTIVE_PAYROLLS, UNDISPATCHED_EVENTS and PENDING_DELIVERIES: one Query each on that index. Fanning an event out
    // (events.ts `dispatchEvents`) Queries the organization's webhooks on the base table, opens each delivery (a
    // transaction of two Updates, authorized as UpdateItem) and clears the outbox marker (UpdateItem); re-sending a
    // delivery marks it swept, and abandoning one closes it (UpdateItem, a transaction of Updates). No GetItem,
    // Put or Delete.
    grantTable(this.sweeper, resources, TABLE_ACCESS.sweeper!);
    // Start messages to the payroll queue; delivery messages to the webhook queue.
    grantAccess(this.sweeper, 'queue:payroll:send', resources);
    grantAccess(this.sweeper, 'queue:webhooks:send', resources);
    // A failed sweep is not retried: the next one, five minutes later, does the same work.
    this.sweeper.function.configureAsyncInvoke({ retryAttempts: 0 });

    this.schedule = new Rule(this, 'SweepSchedule', {
      description: 'Every five minutes: resume payroll runs that stopped moving',
      schedule: Schedule.rate(SWEEP_EVERY),
      targets: [new LambdaFunction(this.sweeper.function, { retryAttempts: 2, maxEventAge: SWEEP_EVERY })],
    });
  }
}
