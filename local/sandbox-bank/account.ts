import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxBankEvent } from './events.js';
import { type NachaReading, readNacha, returnFileFor } from './nacha.js';

/** Decrypts a delivered `.pgp` file with the bank's own key. */
export type Decrypt = (bytes: Buffer) => Promise<Buffer>;

const PGP_SUFFIX = /\.pgp$/;

const LEDGER = '.bank-ledger.json';
/** Prefixes of the bank's unfinished writes: hidden from clients, removed at start. */
export const UPLOAD_PREFIX = '.upload-';
const OUTPUT_PREFIX = '.out-';
const PART_SUFFIX = '.part';

interface LedgerEntry {
  sha256: string;
  received_at: string;
  /** `pending`: taken in, outputs not all written yet (a restart finishes them, with the same names and bytes). */
  state: 'pending' | 'done';
  result?: 'accepted' | 'rejected' | 'lost';
  return_file?: string;
}

export function partName(prefix: string): string {
  return `${prefix}${randomUUID()}${PART_SUFFIX}`;
}

/** Writes `name` in `dir` whole or not at all: a temporary file, synced, then renamed over. */
export async function writeAtomic(dir: string, name: string, data: string): Promise<void> {
  const temp = join(dir, partName(OUTPUT_PREFIX));
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, join(dir, name));
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/** Removes what a crash left half-written anywhere in the account's tree (symlinks are not followed). */
async function removeLeftovers(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await removeLeftovers(path);
    else if (
      entry.isFile() &&
      entry.name.endsWith(PART_SUFFIX) &&
      (entry.name.startsWith(UPLOAD_PREFIX) || entry.name.startsWith(OUTPUT_PREFIX))
    )
      await unlink(path);
  }
}

function stamp(at: Date): string {
  return `${at.toISOString().replace(/[-:]/g, '').slice(0, 15)}Z`;
}

/**
 * One account's folder and its ledger: what was delivered to /inbound, and what the bank has answered. Files are
 * processed one at a time, in the order they arrived.
 */
export class Account {
  readonly inbound: string;
  readonly outbound: string;
  /** Virtual paths with an upload under way, on any connection: a second upload to one is refused. */
  readonly uploading = new Set<string>();
  private readonly queued = new Set<string>();
  private tail: Promise<void> = Promise.resolve();

  private constructor(
    readonly username: string,
    readonly root: string,
    private readonly ledger: Map<string, LedgerEntry>,
    private readonly emit: (e: SandboxBankEvent) => void,
    private readonly decrypt: Decrypt,
  ) {
    this.inbound = join(root, 'inbound');
    this.outbound = join(root, 'outbound');
  }

  static async open(
    username: string,
    root: string,
    emit: (e: SandboxBankEvent) => void,
    decrypt: Decrypt,
  ): Promise<Account> {
    await mkdir(join(root, 'inbound'), { recursive: true, mode: 0o700 });
    await mkdir(join(root, 'outbound'), { recursive: true, mode: 0o700 });
    await removeLeftovers(root);
    let ledger = new Map<string, LedgerEntry>();
    try {
      const stored = JSON.parse(await readFile(join(root, LEDGER), 'utf8')) as { files: Record<string, LedgerEntry> };
      ledger = new Map(Object.entries(stored.files));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`sandbox bank: cannot read ${join(root, LEDGER)}: ${(error as Error).message}`);
    }
    const account = new Account(username, root, ledger, emit, decrypt);
    // Finish what a stop cut short: files taken in but not answered, and files published but not yet recorded.
    for (const [name, entry] of ledger) if (entry.state === 'pending') account.accept(name);
    for (const entry of await readdir(account.inbound, { withFileTypes: true }))
      if (entry.isFile() && !entry.name.startsWith('.') && !ledger.has(entry.name)) account.accept(entry.name);
    return account;
  }

  /** A name delivered before (or being processed): it may not be delivered again. */
  isKnown(name: string): boolean {
    return this.ledger.has(name) || this.queued.has(name);
  }

  /** Whether the bank is done with an inbound file, so the client may remove it. */
  isSettled(name: string): boolean {
    return !this.queued.has(name);
  }

  /** Queues a file just published at `/inbound/<name>`. */
  accept(name: string): void {
    this.queued.add(name);
    this.tail = this.tail
      .then(() => this.process(name))
      .catch((error: unknown) => {
        this.emit({ type: 'processing-failed', username: this.username, file: name, message: String(error) });
      })
      .finally(() => this.queued.delete(name));
  }

  /** Resolves once every queued file is processed. */
  async idle(): Promise<void> {
    await this.tail;
  }

  private async save(): Promise<void> {
    await writeAtomic(this.root, LEDGER, `${JSON.stringify({ version: 1, files: Object.fromEntries(this.ledger) })}\n`);
  }

  private async process(name: string): Promise<void> {
    let bytes: Buffer;
    try {
      const handle = await open(join(this.inbound, name), constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch (error) {
      const entry = this.ledger.get(name);
      if (entry) {
        entry.state = 'done';
        entry.result = 'lost';
        await this.save();
      }
      throw error;
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    let entry = this.ledger.get(name);
    if (entry?.state === 'done') return;
    if (!entry) {
      entry = { sha256, received_at: new Date().toISOString(), state: 'pending' };
      this.ledger.set(name, entry);
      await this.save();
    }
    const receivedAt = new Date(entry.received_at);
    // The acknowledgement names the file as delivered and hashes the bytes received, encrypted or not.
    const reading = await this.read(name, bytes);
    const ack = [`ACK ${name} ${sha256}`];
    if (reading.ok) {
      const returns = returnFileFor(reading, receivedAt);
      if (returns !== undefined) {
        // Returns go back in clear: named after the file without `.pgp`, so the name does not claim otherwise.
        const returnFile = `RET_${stamp(receivedAt)}_${name.replace(PGP_SUFFIX, '')}`;
        await writeAtomic(this.outbound, returnFile, returns);
        entry.return_file = returnFile;
      }
      ack.push(
        `ENTRIES ${reading.entryCount}`,
        `TOTAL_DEBIT_CENTS ${reading.totalDebitCents}`,
        `TOTAL_CREDIT_CENTS ${reading.totalCreditCents}`,
        'ACCEPTED',
      );
      entry.result = 'accepted';
    } else {
      ack.push(`REJECTED ${reading.reason}`);
      entry.result = 'rejected';
      this.emit({ type: 'file-rejected', username: this.username, file: name, reason: reading.reason });
    }
    // After the return file: whoever sees the acknowledgement sees the returns too.
    await writeAtomic(this.outbound, `${name}.ack`, `${ack.join('\n')}\n`);
    entry.state = 'done';
    await this.save();
  }

  /** A `.pgp` file is decrypted with the bank's key first; one that does not decrypt is refused with the reason. */
  private async read(name: string, bytes: Buffer): Promise<NachaReading> {
    if (!PGP_SUFFIX.test(name)) return readNacha(bytes);
    let plain: Buffer;
    try {
      plain = await this.decrypt(bytes);
    } catch (error) {
      const why = String((error as Error).message ?? error)
        .replace(/\s+/g, ' ')
        .slice(0, 200);
      return { ok: false, reason: `cannot decrypt with the bank's PGP key: ${why}` };
    }
    return readNacha(plain);
  }
}
