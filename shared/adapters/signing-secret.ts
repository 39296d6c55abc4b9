import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config/env.js';
import { traced } from './observability.js';

let secret: Promise<Buffer> | undefined;

/** The HMAC secret behind page tokens: given directly locally, read once per container from Secrets Manager when deployed. */
export function signingSecret(): Promise<Buffer> {
  secret ??= (async () => {
    const { PAYROLL_SIGNING_SECRET, PAYROLL_SIGNING_SECRET_ARN } = config();
    if (PAYROLL_SIGNING_SECRET) return Buffer.from(PAYROLL_SIGNING_SECRET, 'utf8');
    if (!PAYROLL_SIGNING_SECRET_ARN) throw new Error('Missing environment variable PAYROLL_SIGNING_SECRET_ARN');
    const out = await traced(new SecretsManagerClient({})).send(
      new GetSecretValueCommand({ SecretId: PAYROLL_SIGNING_SECRET_ARN }),
    );
    if (!out.SecretString) throw new Error('The signing secret is empty');
    return Buffer.from(out.SecretString, 'utf8');
  })().catch((err) => {
    secret = undefined;
    throw err;
  });
  return secret;
}
