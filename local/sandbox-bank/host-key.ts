import { createHash } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ssh2 from 'ssh2';

export interface HostKey {
  privateKey: string;
  /** As `ssh-keygen -lf` prints it: 'SHA256:' and the unpadded base64 SHA-256 of the public key blob. */
  fingerprint: string;
}

/** The SSH fingerprint of a public key blob (the bytes a client receives as the host key). */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * `<dataDir>/host_key`, made once (ed25519, mode 0600) and reused, so clients can pin its fingerprint; or, for a bank
 * reached through AWS Transfer Family connectors (which trust RSA and ECDSA host keys only), `host_key_ecdsa`.
 */
export async function loadOrCreateHostKey(dataDir: string, type: 'ed25519' | 'ecdsa' = 'ed25519'): Promise<HostKey> {
  const path = join(dataDir, type === 'ed25519' ? 'host_key' : 'host_key_ecdsa');
  let privateKey: string;
  try {
    privateKey = await readFile(path, 'utf8');
    await chmod(path, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    privateKey = (
      type === 'ed25519'
        ? ssh2.utils.generateKeyPairSync('ed25519')
        : ssh2.utils.generateKeyPairSync('ecdsa', { bits: 256 })
    ).private;
    try {
      await writeFile(path, privateKey, { mode: 0o600, flag: 'wx' });
    } catch (writeError) {
      // Another process made it first: theirs is the key.
      if ((writeError as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError;
      privateKey = await readFile(path, 'utf8');
    }
  }
  const parsed = ssh2.utils.parseKey(privateKey);
  if (parsed instanceof Error) throw new Error(`sandbox bank: ${path} is not a usable host key: ${parsed.message}`);
  return { privateKey, fingerprint: fingerprintOf(parsed.getPublicSSH()) };
}
