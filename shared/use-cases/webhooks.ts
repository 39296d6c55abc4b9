import { randomBytes } from 'node:crypto';
import type { Deps } from '../adapters/clock.js';
import type { FieldEncryptor } from '../adapters/envelope-encryption.js';
import { checkWebhookUrl, type Resolver } from '../adapters/webhook-url.js';
import type { WebhookRecord, WebhookRepository } from '../data/webhook-repository.js';
import { ConcurrentModificationError, InvalidRequestError, NotFoundError } from '../domain/errors.js';
import { SECRET_ROTATION_GRACE_MS, type EventType } from '../domain/events.js';

export interface WebhookServices {
  webhooks: WebhookRepository;
  encryptor: FieldEncryptor;
  deps: Deps;
  environment: 'sandbox' | 'production';
  resolve?: Resolver;
}

export function webhookView(w: WebhookRecord) {
  const previous = w.secrets.find((s) => s.expires_at !== null);
  return {
    webhook_id: w.webhook_id,
    url: w.url,
    events: w.events,
    description: w.description,
    status: w.status,
    consecutive_failures: w.consecutive_failures,
    previous_secret_expires_at: previous?.expires_at ?? null,
    created_at: w.created_at,
    updated_at: w.updated_at,
  };
}

/** `whsec_` and 24 random bytes in base64: the Standard Webhooks secret format its libraries read. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

async function safeUrl(s: WebhookServices, raw: string): Promise<string> {
  const check = await checkWebhookUrl(raw, s.environment, s.resolve);
  if (!check.ok) throw new InvalidRequestError([{ field: 'url', code: 'unsafe_url', message: check.reason }]);
  return check.url.toString();
}

export async function createWebhook(
  s: WebhookServices,
  orgId: string,
  input: { url: string; events?: EventType[] | null; description?: string | null },
) {
  const url = await safeUrl(s, input.url);
  const secret = newWebhookSecret();
  const now = s.deps.now().toISOString();
  const record: WebhookRecord = {
    webhook_id: s.deps.newId('whk'),
    organization_id: orgId,
    url,
    events: input.events ?? null,
    description: input.description ?? null,
    status: 'active',
    secrets: [{ ciphertext: await s.encryptor.encrypt(secret, orgId), created_at: now, expires_at: null }],
    consecutive_failures: 0,
    version: 1,
    created_at: now,
    updated_at: now,
  };
  await s.webhooks.create(record);
  return { record, secret };
}

async function mutate(
  s: WebhookServices,
  orgId: string,
  webhookId: string,
  change: (w: WebhookRecord, now: Date) => Promise<WebhookRecord> | WebhookRecord,
): Promise<WebhookRecord> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await s.webhooks.get(orgId, webhookId);
    if (!current) throw new NotFoundError();
    const next = await change(current, s.deps.now());
    try {
      await s.webhooks.replace(current, {
        ...next,
        version: current.version + 1,
        updated_at: s.deps.now().toISOString(),
      });
      return { ...next, version: current.version + 1 };
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
    }
  }
  throw new ConcurrentModificationError();
}

/** Re-enabling (`status: active`) also clears the failure count, so a fixed endpoint starts with a clean slate. */
export async function updateWebhook(
  s: WebhookServices,
  orgId: string,
  webhookId: string,
  patch: { url?: string; events?: EventType[] | null; description?: string | null; status?: 'active' | 'disabled' },
) {
  const url = patch.url === undefined ? undefined : await safeUrl(s, patch.url);
  return mutate(s, orgId, webhookId, (w) => ({
    ...w,
    ...(url !== undefined && { url }),
    ...(patch.events !== undefined && { events: patch.events }),
    ...(patch.description !== undefined && { description: patch.description }),
    ...(patch.status !== undefined && {
      status: patch.status,
      ...(patch.status === 'active' && { consecutive_failures: 0 }),
    }),
  }));
}

/** A new secret, shown once; the current one keeps signing for 24 h beside it, older ones are dropped. */
export async function rotateWebhookSecret(s: WebhookServices, orgId: string, webhookId: string) {
  const secret = newWebhookSecret();
  const ciphertext = await s.encryptor.encrypt(secret, orgId);
  const record = await mutate(s, orgId, webhookId, (w, now) => {
    const current = w.secrets.find((x) => x.expires_at === null) ?? w.secrets[0];
    const expires = new Date(now.getTime() + SECRET_ROTATION_GRACE_MS).toISOString();
    return {
      ...w,
      secrets: [
        { ciphertext, created_at: now.toISOString(), expires_at: null },
        ...(current ? [{ ...current, expires_at: expires }] : []),
      ],
    };
  });
  return { record, secret };
}

export async function deleteWebhook(
  s: Pick<WebhookServices, 'webhooks'>,
  orgId: string,
  webhookId: string,
): Promise<WebhookRecord> {
  const current = await s.webhooks.get(orgId, webhookId);
  if (!current || !(await s.webhooks.delete(orgId, webhookId))) throw new NotFoundError();
  return current;
}

/** The secrets that sign a delivery now: the current one, and a rotated-out one still inside its grace period. */
export async function signingSecrets(
  s: Pick<WebhookServices, 'encryptor'>,
  w: WebhookRecord,
  now: Date,
): Promise<string[]> {
  const live = w.secrets.filter((x) => x.expires_at === null || Date.parse(x.expires_at) > now.getTime());
  return Promise.all(live.map((x) => s.encryptor.decrypt(x.ciphertext, w.organization_id)));
}
