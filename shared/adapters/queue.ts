import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { traced } from './observability.js';

/** Sends JSON messages; batches of ten, with the failed entries of a partial batch sent again. */
export class Queue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly url: string,
  ) {}

  async send(message: unknown, delaySeconds?: number): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.url, MessageBody: JSON.stringify(message), DelaySeconds: delaySeconds }),
    );
  }

  async sendAll(messages: readonly unknown[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      let batch = messages.slice(i, i + 10).map((m, j) => ({ Id: String(j), MessageBody: JSON.stringify(m) }));
      for (let attempt = 0; batch.length > 0; attempt++) {
        if (attempt === 5) throw new Error(`SQS refused ${batch.length} messages after 5 attempts`);
        const out = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: this.url, Entries: batch }));
        const failed = new Set((out.Failed ?? []).map((f) => f.Id));
        batch = batch.filter((e) => failed.has(e.Id));
        if (batch.length > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      }
    }
  }
}

let sqs: SQSClient | undefined;

/** The container's SQS client, traced when tracing is on (observability.ts). */
export function sqsClient(): SQSClient {
  sqs ??= traced(new SQSClient({ maxAttempts: 5 }));
  return sqs;
}
