import type { SftpTarget } from '../../adapters/bank-transport.js';
import type { FieldEncryptor } from '../../adapters/envelope-encryption.js';
import type { BankLink } from '../../domain/bank-link.js';

/**
 * Where a session with the organization's bank goes, and what it signs in with: the link's password or private key,
 * unwrapped here (encrypted like account numbers, bound to the organization), so only a session ever holds it.
 */
export async function linkTarget(encryptor: FieldEncryptor, orgId: string, link: BankLink): Promise<SftpTarget> {
  const secret = await encryptor.decrypt(link.credential.ciphertext, orgId);
  return {
    host: link.host,
    port: link.port,
    username: link.username,
    hostKeyFingerprint: link.host_key_fingerprint,
    ...(link.credential.kind === 'password' ? { password: secret } : { privateKey: secret }),
  };
}
