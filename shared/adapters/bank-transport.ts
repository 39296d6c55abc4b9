import type { BankTransport, SftpTarget } from './sftp-transport.js';

/**
 * How this deployment reaches a bank: SFTP from the function itself (the local stack and the tests, against the
 * sandbox bank), or, deployed with `PAYROLL_BANK_TRANSPORT=connector`, an AWS Transfer Family connector per
 * organization (static egress addresses a bank can allow-list). Both speak `BankTransport`; each is loaded on first
 * use, so a function pays only for the one it runs.
 */
export type BankConnect = (target: SftpTarget, organizationId: string) => Promise<BankTransport>;

export function bankTransport(): BankConnect {
  return async (target) => {
    const { connectSftp } = await import('./sftp-transport.js');
    return connectSftp(target);
  };
}
