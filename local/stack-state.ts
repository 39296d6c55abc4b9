import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The local stack records where its engines listen in `<data dir>/stack.json`, so the admin CLI and tests
 * started with the same PAYROLL_DATA_DIR find them. Secrets the local stack needs (the master key that stands in
 * for KMS, the page-token signing secret) are made once and kept in `<data dir>/secrets.json`, mode 0600.
 */
export interface StackState {
  version: 1;
  pid: number;
  started_at: string;
  region: string;
  table_name: string;
  dynamodb_endpoint: string;
  /** fauxqs serves SQS and S3 on one endpoint. */
  sqs_endpoint: string;
  s3_endpoint: string;
  bucket: string;
  queues: { payroll: string; payroll_dlq: string; webhooks: string; webhooks_dlq: string };
  https_port: number;
  http_port: number;
  base_url: string;
  environment: 'sandbox' | 'production';
  /** The sandbox bank (an SFTP server on loopback) that new sandbox organizations are linked to. */
  sandbox_bank: { port: number; host_key_fingerprint: string };
}

export interface LocalSecrets {
  master_key: string;
  signing_secret: string;
}

export function dataDir(): string {
  return resolve(process.env.PAYROLL_DATA_DIR || '.data');
}

export const stateFile = (dir: string) => join(dir, 'stack.json');

export function readState(dir: string): StackState | undefined {
  if (!existsSync(stateFile(dir))) return undefined;
  return JSON.parse(readFileSync(stateFile(dir), 'utf8')) as StackState;
}

export function writeState(dir: string, state: StackState): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(stateFile(dir), `${JSON.stringify(state, null, 2)}\n`);
}

export function localSecrets(dir: string): LocalSecrets {
  const file = join(dir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as LocalSecrets;
  mkdirSync(dir, { recursive: true });
  const secrets: LocalSecrets = {
    master_key: randomBytes(32).toString('base64'),
    signing_secret: randomBytes(32).toString('base64url'),
  };
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

/**
 * The environment the handlers run with in the local stack: the same variables the CDK stack sets on AWS, plus
 * the SDK's own endpoint overrides pointing at the local engines and dummy credentials they accept.
 */
export function handlerEnvironment(state: StackState, secrets: LocalSecrets): Record<string, string> {
  return {
    AWS_REGION: state.region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: state.dynamodb_endpoint,
    AWS_ENDPOINT_URL_SQS: state.sqs_endpoint,
    AWS_ENDPOINT_URL_S3: state.s3_endpoint,
    TABLE_NAME: state.table_name,
    DISBURSEMENT_BUCKET: state.bucket,
    PAYROLL_QUEUE_URL: state.queues.payroll,
    WEBHOOK_QUEUE_URL: state.queues.webhooks,
    PAYROLL_ENVIRONMENT: state.environment,
    PAYROLL_LOCAL_STACK: 'true',
    PAYROLL_LOCAL_MASTER_KEY: secrets.master_key,
    PAYROLL_SIGNING_SECRET: secrets.signing_secret,
    PAYROLL_RESERVED_LOOPBACK_PORTS: reservedLoopbackPorts(state),
  };
}

/**
 * Every port this stack listens on, which sandbox webhooks (allowed to loopback) must not target: the handlers and
 * workers read the list from PAYROLL_RESERVED_LOOPBACK_PORTS (shared/adapters/webhook-url.ts). A port of 0 (not
 * bound yet) is left out.
 */
export function reservedLoopbackPorts(
  state: Pick<StackState, 'dynamodb_endpoint' | 'sqs_endpoint' | 's3_endpoint' | 'https_port' | 'http_port'>,
): string {
  const endpoints = [state.dynamodb_endpoint, state.sqs_endpoint, state.s3_endpoint];
  const portOf = (url: string) => Number(/^\w+:\/\/[^/]*:(\d+)/.exec(url)?.[1] ?? 80);
  const ports = [...endpoints.map(portOf), state.https_port, state.http_port];
  return [...new Set(ports.filter((p) => p > 0))].join(',');
}

/** Whether the process that wrote a state file still runs (a stale stack.json outlives a crash). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
