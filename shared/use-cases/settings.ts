import { isConditionalCheckFailure } from '../data/item.js';
import type { FundingHold, OrganizationRepository } from '../data/organization-repository.js';
import {
  ConcurrentModificationError,
  InvalidRequestError,
  NotFoundError,
  type ProblemDetail,
} from '../domain/errors.js';
import { centsToNumber, formatCents, parseMoney } from '../domain/money.js';
import {
  approvalCutoffTime,
  approvalMode,
  fileRetentionDays,
  placeholdersOf,
  type Environment,
  type OrganizationSettings,
  type OriginatorField,
} from '../domain/settings.js';
import type { UpdateSettingsInput } from '../schemas/settings.js';
import type { Deps } from '../adapters/clock.js';
import type { FieldEncryptor } from '../adapters/envelope-encryption.js';
import { readBankPublicKey } from '../adapters/pgp.js';
import { type BankHostOptions, bankHostPolicy, checkBankHost } from '../adapters/bank-host.js';

const moneyNumber = (text: string) => {
  const parsed = parseMoney(text);
  if (!parsed.ok) throw new Error(`Stored amount "${text}" is not money`);
  return centsToNumber(parsed.cents);
};

/** `holds`: the organization's funding holds, oldest first (CONTRACT §12); the oldest is answered. */
export function settingsView(s: OrganizationSettings, environment: Environment, holds: readonly FundingHold[] = []) {
  return {
    employment_types: s.employment_types,
    pay_groups: s.pay_groups,
    pay_schedules: s.pay_schedules,
    max_net_pay_per_employee: moneyNumber(s.max_net_pay_per_employee),
    max_payroll_total: moneyNumber(s.max_payroll_total),
    originator: s.originator,
    originator_placeholders: placeholdersOf(s, environment),
    funding_account: s.funding_account && {
      routing_number: s.funding_account.routing_number,
      account_number_last4: s.funding_account.account_number_last4,
      account_type: s.funding_account.account_type,
    },
    file_retention_days: fileRetentionDays(s),
    payroll_approval: approvalMode(s),
    approval_cutoff_time: approvalCutoffTime(s),
    funding_hold: holds[0] ? { payroll_id: holds[0].payroll_id, code: holds[0].code, since: holds[0].since } : null,
    bank_link: s.bank_link
      ? {
          host: s.bank_link.host,
          port: s.bank_link.port,
          username: s.bank_link.username,
          remote_inbound_dir: s.bank_link.remote_inbound_dir,
          remote_outbound_dir: s.bank_link.remote_outbound_dir,
          host_key_fingerprint: s.bank_link.host_key_fingerprint,
          cutoff_time: s.bank_link.cutoff_time,
          credential: s.bank_link.credential.kind,
          pgp_public_key: s.bank_link.pgp_public_key ?? null,
          pgp_key_fingerprint: s.bank_link.pgp_key_fingerprint ?? null,
        }
      : null,
    updated_at: s.updated_at,
  };
}

export async function loadSettings(
  organizations: OrganizationRepository,
  orgId: string,
): Promise<OrganizationSettings> {
  const settings = await organizations.getSettings(orgId);
  if (!settings) throw new NotFoundError();
  return settings;
}

type BankLinkInput = NonNullable<UpdateSettingsInput['bank_link']>;

/**
 * What the schema cannot check synchronously: the host, guarded like a webhook URL (production: a name resolving to
 * public addresses only; a sandbox stack may also use loopback, and a name its resolver does not know yet, since every
 * connection checks again), and the PGP key, read as the link will use it. The key's fingerprint when there is one.
 */
async function checkBankLink(
  s: { deps: Deps; bankHost?: BankHostOptions },
  input: BankLinkInput,
): Promise<{ pgpKeyFingerprint: string | null }> {
  const problems: ProblemDetail[] = [];
  const host = await checkBankHost(input.host, input.port, s.bankHost);
  if (!host.ok && !(host.unresolved && bankHostPolicy(s.bankHost) === 'sandbox'))
    problems.push({ field: 'bank_link.host', code: 'unsafe_host', message: host.reason });
  let pgpKeyFingerprint: string | null = null;
  if (input.pgp_public_key) {
    const key = await readBankPublicKey(input.pgp_public_key, s.deps.now());
    if (key.ok) pgpKeyFingerprint = key.fingerprint;
    else problems.push({ field: 'bank_link.pgp_public_key', code: 'invalid_pgp_key', message: key.reason });
  }
  if (problems.length > 0) throw new InvalidRequestError(problems);
  return { pgpKeyFingerprint };
}

