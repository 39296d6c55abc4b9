import { timingSafeEqual } from 'node:crypto';
import SftpClient from 'ssh2-sftp-client';
import { type BankHostOptions, checkBankHost } from './bank-host.js';
import {
  BankHostRefusedError,
  type BankTransport,
  HostKeyMismatchError,
  hostKeyFingerprint,
  type SftpTarget,
} from './bank-transport.js';

/**
 * The bank's SFTP server, through `ssh2-sftp-client`: list a directory, upload, download. The host is guarded like a
 * webhook URL: resolved once, every address checked (production: public only), and the connection opened to the
 * checked address, so a refused host fails with `BankHostRefusedError` before any packet is sent to it. The host key
 * is pinned: a server whose key does not hash to the configured fingerprint is refused before any credential is
 * sent, and the connection fails with `HostKeyMismatchError`.
 */

export {
  BankHostRefusedError,
  type BankTransport,
  HostKeyMismatchError,
  hostKeyFingerprint,
  type RemoteFile,
  type SftpTarget,
} from './bank-transport.js';

const CONNECT_TIMEOUT_MS = 10_000;

/** Opens sessions under `options`' host policy (tests and the local stack name theirs). */
export function sftpConnector(options: BankHostOptions = {}): (target: SftpTarget) => Promise<BankTransport> {
  return (target) => openSftp(target, options);
}

/** Opens a session under the deployment's host policy. */
export const connectSftp = sftpConnector();

async function openSftp(target: SftpTarget, options: BankHostOptions): Promise<BankTransport> {
  const check = await checkBankHost(target.host, target.port, options);
  if (!check.ok) throw new BankHostRefusedError(target.host, check.reason);
  // The checked address itself, never the name again: ssh2 opens an IP literal without asking DNS.
  const address = check.addresses[0];
  if (address === undefined) throw new BankHostRefusedError(target.host, 'hostname did not resolve');
  const client = new SftpClient('bank-link');
  let presented: string | undefined;
  try {
    await client.connect({
      host: address,
      port: target.port,
      username: target.username,
      ...(target.password !== undefined && { password: target.password }),
      ...(target.privateKey !== undefined && { privateKey: target.privateKey }),
      readyTimeout: CONNECT_TIMEOUT_MS,
      retries: 0,
      hostVerifier: (key: Buffer) => {
        presented = hostKeyFingerprint(key);
        const a = Buffer.from(presented);
        const b = Buffer.from(target.hostKeyFingerprint);
        return a.length === b.length && timingSafeEqual(a, b);
      },
    });
  } catch (err) {
    await client.end().catch(() => undefined);
    if (presented !== undefined && presented !== target.hostKeyFingerprint) throw new HostKeyMismatchError(presented);
    throw err;
  }
  const path = (dir: string, name: string) => `${dir.replace(/\/+$/, '')}/${name}`;
  return {
    async list(dir) {
      const entries = await client.list(dir);
      return entries
        .filter((e) => e.type === '-')
        .map((e) => ({ name: e.name, size: e.size, ...(e.modifyTime > 0 && { modified: e.modifyTime }) }));
    },
    async put(dir, name, bytes) {
      await client.put(bytes, path(dir, name));
    },
    async get(dir, name) {
      const out = await client.get(path(dir, name));
      if (!Buffer.isBuffer(out)) throw new Error(`Downloading ${name} gave no bytes`);
      return out;
    },
    async end() {
      await client.end().catch(() => undefined);
    },
  };
}
