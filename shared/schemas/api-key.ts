import * as z from 'zod';
import { TOKEN_TYPES } from '../domain/scopes.js';
import { limitParam, pageTokenParam, text } from './common.js';

export const createApiKeyBody = z.strictObject({
  name: z.string().trim().min(1).pipe(text(100)),
  type: z.enum(TOKEN_TYPES),
  expires_at: z.iso
    .datetime({ offset: true, message: 'Must be an ISO 8601 date-time' })
    .refine((v) => Date.parse(v) > Date.now(), { message: 'Must be in the future', params: { code: 'out_of_range' } })
    .nullable()
    .optional(),
});
export type CreateApiKeyInput = z.infer<typeof createApiKeyBody>;

export const listApiKeysQuery = z.strictObject({ limit: limitParam, page_token: pageTokenParam });
export const apiKeyIdParams = z.object({ id: z.string().min(1).max(64) });

/** Seconds the old token keeps working: 0 (at once) to 7 days; 24 hours when absent. */
export const rotateApiKeyBody = z.strictObject({
  grace_period_seconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600)
    .optional(),
});