/**
 * Read, merge, write on the condition nobody wrote in between; on a lost race read again and re-apply. `bankHost`:
 * the host policy a bank link is checked under (by default the deployment's, as for webhook URLs).
 */
export async function updateSettings(
  s: {
    organizations: OrganizationRepository;
    deps: Deps;
    encryptor: FieldEncryptor;
    bankHost?: BankHostOptions;
    /** Forgets the last pass's outcome when the link points elsewhere: it was another server's. */
    bankLinkStatus?: { clear(orgId: string): Promise<void> };
  },
  caller: { organizationId: string; environment: Environment },
  patch: UpdateSettingsInput,
): Promise<OrganizationSettings> {
  const { organizations, deps } = s;
  const orgId = caller.organizationId;
  const linkChecked = patch.bank_link ? await checkBankLink(s, patch.bank_link) : undefined;
  // Encrypted once, outside the retry loop: the same ciphertext is written whichever attempt wins.
  const funding = patch.funding_account && {
    routing_number: patch.funding_account.routing_number,
    account_type: patch.funding_account.account_type,
    account_number_last4: patch.funding_account.account_number.slice(-4),
    account_number_ciphertext: await s.encryptor.encrypt(patch.funding_account.account_number, orgId),
  };
  // The bank's password or key, encrypted once like an account number; never answered again.
  const link = patch.bank_link && {
    host: patch.bank_link.host,
    port: patch.bank_link.port,
    username: patch.bank_link.username,
    remote_inbound_dir: patch.bank_link.remote_inbound_dir,
    remote_outbound_dir: patch.bank_link.remote_outbound_dir,
    host_key_fingerprint: patch.bank_link.host_key_fingerprint,
    cutoff_time: patch.bank_link.cutoff_time,
    credential: patch.bank_link.password
      ? { kind: 'password' as const, ciphertext: await s.encryptor.encrypt(patch.bank_link.password, orgId) }
      : { kind: 'private_key' as const, ciphertext: await s.encryptor.encrypt(patch.bank_link.private_key!, orgId) },
    // The link is given whole each time: a key left out is a key removed.
    pgp_public_key: patch.bank_link.pgp_public_key ?? null,
    pgp_key_fingerprint: linkChecked?.pgpKeyFingerprint ?? null,
  };
  const set = new Set(Object.keys(patch.originator ?? {}) as OriginatorField[]);
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await loadSettings(organizations, orgId);
    const next: OrganizationSettings = {
      ...current,
      ...(patch.employment_types && { employment_types: patch.employment_types }),
      ...(patch.pay_groups && { pay_groups: patch.pay_groups }),
      ...(patch.pay_schedules && { pay_schedules: patch.pay_schedules }),
      ...(patch.max_net_pay_per_employee !== undefined && {
        max_net_pay_per_employee: formatCents(patch.max_net_pay_per_employee),
      }),
      ...(patch.max_payroll_total !== undefined && { max_payroll_total: formatCents(patch.max_payroll_total) }),
      originator: { ...current.originator, ...patch.originator },
      originator_placeholders: placeholdersOf(current, caller.environment).filter((f) => !set.has(f)),
      funding_account: funding === undefined ? current.funding_account : funding,
      // The files the link is to deliver are those made since the organization had one: a link edited keeps its
      // `linked_at`; set where there was none, it starts now (files made before were the organization's to deliver).
      ...(link !== undefined && {
        bank_link: link && { ...link, linked_at: current.bank_link?.linked_at ?? deps.now().toISOString() },
      }),
      ...(patch.file_retention_days !== undefined && { file_retention_days: patch.file_retention_days }),
      ...(patch.payroll_approval !== undefined && { payroll_approval: patch.payroll_approval }),
      ...(patch.approval_cutoff_time !== undefined && { approval_cutoff_time: patch.approval_cutoff_time }),
      updated_at: deps.now().toISOString(),
    };
    if (next.updated_at === current.updated_at)
      next.updated_at = new Date(Date.parse(next.updated_at) + 1).toISOString();
    try {
      await organizations.putSettings(orgId, next, current.updated_at);
      const before = current.bank_link;
      const after = next.bank_link;
      const destination = (l: typeof before) =>
        l
          ? [l.host, l.port, l.username, l.remote_inbound_dir, l.remote_outbound_dir, l.host_key_fingerprint].join(
              '\u0000',
            )
          : '';
      if (link !== undefined && destination(before) !== destination(after)) await s.bankLinkStatus?.clear(orgId);
      return next;
    } catch (err) {
      if (!isConditionalCheckFailure(err)) throw err;
    }
  }
  throw new ConcurrentModificationError();
}
