import { METRIC_NAMES } from '../../adapters/metric-names.js';
import { businessMetrics } from '../../adapters/observability.js';
import { createHash } from 'node:crypto';
import type { FieldEncryptor } from '../../adapters/envelope-encryption.js';
import { encryptForBank } from '../../adapters/pgp.js';
import {
  BankHostRefusedError,
  type BankTransport,
  HostKeyMismatchError,
  type SftpTarget,
} from '../../adapters/bank-transport.js';
import type { BankLinkRepository, PickedUp } from '../../data/bank-link-repository.js';
import type { DisbursementFileRecord } from '../../data/disbursement-file-repository.js';
import type { NewEvent } from '../../data/event-repository.js';
import {
  ACKNOWLEDGE_WITHIN_MS,
  type BankLink,
  encryptsFiles,
  fileIdOfRemoteName,
  readAcknowledgement,
  remoteNameOf,
  transmitBy,
} from '../../domain/bank-link.js';
import { DomainError } from '../../domain/errors.js';
import { applyBankReport, readBankReport, type ReturnServices } from '../disbursement-returns.js';
import { dispatchQuietly } from '../events.js';
import { openListedFile } from '../money-back/file-store.js';
import type { MoneyBackServices } from '../money-back/services.js';

/**
 * The bank link's one pass for an organization: deliver every `ready` file to the bank's inbound directory (once:
 * the directory is listed before any upload, so a file whose upload landed before a crash is marked, not sent
 * again), pick up what the bank left in its outbound directory (each file once by name and content: acknowledgements
 * mark files `acknowledged`, return and change files go through the one returns intake), and raise what is late.
 */

export interface BankLinkServices extends ReturnServices {
  files: MoneyBackServices['files'];
  bankLinks: BankLinkRepository;
  /** Unwraps the link's password or key (encrypted like account numbers). */
  encryptor: FieldEncryptor;
  /** Opens a session with the organization's bank: SFTP directly (local stack, tests), or a Transfer Family connector. */
  connect: (target: SftpTarget, organizationId: string) => Promise<BankTransport>;
}

export interface PassOutcome {
  sent: string[];
  /** Found on the bank's server already (an upload that landed before a crash): marked, not sent again. */
  foundSent: string[];
  acknowledged: string[];
  pickedUp: string[];
  late: string[];
  failure?: string;
}

type LateReason = 'not_transmitted_by_cutoff' | 'transmitted_after_cutoff' | 'not_acknowledged_within_an_hour';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export async function serveBankLink(s: BankLinkServices, orgId: string, link: BankLink): Promise<PassOutcome> {
  const outcome: PassOutcome = { sent: [], foundSent: [], acknowledged: [], pickedUp: [], late: [] };
  const now = () => s.deps.now().toISOString();
  // Read once: what is to send, and what waits on the bank. Lateness is judged on it as the pass left it. Files made
  // while the organization had no link are not the link's: it may have taken them to the bank by hand.
  const open = (await s.bankLinks.openFiles(orgId)).filter(
    (f) => link.linked_at === undefined || f.created_at >= link.linked_at,
  );
  let transport: BankTransport;
  try {
    const secret = await s.encryptor.decrypt(link.credential.ciphertext, orgId);
    transport = await s.connect(
      {
        host: link.host,
        port: link.port,
        username: link.username,
        hostKeyFingerprint: link.host_key_fingerprint,
        ...(link.credential.kind === 'password' ? { password: secret } : { privateKey: secret }),
      },
      orgId,
    );
  } catch (err) {
    outcome.failure =
      err instanceof HostKeyMismatchError
        ? `host_key_mismatch: the server presented ${err.presented}, not the pinned ${link.host_key_fingerprint}; nothing was sent`
        : err instanceof BankHostRefusedError
          ? `host_refused: ${err.message}; nothing was sent`
          : `connection_failed: ${describe(err)}`;
    await fail(s, orgId, outcome, now());
    await raiseLate(s, orgId, link, open, outcome);
    return outcome;
  }
  // Delivery and pickup each on their own: a file that cannot be sent does not hold back what the bank sent.
  const failures: string[] = [];
  try {
    await deliver(s, orgId, link, transport, open, outcome, failures);
  } catch (err) {
    failures.push(`transfer_failed: ${describe(err)}`);
  }
  try {
    await pickUp(s, orgId, link, transport, outcome, failures);
  } catch (err) {
    failures.push(`pickup_failed: ${describe(err)}`);
  } finally {
    await transport.end();
  }
  if (failures.length > 0) {
    outcome.failure = failures.join('; ');
    await fail(s, orgId, outcome, now());
  } else await s.bankLinks.putStatus(orgId, { state: 'ok', reason: null, checked_at: now() });
  await raiseLate(s, orgId, link, open, outcome);
  return outcome;
}

async function fail(s: BankLinkServices, orgId: string, outcome: PassOutcome, at: string): Promise<void> {
  outcome.failure = outcome.failure!.slice(0, 500);
  await s.bankLinks.putStatus(orgId, { state: 'failing', reason: outcome.failure, checked_at: at });
  businessMetrics.count(METRIC_NAMES.bankLinkPassesFailed);
}

