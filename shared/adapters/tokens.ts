import { createHash, randomBytes } from 'node:crypto';
import type { Environment } from '../domain/settings.js';

export type { Environment };

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(43, '0');
}

/** `pk_sandbox_…` / `pk_live_…`: 256 random bits, the prefix makes a leaked token easy to scan for. */
export function generateToken(environment: Environment): string {
  const tag = environment === 'production' ? 'live' : 'sandbox';
  return `pk_${tag}_${base62(randomBytes(32))}`;
}

const TOKEN_SHAPE = /^pk_(sandbox|live)_[0-9A-Za-z]{43}$/;

export function isWellFormedToken(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

/**
 * Tokens carry 256 bits of entropy, so a single SHA-256 is the right hash: a slow password hash would add
 * latency to every request without adding safety against guessing.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What a listing may show of a token: its prefix and the last four characters. */
export function tokenHint(token: string): string {
  const prefix = token.startsWith('pk_live_') ? 'pk_live_' : 'pk_sandbox_';
  return `${prefix}…${token.slice(-4)}`;
}
