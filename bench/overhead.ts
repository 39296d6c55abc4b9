import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../shared/adapters/dynamo.js';
import { keys } from '../shared/data/keys.js';
import { startLocalStack } from '../test/support/local-stack.js';
import { runLoad, type LoadResult } from './load.js';
import { progress } from './machine.js';

export interface OverheadResult {
  /** GET /v1/employees/{id} with rate limits and the audit log off, on, and both on (the audit as deployed, and stored locally). */
  api: { bare: LoadResult; rateLimited: LoadResult; deployed: LoadResult; full: LoadResult };
  /** The same item read directly from the engine with GetItem at the same concurrency. */
  engine: LoadResult;
}

const CONCURRENCY = 32;
const REQUESTS = 3000;

async function measure(env: Record<string, string>, label: string): Promise<{ api: LoadResult; engine: LoadResult }> {
  const stack = await startLocalStack({ env });
  try {
    const org = await stack.createOrganization('Overhead Co');
    // validate: false, as a stack with rate limits off omits the headers the document requires.
    const created = await stack.request('POST', '/v1/employees', {
      token: org.token,
      validate: false,
      body: {
        first_name: 'Otto',
        last_name: 'Overhead',
        email: 'otto@example.com',
        employment_type: 'full_time',
        pay_group: 'default',
        pay_schedule: 'weekly',
        start_date: '2026-01-05',
        bank_account: { account_number: '12345678', routing_number: '021000021', account_type: 'checking' },
      },
    });
    const id = created.body.data.employee_id as string;
    const agent = new Agent({
      keepAlive: true,
      maxSockets: CONCURRENCY,
      ca: readFileSync(join(stack.dir, 'tls', 'cert.pem')),
    });
    const get = () =>
      new Promise<boolean>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            servername: 'localhost',
            port: stack.state.https_port,
            path: `/v1/employees/${id}`,
            agent,
            headers: { Authorization: `Bearer ${org.token}` },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode === 200));
          },
        );
        req.on('error', reject);
        req.end();
      });
    progress(`overhead: ${label}: warm-up`);
    await runLoad(CONCURRENCY, 300, get);
    progress(`overhead: ${label}: ${REQUESTS} requests at ${CONCURRENCY} connections`);
    const api = await runLoad(CONCURRENCY, REQUESTS, get);
    const doc = createDocumentClient(
      new DynamoDBClient({
        endpoint: stack.state.dynamodb_endpoint,
        region: stack.state.region,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const key = keys.employee(org.organization_id, id);
    await runLoad(CONCURRENCY, 300, async () =>
      Boolean((await doc.send(new GetCommand({ TableName: stack.state.table_name, Key: key }))).Item),
    );
    const engine = await runLoad(CONCURRENCY, REQUESTS, async () =>
      Boolean(
        (await doc.send(new GetCommand({ TableName: stack.state.table_name, Key: key, ConsistentRead: true }))).Item,
      ),
    );
    agent.destroy();
    return { api, engine };
  } finally {
    await stack.stop();
  }
}

/** Four stacks in turn, differing only in what is measured: rate limits off/on, the audit log off, as deployed, stored. */
export async function benchOverhead(): Promise<OverheadResult> {
  const off = {
    PAYROLL_RATE_LIMIT_READ: '0',
    PAYROLL_RATE_LIMIT_PAYROLL_WRITE: '0',
    PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE: '0',
    PAYROLL_LOCAL_AUDIT: 'off',
  };
  const limits = {
    PAYROLL_RATE_LIMIT_READ: '1000000',
    PAYROLL_RATE_LIMIT_PAYROLL_WRITE: '1000000',
    PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE: '1000000',
  };
  const bare = await measure(off, 'no rate limit, no audit log');
  const rateLimited = await measure({ ...limits, PAYROLL_LOCAL_AUDIT: 'off' }, 'rate limit, no audit log');
  const deployed = await measure(
    { ...limits, PAYROLL_LOCAL_AUDIT: 'log' },
    'rate limit and audit log line (as deployed)',
  );
  const full = await measure(limits, 'rate limit and audit log stored in the same engine');
  return {
    api: { bare: bare.api, rateLimited: rateLimited.api, deployed: deployed.api, full: full.api },
    engine: full.engine,
  };
}
