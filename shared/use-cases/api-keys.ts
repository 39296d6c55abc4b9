import type { Deps } from '../adapters/clock.js';
import { generateToken, hashToken, tokenHint, type Environment } from '../adapters/tokens.js';
import type { ApiKeyRecord, ApiKeyRepository } from '../data/api-key-repository.js';
import type { OrganizationRepository } from '../data/organization-repository.js';
import { cancelledConditions } from '../data/item.js';
import { ConcurrentModificationError, NotFoundError } from '../domain/errors.js';
import { SCOPES_BY_TYPE, type TokenType } from '../domain/scopes.js';
import { defaultSettings } from '../domain/settings.js';

export function apiKeyView(k: ApiKeyRecord) {
  return {
    api_key_id: k.api_key_id,
    name: k.name,
    type: k.type,
    // The type's scopes as declared now (what the authenticator grants), not those stored when the key was made.
    scopes: [...SCOPES_BY_TYPE[k.type]],
    token_hint: k.token_hint,
    created_at: k.created_at,
    expires_at: k.expires_at,
    revoked_at: k.revoked_at,
    last_used_at: k.last_used_at,
    token_issued_at: k.token_issued_at ?? k.created_at,
    previous_token_expires_at: k.previous_token_expires_at,
  };
}

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The only time the token exists outside the caller's hands: it is returned once and stored as a hash. */
  token: string;
}

function newKey(
  deps: Deps,
  orgId: string,
  environment: Environment,
  input: { name: string; type: TokenType; expires_at?: string | null },
): IssuedKey {
  const token = generateToken(environment);
  const record: ApiKeyRecord = {
    api_key_id: deps.newId('key'),
    organization_id: orgId,
    environment,
    name: input.name,
    type: input.type,
    scopes: [...SCOPES_BY_TYPE[input.type]],
    token_hint: tokenHint(token),
    token_hash: hashToken(token),
    created_at: deps.now().toISOString(),
    expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
    revoked_at: null,
    last_used_at: null,
    token_issued_at: deps.now().toISOString(),
    previous_token_hash: null,
    previous_token_expires_at: null,
  };
  return { record, token };
}

export async function createApiKey(
  apiKeys: ApiKeyRepository,
  deps: Deps,
  orgId: string,
  environment: Environment,
  input: { name: string; type: TokenType; expires_at?: string | null },
): Promise<IssuedKey> {
  const issued = newKey(deps, orgId, environment, input);
  await apiKeys.create(issued.record);
  return issued;
}

export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;

/** A new token for the key, shown once; the old one keeps working until the grace period ends (default 24 h). */
export async function rotateApiKey(
  apiKeys: ApiKeyRepository,
  deps: Deps,
  orgId: string,
  apiKeyId: string,
  graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
): Promise<IssuedKey> {
  const key = await apiKeys.get(orgId, apiKeyId);
  if (!key || key.revoked_at) throw new NotFoundError();
  const token = generateToken(key.environment);
  const now = deps.now();
  try {
    const record = await apiKeys.rotate(
      key,
      { hash: hashToken(token), hint: tokenHint(token) },
      now.toISOString(),
      new Date(now.getTime() + graceSeconds * 1000).toISOString(),
    );
    return { record, token };
  } catch (err) {
    // Lost to a revocation (404, as for a revoked key) or to another rotation (409): never a 500.
    if (!cancelledConditions(err)) throw err;
    const current = await apiKeys.get(orgId, apiKeyId);
    if (!current || current.revoked_at) throw new NotFoundError();
    throw new ConcurrentModificationError();
  }
}

export async function revokeApiKey(
  apiKeys: ApiKeyRepository,
  deps: Deps,
  orgId: string,
  apiKeyId: string,
): Promise<ApiKeyRecord> {
  const key = await apiKeys.get(orgId, apiKeyId);
  if (!key) throw new NotFoundError();
  if (key.revoked_at) return key;
  let current = key;
  for (let attempt = 1; ; attempt++) {
    const revokedAt = deps.now().toISOString();
    const outcome = await apiKeys.revoke(current, revokedAt);
    if (outcome === 'revoked') return { ...current, revoked_at: revokedAt };
    const now = await apiKeys.get(orgId, apiKeyId);
    if (!now) throw new NotFoundError();
    if (outcome === 'already_revoked' || now.revoked_at) return now;
    // A rotation committed between the read and the revocation: revoke what the key has now, its new token too.
    if (attempt >= 10) throw new ConcurrentModificationError();
    current = now;
  }
}

/** A new organization, its default settings and its first admin key, created atomically. */
export async function createOrganization(
  organizations: OrganizationRepository,
  deps: Deps,
  input: { name: string; environment: Environment },
): Promise<{ organization_id: string; api_key_id: string; token: string }> {
  const now = deps.now();
  const orgId = deps.newId('org');
  const issued = newKey(deps, orgId, input.environment, { name: 'Initial admin key', type: 'admin' });
  await organizations.create(
    { organization_id: orgId, name: input.name, environment: input.environment, created_at: now.toISOString() },
    defaultSettings({ id: orgId, name: input.name }, input.environment, now),
    issued.record,
    issued.record.token_hash,
  );
  return { organization_id: orgId, api_key_id: issued.record.api_key_id, token: issued.token };
}
