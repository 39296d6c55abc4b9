import { isConditionalCheckFailure } from '../data/item.js';
import type { OrganizationRepository } from '../data/organization-repository.js';
import { ConcurrentModificationError, NotFoundError } from '../domain/errors.js';
import { centsToNumber, formatCents, parseMoney } from '../domain/money.js';
import type { OrganizationSettings } from '../domain/settings.js';
import type { UpdateSettingsInput } from '../schemas/settings.js';
import type { Deps } from '../adapters/clock.js';

const moneyNumber = (text: string) => {
  const parsed = parseMoney(text);
  if (!parsed.ok) throw new Error(`Stored amount "${text}" is not money`);
  return centsToNumber(parsed.cents);
};

export function settingsView(s: OrganizationSettings) {
  return {
    employment_types: s.employment_types,
    pay_groups: s.pay_groups,
    pay_schedules: s.pay_schedules,
    max_net_pay_per_employee: moneyNumber(s.max_net_pay_per_employee),
    max_payroll_total: moneyNumber(s.max_payroll_total),
    originator: s.originator,
    updated_at: s.updated_at,
  };
}

export async function loadSettings(organizations: OrganizationRepository, orgId: string): Promise<OrganizationSettings> {
  const settings = await organizations.getSettings(orgId);
  if (!settings) throw new NotFoundError();
  return settings;
}

/** Read, merge, write on the condition nobody wrote in between; on a lost race read again and re-apply. */
export async function updateSettings(
  organizations: OrganizationRepository,
  deps: Deps,
  orgId: string,
  patch: UpdateSettingsInput,
): Promise<OrganizationSettings> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await loadSettings(organizations, orgId);
    const next: OrganizationSettings = {
      ...current,
      ...(patch.employment_types && { employment_types: patch.employment_types }),
      ...(patch.pay_groups && { pay_groups: patch.pay_groups }),
      ...(patch.pay_schedules && { pay_schedules: patch.pay_schedules }),
      ...(patch.max_net_pay_per_employee !== undefined && { max_net_pay_per_employee: formatCents(patch.max_net_pay_per_employee) }),
      ...(patch.max_payroll_total !== undefined && { max_payroll_total: formatCents(patch.max_payroll_total) }),
      originator: { ...current.originator, ...patch.originator },
      updated_at: deps.now().toISOString(),
    };
    if (next.updated_at === current.updated_at) next.updated_at = new Date(Date.parse(next.updated_at) + 1).toISOString();
    try {
      await organizations.putSettings(orgId, next, current.updated_at);
      return next;
    } catch (err) {
      if (!isConditionalCheckFailure(err)) throw err;
    }
  }
  throw new ConcurrentModificationError();
}
