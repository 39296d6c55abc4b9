/*
 * The sandbox bank: a real SFTP server (ssh2's Server and its SFTP subsystem) over a folder on disk, standing in for
 * the bank the service delivers NACHA files to, locally and in tests. Each account has /inbound, where the
 * originator uploads, and /outbound, where the bank answers each delivered file with an acknowledgement and, for
 * entries to the magic account 000000000, an R03 return file. A file named `*.pgp` is decrypted with the bank's own
 * PGP key (pgpPublicKey) before it is read.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { Connection } from 'ssh2';
import ssh2 from 'ssh2';
import { Account } from './account.js';
import type { SandboxBankEvent } from './events.js';
import { loadOrCreateHostKey } from './host-key.js';
import { loadOrCreatePgpKey } from './pgp-key.js';
import { type SftpSession, serveSftp } from './sftp-session.js';

export type { SandboxBankEvent } from './events.js';
export { fingerprintOf } from './host-key.js';

export interface SandboxBankOptions {
  /** Folder holding the host key and every account's directories (created if missing). */
  dataDir: string;
  /** Bind address: loopback unless told (`npm run sandbox-bank -- --listen 0.0.0.0` for a deployed sandbox stage). */
  host?: string;
  /** The host key's type: ed25519 (the default), or ecdsa for a bank reached through Transfer Family connectors. */
  hostKeyType?: 'ed25519' | 'ecdsa';
  /** 0 (the default) picks a free port. */
  port?: number;
  /**
   * The password of an account not added yet, if it is one the bank should open on first sign-in (the local stack
   * derives each organization's from its master key, so an organization linked a moment ago signs in at once).
   */
  accountPassword?: (username: string) => string | undefined;
  /** Called for each problem the bank sees (a file it cannot read): for logs and tests. */
  onEvent?: (e: SandboxBankEvent) => void;
}

export interface SandboxBankAccount {
  username: string;
  inboundDir: '/inbound';
  outboundDir: '/outbound';
}

export interface SandboxBank {
  port: number;
  /** 'SHA256:' + unpadded base64 of the SHA-256 of the host public key blob, as `ssh-keygen -lf` prints it. */
  hostKeyFingerprint: string;
  /** The bank's armored OpenPGP public key: a delivered `*.pgp` file is decrypted with its private half. */
  pgpPublicKey: string;
  /**
   * Adds (or replaces the password of) an SFTP account rooted at `<dataDir>/accounts/<username>/`, holding
   * `inbound/` (the originator's uploads) and `outbound/` (the bank's acknowledgements and returns).
   */
  addAccount(username: string, password: string): Promise<SandboxBankAccount>;
  /** Closes the server and every connection, and waits for the files being processed. */
  stop(): Promise<void>;
}

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** How long connections told to end get before their sockets are cut. */
const CLOSE_GRACE_MS = 1_000;

const digestOf = (password: string) => createHash('sha256').update(password, 'utf8').digest();

export async function startSandboxBank(options: SandboxBankOptions): Promise<SandboxBank> {
  const dataDir = resolve(options.dataDir);
  await mkdir(join(dataDir, 'accounts'), { recursive: true, mode: 0o700 });
  const hostKey = await loadOrCreateHostKey(dataDir, options.hostKeyType);
  const pgpKey = await loadOrCreatePgpKey(dataDir);
  const emit = (e: SandboxBankEvent) => {
    try {
      options.onEvent?.(e);
    } catch {}
  };

  const accounts = new Map<string, Promise<Account>>();
  const credentials = new Map<string, { digest: Buffer; account: Account }>();
  // Compared against when the username is unknown, so that an unknown user costs what a wrong password does.
  const nobody = createHash('sha256').update(randomBytes(32)).digest();
  const clients = new Set<Connection>();
  const sessions = new Set<SftpSession>();
  const sockets = new Set<Socket>();

  const sshServer = new ssh2.Server({ hostKeys: [hostKey.privateKey] }, (client) => {
    clients.add(client);
    let account: Account | undefined;
    // A client that drops mid-session is not the bank's problem; the socket's close cleans up.
    client.on('error', () => {});
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'password') return ctx.reject(['password']);
      const known = credentials.get(ctx.username);
      if (!known && USERNAME.test(ctx.username)) {
        const expected = options.accountPassword?.(ctx.username);
        if (expected !== undefined && timingSafeEqual(digestOf(ctx.password), digestOf(expected))) {
          // Opened on its first sign-in, then known like any other.
          return void bank.addAccount(ctx.username, expected).then(
            () => {
              account = credentials.get(ctx.username)!.account;
              ctx.accept();
            },
            () => ctx.reject(['password']),
          );
        }
      }
      const match = timingSafeEqual(digestOf(ctx.password), known?.digest ?? nobody);
      if (!known || !match) return ctx.reject(['password']);
      account = known.account;
      ctx.accept();
    });
    client.on('ready', () => {
      client.on('session', (accept) => {
        const session = accept();
        // SFTP only: exec, shell and the rest go unanswered, which ssh2 turns into refusals.
        session.on('sftp', (acceptSftp) => {
          const served = serveSftp(acceptSftp(), account!, emit);
          sessions.add(served);
          client.once('close', () => void served.finish().finally(() => sessions.delete(served)));
        });
      });
    });
    client.once('close', () => clients.delete(client));
  });

  // The bank owns the listening socket (ssh2 is handed each connection) so that stop() can cut every socket.
  const listener = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    sshServer.injectSocket(socket);
  });
  listener.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(listener, 'listening');
  const address = listener.address();
  if (address === null || typeof address === 'string') throw new Error('sandbox bank: no TCP address');

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    const closed = new Promise<void>((done) => listener.close(() => done()));
    for (const client of clients) client.end();
    if (sockets.size > 0) {
      const allClosed = Promise.all([...sockets].map((s) => once(s, 'close')));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([allClosed, new Promise((done) => (timer = setTimeout(done, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
    }
    await closed;
    await Promise.all([...sessions].map((s) => s.finish()));
    await Promise.all([...accounts.values()].map(async (account) => (await account).idle()));
  };

  const bank: SandboxBank = {
    port: address.port,
    hostKeyFingerprint: hostKey.fingerprint,
    pgpPublicKey: pgpKey.publicKey,
    async addAccount(username, password) {
      if (!USERNAME.test(username))
        throw new Error(`sandbox bank: username ${JSON.stringify(username)} is not allowed`);
      if (typeof password !== 'string' || password === '') throw new Error('sandbox bank: a password is required');
      if (stopping) throw new Error('sandbox bank: stopped');
      let opening = accounts.get(username);
      if (!opening) {
        opening = Account.open(username, join(dataDir, 'accounts', username), emit, pgpKey.decrypt);
        accounts.set(username, opening);
        opening.catch(() => accounts.delete(username));
      }
      const account = await opening;
      credentials.set(username, { digest: digestOf(password), account });
      return { username, inboundDir: '/inbound', outboundDir: '/outbound' };
    },
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
  return bank;
}
