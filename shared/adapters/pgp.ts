/**
 * OpenPGP for the bank link, through OpenPGP.js: reading the public key a bank gives for its files, and encrypting a
 * file to it. `openpgp` is imported on first use, so code that reads settings without encrypting never loads it.
 */
import type { Key } from 'openpgp';
import { MAX_PGP_PUBLIC_KEY_CHARS } from '../domain/bank-link.js';

export interface BankPublicKey {
  /** The primary key's fingerprint, hex, upper case (how banks and `gpg --fingerprint` quote it, less the spaces). */
  fingerprint: string;
  /** When the key stops being usable; null if never. */
  expires_at: string | null;
}

export type BankPublicKeyReading = ({ ok: true } & BankPublicKey) | { ok: false; reason: string };

const loadOpenpgp = () => import('openpgp');

/**
 * Reads an armored public key as the bank link will use it at `at`: exactly one key, public, neither revoked nor
 * expired, with a key able to encrypt. The reason of a refusal is written for the person who pasted the key.
 */
export async function readBankPublicKey(armored: string, at: Date = new Date()): Promise<BankPublicKeyReading> {
  if (armored.length > MAX_PGP_PUBLIC_KEY_CHARS)
    return { ok: false, reason: `An armored key is at most ${MAX_PGP_PUBLIC_KEY_CHARS} characters` };
  if (/-----BEGIN PGP PRIVATE KEY BLOCK-----/.test(armored))
    return { ok: false, reason: "A private key: give the bank's public key, never a private one" };
  // OpenPGP.js reads the first armored block and ignores what follows: a second block would go unseen.
  if ((armored.match(/-----BEGIN PGP /g) ?? []).length > 1)
    return { ok: false, reason: 'One armored key block is expected, this text holds several' };
  const openpgp = await loadOpenpgp();
  let keys: Key[];
  try {
    keys = await openpgp.readKeys({ armoredKeys: armored });
  } catch {
    return { ok: false, reason: 'Not a readable OpenPGP public key (`-----BEGIN PGP PUBLIC KEY BLOCK-----` …)' };
  }
  if (keys.length !== 1) return { ok: false, reason: `One key is expected, this block holds ${keys.length}` };
  const key = keys[0]!;
  if (key.isPrivate()) return { ok: false, reason: "A private key: give the bank's public key, never a private one" };
  if (await key.isRevoked(undefined, undefined, at)) return { ok: false, reason: 'This key is revoked' };
  const expiry = await key.getExpirationTime().catch(() => null);
  if (expiry instanceof Date && expiry.getTime() <= at.getTime())
    return { ok: false, reason: `This key expired on ${expiry.toISOString().slice(0, 10)}` };
  try {
    await key.verifyPrimaryKey(at);
  } catch (err) {
    return { ok: false, reason: `This key cannot be used: ${messageOf(err)}` };
  }
  try {
    await key.getEncryptionKey(undefined, at);
  } catch {
    return {
      ok: false,
      reason:
        'This key has no valid encryption subkey (a signing-only key, or its encryption subkey expired or revoked)',
    };
  }
  return {
    ok: true,
    fingerprint: key.getFingerprint().toUpperCase(),
    expires_at: expiry instanceof Date ? expiry.toISOString() : null,
  };
}

/**
 * `bytes` encrypted to the bank's key: a binary OpenPGP message (not armored), as banks expect a `.pgp` file. Throws
 * when the key can no longer encrypt (expired or revoked since it was set).
 */
export async function encryptForBank(bytes: Buffer, armored: string): Promise<Buffer> {
  const openpgp = await loadOpenpgp();
  const key = await openpgp.readKey({ armoredKey: armored });
  if (key.isPrivate()) throw new Error("The bank link's PGP key is a private key");
  const message = await openpgp.createMessage({ binary: new Uint8Array(bytes) });
  const encrypted = await openpgp.encrypt({ message, encryptionKeys: key, format: 'binary' });
  return Buffer.from(encrypted);
}

function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.slice(0, 200);
}
