import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as openpgp from 'openpgp';

export interface BankPgpKey {
  /** The bank's armored public key: what an originator sets as its link's `pgp_public_key`. */
  publicKey: string;
  /** The bytes of a binary OpenPGP message encrypted to this key; throws when it is not one. */
  decrypt(bytes: Buffer): Promise<Buffer>;
}

/**
 * `<dataDir>/pgp_key`, made once (an ECC key on curve25519 in the form GnuPG 2.2 reads too, mode 0600) and reused
 * like the host key, so a link set once keeps working across restarts. Not passphrase-protected: a test bank's key.
 */
export async function loadOrCreatePgpKey(dataDir: string): Promise<BankPgpKey> {
  const path = join(dataDir, 'pgp_key');
  let armored: string;
  try {
    armored = await readFile(path, 'utf8');
    await chmod(path, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const made = await openpgp.generateKey({
      type: 'ecc',
      curve: 'curve25519Legacy',
      userIDs: [{ name: 'Sandbox Bank', email: 'files@sandbox-bank.invalid' }],
      format: 'armored',
    });
    armored = made.privateKey;
    try {
      await writeFile(path, armored, { mode: 0o600, flag: 'wx' });
    } catch (writeError) {
      // Another process made it first: theirs is the key.
      if ((writeError as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError;
      armored = await readFile(path, 'utf8');
    }
  }
  let privateKey: openpgp.PrivateKey;
  try {
    privateKey = await openpgp.readPrivateKey({ armoredKey: armored });
  } catch (error) {
    throw new Error(`sandbox bank: ${path} is not a usable PGP key: ${(error as Error).message}`);
  }
  return {
    publicKey: privateKey.toPublic().armor(),
    async decrypt(bytes) {
      const message = await openpgp.readMessage({ binaryMessage: new Uint8Array(bytes) });
      const { data } = await openpgp.decrypt({ message, decryptionKeys: privateKey, format: 'binary' });
      return Buffer.from(data);
    },
  };
}
