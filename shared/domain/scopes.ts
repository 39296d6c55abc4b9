export const SCOPES = [
  'read:employees',
  'write:employees',
  'read:payroll',
  'write:payroll',
  'read:paystubs',
  // Approving a run awaiting approval: the second person of dual control.
  'approve:payroll',
  // The text of NACHA files: every employee's and the funding account's full account numbers.
  'read:disbursements',
  'admin',
] as const;
export type Scope = (typeof SCOPES)[number];

export const TOKEN_TYPES = ['read-only', 'payroll-submitter', 'admin'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

/**
 * The scopes each token type carries (least privilege: only admin may manage employees, keys and webhooks, read full
 * account numbers in NACHA files, or report what the bank sent back). A key's scopes are its type's, read at every
 * request: a scope added here reaches the keys already issued.
 */
export const SCOPES_BY_TYPE: Record<TokenType, readonly Scope[]> = {
  'read-only': ['read:employees', 'read:payroll', 'read:paystubs'],
  'payroll-submitter': ['read:employees', 'read:payroll', 'write:payroll', 'read:paystubs'],
  admin: SCOPES,
};

export function hasScope(granted: readonly string[], required: Scope): boolean {
  return granted.includes(required);
}
