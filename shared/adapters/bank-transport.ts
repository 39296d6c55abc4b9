import { createHash } from 'node:crypto';
import { config, required } from '../config/env.js';
import type { ConnectorStore } from './transfer-connector.js';

/**
 * How this deployment reaches a bank: SFTP from the function itself (the local stack and the tests, against the
 * sandbox bank), or, deployed with `PAYROLL_BANK_TRANSPORT=connector`, an AWS Transfer Family connector per
 * organization (static egress addresses a bank can allow-list). Both speak `BankTransport`. This module holds what
 * they share and loads neither until first use, so a function pays at a cold start for no SSH or Transfer code.
 */

export interface SftpTarget {
  host: string;
  port: number;
  username: string;
  /** `SHA256:` and the unpadded base64 of the host key blob's SHA-256 (`ssh-keygen -lf`). */
  hostKeyFingerprint: string;
  password?: string;
  privateKey?: string;
}

export interface RemoteFile {
  name: string;
  /** -1 when the server does not say. */
  size: number;
  /** When the server last modified it (ms since the epoch), when it says. */
  modified?: number;
}

export interface BankTransport {
  list(dir: string): Promise<RemoteFile[]>;
  /**
   * Uploads under its name, as banks' servers expect (many refuse renames); a bank processes a file once its upload
   * is closed, and a retry after a crash first lists the directory to see whether it arrived.
   */
  put(dir: string, name: string, bytes: Buffer): Promise<void>;
  get(dir: string, name: string): Promise<Buffer>;
  end(): Promise<void>;
}

export class HostKeyMismatchError extends Error {
  constructor(readonly presented: string) {
    super(`The bank's server presented host key ${presented}, not the pinned one`);
    this.name = 'HostKeyMismatchError';
  }
}

export class BankHostRefusedError extends Error {
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`The bank's host ${host} is refused: ${reason}`);
    this.name = 'BankHostRefusedError';
  }
}

/** The fingerprint of a host key blob, as `ssh-keygen -lf` prints it. */
export function hostKeyFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

export type BankConnect = (target: SftpTarget, organizationId: string) => Promise<BankTransport>;

/**
 * The deployment's way to a bank. The connector transport keeps each organization's connector in `store`; the host
 * is held to the same rule on both (production: public addresses only), checked before anything is sent.
 */
export function bankTransport(store?: ConnectorStore): BankConnect {
  if (config().PAYROLL_BANK_TRANSPORT !== 'connector') {
    return async (target) => (await import('./sftp-transport.js')).connectSftp(target);
  }
  let made: Promise<BankConnect> | undefined;
  const make = async (): Promise<BankConnect> => {
    if (!store) throw new Error('The connector transport needs a ConnectorStore');
    const [{ connectorTransport }, { TransferClient }, { SecretsManagerClient }, { traced }, { defaultObjectStore }] =
      await Promise.all([
        import('./transfer-connector.js'),
        import('@aws-sdk/client-transfer'),
        import('@aws-sdk/client-secrets-manager'),
        import('./observability.js'),
        import('./object-store.js'),
      ]);
    return connectorTransport({
      transfer: traced(new TransferClient({ maxAttempts: 5 })),
      secrets: traced(new SecretsManagerClient({ maxAttempts: 5 })),
      s3: () => defaultObjectStore().client(),
      store,
      bucket: required('DISBURSEMENT_BUCKET'),
      accessRoleArn: required('PAYROLL_BANK_CONNECTOR_ACCESS_ROLE_ARN'),
      loggingRoleArn: required('PAYROLL_BANK_CONNECTOR_LOGGING_ROLE_ARN'),
      secretPrefix: required('PAYROLL_BANK_CONNECTOR_SECRET_PREFIX'),
      deployment: required('PAYROLL_BANK_CONNECTOR_DEPLOYMENT'),
    });
  };
  return async (target, organizationId) => {
    const { checkBankHost } = await import('./bank-host.js');
    const check = await checkBankHost(target.host, target.port);
    if (!check.ok) throw new BankHostRefusedError(target.host, check.reason);
    made ??= make().catch((err: unknown) => {
      made = undefined;
      throw err;
    });
    return (await made)(target, organizationId);
  };
}
