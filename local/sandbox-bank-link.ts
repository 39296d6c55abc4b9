import { createHmac } from 'node:crypto';
import type { BankLink } from '../shared/domain/bank-link.js';
import type { LocalSecrets } from './stack-state.js';

/**
 * How a sandbox organization of the local stack is linked to the stack's sandbox bank: its own account (named after
 * the organization, with a password derived from the stack's master key, so the stack registers it again at each
 * start without storing it twice), on loopback, with the bank's pinned host key.
 */

/** The sandbox bank's address as the links store it. */
export const SANDBOX_BANK_HOST = '127.0.0.1';
/** The sandbox bank account of an organization: its id, and a password only this stack can derive. */
export function sandboxBankAccount(secrets: LocalSecrets, orgId: string): { username: string; password: string } {
  const password = createHmac('sha256', secrets.master_key).update(`sandbox-bank:${orgId}`).digest('base64url');
  return { username: orgId, password };
}

/** The settings patch that links a new sandbox organization to the local stack's sandbox bank. */
export function sandboxBankLink(
  bank: { port: number; host_key_fingerprint: string },
  secrets: LocalSecrets,
  orgId: string,
) {
  const { username, password } = sandboxBankAccount(secrets, orgId);
  return {
    host: SANDBOX_BANK_HOST,
    port: bank.port,
    username,
    password,
    remote_inbound_dir: '/inbound',
    remote_outbound_dir: '/outbound',
    host_key_fingerprint: bank.host_key_fingerprint,
    cutoff_time: '16:00',
  };
}

/** Whether a stored link is the default one to this stack's sandbox bank (any port: the bank's may change). */
export const isSandboxLink = (orgId: string, link: BankLink, fingerprint: string) =>
  link.host === SANDBOX_BANK_HOST && link.username === orgId && link.host_key_fingerprint === fingerprint;
