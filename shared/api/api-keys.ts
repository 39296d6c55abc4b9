import * as z from 'zod';
import { SCOPES, TOKEN_TYPES } from '../domain/scopes.js';
import type { apiKeyView } from '../use-cases/api-keys.js';
import { apiKeyIdParams, createApiKeyBody, listApiKeysQuery, rotateApiKeyBody } from '../schemas/api-key.js';
import { EXAMPLE_IDS, fits, id, page, printable, timestamp, type Fits } from './common.js';
import { routes } from './route.js';

export const apiKey = z
  .strictObject({
    api_key_id: id('key', EXAMPLE_IDS.apiKey),
    // createApiKeyBody: trimmed printable text of 1 to 100 characters.
    name: printable(100),
    type: z.enum(TOKEN_TYPES),
    scopes: z.array(z.enum(SCOPES)).max(SCOPES.length),
    // tokenHint (shared/adapters/tokens.ts).
    token_hint: z
      .string()
      .max(16)
      .regex(/^pk_(sandbox|live)_…[0-9A-Za-z]{4}$/)
      .meta({ description: "The token's prefix and last four characters", example: 'pk_sandbox_…x7Qa' }),
    created_at: timestamp,
    expires_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
    last_used_at: timestamp.nullable().meta({ description: 'Written at most once a minute per key' }),
    token_issued_at: timestamp.meta({
      description: 'When the current token was issued: at creation, then at each rotation',
    }),
    previous_token_expires_at: timestamp
      .nullable()
      .meta({ description: 'Until then the token replaced by the last rotation still works' }),
  })
  .meta({ id: 'ApiKey' });
fits<Fits<ReturnType<typeof apiKeyView>, typeof apiKey>>(true);

const apiKeyWithToken = apiKey
  .extend({
    // generateToken (shared/adapters/tokens.ts): 256 random bits in base62.
    token: z
      .string()
      .max(54)
      .regex(/^pk_(sandbox|live)_[0-9A-Za-z]{43}$/)
      .meta({
        description: 'The bearer token: shown only in this answer',
        example: 'pk_sandbox_3q9Xr7mWcTz2VbN8kLpD4sHfJ6gY1eA5R2n8Tw0x7Qa',
      }),
  })
  .meta({ id: 'ApiKeyWithToken' });

const KEY = {
  api_key_id: EXAMPLE_IDS.apiKey,
  name: 'CI deploys',
  type: 'payroll-submitter',
  scopes: ['read:employees', 'read:payroll', 'write:payroll', 'read:paystubs'],
  token_hint: 'pk_sandbox_…x7Qa',
  created_at: '2026-11-02T09:30:00.000Z',
  expires_at: '2027-05-01T00:00:00.000Z',
  revoked_at: null,
  last_used_at: '2026-11-21T10:02:21.004Z',
  token_issued_at: '2026-11-02T09:30:00.000Z',
  previous_token_expires_at: null,
} satisfies z.input<typeof apiKey>;
const TOKEN = 'pk_sandbox_3q9Xr7mWcTz2VbN8kLpD4sHfJ6gY1eA5R2n8Tw0x7Qa';
const keyParams = apiKeyIdParams.extend({
  id: apiKeyIdParams.shape.id.meta({ description: 'An API key id', example: EXAMPLE_IDS.apiKey }),
});

export const apiKeyRoutes = routes('admin', {
  createApiKey: {
    method: 'POST',
    path: '/v1/api-keys',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Create an API key',
    access: [],
    tag: 'API keys',
    description:
      'A new key of a token type (`read-only`, `payroll-submitter`, `admin`). The token is in this answer only; it is stored as a SHA-256 hash.',
    body: {
      schema: createApiKeyBody,
      example: { name: 'CI deploys', type: 'payroll-submitter', expires_at: '2027-05-01T00:00:00Z' },
    },
    success: [
      {
        status: 201,
        description: 'Created, with its `token` (shown once)',
        schema: apiKeyWithToken,
        envelope: 'ApiKeyWithTokenResponse',
        message: 'API key created; the token is shown only once',
        example: { ...KEY, last_used_at: null, token: TOKEN },
        location: true,
      },
    ],
    errors: {
      400: 'A malformed or unknown field, or `expires_at` not in the future',
      413: 'The body is over 6 MB',
      422: '`api_key_limit_reached`: the organization already holds 50 active keys (revoke one first)',
    },
  },
  listApiKeys: {
    method: 'GET',
    path: '/v1/api-keys',
    scope: 'admin',
    bucket: 'read',
    summary: 'List API keys',
    access: ['secret:signing'],
    tag: 'API keys',
    description: 'Every key of the organization, revoked ones too; never a token.',
    query: listApiKeysQuery,
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('api_keys', apiKey),
        envelope: 'ApiKeyListResponse',
        example: { api_keys: [KEY], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid `limit` or unknown parameter, or an altered or foreign `page_token` (`invalid_page_token`)',
    },
  },
  rotateApiKey: {
    method: 'POST',
    path: '/v1/api-keys/{id}/rotate',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Rotate an API key (the old token works for a grace period)',
    access: [],
    tag: 'API keys',
    description:
      'A new token for the key (shown once). The old one keeps working for the grace period (default 24 hours, 0 to 7 days), then stops. The body is optional.',
    params: keyParams,
    body: { schema: rotateApiKeyBody, required: false, example: { grace_period_seconds: 3600 } },
    success: [
      {
        status: 200,
        description: 'The key with its new `token`',
        schema: apiKeyWithToken,
        envelope: 'ApiKeyWithTokenResponse',
        message: 'API key rotated; the new token is shown only once',
        example: {
          ...KEY,
          token_issued_at: '2026-11-21T10:05:00.000Z',
          previous_token_expires_at: '2026-11-21T11:05:00.000Z',
          token: TOKEN,
        },
      },
    ],
    errors: {
      400: 'A malformed or unknown field',
      404: 'No unrevoked key with this id in your organization (also when a revocation of the key won a race with this rotation)',
      409: '`conflict`: another rotation of the key committed first; retry',
      413: 'The body is over 6 MB',
    },
  },
  revokeApiKey: {
    method: 'DELETE',
    path: '/v1/api-keys/{id}',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Revoke an API key',
    access: [],
    tag: 'API keys',
    description:
      'Revokes the key at once (its current token and one still in its rotation grace): the next request with either token, to any route, answers 401.',
    params: keyParams,
    success: [
      {
        status: 200,
        description: 'The revoked key, with `revoked_at`',
        schema: apiKey,
        envelope: 'ApiKeyResponse',
        message: 'API key revoked',
        example: { ...KEY, revoked_at: '2026-11-21T10:06:00.000Z' },
      },
    ],
    errors: { 404: 'No key with this id in your organization' },
  },
});
