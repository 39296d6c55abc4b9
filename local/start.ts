import { rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import type { Server } from 'node:http';
import { setAuditSink } from '../shared/adapters/audit-sink.js';
import { defaultTable, documentClient } from '../shared/adapters/dynamo.js';
import { asFunction, guardTable } from './table-guard.js';
import { startAuditBatcher, type AuditBatcher } from './audit-batcher.js';
import { localCertificate } from './certificate.js';
import { startLocalWorkers, type Worker } from './workers.js';
import { startLocalBankLink } from './bank-link-loop.js';
import { startEngines } from './engines/index.js';
import { createApiServer, createHttpRejectServer, listen } from './server.js';
import {
  dataDir,
  handlerEnvironment,
  reservedLoopbackPorts,
  isAlive,
  localSecrets,
  readState,
  stateFile,
  writeState,
  type StackState,
} from './stack-state.js';

/**
 * `npm start`: the whole service on one machine. Real engines (DynamoDB Local on disk, fauxqs for SQS and S3),
 * the same handlers behind a local HTTPS server, and a plain-HTTP listener that refuses everything. Problems a
 * person can fix (no Java, a busy port, a stack already running) are one line, not a stack trace.
 */
class StartupError extends Error {}

function port(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new StartupError(`${name} must be a port number, got "${raw}"`);
  return n;
}

async function assertPortFree(p: number, variable: string): Promise<void> {
  if (p === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new StartupError(
          err.code === 'EADDRINUSE'
            ? `Port ${p} is already in use: stop whatever uses it, or choose another with ${variable}`
            : `Cannot listen on port ${p}: ${err.message}`,
        ),
      ),
    );
    probe.listen(p, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

async function isPortFree(p: number): Promise<boolean> {
  return assertPortFree(p, '').then(
    () => true,
    () => false,
  );
}

const boundPort = (server: Server) => (server.address() as { port: number }).port;

async function main(): Promise<void> {
  const started = performance.now();
  // Lambda runs Node 22; the SDK's notice about Node 20 concerns this machine only.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const dir = dataDir();
  const httpsPort = port('PAYROLL_HTTPS_PORT', 8443);
  const httpPort = port('PAYROLL_HTTP_PORT', 8080);
  const environment = process.env.PAYROLL_ENVIRONMENT === 'production' ? 'production' : 'sandbox';
  if (process.env.PAYROLL_ENVIRONMENT && !['sandbox', 'production'].includes(process.env.PAYROLL_ENVIRONMENT)) {
    throw new StartupError('PAYROLL_ENVIRONMENT must be sandbox or production');
  }

  const previous = readState(dir);
  if (previous && previous.pid !== process.pid && isAlive(previous.pid)) {
    throw new StartupError(
      `A local stack is already running from ${dir} (pid ${previous.pid}) at ${previous.base_url}`,
    );
  }
  await assertPortFree(httpsPort, 'PAYROLL_HTTPS_PORT');
  await assertPortFree(httpPort, 'PAYROLL_HTTP_PORT');
  // The sandbox bank's port: the one asked for must be free; by default 8022, or any free one when another stack has
  // it (links are re-pointed at each start, so a second stack side by side needs no setting).
  let bankPort = port('PAYROLL_SANDBOX_BANK_PORT', 8022);
  if (process.env.PAYROLL_SANDBOX_BANK_PORT) await assertPortFree(bankPort, 'PAYROLL_SANDBOX_BANK_PORT');
  else if (!(await isPortFree(bankPort))) bankPort = 0;

  const secrets = localSecrets(dir);
  const [tls, engines, bankLink] = await Promise.all([
    localCertificate(dir),
    startEngines({ dataDir: dir }),
    startLocalBankLink({
      dataDir: dir,
      port: bankPort,
      secrets,
      log: (line) => process.stderr.write(`${line}\n`),
    }),
  ]);
  let api: Server | undefined;
  let plain: Server | undefined;
  const workers: Worker[] = [];
  let audit: AuditBatcher | undefined;
  const shutdown = async (code: number) => {
    await Promise.all(
      [api, plain].map(
        (s) =>
          s &&
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
    await Promise.all(workers.map((w) => w.stop()));
    await bankLink.stop();
    await audit?.stop();
    await engines.stop();
    rmSync(stateFile(dir), { force: true });
    process.exit(code);
  };
  try {
    // The handlers read their configuration from the environment, exactly as deployed.
    const partial: Omit<StackState, 'https_port' | 'http_port' | 'base_url'> = {
      version: 1,
      pid: process.pid,
      started_at: new Date().toISOString(),
      environment,
      ...engines.state,
      sandbox_bank: { port: bankLink.bank.port, host_key_fingerprint: bankLink.bank.hostKeyFingerprint },
    };
    Object.assign(
      process.env,
      handlerEnvironment({ ...partial, https_port: httpsPort, http_port: httpPort, base_url: '' }, secrets),
    );
    // The engines' ports are reserved before the listeners open (handlerEnvironment); the listeners' once bound.
    // Each function's table calls are held to its grant, as its IAM role holds it on AWS (local/table-guard.ts).
    guardTable(documentClient());
    // Audit lines are batched into the table in process (deployed, they go through CloudWatch Logs): audit-batcher.ts.
    // For the benchmark that measures what the audit log costs a request: PAYROLL_LOCAL_AUDIT=off drops the lines,
    // =log writes them to stdout as a deployed function does (nothing ingests them; GET /v1/logs stays empty).
    if (process.env.PAYROLL_LOCAL_AUDIT === 'off') {
      setAuditSink(() => undefined);
    } else if (process.env.PAYROLL_LOCAL_AUDIT !== 'log') {
      audit = startAuditBatcher(defaultTable());
      setAuditSink(audit.sink);
    }

    api = createApiServer(tls);
    plain = createHttpRejectServer();
    await listen(api, httpsPort);
    await listen(plain, httpPort);
    const state: StackState = {
      ...partial,
      https_port: boundPort(api),
      http_port: boundPort(plain),
      base_url: `https://localhost:${boundPort(api)}/v1/`,
    };
    process.env.PAYROLL_RESERVED_LOOPBACK_PORTS = reservedLoopbackPorts(state);
    // PAYROLL_LOCAL_WORKERS=external leaves the queues to `npm run workers` in another process.
    if (process.env.PAYROLL_LOCAL_WORKERS !== 'external') workers.push(...(await startLocalWorkers(state)));
    // The local queue engine keeps messages in memory: runs and events left unfinished by the last stop resume here,
    // and deliveries that were waiting in the queue are sent again (same webhook-id). One `now` for all: deliveries
    // the fan-out opens here are newer than it, so they are not taken for lost and sent a second time.
    const now = new Date();
    const sweeps = await import('../functions/processor/resume-stuck-payrolls.js');
    const { resumed } = await asFunction('sweeper', () =>
      sweeps.sweep({ runs: now, events: now, deliveries: now }, now),
    );
    // EventBridge runs the sweeper every 5 minutes on AWS; here it runs every minute.
    const sweeper = setInterval(
      () =>
        void asFunction('sweeper', () => sweeps.handler()).catch((err) =>
          process.stderr.write(`sweeper: ${String(err)}\n`),
        ),
      60_000,
    );
    sweeper.unref();
    // The bank link's passes: deployed, a scheduled worker; here a timer, against the sandbox bank.
    await bankLink.start();
    writeState(dir, state);
    printReady(state, tls.certPath, performance.now() - started, resumed);
  } catch (err) {
    await bankLink.stop();
    await engines.stop();
    throw err;
  }
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      process.stdout.write('\nStopping the local stack…\n');
      void shutdown(0);
    });
  }
}

function printReady(state: StackState, certPath: string, ms: number, resumed: number): void {
  // One write, so a reader that waits for the ready line also has everything printed with it.
  process.stdout.write(
    [
      ...(resumed > 0 ? [`Resumed ${resumed} unfinished payroll run(s) left by the last stop`] : []),
      `Payroll API (${state.environment}) ready at ${state.base_url}  [${Math.round(ms)} ms]`,
      `  plain HTTP on http://localhost:${state.http_port}/ answers 403 https_required`,
      `  Developer dashboard: https://localhost:${state.https_port}/dashboard/ (sign in with an admin token)`,
      `  TLS certificate: ${certPath}`,
      `  DynamoDB Local: ${state.dynamodb_endpoint}  SQS/S3: ${state.sqs_endpoint}`,
      `  Sandbox bank (SFTP): 127.0.0.1:${state.sandbox_bank.port}, host key ${state.sandbox_bank.host_key_fingerprint}`,
      `  data folder: ${dataDir()}`,
      `  Create an organization: npm run --silent admin -- org create --name "Acme" --json`,
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`npm start: ${message}\n`);
  if (!(err instanceof StartupError) && process.env.PAYROLL_DEBUG) console.error(err);
  process.exit(1);
});