/**
 * An error as the link's status may show it to the organization: the message, without what names the platform's
 * cloud account (ARNs, account ids) that an AWS error carries.
 */
function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message
    .replace(/arn:aws[\w-]*:[^\s"',]+/g, 'arn:…')
    .replace(/\b\d{12}\b/g, '…')
    .slice(0, 300);
}

/** A file the bank leaves bigger than this is not fetched: return and change files are kilobytes. */
export const MAX_INBOUND_BYTES = 10 * 1024 * 1024;
/** Stands for the hash of a file not fetched (too large): with its size, what tells it again. */
const NOT_FETCHED = 'not-fetched';

async function deliver(
  s: BankLinkServices,
  orgId: string,
  link: BankLink,
  transport: BankTransport,
  open: readonly DisbursementFileRecord[],
  outcome: PassOutcome,
  failures: string[],
): Promise<void> {
  const ready = open.filter((f) => f.status === 'ready');
  if (ready.length === 0) return;
  // What is on the server already: an upload that landed before a crash is not sent a second time (under either
  // name: the bank's PGP key may have been set or removed since).
  const there = new Set((await transport.list(link.remote_inbound_dir)).map((f) => f.name));
  const encrypted = encryptsFiles(link);
  for (const file of ready.sort((a, b) => a.file_id.localeCompare(b.file_id))) {
    // Read again just before sending: a file withdrawn since it was listed is never sent.
    const fresh = await s.disbursementFiles.get(orgId, file.file_id);
    if (fresh?.status !== 'ready') continue;
    const landed = [remoteNameOf(file.file_id, encrypted), remoteNameOf(file.file_id, !encrypted)].find((n) =>
      there.has(n),
    );
    let name: string;
    let bytes: Buffer;
    if (landed !== undefined) {
      // Its acknowledgement hashes the bytes the bank holds (an encryption is never the same twice): read them back.
      name = landed;
      bytes = await transport.get(link.remote_inbound_dir, landed);
      // In the clear, they must be the file: a partial upload (a connection dropped mid-way) is not "sent". It is
      // never overwritten or sent beside (the bank may be reading it): the link fails until someone looks.
      if (!landed.endsWith('.pgp')) {
        const plain = Buffer.from(await openListedFile(s, fresh), 'ascii');
        if (!plain.equals(bytes)) {
          failures.push(
            `partial_upload: ${landed} on the bank's server is ${bytes.length} bytes, not the file's ${plain.length}; not sent again`,
          );
          continue;
        }
      }
      outcome.foundSent.push(file.file_id);
    } else {
      name = remoteNameOf(file.file_id, encrypted);
      const plain = Buffer.from(await openListedFile(s, fresh), 'ascii');
      bytes = encrypted ? await encryptForBank(plain, link.pgp_public_key!) : plain;
      await transport.put(link.remote_inbound_dir, name, bytes);
      outcome.sent.push(file.file_id);
    }
    await s.bankLinks.markTransmitted(fresh, {
      remote_name: name,
      sent_sha256: sha256(bytes),
      at: s.deps.now().toISOString(),
    });
  }
}

async function pickUp(
  s: BankLinkServices,
  orgId: string,
  link: BankLink,
  transport: BankTransport,
  outcome: PassOutcome,
  failures: string[],
): Promise<void> {
  const known = await s.bankLinks.pickedUp(orgId);
  for (const remote of await transport.list(link.remote_outbound_dir)) {
    const seen = known.get(remote.name) ?? [];
    // Told again by size and modification time when the server gives both; otherwise fetched and told by content.
    // A bank that reuses a name (ACH_RETURNS.txt every day) writes files of the same size: the size alone says nothing.
    const modified = remote.modified ?? null;
    if (modified !== null && seen.some((k) => k.size === remote.size && k.modified === modified)) continue;
    if (seen.some((k) => k.sha256 === NOT_FETCHED && k.size === remote.size)) continue;
    const base = { name: remote.name, size: remote.size, modified, picked_up_at: s.deps.now().toISOString() };
    if (remote.size > MAX_INBOUND_BYTES) {
      await s.bankLinks.recordInbound(orgId, {
        ...base,
        sha256: NOT_FETCHED,
        kind: 'unreadable',
        file_id: null,
        outcome: `unreadable: ${remote.size} bytes, more than the ${MAX_INBOUND_BYTES} a bank's return file may be; not fetched`,
        items: {},
      });
      outcome.pickedUp.push(remote.name);
      continue;
    }
    try {
      await pickUpOne(s, orgId, transport, link, remote.name, base, seen, outcome);
    } catch (err) {
      // Nothing recorded: the next pass tries this file again. The files after it are not held back.
      failures.push(`pickup_failed: ${remote.name}: ${describe(err)}`);
    }
  }
}

async function pickUpOne(
  s: BankLinkServices,
  orgId: string,
  transport: BankTransport,
  link: BankLink,
  name: string,
  base: { name: string; size: number; modified: number | null; picked_up_at: string },
  seen: readonly PickedUp[],
  outcome: PassOutcome,
): Promise<void> {
  const bytes = await transport.get(link.remote_outbound_dir, name);
  if (bytes.length > MAX_INBOUND_BYTES) throw new Error(`${bytes.length} bytes: more than a return file may be`);
  const hash = sha256(bytes);
  if (seen.some((k) => k.sha256 === hash)) {
    // The same content under a new modification time (touched, copied again): remembered, not fetched again.
    if (base.modified !== null) await s.bankLinks.touchInbound(orgId, name, hash, base.modified);
    return;
  }
  const record = { ...base, sha256: hash, size: bytes.length };
  const text = bytes.toString('latin1');
  const ack = readAcknowledgement(text);
  if (ack) {
    const fileId = fileIdOfRemoteName(ack.name);
    const file = fileId ? await s.disbursementFiles.get(orgId, fileId) : undefined;
    let result = 'unknown_file';
    if (file && file.sent_sha256 !== ack.sha256) result = 'hash_mismatch';
    else if (file && !ack.accepted) result = 'rejected_by_bank';
    else if (file) {
      await s.bankLinks.markAcknowledged(file, record.picked_up_at);
      outcome.acknowledged.push(file.file_id);
      result = 'acknowledged';
    }
    await s.bankLinks.recordInbound(orgId, {
      ...record,
      kind: 'acknowledgement',
      file_id: fileId ?? null,
      outcome: result,
      items: {},
    });
  } else {
    // A return / notification-of-change file: the one intake a bank's file posted by hand goes through.
    try {
      const outcomes = await applyBankReport(s, orgId, readBankReport(text));
      const items: Record<string, number> = {};
      for (const o of outcomes) items[o.outcome] = (items[o.outcome] ?? 0) + 1;
      await s.bankLinks.recordInbound(orgId, { ...record, kind: 'returns', file_id: null, outcome: 'applied', items });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const reason = err.details
        .slice(0, 3)
        .map((d) => d.message)
        .join('; ');
      await s.bankLinks.recordInbound(orgId, {
        ...record,
        kind: 'unreadable',
        file_id: null,
        outcome: `unreadable: ${reason}`.slice(0, 1000),
        items: {},
      });
    }
  }
  outcome.pickedUp.push(name);
}

/**
 * A file not at the bank by its release day's cut-off, or not acknowledged an hour after it, is late: recorded once
 * on the file and told with `disbursement_file.late` (the alarm counts these events).
 */
async function raiseLate(
  s: BankLinkServices,
  orgId: string,
  link: BankLink,
  open: readonly DisbursementFileRecord[],
  outcome: PassOutcome,
): Promise<void> {
  const nowMs = s.deps.now().getTime();
  const sent = new Set([...outcome.sent, ...outcome.foundSent]);
  const acknowledged = new Set(outcome.acknowledged);
  // Ready past its cut-off; sent by this pass but after it; sent and not acknowledged an hour after it.
  const reasonOf = (f: DisbursementFileRecord): LateReason | undefined => {
    const due = transmitBy(f.release_by, link.cutoff_time).getTime();
    if (sent.has(f.file_id)) return nowMs > due ? 'transmitted_after_cutoff' : undefined;
    if (f.status === 'ready') return nowMs > due ? 'not_transmitted_by_cutoff' : undefined;
    return nowMs > due + ACKNOWLEDGE_WITHIN_MS ? 'not_acknowledged_within_an_hour' : undefined;
  };
  const candidates = open
    .filter((f) => f.late_at === null)
    .flatMap((f) => {
      const reason = reasonOf(f);
      // Acknowledged in this pass: late only if it reached the bank after its cut-off.
      if (reason === undefined || (acknowledged.has(f.file_id) && reason !== 'transmitted_after_cutoff')) return [];
      return [{ ...f, reason, status: sent.has(f.file_id) ? ('transmitted' as const) : f.status }];
    });
  const events: NewEvent[] = [];
  for (const file of candidates) {
    const at = s.deps.now().toISOString();
    const event: NewEvent = {
      event_id: s.deps.newId('evt'),
      organization_id: orgId,
      type: 'disbursement_file.late',
      payroll_id: file.payroll_id,
      data: {
        file_id: file.file_id,
        type: file.type,
        payroll_id: file.payroll_id,
        status: file.status,
        release_by: file.release_by,
        due_at: transmitBy(file.release_by, link.cutoff_time).toISOString(),
        reason: file.reason,
      },
      created_at: at,
    };
    // Once: the mark and its event in one transaction, conditioned on the file not being late already.
    if (
      (await s.transactions.writeThroughConflicts([
        s.bankLinks.lateItem(file, at, file.reason === 'transmitted_after_cutoff'),
        ...s.events.items([event]),
      ])) !== 'ok'
    )
      continue;
    outcome.late.push(file.file_id);
    businessMetrics.count(METRIC_NAMES.disbursementFilesLate);
    events.push(event);
  }
  await dispatchQuietly(s, events);
}
