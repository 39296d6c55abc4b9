export const SCOPES = [
  'read:employees',
  'write:employees',
  'read:payroll',
  'write:payroll',
  'read:paystubs',
  'admin',
] as const;
export type Scope = (typeof SCOPES)[number];

export const TOKEN_TYPES = ['read-only', 'payroll-submitter', 'admin'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

/** The scopes each token type carries (least privilege: only admin may manage employees, keys and webhooks). */
export const SCOPES_BY_TYPE: Record<TokenType, readonly Scope[]> = {
  'read-only': ['read:employees', 'read:payroll', 'read:paystubs'],
  'payroll-submitter': ['read:employees', 'read:payroll', 'write:payroll', 'read:paystubs'],
  admin: SCOPES,
};

export function hasScope(granted: readonly string[], required: Scope): boolean {
  return granted.includes(required);
}
