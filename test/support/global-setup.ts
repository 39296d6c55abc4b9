import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/engines/dynamodb-local.js';
import { startFauxqsEngine } from '../../local/engines/fauxqs.js';
import { DEFAULT_REGION } from '../../local/engines/provision.js';
// Type-only: engines.ts imports vitest's runtime, which a globalSetup must not load. It also declares ProvidedContext.
import type { TestEngines } from './engines.js';

/**
 * One in-memory DynamoDB Local and one fauxqs for the whole run, shared by every test file through `inject`.
 * Tests never share resources on them: each makes its own uniquely named table, queues and bucket
 * (test/support/engines.ts), which is what lets files and tests run in parallel.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [dynamo, fauxqs] = await Promise.allSettled([
    startDynamoDbLocal(),
    startFauxqsEngine({ region: DEFAULT_REGION }),
  ]);
  if (dynamo.status === 'rejected' || fauxqs.status === 'rejected') {
    if (dynamo.status === 'fulfilled') await dynamo.value.stop();
    if (fauxqs.status === 'fulfilled') await fauxqs.value.stop();
    throw dynamo.status === 'rejected' ? dynamo.reason : (fauxqs as PromiseRejectedResult).reason;
  }
  const engines: TestEngines = {
    region: DEFAULT_REGION,
    dynamodbEndpoint: dynamo.value.endpoint,
    sqsEndpoint: fauxqs.value.endpoint,
    s3Endpoint: fauxqs.value.endpoint,
  };
  project.provide('engines', engines);
  return async () => {
    await Promise.all([dynamo.value.stop(), fauxqs.value.stop()]);
  };
}
