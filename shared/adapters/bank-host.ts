import { webhookUrlPolicy } from '../config/env.js';
import { checkOutboundHost, type HostCheck, type HostPolicy, type Resolver } from './outbound-host.js';

/**
 * The bank link's host, guarded as webhook URLs are (shared/adapters/outbound-host.ts): checked when the link is set
 * and again at every connection, which opens to an address this check returned.
 */

export interface BankHostOptions {
  /** Which hosts may be reached; by default the deployment's, the one webhook URLs follow (webhookUrlPolicy). */
  policy?: HostPolicy;
  resolve?: Resolver;
}

/** The policy a bank host is checked under: the one given, else the deployment's. */
export const bankHostPolicy = (options: BankHostOptions = {}): HostPolicy => options.policy ?? webhookUrlPolicy();

/** `addresses`: the ones a connection may use, in the resolver's order. */
export function checkBankHost(host: string, port: number, options: BankHostOptions = {}): Promise<HostCheck> {
  return checkOutboundHost(host.toLowerCase(), port, bankHostPolicy(options), {
    service: "the bank's SFTP server",
    resolve: options.resolve,
  });
}
