import { createHash, generateKeyPairSync } from 'node:crypto';
import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateSecretCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import {
  CreateConnectorCommand,
  DescribeConnectorCommand,
  ListFileTransferResultsCommand,
  StartDirectoryListingCommand,
  StartFileTransferCommand,
  TestConnectionCommand,
  TransferClient,
  UpdateConnectorCommand,
} from '@aws-sdk/client-transfer';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HostKeyMismatchError, type SftpTarget } from '../../shared/adapters/sftp-transport.js';
import {
  type ConnectorRecord,
  type ConnectorStore,
  connectorTransport,
  readHostKey,
} from '../../shared/adapters/transfer-connector.js';

/**
 * The bank link through a Transfer Family connector (shared/adapters/transfer-connector.ts), against mocked Transfer,
 * Secrets Manager and S3 clients: what the adapter asks of each, in which order, and what it makes of the answers.
 */

/** Only for these tests: the worker's store is the table's. */
class MemoryConnectorStore implements ConnectorStore {
  readonly records = new Map<string, ConnectorRecord>();
  async get(organizationId: string) {
    return this.records.get(organizationId);
  }
  async put(organizationId: string, record: ConnectorRecord) {
    this.records.set(organizationId, { ...record });
  }
}

/** An ECDSA P-256 host key as a server presents it (`ecdsa-sha2-nistp256 <base64 blob>`), and its fingerprint. */
function ecdsaHostKey(): { line: string; fingerprint: string } {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  const field = (bytes: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  const blob = Buffer.concat([field(Buffer.from('ecdsa-sha2-nistp256')), field(Buffer.from('nistp256')), field(point)]);
  const fingerprint = `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
  return { line: `ecdsa-sha2-nistp256 ${blob.toString('base64')}`, fingerprint };
}

const ORG = 'org_01jbank0000000000000000000';
const BUCKET = 'payroll-bucket';
const SECRET_ARN = `arn:aws:secretsmanager:us-east-1:000000000000:secret:payroll/sandbox/test/bank-link/${ORG}-AbCdEf`;
const CONNECTOR = 'c-0123456789abcdef0';
const ACCESS_ROLE = 'arn:aws:iam::000000000000:role/payroll/sandbox/test/disbursement-bucket/access';
const LOGGING_ROLE = 'arn:aws:iam::000000000000:role/logging';
const serverKey = ecdsaHostKey();

const transfer = mockClient(TransferClient);
const secrets = mockClient(SecretsManagerClient);
const s3 = mockClient(S3Client);

/** S3's answer to GetObject, as far as the adapter reads it. */
const body = (bytes: Buffer | string) =>
  ({
    Body: { transformToByteArray: async () => new Uint8Array(Buffer.from(bytes)) },
  }) as unknown as GetObjectCommandOutput;
const noSuchKey = () => new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} });

let clock = 0;
let store: MemoryConnectorStore;
/** Every call the adapter makes, across the three clients, in order. */
let calls: string[];

function adapter(overrides: { waitMs?: number } = {}) {
  return connectorTransport({
    transfer: new TransferClient({ region: 'us-east-1' }),
    secrets: new SecretsManagerClient({ region: 'us-east-1' }),
    s3: new S3Client({ region: 'us-east-1' }),
    store,
    bucket: BUCKET,
    accessRoleArn: ACCESS_ROLE,
    loggingRoleArn: LOGGING_ROLE,
    secretPrefix: 'payroll/sandbox/test/bank-link',
    deployment: 'Payroll-sandbox-test',
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    ...overrides,
  });
}

const target = (changes: Partial<SftpTarget> = {}): SftpTarget => ({
  host: 'sftp.bank.example',
  port: 22,
  username: 'acme-payroll',
  hostKeyFingerprint: serverKey.fingerprint,
  password: 'the password',
  ...changes,
});

function logged<T>(name: string, answer: T) {
  return () => {
    calls.push(name);
    return answer;
  };
}

beforeEach(() => {
  clock = 0;
  calls = [];
  store = new MemoryConnectorStore();
  transfer.reset();
  secrets.reset();
  s3.reset();
  secrets.on(CreateSecretCommand).callsFake(logged('CreateSecret', { ARN: SECRET_ARN }));
  secrets.on(PutSecretValueCommand).callsFake(logged('PutSecretValue', { ARN: SECRET_ARN }));
  transfer.on(CreateConnectorCommand).callsFake(logged('CreateConnector', { ConnectorId: CONNECTOR }));
  transfer.on(UpdateConnectorCommand).callsFake(logged('UpdateConnector', { ConnectorId: CONNECTOR }));
  transfer
    .on(DescribeConnectorCommand)
    .callsFakeOnce(logged('DescribeConnector', { Connector: { Arn: 'arn', Status: 'PENDING' } }))
    .callsFake(logged('DescribeConnector', { Connector: { Arn: 'arn', Status: 'ACTIVE' } }));
  transfer.on(TestConnectionCommand).callsFake(
    logged('TestConnection', {
      ConnectorId: CONNECTOR,
      Status: 'ERROR',
      StatusMessage: 'Unable to verify the host key',
      SftpConnectionDetails: { HostKey: serverKey.line },
    }),
  );
  transfer.on(StartFileTransferCommand).callsFake(logged('StartFileTransfer', { TransferId: 'tr-1' }));
  transfer.on(StartDirectoryListingCommand).callsFake(logged('StartDirectoryListing', {}));
  s3.on(PutObjectCommand).callsFake(logged('PutObject', {}));
});

afterEach(() => {
  transfer.reset();
  secrets.reset();
  s3.reset();
});

describe('connecting through the organization’s connector', () => {
  it('on first use stores the credential, creates the connector, tests it and pins the key it was shown', async () => {
    const transport = await adapter()(target(), ORG);
    expect(transport).toBeDefined();
    expect(calls).toEqual([
      'CreateSecret',
      'CreateConnector',
      'DescribeConnector',
      'DescribeConnector',
      'TestConnection',
      'UpdateConnector',
      'DescribeConnector',
    ]);
    expect(secrets.commandCalls(CreateSecretCommand)[0]!.args[0].input).toMatchObject({
      Name: `payroll/sandbox/test/bank-link/${ORG}`,
      SecretString: JSON.stringify({ Username: 'acme-payroll', Password: 'the password' }),
    });
    expect(transfer.commandCalls(CreateConnectorCommand)[0]!.args[0].input).toEqual({
      Url: 'sftp://sftp.bank.example:22',
      AccessRole: ACCESS_ROLE,
      LoggingRole: LOGGING_ROLE,
      SftpConfig: { UserSecretId: SECRET_ARN },
      Tags: [
        { Key: 'payroll-deployment', Value: 'Payroll-sandbox-test' },
        { Key: 'organization', Value: ORG },
      ],
    });
    expect(transfer.commandCalls(UpdateConnectorCommand)[0]!.args[0].input).toEqual({
      ConnectorId: CONNECTOR,
      SftpConfig: { TrustedHostKeys: [serverKey.line] },
    });
    const record = store.records.get(ORG)!;
    expect(record).toMatchObject({
      connector_id: CONNECTOR,
      secret_arn: SECRET_ARN,
      url: 'sftp://sftp.bank.example:22',
      trusted_host_key: serverKey.line,
    });
    // The settings are kept as a salted digest: never the password, nor a plain hash of it.
    expect(record.settings_digest).toMatch(/^scrypt:/);
    expect(JSON.stringify(record)).not.toContain('the password');
  });

  it('takes a private key as the secret’s PrivateKey', async () => {
    const privateKey = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n';
    await adapter()(target({ password: undefined, privateKey }), ORG);
    expect(JSON.parse(secrets.commandCalls(CreateSecretCommand)[0]!.args[0].input.SecretString!)).toEqual({
      Username: 'acme-payroll',
      PrivateKey: privateKey,
    });
  });

  it('writes the secret an earlier attempt left behind instead of failing on it', async () => {
    secrets.on(CreateSecretCommand).rejects(new ResourceExistsException({ message: 'exists', $metadata: {} }));
    await adapter()(target(), ORG);
    expect(secrets.commandCalls(PutSecretValueCommand)[0]!.args[0].input).toEqual({
      SecretId: `payroll/sandbox/test/bank-link/${ORG}`,
      SecretString: JSON.stringify({ Username: 'acme-payroll', Password: 'the password' }),
    });
    expect(transfer.commandCalls(CreateConnectorCommand)[0]!.args[0].input.SftpConfig).toEqual({
      UserSecretId: SECRET_ARN,
    });
  });

  it('refuses a server that presents another key: HostKeyMismatchError, no key trusted, nothing listed or sent', async () => {
    const impostor = ecdsaHostKey();
    transfer
      .on(TestConnectionCommand)
      .resolves({ SftpConnectionDetails: { HostKey: `sftp.bank.example ${impostor.line}` } });
    const connect = adapter();
    const refused = await connect(target(), ORG).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HostKeyMismatchError);
    expect((refused as HostKeyMismatchError).presented).toBe(impostor.fingerprint);
    expect(transfer.commandCalls(UpdateConnectorCommand)).toHaveLength(0);
    expect(store.records.get(ORG)?.trusted_host_key).toBeUndefined();
    // The next pass tests again, on the same connector: it neither creates another nor trusts anything meanwhile.
    await expect(connect(target(), ORG)).rejects.toBeInstanceOf(HostKeyMismatchError);
    expect(transfer.commandCalls(CreateConnectorCommand)).toHaveLength(1);
    expect(transfer.commandCalls(TestConnectionCommand)).toHaveLength(2);
    expect(transfer.commandCalls(StartFileTransferCommand)).toHaveLength(0);
    expect(transfer.commandCalls(StartDirectoryListingCommand)).toHaveLength(0);
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(0);
  });

  it('says why when the connection test reports no key', async () => {
    transfer.on(TestConnectionCommand).resolves({ Status: 'ERROR', StatusMessage: 'Connection timed out' });
    await expect(adapter()(target(), ORG)).rejects.toThrow('Connection timed out');
    expect(transfer.commandCalls(UpdateConnectorCommand)).toHaveLength(0);
  });

  it('makes nothing again for the same settings', async () => {
    const connect = adapter();
    await connect(target(), ORG);
    calls = [];
    await connect(target(), ORG);
    // A fresh container too (nothing remembered in memory): the stored digest alone says nothing changed.
    await adapter()(target(), ORG);
    expect(calls).toEqual([]);
  });

  it('writes a changed password to the secret, and touches nothing else', async () => {
    await adapter()(target(), ORG);
    calls = [];
    const digest = store.records.get(ORG)!.settings_digest;
    await adapter()(target({ password: 'a new password' }), ORG);
    expect(calls).toEqual(['PutSecretValue']);
    expect(secrets.commandCalls(PutSecretValueCommand)[0]!.args[0].input).toEqual({
      SecretId: SECRET_ARN,
      SecretString: JSON.stringify({ Username: 'acme-payroll', Password: 'a new password' }),
    });
    expect(store.records.get(ORG)!.settings_digest).not.toBe(digest);
    calls = [];
    await adapter()(target({ password: 'a new password' }), ORG);
    expect(calls).toEqual([]);
  });

  it('points the connector at a moved server, keeping the pinned key', async () => {
    await adapter()(target(), ORG);
    calls = [];
    await adapter()(target({ host: 'sftp2.bank.example', port: 2222 }), ORG);
    expect(calls).toEqual(['UpdateConnector', 'DescribeConnector', 'PutSecretValue']);
    expect(transfer.commandCalls(UpdateConnectorCommand).at(-1)!.args[0].input).toEqual({
      ConnectorId: CONNECTOR,
      Url: 'sftp://sftp2.bank.example:2222',
    });
  });

  it('pins a new fingerprint on a connector of its own, which trusts no key until the test shows the right one', async () => {
    await adapter()(target(), ORG);
    const rotated = ecdsaHostKey();
    transfer.on(CreateConnectorCommand).resolves({ ConnectorId: 'c-00000000000000002' });
    transfer.on(TestConnectionCommand).resolves({ SftpConnectionDetails: { HostKey: rotated.line } });
    await adapter()(target({ hostKeyFingerprint: rotated.fingerprint }), ORG);
    expect(transfer.commandCalls(CreateConnectorCommand)).toHaveLength(2);
    expect(transfer.commandCalls(UpdateConnectorCommand).at(-1)!.args[0].input).toEqual({
      ConnectorId: 'c-00000000000000002',
      SftpConfig: { TrustedHostKeys: [rotated.line] },
    });
    expect(store.records.get(ORG)).toMatchObject({
      connector_id: 'c-00000000000000002',
      trusted_host_key: rotated.line,
    });
    // The secret it already had.
    expect(secrets.commandCalls(CreateSecretCommand)).toHaveLength(1);
  });

  it('fails when the connector ends up in error', async () => {
    transfer.on(DescribeConnectorCommand).resolves({
      Connector: { Arn: 'a', EgressType: 'SERVICE_MANAGED', Status: 'ERRORED', ErrorMessage: 'bad role' },
    });
    await expect(adapter()(target(), ORG)).rejects.toThrow('bad role');
    expect(transfer.commandCalls(TestConnectionCommand)).toHaveLength(0);
  });
});

describe('the transport', () => {
  const listingKey = `bank-link/${ORG}/listings/${CONNECTOR}-listing-1.json`;

  it('lists a remote directory from the listing file the connector writes, files only', async () => {
    const transport = await adapter()(target(), ORG);
    transfer
      .on(StartDirectoryListingCommand)
      .resolves({ ListingId: 'listing-1', OutputFileName: `${CONNECTOR}-listing-1.json` });
    const listing = {
      files: [
        { filePath: '/outbound/ACK_file_01.txt', modifiedTimestamp: '2026-11-27T20:34:54Z', size: 120 },
        { filePath: '/outbound/RETURNS_20261127.ach', size: 940 },
        { filePath: '/outbound/no-size.txt' },
      ],
      paths: [{ path: '/outbound/archive' }],
      truncated: false,
    };
    // Not there yet on the first look: the adapter waits for it.
    s3.on(GetObjectCommand, { Key: listingKey })
      .rejectsOnce(noSuchKey())
      .resolves(body(JSON.stringify(listing)));
    const files = await transport.list('/outbound');
    expect(files).toEqual([
      { name: 'ACK_file_01.txt', size: 120, modified: Date.parse('2026-11-27T20:34:54Z') },
      { name: 'RETURNS_20261127.ach', size: 940 },
      { name: 'no-size.txt', size: -1 },
    ]);
    expect(transfer.commandCalls(StartDirectoryListingCommand)[0]!.args[0].input).toEqual({
      ConnectorId: CONNECTOR,
      RemoteDirectoryPath: '/outbound',
      OutputDirectoryPath: `/${BUCKET}/bank-link/${ORG}/listings`,
      MaxItems: 10_000,
    });
    expect(s3.commandCalls(GetObjectCommand, { Bucket: BUCKET, Key: listingKey })).toHaveLength(2);
  });

  it('refuses a truncated listing, which could hide a file already delivered', async () => {
    const transport = await adapter()(target(), ORG);
    transfer.on(StartDirectoryListingCommand).resolves({ OutputFileName: `${CONNECTOR}-listing-1.json` });
    s3.on(GetObjectCommand).resolves(body(JSON.stringify({ files: [], paths: [], truncated: true })));
    await expect(transport.list('/inbound')).rejects.toThrow('more than 10000');
  });

  it('gives up on a listing that never arrives, after the bounded wait', async () => {
    const transport = await adapter({ waitMs: 30_000 })(target(), ORG);
    transfer.on(StartDirectoryListingCommand).resolves({ OutputFileName: `${CONNECTOR}-listing-1.json` });
    s3.on(GetObjectCommand).rejects(noSuchKey());
    const started = clock;
    await expect(transport.list('/inbound')).rejects.toThrow('listing /inbound: not done within 30 s');
    expect(clock - started).toBe(30_000);
  });

  it('uploads the file to its outbound prefix, sends it, and returns only once the transfer completed', async () => {
    const transport = await adapter()(target(), ORG);
    calls = [];
    transfer
      .on(ListFileTransferResultsCommand)
      .callsFakeOnce(logged('ListFileTransferResults', { FileTransferResults: [] }))
      .callsFakeOnce(
        logged('ListFileTransferResults', {
          FileTransferResults: [{ FilePath: '/inbound/f.ach', StatusCode: 'QUEUED' }],
        }),
      )
      .callsFakeOnce(
        logged('ListFileTransferResults', {
          FileTransferResults: [{ FilePath: '/inbound/f.ach', StatusCode: 'IN_PROGRESS' }],
        }),
      )
      .callsFake(
        logged('ListFileTransferResults', {
          FileTransferResults: [{ FilePath: '/inbound/f.ach', StatusCode: 'COMPLETED' }],
        }),
      );
    const bytes = Buffer.from('101 091000019 1234567890...');
    await transport.put('/inbound', 'file_01.ach', bytes);
    expect(calls).toEqual([
      'PutObject',
      'StartFileTransfer',
      'ListFileTransferResults',
      'ListFileTransferResults',
      'ListFileTransferResults',
      'ListFileTransferResults',
    ]);
    const put = s3.commandCalls(PutObjectCommand)[0]!.args[0].input;
    expect(put).toEqual({ Bucket: BUCKET, Key: `bank-link/${ORG}/outbound/file_01.ach`, Body: bytes });
    expect(transfer.commandCalls(StartFileTransferCommand)[0]!.args[0].input).toEqual({
      ConnectorId: CONNECTOR,
      SendFilePaths: [`/${BUCKET}/bank-link/${ORG}/outbound/file_01.ach`],
      RemoteDirectoryPath: '/inbound',
    });
    expect(transfer.commandCalls(ListFileTransferResultsCommand)[0]!.args[0].input).toMatchObject({
      ConnectorId: CONNECTOR,
      TransferId: 'tr-1',
    });
  });

  it('throws with the connector’s reason when a transfer fails', async () => {
    const transport = await adapter()(target(), ORG);
    transfer.on(ListFileTransferResultsCommand).resolves({
      FileTransferResults: [
        {
          FilePath: '/inbound/file_01.ach',
          StatusCode: 'FAILED',
          FailureCode: 'PERMISSION_DENIED',
          FailureMessage: 'Permission denied on /inbound',
        },
      ],
    });
    await expect(transport.put('/inbound', 'file_01.ach', Buffer.from('x'))).rejects.toThrow(
      'sending file_01.ach failed: PERMISSION_DENIED: Permission denied on /inbound',
    );
  });

  it('retrieves a file into its inbound prefix and answers its bytes', async () => {
    const transport = await adapter()(target(), ORG);
    transfer
      .on(ListFileTransferResultsCommand)
      .resolvesOnce({ FileTransferResults: [{ FilePath: '/outbound/ACK_1.txt', StatusCode: 'IN_PROGRESS' }] })
      .resolves({ FileTransferResults: [{ FilePath: '/outbound/ACK_1.txt', StatusCode: 'COMPLETED' }] });
    const content = Buffer.from(`ACK file_01.ach ${'a'.repeat(64)}\nACCEPTED\n`);
    s3.on(GetObjectCommand, { Bucket: BUCKET, Key: `bank-link/${ORG}/inbound/ACK_1.txt` }).resolves(body(content));
    expect(await transport.get('/outbound/', 'ACK_1.txt')).toEqual(content);
    expect(transfer.commandCalls(StartFileTransferCommand)[0]!.args[0].input).toEqual({
      ConnectorId: CONNECTOR,
      RetrieveFilePaths: ['/outbound/ACK_1.txt'],
      LocalDirectoryPath: `/${BUCKET}/bank-link/${ORG}/inbound`,
    });
    // Read only once the transfer completed.
    expect(transfer.commandCalls(ListFileTransferResultsCommand)).toHaveLength(2);
  });

  it('refuses a name that is not one path segment', async () => {
    const transport = await adapter()(target(), ORG);
    await expect(transport.get('/outbound', '../secrets')).rejects.toThrow('Not a file name');
    expect(transfer.commandCalls(StartFileTransferCommand)).toHaveLength(0);
  });
});

describe('reading a host key line', () => {
  it('takes the type and body, with or without a host before and a comment after, and checks the blob names the type', () => {
    const key = ecdsaHostKey();
    expect(readHostKey(`sftp.bank.example ${key.line} comment`).line).toBe(key.line);
    expect(readHostKey(key.line).line).toBe(key.line);
    const [, body] = key.line.split(' ');
    expect(() => readHostKey(`ssh-rsa ${body}`)).toThrow('Not an SSH public key');
    expect(() => readHostKey('garbage')).toThrow('Not an SSH public key');
  });
});
