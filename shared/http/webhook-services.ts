import { fieldEncryptor } from '../adapters/envelope-encryption.js';
import { webhookUrlPolicy } from '../config/env.js';
import type { WebhookServices } from '../use-cases/webhooks.js';
import { recordServices } from './record-services.js';

/** Endpoint management: the encryptor is resolved only by the routes that store a secret. */
export function webhookServices(): WebhookServices {
  const p = recordServices();
  return {
    webhooks: p.webhooks,
    get encryptor() {
      return fieldEncryptor('webhook-secret');
    },
    deps: p.deps,
    environment: webhookUrlPolicy(),
  };
}
