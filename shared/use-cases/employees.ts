import type { Deps } from '../adapters/clock.js';
import type { FieldEncryptor } from '../adapters/envelope-encryption.js';
import type { EmployeeRecord, EmployeeRepository, StoredBankAccount } from '../data/employee-repository.js';
import type { OrganizationRepository } from '../data/organization-repository.js';
import { ConcurrentModificationError, InvalidRequestError, type ProblemDetail } from '../domain/errors.js';
import { CONFIGURED_FIELDS, type OrganizationSettings } from '../domain/settings.js';
import { createEmployeeBody, updateEmployeeBody, type BankAccountInput } from '../schemas/employee.js';
import { problemsFromZod } from '../schemas/problems.js';
import { loadSettings } from './settings.js';

export interface EmployeeServices {
  employees: EmployeeRepository;
  organizations: OrganizationRepository;
  encryptor: FieldEncryptor;
  deps: Deps;
}

export function employeeView(e: EmployeeRecord) {
  return {
    employee_id: e.employee_id,
    first_name: e.first_name,
    last_name: e.last_name,
    email: e.email,
    employment_type: e.employment_type,
    pay_group: e.pay_group,
    pay_schedule: e.pay_schedule,
    start_date: e.start_date,
    status: e.status,
    bank_account: e.bank_account && {
      account_type: e.bank_account.account_type,
      routing_number: e.bank_account.routing_number,
      account_number_last4: e.bank_account.account_number_last4,
      status: e.bank_account.status,
      status_reason: e.bank_account.status_reason,
      corrected_at: e.bank_account.corrected_at,
    },
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}
export type EmployeeView = ReturnType<typeof employeeView>;

/** Configured values match exactly (case-sensitive) one of the organization's settings. */
function configuredValueProblems(body: Record<string, unknown>, settings: OrganizationSettings): ProblemDetail[] {
  const problems: ProblemDetail[] = [];
  for (const [field, setting] of Object.entries(CONFIGURED_FIELDS)) {
    const value = body[field];
    const allowed = settings[setting];
    if (typeof value === 'string' && value !== '' && !allowed.includes(value)) {
      problems.push({
        field,
        code: 'invalid_value',
        message: `Must be one of the configured ${setting}: ${allowed.join(', ')}`,
        allowed,
      });
    }
  }
  return problems;
}

/** Schema problems and configured-value problems together, so the caller sees every problem at once. */
async function validate<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: import('zod').ZodError } },
  body: Record<string, unknown>,
  settings: OrganizationSettings,
): Promise<T> {
  const parsed = schema.safeParse(body);
  const problems = [
    ...(parsed.success ? [] : problemsFromZod(parsed.error, body)),
    ...configuredValueProblems(body, settings),
  ];
  if (problems.length > 0 || !parsed.success) throw new InvalidRequestError(problems);
  return parsed.data;
}

async function storedBankAccount(
  s: EmployeeServices,
  orgId: string,
  input: BankAccountInput,
): Promise<StoredBankAccount> {
  return {
    account_type: input.account_type,
    routing_number: input.routing_number,
    account_number_last4: input.account_number.slice(-4),
    account_number_ciphertext: await s.encryptor.encrypt(input.account_number, orgId),
    status: 'active',
    status_reason: null,
    corrected_at: null,
    account_ref: s.deps.newId('acct'),
  };
}

export async function createEmployee(
  s: EmployeeServices,
  orgId: string,
  body: Record<string, unknown>,
): Promise<EmployeeRecord> {
  const settings = await loadSettings(s.organizations, orgId);
  const input = await validate(createEmployeeBody, body, settings);
  const now = s.deps.now().toISOString();
  const record: EmployeeRecord = {
    employee_id: s.deps.newId('emp'),
    organization_id: orgId,
    first_name: input.first_name,
    last_name: input.last_name,
    email: input.email,
    employment_type: input.employment_type,
    pay_group: input.pay_group,
    pay_schedule: input.pay_schedule,
    start_date: input.start_date,
    status: 'active',
    bank_account: input.bank_account ? await storedBankAccount(s, orgId, input.bank_account) : null,
    version: 1,
    created_at: now,
    updated_at: now,
    removed_at: null,
  };
  await s.employees.create(record);
  return record;
}

const MAX_ATTEMPTS = 5;

/**
 * A partial update under optimistic concurrency: read, apply the patch, write on the condition that the version
 * is unchanged; if another writer won, read again and re-apply. Concurrent PATCHes of different fields therefore
 * all land (no lost field), and of the same field the last to commit wins.
 */
export async function updateEmployee(
  s: EmployeeServices,
  orgId: string,
  employeeId: string,
  body: Record<string, unknown>,
): Promise<EmployeeRecord> {
  const current0 = await s.employees.getActive(orgId, employeeId);
  const settings = await loadSettings(s.organizations, orgId);
  const patch = await validate(updateEmployeeBody, body, settings);
  const bank = patch.bank_account ? await storedBankAccount(s, orgId, patch.bank_account) : patch.bank_account;
  let current = current0;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 0) current = await s.employees.getActive(orgId, employeeId);
    const next: EmployeeRecord = {
      ...current,
      ...Object.fromEntries(Object.entries(patch).filter(([k, v]) => k !== 'bank_account' && v !== undefined)),
      ...(bank !== undefined && { bank_account: bank }),
      version: current.version + 1,
      updated_at: s.deps.now().toISOString(),
    };
    try {
      await s.employees.replace(current, next);
      return next;
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
    }
  }
  throw new ConcurrentModificationError();
}

export async function deleteEmployee(
  s: Pick<EmployeeServices, 'employees' | 'deps'>,
  orgId: string,
  employeeId: string,
): Promise<EmployeeRecord> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = await s.employees.getActive(orgId, employeeId);
    const now = s.deps.now().toISOString();
    const removed: EmployeeRecord = {
      ...current,
      status: 'removed',
      removed_at: now,
      updated_at: now,
      version: current.version + 1,
    };
    try {
      await s.employees.remove(current, removed);
      return removed;
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
    }
  }
  throw new ConcurrentModificationError();
}
