/**
 * The admin token lives in sessionStorage only: it goes when the tab closes, is never shared with other tabs, and
 * is never written to localStorage or a cookie (a cookie would also travel with requests the app did not make).
 */
const KEY = 'payroll-dashboard.token';

export function readToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // Storage unavailable: nothing was kept.
  }
}

/** `pk_sandbox_…` or `pk_live_…`: shown in the header so nobody mistakes production for the sandbox. */
export function environmentOf(token: string | null): 'sandbox' | 'live' | null {
  if (!token) return null;
  if (token.startsWith('pk_sandbox_')) return 'sandbox';
  if (token.startsWith('pk_live_')) return 'live';
  return null;
}
