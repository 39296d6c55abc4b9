import * as z from 'zod';
import { TOKEN_TYPES } from '../domain/scopes.js';
import { limitParam, lookupId, pageTokenParam, trimmedText } from './common.js';

export const createApiKeyBody = z.strictObject({
  name: trimmedText(100),
  type: z.enum(TOKEN_TYPES),
  expires_at: z.iso
    .datetime({ offset: true, message: 'Must be an ISO 8601 date-time' })
    // A date-time's fraction of a second has no length of its own: 64 characters hold any real one.
    .max(64)
    .refine((v) => Date.parse(v) > Date.now(), { message: 'Must be in the future', params: { code: 'out_of_range' } })
    .nullable()
    .optional(),
});
export type CreateApiKeyInput = z.infer<typeof createApiKeyBody>;

export const listApiKeysQuery = z.strictObject({ limit: limitParam, page_token: pageTokenParam });
export const apiKeyIdParams = z.object({ id: lookupId });

/** Seconds the old token keeps working: 0 (at once) to 7 days; 24 hours when absent. */
export const rotateApiKeyBody = z.strictObject({
  grace_period_seconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600)
    .optional()
    .meta({ format: 'int32' }),
});
