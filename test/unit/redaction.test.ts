import { describe, expect, it } from 'vitest';
import { deterministicId, newId } from '../../shared/adapters/ids.js';
import { generateToken } from '../../shared/adapters/tokens.js';
import { REDACTED, redactFreeText, redactPath } from '../../shared/domain/audit.js';
import { newWebhookSecret } from '../../shared/use-cases/webhooks.js';

/**
 * One redaction for every line the service writes about a request (the access line, the audit line, and what the
 * audit log reads back): fed every secret format the service issues, in every place a client could put it.
 */

const SECRETS = {
  'a sandbox token': generateToken('sandbox'),
  'a live token': generateToken('production'),
  'a token without its prefix': generateToken('sandbox').slice('pk_sandbox_'.length),
  'a truncated token': generateToken('production').slice(0, 20),
  'a webhook signing secret': newWebhookSecret(),
  'a webhook secret without its prefix': newWebhookSecret().slice('whsec_'.length).replaceAll('/', 'A'),
  'a bank account number': '000123456789',
};

describe('redaction of secrets in request paths and free text', () => {
  it.each(Object.entries(SECRETS))('removes %s from a path, wherever it sits', (_, secret) => {
    for (const path of [`/v1/employees/${secret}`, `/v1/${secret}/x`, `/${secret}`]) {
      const redacted = redactPath(path);
      expect(redacted).not.toContain(secret);
      expect(redacted).toContain(REDACTED);
    }
  });

  it.each(Object.entries(SECRETS))('removes %s from a path when it is percent-encoded', (_, secret) => {
    expect(redactPath(`/v1/employees/${encodeURIComponent(secret)}`)).not.toContain(secret);
    expect(redactPath(`/v1/employees/${encodeURIComponent(secret)}`)).not.toMatch(/%2B|%2F|%3D/);
  });

  it.each(Object.entries(SECRETS))('removes %s from a user agent', (_, secret) => {
    expect(redactFreeText(`curl/8.5.0 ${secret} (x)`)).not.toContain(secret);
  });

  it('keeps every id the API issues, and version numbers, readable', () => {
    for (const prefix of ['org', 'key', 'emp', 'pay', 'stub', 'evt', 'whk', 'req'] as const) {
      const id = newId(prefix);
      expect(redactPath(`/v1/x/${id}`)).toBe(`/v1/x/${id}`);
      const derived = deterministicId(prefix, 'a', 'b');
      expect(redactPath(`/v1/x/${derived}`)).toBe(`/v1/x/${derived}`);
    }
    expect(redactFreeText('Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.6778.85')).toBe(
      'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.6778.85',
    );
  });
});
