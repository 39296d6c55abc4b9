import { BANK_TIME_ZONE, zonedInstant } from './banking-calendar.js';

/**
 * The bank link (issue: files delivered to the bank by SFTP, what it sends back picked up): how an organization's
 * files reach its bank, and when each is due. Pure rules; the transport is an adapter.
 */

/** How `ssh-keygen -lf` prints a host key: `SHA256:` and the unpadded base64 of the key blob's SHA-256. */
export const HOST_KEY_FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;

/** An absolute remote directory: `/` then segments of letters, digits, `.`, `_`, `-`; never `.` or `..` alone. */
export function isRemoteDirectory(path: string): boolean {
  if (!/^\/[A-Za-z0-9._/-]{0,200}$/.test(path)) return false;
  return path
    .split('/')
    .slice(1)
    .every((segment, i, all) => (segment === '' ? i === all.length - 1 : segment !== '.' && segment !== '..'));
}

/** A host name or IPv4 address to connect to. */
export const REMOTE_HOST =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** The most a bank's armored PGP public key may hold (a 4096-bit RSA key with a few user ids is about 3 KB). */
export const MAX_PGP_PUBLIC_KEY_CHARS = 20_000;

/** The shape of an armored OpenPGP public key block; the key itself is read by the PGP adapter. */
export const ARMORED_PUBLIC_KEY =
  /^\s*-----BEGIN PGP PUBLIC KEY BLOCK-----\r?\n[\s\S]+\r?\n-----END PGP PUBLIC KEY BLOCK-----\s*$/;

export interface BankLink {
  host: string;
  port: number;
  username: string;
  /** Where files are uploaded (the bank's inbound directory). */
  remote_inbound_dir: string;
  /** Where the bank leaves acknowledgements, returns and notifications of change. */
  remote_outbound_dir: string;
  host_key_fingerprint: string;
  /** `HH:MM`, New York time: a file must be at the bank by its `release_by` day at this time. */
  cutoff_time: string;
  credential: { kind: 'password' | 'private_key'; ciphertext: string };
  /**
   * When the organization got its link (absent on links stored before it was kept): the link delivers the files made
   * since, never one made while there was none, which the organization may have taken to the bank by hand.
   */
  linked_at?: string;
  /** The bank's armored OpenPGP public key: when set, every file is encrypted to it before it is sent. Not secret. */
  pgp_public_key?: string | null;
  /** Its fingerprint (hex, upper case), read when the key was set. */
  pgp_key_fingerprint?: string | null;
}

/** Whether files are encrypted to the bank's PGP key before they are sent. */
export const encryptsFiles = (link: Pick<BankLink, 'pgp_public_key'>): boolean => !!link.pgp_public_key;

/**
 * The name a file has on the bank's server: its id, so a remote listing tells whether it was already sent; `.ach.pgp`
 * when it is sent encrypted to the bank's PGP key.
 */
export const remoteNameOf = (fileId: string, encrypted = false) => `${fileId}.ach${encrypted ? '.pgp' : ''}`;

/** The file a remote name is (`<id>.ach` or `<id>.ach.pgp`), if it is one of ours. */
export function fileIdOfRemoteName(name: string): string | undefined {
  const m = /^(file_[0-9a-hjkmnp-tv-z]{26})\.ach(?:\.pgp)?$/.exec(name);
  return m?.[1];
}

/** When a file must be at the bank: its release day at the link's cut-off, New York time. */
export const transmitBy = (releaseBy: string, cutoff: string): Date => zonedInstant(releaseBy, cutoff, BANK_TIME_ZONE);

/** A transmitted file the bank has not acknowledged this long after its cut-off is late. */
export const ACKNOWLEDGE_WITHIN_MS = 3_600_000;

/**
 * An acknowledgement file's first line: `ACK <remote name> <sha256 hex>`; then whether the bank accepted it. The
 * hash must be of the bytes sent, so an acknowledgement of another upload under the same name is not taken.
 */
export function readAcknowledgement(text: string): { name: string; sha256: string; accepted: boolean } | undefined {
  const [first, ...rest] = text.split(/\r?\n/);
  const m = /^ACK (\S{1,200}) ([0-9a-f]{64})$/.exec(first ?? '');
  if (!m) return undefined;
  return { name: m[1]!, sha256: m[2]!, accepted: rest.some((line) => line.trim() === 'ACCEPTED') };
}
