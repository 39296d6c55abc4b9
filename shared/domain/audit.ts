/**
 * The audit log's own rules: how long a line is kept and what it may never hold.
 *
 * Retention: 400 days, a year plus a margin, so a yearly review always finds the whole previous year.
 */
export const AUDIT_RETENTION_DAYS = 400;

const DAY_MS = 86_400_000;

/** Epoch seconds (DynamoDB TTL's unit) at which a line written for `at` expires. */
export function auditExpiresAt(at: string): number {
  return Math.floor(Date.parse(at) / 1000) + AUDIT_RETENTION_DAYS * 86_400;
}

/** The oldest instant a line can still be retained at `now`: reads never reach past it. */
export function auditRetentionStart(now: Date): string {
  return new Date(now.getTime() - AUDIT_RETENTION_DAYS * DAY_MS).toISOString();
}

/**
 * Anything shaped like a secret the service issues, whatever its length (a truncated or mistyped one is still a
 * secret): API tokens (`pk_sandbox_…`, `pk_live_…`) and webhook signing secrets (`whsec_…`, base64).
 */
const SECRET_LIKE = /(?:pk_(?:sandbox|live)_[0-9A-Za-z]*|whsec_[0-9A-Za-z+/=]*)/g;
/** A token's body without its prefix: 43 base62 characters (no id of this API is a bare run of 32 or more). */
const BARE_SECRET_RUN = /[0-9A-Za-z+/=]{32,}/g;
/** A path segment of nothing but 4 to 17 digits is what a bank account number looks like; no id of this API does. */
const DIGITS_SEGMENT = /^\d{4,17}$/;
/** In free text (a user agent), only long runs: version numbers stay readable. */
const LONG_DIGIT_RUN = /\d{8,17}/g;

export const REDACTED = '[redacted]';

/**
 * The request path as the log may keep it. The audit hook already leaves out the query string and the body, but
 * a client can still put a token or an account number into a path (`/v1/employees/<token>` is a 404, and it is
 * recorded): those parts are replaced before anything is stored.
 */
export function redactPath(path: string): string {
  // Redacted as the client meant it: a secret sent percent-encoded (`%2B`, `%2F`, `%3D`) is still the secret.
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // An undecodable path is redacted as it came.
  }
  return decoded
    .replace(SECRET_LIKE, REDACTED)
    .split('/')
    .map((segment) => (DIGITS_SEGMENT.test(segment) ? REDACTED : segment.replace(BARE_SECRET_RUN, REDACTED)))
    .join('/');
}

/** A user agent is whatever the client sent: the same scrubbing, for text rather than path segments. */
export function redactFreeText(text: string): string {
  return text.replace(SECRET_LIKE, REDACTED).replace(BARE_SECRET_RUN, REDACTED).replace(LONG_DIGIT_RUN, REDACTED);
}
