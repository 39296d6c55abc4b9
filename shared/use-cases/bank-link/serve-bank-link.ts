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
import type { BankLinkRepository } from '../../data/bank-link-repository.js';
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

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export async function serveBankLink(s: BankLinkServices, orgId: string, link: BankLink): Promise<PassOutcome> {
  const outcome: PassOutcome = { sent: [], foundSent: [], acknowledged: [], pickedUp: [], late: [] };
  const now = () => s.deps.now().toISOString();
  // Read once: what is to send, and what waits on the bank. Lateness is judged on it as the pass left it.
  const open = await s.bankLinks.openFiles(orgId);
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
          ? `host_refused: ${err.message}; nothing was sent`.slice(0, 500)
          : `connection_failed: ${(err as Error).message}`.slice(0, 500);
    await s.bankLinks.putStatus(orgId, { state: 'failing', reason: outcome.failure, checked_at: now() });
    businessMetrics.count(METRIC_NAMES.bankLinkPassesFailed);
    await raiseLate(s, orgId, link, open, outcome);
    return outcome;
  }
  try {
    await deliver(s, orgId, link, transport, open, outcome);
    await pickUp(s, orgId, link, transport, outcome);
    await s.bankLinks.putStatus(orgId, { state: 'ok', reason: null, checked_at: now() });
  } catch (err) {
    outcome.failure = `transfer_failed: ${(err as Error).message}`.slice(0, 500);
    await s.bankLinks.putStatus(orgId, { state: 'failing', reason: outcome.failure, checked_at: now() });
    businessMetrics.count(METRIC_NAMES.bankLinkPassesFailed);
  } finally {
    await transport.end();
  }
  await raiseLate(s, orgId, link, open, outcome);
  return outcome;
}

async function deliver(
  s: BankLinkServices,
  orgId: string,
  link: BankLink,
  transport: BankTransport,
  open: readonly DisbursementFileRecord[],
  outcome: PassOutcome,
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
): Promise<void> {
  const known = await s.bankLinks.pickedUp(orgId);
  for (const remote of await transport.list(link.remote_outbound_dir)) {
    const seen = known.get(remote.name) ?? [];
    // A name seen with this size is taken as that content; a name reused with another size is fetched and hashed.
    if (seen.some((k) => k.size === remote.size)) continue;
    const bytes = await transport.get(link.remote_outbound_dir, remote.name);
    const hash = sha256(bytes);
    if (seen.some((k) => k.sha256 === hash)) continue;
    const base = { name: remote.name, sha256: hash, size: bytes.length, picked_up_at: s.deps.now().toISOString() };
    const text = bytes.toString('latin1');
    const ack = readAcknowledgement(text);
    if (ack) {
      const fileId = fileIdOfRemoteName(ack.name);
      const file = fileId ? await s.disbursementFiles.get(orgId, fileId) : undefined;
      let result = 'unknown_file';
      if (file && file.sent_sha256 !== ack.sha256) result = 'hash_mismatch';
      else if (file && !ack.accepted) result = 'rejected_by_bank';
      else if (file) {
        await s.bankLinks.markAcknowledged(file, base.picked_up_at);
        outcome.acknowledged.push(file.file_id);
        result = 'acknowledged';
      }
      await s.bankLinks.recordInbound(orgId, {
        ...base,
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
        await s.bankLinks.recordInbound(orgId, { ...base, kind: 'returns', file_id: null, outcome: 'applied', items });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        const reason = err.details
          .slice(0, 3)
          .map((d) => d.message)
          .join('; ');
        await s.bankLinks.recordInbound(orgId, {
          ...base,
          kind: 'unreadable',
          file_id: null,
          outcome: `unreadable: ${reason}`.slice(0, 1000),
          items: {},
        });
      }
    }
    outcome.pickedUp.push(remote.name);
  }
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
  const candidates = open
    .filter((f) => f.late_at === null && !acknowledged.has(f.file_id))
    .map((f) => (sent.has(f.file_id) ? { ...f, status: 'transmitted' as const } : f))
    .filter((f) => {
      const due = transmitBy(f.release_by, link.cutoff_time).getTime();
      return f.status === 'ready' ? nowMs > due : nowMs > due + ACKNOWLEDGE_WITHIN_MS;
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
        reason: file.status === 'ready' ? 'not_transmitted_by_cutoff' : 'not_acknowledged_within_an_hour',
      },
      created_at: at,
    };
    // Once: the mark and its event in one transaction, conditioned on the file not being late already.
    if (
      (await s.transactions.writeThroughConflicts([s.bankLinks.lateItem(file, at), ...s.events.items([event])])) !==
      'ok'
    )
      continue;
    outcome.late.push(file.file_id);
    businessMetrics.count(METRIC_NAMES.disbursementFilesLate);
    events.push(event);
  }
  await dispatchQuietly(s, events);
}
