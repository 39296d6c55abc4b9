import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import type { S3Client } from '@aws-sdk/client-s3';
import {
  CreateSecretCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import {
  type ConnectorFileTransferResult,
  CreateConnectorCommand,
  DescribeConnectorCommand,
  ListFileTransferResultsCommand,
  StartDirectoryListingCommand,
  StartFileTransferCommand,
  TestConnectionCommand,
  type TransferClient,
  UpdateConnectorCommand,
} from '@aws-sdk/client-transfer';
import * as z from 'zod';
import { type BankTransport, HostKeyMismatchError, hostKeyFingerprint, type SftpTarget } from './bank-transport.js';

/**
 * The bank's SFTP server through an AWS Transfer Family SFTP connector, one per organization: the connector holds the
 * session (from the account's static egress addresses, which banks allow-list), and every file passes through the
 * disbursement bucket under `bank-link/<organization>/`. The connector trusts only the host key whose fingerprint the
 * link pins; until it does, nothing but a connection test reaches the server.
 */

/** Where the bank link's objects live in the disbursement bucket: `bank-link/<organization>/{listings,outbound,inbound}/`. */
export { BANK_LINK_OBJECT_PREFIX } from './object-store.js';
import { BANK_LINK_OBJECT_PREFIX } from './object-store.js';

/**
 * The tag every connector the worker makes carries, valued with the deployment's name: the worker's IAM policy lets it
 * create connectors only with it, and use only connectors that have it.
 */
export const CONNECTOR_DEPLOYMENT_TAG = 'payroll-deployment';

/** What the worker keeps per organization about its connector. */
export interface ConnectorRecord {
  connector_id: string;
  /** The ARN of the secret holding the connector's credential (`<secret prefix>/<organization>`). */
  secret_arn: string;
  /** `sftp://host:port`, as the connector was last given it. */
  url: string;
  /** The host key the connector trusts (`<type> <base64>`), once pinned. */
  trusted_host_key?: string;
  /**
   * A salted scrypt digest of what the connector and its secret were last made from (url, username, fingerprint,
   * credential): a changed setting is seen without keeping the credential, or a fast hash of it, beside it.
   */
  settings_digest?: string;
}

export interface ConnectorStore {
  get(organizationId: string): Promise<ConnectorRecord | undefined>;
  put(organizationId: string, record: ConnectorRecord): Promise<void>;
}

export interface ConnectorTransportDeps {
  transfer: TransferClient;
  secrets: SecretsManagerClient;
  /**
   * The S3 client, or how to get it: the worker hands over its object store's, which loads the S3 module on first use
   * (object-store.ts says why), so this module imports S3's commands only when it first reads or writes an object.
   */
  s3: S3Client | (() => Promise<S3Client>);
  store: ConnectorStore;
  /** The disbursement bucket. */
  bucket: string;
  /** @default BANK_LINK_OBJECT_PREFIX */
  prefix?: string;
  /** The role the connector reads the secret and the bucket with. */
  accessRoleArn: string;
  /** The role the connector writes its CloudWatch logs with. */
  loggingRoleArn: string;
  /** Each organization's secret is `<secretPrefix>/<organization id>`. */
  secretPrefix: string;
  /** The deployment's name (`Payroll-<environment>-<stage>`), for `CONNECTOR_DEPLOYMENT_TAG`. */
  deployment: string;
  /** The longest wait for one connector operation (a listing, a transfer, the connector becoming active). */
  waitMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const WAIT_MS = 60_000;
const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 5_000;
/** The most entries a listing may hold (StartDirectoryListing's maximum); a truncated listing is refused. */
const MAX_LISTED = 10_000;

/** The listing file StartDirectoryListing writes: `files` (`filePath`, optional `size`), `paths`, `truncated`. */
const listingFile = z.object({
  files: z
    .array(
      z.object({
        filePath: z.string().min(1),
        size: z.number().int().nonnegative().optional(),
        modifiedTimestamp: z.union([z.string(), z.number()]).optional(),
      }),
    )
    .default([]),
  truncated: z.boolean().default(false),
});

const loadS3 = () => import('@aws-sdk/client-s3');

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');

export function connectorTransport(
  deps: ConnectorTransportDeps,
): (target: SftpTarget, organizationId: string) => Promise<BankTransport> {
  const waitMs = deps.waitMs ?? WAIT_MS;
  const prefix = deps.prefix ?? BANK_LINK_OBJECT_PREFIX;
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // A digest already found to match these settings (its sha256, in memory only): scrypt once per container, not per pass.
  const matched = new Map<string, string>();

  /** Polls `attempt` with backoff until it answers, for at most `waitMs`. */
  async function until<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
    const deadline = now() + waitMs;
    for (let delay = FIRST_POLL_MS; ; delay = Math.min(2 * delay, MAX_POLL_MS)) {
      const answer = await attempt();
      if (answer !== undefined) return answer;
      const left = deadline - now();
      if (left <= 0) throw new Error(`${what}: not done within ${Math.round(waitMs / 1000)} s`);
      await sleep(Math.min(delay, left));
    }
  }

  async function digestOf(settings: string): Promise<string> {
    const salt = randomBytes(16);
    const hash = await scryptAsync(settings, salt, 32);
    return `scrypt:${salt.toString('base64')}:${hash.toString('base64')}`;
  }

  async function sameSettings(digest: string | undefined, settings: string): Promise<boolean> {
    if (digest === undefined) return false;
    if (matched.get(digest) === sha256(settings)) return true;
    const [kind, salt, hash] = digest.split(':');
    if (kind !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64');
    const actual = await scryptAsync(settings, Buffer.from(salt, 'base64'), expected.length);
    const same = actual.length === expected.length && timingSafeEqual(actual, expected);
    if (same) matched.set(digest, sha256(settings));
    return same;
  }

  /** Creates the organization's secret (or, left by an earlier attempt, writes it); answers its ARN. */
  async function createSecret(organizationId: string, value: string): Promise<string> {
    const name = `${deps.secretPrefix}/${organizationId}`;
    try {
      const created = await deps.secrets.send(
        new CreateSecretCommand({
          Name: name,
          Description: `The bank link's SFTP credential of ${organizationId}, read by its Transfer Family connector`,
          SecretString: value,
        }),
      );
      return created.ARN!;
    } catch (err) {
      if (!(err instanceof ResourceExistsException || (err as Error).name === 'ResourceExistsException')) throw err;
      const put = await deps.secrets.send(new PutSecretValueCommand({ SecretId: name, SecretString: value }));
      return put.ARN!;
    }
  }

  /** Waits until the connector may be used: a created or updated connector is PENDING for a moment. */
  async function active(connectorId: string): Promise<void> {
    await until(`connector ${connectorId} becoming active`, async () => {
      const { Connector } = await deps.transfer.send(new DescribeConnectorCommand({ ConnectorId: connectorId }));
      if (Connector?.Status === 'ERRORED') {
        throw new Error(`Connector ${connectorId} is in error: ${Connector.ErrorMessage ?? 'no reason given'}`);
      }
      // A connector described without a status predates the field: it is usable.
      return Connector?.Status === 'PENDING' ? undefined : true;
    });
  }

  async function createConnector(organizationId: string, url: string, secretArn: string): Promise<string> {
    const tags = { [CONNECTOR_DEPLOYMENT_TAG]: deps.deployment, organization: organizationId };
    const { ConnectorId } = await deps.transfer.send(
      new CreateConnectorCommand({
        Url: url,
        AccessRole: deps.accessRoleArn,
        LoggingRole: deps.loggingRoleArn,
        SftpConfig: { UserSecretId: secretArn },
        Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
      }),
    );
    return ConnectorId!;
  }

  /**
   * The key the server presents to the connector, read by a connection test while the connector trusts no key yet. SSH
   * checks the host key during the key exchange, before any authentication, so the credential is never offered to a
   * server the connector does not trust.
   */
  async function presentedKey(connectorId: string): Promise<{ line: string; fingerprint: string }> {
    const test = await deps.transfer.send(new TestConnectionCommand({ ConnectorId: connectorId }));
    const reported = test.SftpConnectionDetails?.HostKey;
    if (!reported) {
      throw new Error(`The connection test reported no host key: ${test.StatusMessage ?? test.Status ?? 'no reason'}`);
    }
    const key = readHostKey(reported);
    return { line: key.line, fingerprint: hostKeyFingerprint(key.blob) };
  }

  /** The organization's connector, made or brought in line with `target`, its host key pinned. */
  async function ensureConnector(target: SftpTarget, organizationId: string): Promise<string> {
    const url = `sftp://${target.host}:${target.port}`;
    const credential = JSON.stringify({
      Username: target.username,
      ...(target.password !== undefined ? { Password: target.password } : { PrivateKey: target.privateKey }),
    });
    const settings = JSON.stringify([url, target.username, target.hostKeyFingerprint, credential]);
    let record = await deps.store.get(organizationId);
    /** Whether the secret already holds `credential`. */
    let written = false;
    const pinned = (r: ConnectorRecord) =>
      r.trusted_host_key !== undefined &&
      hostKeyFingerprint(readHostKey(r.trusted_host_key).blob) === target.hostKeyFingerprint;

    if (!record || (record.trusted_host_key !== undefined && !pinned(record))) {
      // A first connector, or another key to pin: a connector that trusts no key yet, since only then does the
      // connection test report the key the server presents. One whose pinned key is replaced stays behind, unused.
      let secretArn = record?.secret_arn;
      if (secretArn === undefined) {
        secretArn = await createSecret(organizationId, credential);
        written = true;
      }
      record = { connector_id: await createConnector(organizationId, url, secretArn), secret_arn: secretArn, url };
      await deps.store.put(organizationId, record);
      await active(record.connector_id);
    } else if (record.url !== url) {
      await deps.transfer.send(new UpdateConnectorCommand({ ConnectorId: record.connector_id, Url: url }));
      record = { ...record, url };
      await deps.store.put(organizationId, record);
      await active(record.connector_id);
    }

    if (record.trusted_host_key === undefined) {
      const presented = await presentedKey(record.connector_id);
      if (presented.fingerprint !== target.hostKeyFingerprint) throw new HostKeyMismatchError(presented.fingerprint);
      await deps.transfer.send(
        new UpdateConnectorCommand({
          ConnectorId: record.connector_id,
          SftpConfig: { TrustedHostKeys: [presented.line] },
        }),
      );
      record = { ...record, trusted_host_key: presented.line };
      await deps.store.put(organizationId, record);
      await active(record.connector_id);
    }

    if (!(await sameSettings(record.settings_digest, settings))) {
      // A changed username or credential: the secret holds what the link holds now.
      if (!written) {
        await deps.secrets.send(new PutSecretValueCommand({ SecretId: record.secret_arn, SecretString: credential }));
      }
      record = { ...record, settings_digest: await digestOf(settings) };
      await deps.store.put(organizationId, record);
    }
    return record.connector_id;
  }

  /** Waits for a transfer's files to be COMPLETED; a FAILED one throws with the connector's reason. */
  async function transferred(connectorId: string, transferId: string, what: string): Promise<void> {
    await until(what, async () => {
      const results: ConnectorFileTransferResult[] = [];
      let next: string | undefined;
      do {
        const page = await deps.transfer.send(
          new ListFileTransferResultsCommand({ ConnectorId: connectorId, TransferId: transferId, NextToken: next }),
        );
        results.push(...(page.FileTransferResults ?? []));
        next = page.NextToken;
      } while (next);
      const failed = results.find((r) => r.StatusCode === 'FAILED');
      if (failed) {
        throw new Error(
          `${what} failed: ${[failed.FailureCode, failed.FailureMessage].filter(Boolean).join(': ') || 'no reason given'}`,
        );
      }
      return results.length > 0 && results.every((r) => r.StatusCode === 'COMPLETED') ? true : undefined;
    });
  }

  const s3 = async () => ({ client: typeof deps.s3 === 'function' ? await deps.s3() : deps.s3, sdk: await loadS3() });

  async function readObject(key: string): Promise<Buffer | undefined> {
    const { client, sdk } = await s3();
    try {
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: deps.bucket, Key: key }));
      return Buffer.from(await out.Body!.transformToByteArray());
    } catch (err) {
      if ((err as Error).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  return async (target, organizationId) => {
    const connectorId = await ensureConnector(target, organizationId);
    const keyOf = (folder: 'listings' | 'outbound' | 'inbound', name?: string) =>
      `${prefix}/${organizationId}/${folder}${name === undefined ? '' : `/${name}`}`;
    const s3Path = (key: string) => `/${deps.bucket}/${key}`;
    return {
      async list(dir) {
        const { OutputFileName } = await deps.transfer.send(
          new StartDirectoryListingCommand({
            ConnectorId: connectorId,
            RemoteDirectoryPath: dir,
            OutputDirectoryPath: s3Path(keyOf('listings')),
            MaxItems: MAX_LISTED,
          }),
        );
        const bytes = await until(`listing ${dir}`, () => readObject(keyOf('listings', OutputFileName!)));
        const listing = listingFile.parse(JSON.parse(bytes.toString('utf8')));
        // A partial listing could hide a file already delivered, which would then be sent again.
        if (listing.truncated) throw new Error(`The listing of ${dir} holds more than ${MAX_LISTED} entries`);
        // A size the server does not report matches no size seen before: such a file is fetched and told by its hash.
        return listing.files.map((f) => {
          const modified = f.modifiedTimestamp === undefined ? Number.NaN : new Date(f.modifiedTimestamp).getTime();
          return { name: basename(f.filePath), size: f.size ?? -1, ...(modified > 0 && { modified }) };
        });
      },
      async put(dir, name, bytes) {
        const key = keyOf('outbound', safeName(name));
        // The bucket's default encryption (SSE-KMS under the service key) applies; naming another here would bypass it.
        const { client, sdk } = await s3();
        await client.send(new sdk.PutObjectCommand({ Bucket: deps.bucket, Key: key, Body: bytes }));
        const { TransferId } = await deps.transfer.send(
          new StartFileTransferCommand({
            ConnectorId: connectorId,
            SendFilePaths: [s3Path(key)],
            RemoteDirectoryPath: dir,
          }),
        );
        await transferred(connectorId, TransferId!, `sending ${name}`);
      },
      async get(dir, name) {
        const remote = `${dir.replace(/\/+$/, '')}/${safeName(name)}`;
        const { TransferId } = await deps.transfer.send(
          new StartFileTransferCommand({
            ConnectorId: connectorId,
            RetrieveFilePaths: [remote],
            LocalDirectoryPath: s3Path(keyOf('inbound')),
          }),
        );
        await transferred(connectorId, TransferId!, `retrieving ${name}`);
        const bytes = await readObject(keyOf('inbound', name));
        if (!bytes) throw new Error(`Retrieving ${name} left no object in the bucket`);
        return bytes;
      },
      async end() {
        // Each operation is a request to the connector: no session stays open.
      },
    };
  };
}

/** A remote file's name as an object key's last part: one path segment, never `.` or `..`. */
function safeName(name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) {
    throw new Error(`Not a file name: ${JSON.stringify(name)}`);
  }
  return name;
}

/**
 * A public key line as a connector reports or trusts it (`[host] <type> <base64> [comment]`): its `<type> <base64>`
 * and the key blob, whose own first field must name the same type.
 */
export function readHostKey(text: string): { line: string; blob: Buffer } {
  const fields = text.trim().split(/\s+/);
  for (let i = 0; i + 1 < fields.length; i++) {
    const [type, body] = [fields[i]!, fields[i + 1]!];
    if (!/^[a-z0-9@.-]+$/.test(type) || !/^[A-Za-z0-9+/]+={0,2}$/.test(body)) continue;
    const blob = Buffer.from(body, 'base64');
    const length = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
    if (length > 0 && blob.subarray(4, 4 + length).toString('latin1') === type)
      return { line: `${type} ${body}`, blob };
  }
  throw new Error(`Not an SSH public key: ${JSON.stringify(text.slice(0, 80))}`);
}
