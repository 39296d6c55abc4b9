import {
  type BankConnect,
  BankHostRefusedError,
  type BankTransport,
  HostKeyMismatchError,
  type RemoteFile,
} from '../../adapters/bank-transport.js';
import type { Deps } from '../../adapters/clock.js';
import type { FieldEncryptor } from '../../adapters/envelope-encryption.js';
import type { OrganizationRepository } from '../../data/organization-repository.js';
import { BankLinkNotConfiguredError } from '../../domain/errors.js';
import { loadSettings } from '../settings.js';
import { linkTarget } from './link-target.js';

/**
 * The console's "Test connection": one session with the organization's bank under its stored link, listing the
 * inbound and outbound directories, and nothing else (no file is sent, fetched or marked, and the link's status stays
 * the last pass's). What the bank answers is the outcome, not an error: a refused host key or a failed sign-in is a
 * diagnostic for the operator.
 */

export interface ConnectionTestServices {
  organizations: OrganizationRepository;
  /** Unwraps the link's password or key. */
  encryptor: FieldEncryptor;
  connect: BankConnect;
  deps: Pick<Deps, 'now'>;
}

/** The most files a directory's listing answers (by name); `truncated` says there were more. */
export const MAX_LISTED_FILES = 100;
/** The longest name and message answered: a bank's names and errors are its data, bounded and printable. */
export const MAX_LISTED_NAME = 255;
export const MAX_TEST_MESSAGE = 500;

export const CONNECTION_TEST_FAILURES = [
  'host_key_mismatch',
  'host_refused',
  'connection_failed',
  'listing_failed',
] as const;
export type ConnectionTestFailure = (typeof CONNECTION_TEST_FAILURES)[number];

export interface DirectoryListing {
  dir: string;
  files: RemoteFile[];
  truncated: boolean;
}

export type ConnectionTestView =
  | { ok: true; checked_at: string; inbound: DirectoryListing; outbound: DirectoryListing }
  | {
      ok: false;
      checked_at: string;
      reason: ConnectionTestFailure;
      message: string;
      /** `host_key_mismatch`: the fingerprint of the key the server presented. */
      presented_fingerprint?: string;
    };

/**
 * How long each step may take. API Gateway gives up on a request at 29 s: the session (the adapter's own ready timeout
 * is 10 s, after resolving the host) and then both listings fit in 22 s, leaving the request's authentication and
 * settings read their share.
 */
export interface TestBudget {
  connectMs: number;
  totalMs: number;
}
export const TEST_BUDGET: TestBudget = { connectMs: 12_000, totalMs: 22_000 };
/** Closing the session is not waited on longer than this: the answer is already known. */
const CLOSE_WAIT_MS = 2_000;

export async function testBankConnection(
  s: ConnectionTestServices,
  orgId: string,
  budget: TestBudget = TEST_BUDGET,
): Promise<ConnectionTestView> {
  const link = (await loadSettings(s.organizations, orgId)).bank_link;
  if (!link) throw new BankLinkNotConfiguredError();
  const started = s.deps.now();
  const checked_at = started.toISOString();
  const failed = (reason: ConnectionTestFailure, message: string): Extract<ConnectionTestView, { ok: false }> => ({
    ok: false,
    checked_at,
    reason,
    message: printable(message, MAX_TEST_MESSAGE),
  });

  const connecting = s.connect(await linkTarget(s.encryptor, orgId, link), orgId);
  let transport: BankTransport;
  try {
    transport = await within(connecting, budget.connectMs, `No session within ${seconds(budget.connectMs)}`);
  } catch (err) {
    // A session that opens after the deadline is closed as soon as it does.
    connecting.then((late) => late.end()).catch(() => undefined);
    if (err instanceof HostKeyMismatchError)
      return {
        ...failed(
          'host_key_mismatch',
          `The server presented host key ${err.presented}, not the pinned ${link.host_key_fingerprint}: the service did not sign in, and nothing was sent`,
        ),
        presented_fingerprint: err.presented,
      };
    if (err instanceof BankHostRefusedError) return failed('host_refused', `${err.message}: nothing was sent`);
    return failed('connection_failed', messageOf(err));
  }

  const remaining = () => budget.totalMs - (s.deps.now().getTime() - started.getTime());
  const list = async (dir: string): Promise<DirectoryListing> => {
    try {
      const files = await within(
        transport.list(dir),
        remaining(),
        `No answer within ${seconds(budget.totalMs)} in all`,
      );
      return listing(dir, files);
    } catch (err) {
      throw new ListingFailed(`Listing ${dir}: ${messageOf(err)}`);
    }
  };
  try {
    const inbound = await list(link.remote_inbound_dir);
    const outbound = await list(link.remote_outbound_dir);
    return { ok: true, checked_at, inbound, outbound };
  } catch (err) {
    if (err instanceof ListingFailed) return failed('listing_failed', err.message);
    throw err;
  } finally {
    await within(transport.end(), CLOSE_WAIT_MS, 'Not closed in time').catch(() => undefined);
  }
}

class ListingFailed extends Error {}

/** The files of a directory by name, at most `MAX_LISTED_FILES` of them. */
function listing(dir: string, files: readonly RemoteFile[]): DirectoryListing {
  const byName = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    dir,
    files: byName
      .slice(0, MAX_LISTED_FILES)
      .map((f) => ({ name: printable(f.name, MAX_LISTED_NAME), size: Math.max(0, Math.trunc(f.size)) })),
    truncated: byName.length > MAX_LISTED_FILES,
  };
}

/** `work`, or a rejection saying `late` once `ms` have passed (at once when there is no time left). */
function within<T>(work: Promise<T>, ms: number, late: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(late)), Math.max(0, ms));
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Control and invisible formatting characters shown as U+FFFD, at most `max` characters. */
function printable(text: string, max: number): string {
  const shown = text.replace(/(?![\u200C\u200D])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, '\uFFFD');
  const chars = Array.from(shown);
  return chars.length <= max ? shown : `${chars.slice(0, max - 1).join('')}…`;
}
