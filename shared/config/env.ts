import * as z from 'zod';

/**
 * The environment, parsed once. Each value is optional here because every function needs a different subset;
 * `required()` fails fast with the variable's name when a function reaches for one it was not given.
 */
const intFromEnv = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) {
        ctx.addIssue({ code: 'custom', message: `expected a non-negative integer, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

const schema = z.object({
  TABLE_NAME: z.string().min(1).optional(),
  /** Payroll bodies, chunk work files and NACHA files. */
  DISBURSEMENT_BUCKET: z.string().min(1).optional(),
  /** The processor's queue: start, chunk and finalize messages of payroll runs. */
  PAYROLL_QUEUE_URL: z.string().min(1).optional(),
  WEBHOOK_QUEUE_URL: z.string().min(1).optional(),
  /** Entries a processor chunk handles; smaller chunks mean more parallelism and finer progress. */
  PAYROLL_CHUNK_SIZE: intFromEnv(1_000),
  PAYROLL_ENVIRONMENT: z.enum(['sandbox', 'production']).default('sandbox'),
  /** HMAC secret for page tokens, given directly (local stack, tests)… */
  PAYROLL_SIGNING_SECRET: z.string().min(32).optional(),
  /** …or read once per container from Secrets Manager (deployed). */
  PAYROLL_SIGNING_SECRET_ARN: z.string().min(1).optional(),
  /** KMS key for envelope encryption of bank account numbers (deployed). */
  PAYROLL_KMS_KEY_ID: z.string().min(1).optional(),
  /** The disbursement file key (deployed): wraps the per-file data keys that seal NACHA files. */
  PAYROLL_FILE_KMS_KEY_ID: z.string().min(1).optional(),
  /** Base64 32-byte master key used instead of KMS by the local stack and the tests. */
  PAYROLL_LOCAL_MASTER_KEY: z.string().min(1).optional(),
  /** Seconds before the 2nd and the 3rd delivery attempt of a webhook. */
  PAYROLL_WEBHOOK_RETRY_DELAYS_S: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const raw = v === undefined || v.trim() === '' ? '30,300' : v;
      const delays = raw.split(',').map((x) => Number(x.trim()));
      if (delays.some((d) => !Number.isInteger(d) || d < 0 || d > 43_200)) {
        ctx.addIssue({ code: 'custom', message: `expected comma-separated seconds (0 to 43200), got "${raw}"` });
        return z.NEVER;
      }
      return delays;
    }),
  /** Set by the local stack only: it is where a loopback webhook URL means the developer's own machine. */
  PAYROLL_LOCAL_STACK: z.enum(['true', 'false']).optional(),
  /** How the bank link reaches banks: SFTP from the function (default), or a Transfer Family connector (deployed). */
  PAYROLL_BANK_TRANSPORT: z.enum(['sftp', 'connector']).optional(),
  /** The connector transport's roles, secret name prefix and deployment tag (infra/constructs/bank-connector.ts). */
  PAYROLL_BANK_CONNECTOR_ACCESS_ROLE_ARN: z.string().min(1).optional(),
  PAYROLL_BANK_CONNECTOR_LOGGING_ROLE_ARN: z.string().min(1).optional(),
  PAYROLL_BANK_CONNECTOR_SECRET_PREFIX: z.string().min(1).optional(),
  PAYROLL_BANK_CONNECTOR_DEPLOYMENT: z.string().min(1).optional(),
  /** The origin browsers may call the API from (`*`, or e.g. the dashboard's https://…): stamped on every answer. Unset: no CORS. */
  PAYROLL_CORS_ALLOW_ORIGIN: z
    .string()
    .regex(/^(\*|https?:\/\/[^/\s]+)$/, 'expected * or an origin such as https://dashboard.example.com')
    .optional(),
  PAYROLL_RATE_LIMIT_READ: intFromEnv(300),
  PAYROLL_RATE_LIMIT_PAYROLL_WRITE: intFromEnv(100),
  PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE: intFromEnv(100),
  /** An organization's keys together get this many times one key's limit per bucket (`0`: no organization bucket). */
  PAYROLL_RATE_LIMIT_ORG_FACTOR: intFromEnv(3),
});

export type Config = z.infer<typeof schema>;

let cached: Config | undefined;

export function config(): Config {
  if (!cached) {
    const parsed = schema.safeParse(process.env);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new Error(`Invalid environment: ${problems}`);
    }
    cached = parsed.data;
  }
  return cached;
}

export function required<K extends keyof Config>(key: K): NonNullable<Config[K]> {
  const value = config()[key];
  if (value === undefined || value === null) throw new Error(`Missing environment variable ${String(key)}`);
  return value as NonNullable<Config[K]>;
}

/** Tests and the local stack change the environment between runs; this forgets the parsed copy. */
export function resetConfigForTests(): void {
  cached = undefined;
}

/**
 * The URL policy for webhooks. Loopback (http://localhost, 127.0.0.1) is accepted only by a sandbox local stack:
 * inside a deployed Lambda, 127.0.0.1:9001 is the Lambda Runtime API, so even a deployed sandbox applies the
 * production rule (https, public addresses only).
 */
export function webhookUrlPolicy(): 'sandbox' | 'production' {
  const c = config();
  return c.PAYROLL_ENVIRONMENT === 'sandbox' && c.PAYROLL_LOCAL_STACK === 'true' ? 'sandbox' : 'production';
}
