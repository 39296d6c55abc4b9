import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { METRIC_NAMES } from '../../shared/adapters/metric-names.js';
import { businessMetrics } from '../../shared/adapters/observability.js';
import { type SandboxBank, startSandboxBank } from '../../local/sandbox-bank/index.js';
import { productionBank } from '../../shared/adapters/bank.js';
import type { FieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { type BankTransport, sftpConnector } from '../../shared/adapters/sftp-transport.js';
import { BankLinkRepository } from '../../shared/data/bank-link-repository.js';
import type { PaystubRecord } from '../../shared/data/paystub-repository.js';
import { remoteNameOf } from '../../shared/domain/bank-link.js';
import { type BankLinkServices, serveBankLink } from '../../shared/use-cases/bank-link/serve-bank-link.js';
import { openListedFile } from '../../shared/use-cases/money-back/file-store.js';
import { runPaystubIds } from '../../shared/use-cases/process-payroll.js';
import { loadSettings, updateSettings } from '../../shared/use-cases/settings.js';
import { bankReturnFile } from '../support/bank-return-file.js';
import { drain, payrollBody, payrollWorld, submitRun } from '../support/payroll-fixture.js';

/**
 * The bank link on the real engines and the real protocol: files delivered by SFTP to the sandbox bank (an ssh2
 * server over a folder), its acknowledgements and return files picked up and applied through the returns intake;
 * a crash between an upload and its mark; a return file met twice; a server whose host key is not the pinned one.
 */

type World = Awaited<ReturnType<typeof payrollWorld>>;
const MAGIC = '000000000';
const iso = (d: Date) => d.toISOString().slice(0, 10);
let bank: SandboxBank;
let bankDir: string;
/** The sandbox bank listens on loopback: reachable under the sandbox host policy only, as on a local stack. */
const bankHost = { policy: 'sandbox' } as const;
const connectSftp = sftpConnector(bankHost);
let accounts = 0;

beforeAll(async () => {
  bankDir = await mkdtemp(join(tmpdir(), 'bank-link-'));
  bank = await startSandboxBank({ dataDir: bankDir, port: 0 });
});

afterAll(async () => {
  await bank?.stop();
  await rm(bankDir, { recursive: true, force: true });
});

/** A world whose processor simulates nothing (the bank answers by files), linked to its own account at the bank. */
async function linkedWorld(
  accountNumber: (i: number) => string,
  fingerprint = bank.hostKeyFingerprint,
  pgpPublicKey?: string,
) {
  const world = await payrollWorld(3, { accountNumber });
  const services = { ...world.services, banks: { sandbox: productionBank, production: productionBank } };
  const orgId = world.org.organization_id;
  const username = `org${accounts++}`;
  const password = `secret-${username}`;
  const account = await bank.addAccount(username, password);
  await updateSettings(
    { ...services, encryptor: services.encryptor, bankHost },
    { organizationId: orgId, environment: 'sandbox' },
    {
      bank_link: {
        host: '127.0.0.1',
        port: bank.port,
        username,
        remote_inbound_dir: account.inboundDir,
        remote_outbound_dir: account.outboundDir,
        host_key_fingerprint: fingerprint,
        cutoff_time: '15:00',
        password,
        ...(pgpPublicKey && { pgp_public_key: pgpPublicKey }),
      },
    },
  );
  const link = (await loadSettings(services.organizations, orgId)).bank_link!;
  const linkServices: BankLinkServices = {
    ...services,
    bankLinks: new BankLinkRepository(world.table),
    encryptor: services.encryptor as FieldEncryptor,
    connect: connectSftp,
  };
  return { world: { ...world, services }, orgId, link, username, linkServices };
}

async function completedRun(world: World): Promise<{ payrollId: string; stubs: PaystubRecord[] }> {
  const orgId = world.org.organization_id;
  const payDate = new Date(Date.now() + 10 * 86_400_000);
  const body = payrollBody(world.employeeIds, {
    type: 'off_cycle',
    pay_period_start: iso(new Date(payDate.getTime() - 19 * 86_400_000)),
    pay_period_end: iso(new Date(payDate.getTime() - 5 * 86_400_000)),
    pay_date: iso(payDate),
  });
  const payrollId = await submitRun(world, body, 2);
  await drain(world.services, world.queues.payroll, orgId, payrollId);
  const record = (await world.services.payrolls.get(orgId, payrollId))!;
  expect(record.status).toBe('completed');
  return { payrollId, stubs: await world.services.paystubs.getMany(await runPaystubIds(world.services, record)) };
}

/** Passes until `done` holds (the bank answers as soon as an upload closes; a pass picks up what is there). */
async function passUntil(
  s: BankLinkServices,
  orgId: string,
  link: Parameters<typeof serveBankLink>[2],
  done: () => Promise<boolean>,
) {
  const outcomes = [];
  for (let i = 0; i < 100; i++) {
    outcomes.push(await serveBankLink(s, orgId, link));
    if (await done()) return outcomes;
  }
  throw new Error(`not done after 100 passes: ${JSON.stringify(outcomes.at(-1))}`);
}

/**
 * The link's services with a pass that dies right after an upload (a Lambda timing out): `keep` is what of the file
 * reaches the bank. Counts the uploads.
 */
function crashingAfterUpload(s: BankLinkServices, keep: (bytes: Buffer) => Buffer = (b) => b) {
  const uploads = { count: 0 };
  const services: BankLinkServices = {
    ...s,
    connect: async (target) => {
      const transport = await connectSftp(target);
      return {
        ...transport,
        put: async (dir, name, bytes) => {
          uploads.count++;
          await transport.put(dir, name, keep(bytes));
          await transport.end();
          throw new Error('Task timed out after the upload');
        },
      } satisfies BankTransport;
    },
  };
  return { services, uploads };
}

/** The bank's side as a test sets it: a listing and the files behind it (the service's storage stays real). */
function bankServing(
  s: BankLinkServices,
  outbound: () => { name: string; bytes: Buffer; modified?: number; claimedSize?: number }[],
): { services: BankLinkServices; fetched: string[] } {
  const fetched: string[] = [];
  const services: BankLinkServices = {
    ...s,
    connect: async () => ({
      list: async (dir) =>
        dir === '/outbound'
          ? outbound().map((f) => ({
              name: f.name,
              size: f.claimedSize ?? f.bytes.length,
              ...(f.modified !== undefined && { modified: f.modified }),
            }))
          : [],
      put: async () => {},
      get: async (_dir, name) => {
        fetched.push(name);
        return outbound().find((f) => f.name === name)!.bytes;
      },
      end: async () => {},
    }),
  };
  return { services, fetched };
}

/** The bank's return of one deposit, as a bank writes it. */
async function returnFileOf(world: World, stub: PaystubRecord, code: string): Promise<Buffer> {
  const settings = await loadSettings(world.services.organizations, world.org.organization_id);
  const text = bankReturnFile(
    {
      odfiRouting: settings.originator.immediate_destination.trim(),
      rdfiRouting: stub.payment.routing_number,
      companyName: 'BANK LINK',
      companyIdentification: settings.originator.company_identification,
    },
    {
      returns: [
        {
          originalTrace: stub.payment.trace_number!,
          code,
          amountCents: stub.net_pay,
          routing: stub.payment.routing_number,
          account: `0000${stub.payment.account_number_last4}`,
          individualId: stub.employee_id.slice(-15),
        },
      ],
    },
  );
  return Buffer.from(text, 'latin1');
}

describe('the bank link', () => {
  it('delivers a ready file once, byte for byte; the acknowledgement and the return of a magic account come back by themselves', async () => {
    const { world, orgId, link, username, linkServices } = await linkedWorld((i) => (i === 0 ? MAGIC : `7700${i}123`));
    const { payrollId, stubs } = await completedRun(world);
    const fileId = (await world.services.payrolls.get(orgId, payrollId))!.disbursement!.file_id!;
    const first = await serveBankLink(linkServices, orgId, link);
    expect(first).toMatchObject({ sent: [fileId], foundSent: [] });
    const sent = (await world.services.disbursementFiles.get(orgId, fileId))!;
    // The bank answers as soon as the upload closes: the same pass may have picked its acknowledgement up already.
    expect(['transmitted', 'acknowledged']).toContain(sent.status);
    expect(sent.remote_name).toBe(remoteNameOf(fileId));
    expect(sent.transmitted_at).not.toBeNull();
    // What the bank received is the file the API serves.
    const received = await readFile(join(bankDir, 'accounts', username, 'inbound', remoteNameOf(fileId)), 'ascii');
    expect(received).toBe(await openListedFile(world.services, sent));

    const magic = stubs.find((p) => p.payment.account_number_last4 === '0000')!;
    await passUntil(linkServices, orgId, link, async () => {
      const file = await world.services.disbursementFiles.get(orgId, fileId);
      const stub = await world.services.paystubs.get(orgId, magic.paystub_id);
      return file?.status === 'acknowledged' && stub?.payment.status === 'returned';
    });
    expect((await world.services.paystubs.get(orgId, magic.paystub_id))!.payment.return).toMatchObject({ code: 'R03' });
    const inbound = (await linkServices.bankLinks.listInbound(orgId, 10)).items;
    expect(inbound.map((f) => f.kind).sort()).toEqual(['acknowledgement', 'returns']);
    expect(inbound.find((f) => f.kind === 'returns')!.items).toEqual({ applied: 1 });
    const events = await world.services.events.list(orgId, { type: 'payment.returned' }, 10);
    expect(events.items).toHaveLength(1);

    // Nothing is sent or applied twice.
    const again = await serveBankLink(linkServices, orgId, link);
    expect(again).toMatchObject({ sent: [], foundSent: [], pickedUp: [] });
  });

  it('a crash between an upload and its mark: the next pass finds the file on the server and does not send it again', async () => {
    const { world, orgId, link, linkServices } = await linkedWorld((i) => `7800${i}123`);
    const { payrollId } = await completedRun(world);
    const fileId = (await world.services.payrolls.get(orgId, payrollId))!.disbursement!.file_id!;
    const { services: crashing, uploads } = crashingAfterUpload(linkServices);
    const crashed = await serveBankLink(crashing, orgId, link);
    expect(crashed.failure).toMatch(/timed out/);
    expect((await world.services.disbursementFiles.get(orgId, fileId))!.status).toBe('ready');
    const resumed = await serveBankLink(crashing, orgId, link);
    expect(resumed).toMatchObject({ sent: [], foundSent: [fileId] });
    expect(uploads.count).toBe(1);
    const marked = (await world.services.disbursementFiles.get(orgId, fileId))!;
    expect(['transmitted', 'acknowledged']).toContain(marked.status);
    expect(marked.transmitted_at).not.toBeNull();
  });

  it("encrypts to the bank's PGP key: the bank decrypts and acknowledges the bytes it holds, also after a crash between upload and mark", async () => {
    const { world, orgId, link, username, linkServices } = await linkedWorld(
      (i) => `7500${i}123`,
      bank.hostKeyFingerprint,
      bank.pgpPublicKey,
    );
    expect(link.pgp_key_fingerprint).toMatch(/^[0-9A-F]{40,64}$/);
    const { payrollId } = await completedRun(world);
    const fileId = (await world.services.payrolls.get(orgId, payrollId))!.disbursement!.file_id!;
    const { services: crashing } = crashingAfterUpload(linkServices);
    expect((await serveBankLink(crashing, orgId, link)).failure).toMatch(/timed out/);
    const name = remoteNameOf(fileId, true);
    const held = await readFile(join(bankDir, 'accounts', username, 'inbound', name));
    // Not the file in the clear: an OpenPGP message (binary packets), which the bank can open.
    const plain = await openListedFile(world.services, (await world.services.disbursementFiles.get(orgId, fileId))!);
    expect(held.toString('latin1')).not.toContain(plain.slice(0, 94));
    expect(held[0]! & 0x80).toBe(0x80);

    await passUntil(
      linkServices,
      orgId,
      link,
      async () => (await world.services.disbursementFiles.get(orgId, fileId))!.status === 'acknowledged',
    );
    const file = (await world.services.disbursementFiles.get(orgId, fileId))!;
    expect(file.remote_name).toBe(name);
    const inbound = (await linkServices.bankLinks.listInbound(orgId, 10)).items;
    expect(inbound).toEqual([
      expect.objectContaining({ kind: 'acknowledgement', outcome: 'acknowledged', file_id: fileId }),
    ]);
  });

  it('a return file whose record was lost is applied again as already applied: each return counts once', async () => {
    const { world, orgId, link, linkServices } = await linkedWorld((i) => (i === 1 ? MAGIC : `7900${i}123`));
    const { payrollId } = await completedRun(world);
    await passUntil(
      linkServices,
      orgId,
      link,
      async () => (await world.services.payrolls.get(orgId, payrollId))!.returns_count === 1,
    );
    // The same files met by a pass that does not know them (a record lost): applied once all the same.
    const forgetful: BankLinkServices = {
      ...linkServices,
      bankLinks: Object.assign(Object.create(BankLinkRepository.prototype), linkServices.bankLinks, {
        pickedUp: async () => new Map(),
        recordInbound: async () => true,
      }) as BankLinkRepository,
    };
    const repeated = await serveBankLink(forgetful, orgId, link);
    expect(repeated.pickedUp.length).toBeGreaterThan(0);
    const run = (await world.services.payrolls.get(orgId, payrollId))!;
    expect(run.returns_count).toBe(1);
    expect((await world.services.events.list(orgId, { type: 'payment.returned' }, 10)).items).toHaveLength(1);
  });

  it('a server with another host key: nothing is sent, the link says why, and a file past its cut-off is late once', async () => {
    const wrong = `SHA256:${'A'.repeat(43)}`;
    const { world, orgId, link, linkServices } = await linkedWorld((i) => `7600${i}123`, wrong);
    // The alarms count these (infra/constructs/bank-link-worker.ts): a failing pass each time, a late file once.
    const counted = vi.spyOn(businessMetrics, 'count');
    const count = (name: string) => counted.mock.calls.filter(([n]) => n === name).length;
    const { payrollId } = await completedRun(world);
    const run = (await world.services.payrolls.get(orgId, payrollId))!;
    const fileId = run.disbursement!.file_id!;
    const outcome = await serveBankLink(linkServices, orgId, link);
    expect(outcome.failure).toMatch(/^host_key_mismatch/);
    expect(outcome.sent).toEqual([]);
    expect(await linkServices.bankLinks.status(orgId)).toMatchObject({ state: 'failing' });
    expect((await world.services.disbursementFiles.get(orgId, fileId))!.status).toBe('ready');
    expect(outcome.late).toEqual([]);
    // Past the release day's cut-off: late, once.
    const file = (await world.services.disbursementFiles.get(orgId, fileId))!;
    const later = {
      ...linkServices,
      deps: { ...linkServices.deps, now: () => new Date(`${file.release_by}T23:00:00Z`) },
    };
    expect((await serveBankLink(later, orgId, link)).late).toEqual([fileId]);
    expect((await serveBankLink(later, orgId, link)).late).toEqual([]);
    expect(count(METRIC_NAMES.bankLinkPassesFailed)).toBe(3);
    expect(count(METRIC_NAMES.disbursementFilesLate)).toBe(1);
    counted.mockRestore();
    const late = await world.services.events.list(orgId, { type: 'disbursement_file.late' }, 10);
    expect(late.items.map((e) => e.data)).toEqual([
      expect.objectContaining({ file_id: fileId, reason: 'not_transmitted_by_cutoff' }),
    ]);
  });
});

describe('the bank link, as a bank and an operator would try it', () => {
  it('does not send a file made while the organization had no link (it may have gone to the bank by hand)', async () => {
    const world = await payrollWorld(3, { accountNumber: (i) => `7400${i}123` });
    const orgId = world.org.organization_id;
    const before = await completedRun(world);
    const fileBefore = (await world.services.payrolls.get(orgId, before.payrollId))!.disbursement!.file_id!;
    const username = `org${accounts++}`;
    const account = await bank.addAccount(username, 'pw-before');
    const setLink = () =>
      updateSettings(
        { ...world.services, bankHost },
        { organizationId: orgId, environment: 'sandbox' },
        {
          bank_link: {
            host: '127.0.0.1',
            port: bank.port,
            username,
            remote_inbound_dir: account.inboundDir,
            remote_outbound_dir: account.outboundDir,
            host_key_fingerprint: bank.hostKeyFingerprint,
            cutoff_time: '15:00',
            password: 'pw-before',
          },
        },
      );
    await setLink();
    const linkedAt = (await loadSettings(world.services.organizations, orgId)).bank_link!.linked_at!;
    // The link given again whole (a password rotated) keeps when it began.
    await setLink();
    const link = (await loadSettings(world.services.organizations, orgId)).bank_link!;
    expect(link.linked_at).toBe(linkedAt);
    const s: BankLinkServices = {
      ...world.services,
      bankLinks: new BankLinkRepository(world.table),
      connect: connectSftp,
    };
    const first = await serveBankLink(s, orgId, link);
    expect(first.failure).toBeUndefined();
    expect(first.sent).toEqual([]);
    expect((await world.services.disbursementFiles.get(orgId, fileBefore))!.status).toBe('ready');
    // A run made since is the link's to deliver; the earlier file still is not, nor is it ever late.
    const world2 = { ...world, employeeIds: world.employeeIds };
    const after = await completedRun(world2);
    const fileAfter = (await world.services.payrolls.get(orgId, after.payrollId))!.disbursement!.file_id!;
    const later = { ...s, deps: { ...s.deps, now: () => new Date(Date.now() + 60 * 86_400_000) } };
    const outcome = await serveBankLink(later, orgId, link);
    expect(outcome.sent).toEqual([fileAfter]);
    expect(outcome.late).not.toContain(fileBefore);
  });

  it('tells a return file under a reused name by its content, not its size: the second day of ACH_RETURNS.txt is applied', async () => {
    const { world, orgId, link, linkServices } = await linkedWorld((i) => `7300${i}123`);
    const { stubs } = await completedRun(world);
    const [first, second] = await Promise.all([
      returnFileOf(world, stubs[0]!, 'R01'),
      returnFileOf(world, stubs[1]!, 'R01'),
    ]);
    expect(first.length).toBe(second.length);
    let today = { name: 'ACH_RETURNS.txt', bytes: first, modified: Date.parse('2026-11-20T06:00:00Z') };
    const { services } = bankServing(linkServices, () => [today]);
    await serveBankLink(services, orgId, link);
    today = { name: 'ACH_RETURNS.txt', bytes: second, modified: Date.parse('2026-11-21T06:00:00Z') };
    await serveBankLink(services, orgId, link);
    const returned = await world.services.paystubs.getMany([stubs[0]!.paystub_id, stubs[1]!.paystub_id]);
    expect(returned.map((p) => p.payment.status)).toEqual(['returned', 'returned']);
    // Met again unchanged, it is neither fetched nor applied again.
    const again = bankServing(linkServices, () => [today]);
    expect(await serveBankLink(again.services, orgId, link)).toMatchObject({ pickedUp: [] });
    expect(again.fetched).toEqual([]);
  });

  it('does not fetch a file bigger than a return file can be, records why once, and reads the files after it', async () => {
    const { world, orgId, link, linkServices } = await linkedWorld((i) => `7200${i}123`);
    const { stubs } = await completedRun(world);
    const real = await returnFileOf(world, stubs[2]!, 'R03');
    const { services, fetched } = bankServing(linkServices, () => [
      { name: 'A_HUGE.txt', bytes: Buffer.alloc(0), claimedSize: 5 * 1024 ** 3, modified: 1 },
      { name: 'B_RETURNS.txt', bytes: real, modified: 2 },
    ]);
    await serveBankLink(services, orgId, link);
    await serveBankLink(services, orgId, link);
    expect(fetched).toEqual(['B_RETURNS.txt']);
    const inbound = (await linkServices.bankLinks.listInbound(orgId, 10)).items;
    expect(inbound.map((f) => [f.name, f.kind])).toEqual(
      expect.arrayContaining([
        ['A_HUGE.txt', 'unreadable'],
        ['B_RETURNS.txt', 'returns'],
      ]),
    );
    expect(inbound).toHaveLength(2);
    expect((await world.services.paystubs.get(orgId, stubs[2]!.paystub_id))!.payment.status).toBe('returned');
  });

  it('a file that fails to apply (a fault) is tried again at the next pass, and does not hold back the files after it', async () => {
    const { world, orgId, link, linkServices } = await linkedWorld((i) => `7100${i}123`);
    const { stubs } = await completedRun(world);
    const [a, b] = await Promise.all([returnFileOf(world, stubs[0]!, 'R01'), returnFileOf(world, stubs[1]!, 'R01')]);
    let broken = true;
    const { services } = bankServing(linkServices, () => [
      { name: 'A.txt', bytes: a, modified: 1 },
      { name: 'B.txt', bytes: b, modified: 1 },
    ]);
    const faulty: BankLinkServices = {
      ...services,
      connect: async (t, o) => {
        const inner = await services.connect(t, o);
        return {
          ...inner,
          get: async (dir, name) => {
            if (name === 'A.txt' && broken)
              throw new Error('Throttling: Rate exceeded for arn:aws:kms:us-east-1:123456789012:key/x');
            return inner.get(dir, name);
          },
        };
      },
    };
    const first = await serveBankLink(faulty, orgId, link);
    expect(first.failure).toMatch(/^pickup_failed: A\.txt/);
    // What the organization sees names no account or resource of the platform.
    expect(first.failure).not.toMatch(/123456789012|arn:aws:kms/);
    expect((await world.services.paystubs.get(orgId, stubs[1]!.paystub_id))!.payment.status).toBe('returned');
    broken = false;
    expect((await serveBankLink(faulty, orgId, link)).failure).toBeUndefined();
    expect((await world.services.paystubs.get(orgId, stubs[0]!.paystub_id))!.payment.status).toBe('returned');
  });

  it('a partial upload left under the name of the file is not taken as sent, nor sent again: the link says so', async () => {
    const { world, orgId, link, linkServices } = await linkedWorld((i) => `7000${i}123`);
    const { payrollId } = await completedRun(world);
    const fileId = (await world.services.payrolls.get(orgId, payrollId))!.disbursement!.file_id!;
    const { services: dropping, uploads } = crashingAfterUpload(linkServices, (bytes) => bytes.subarray(0, 300));
    await serveBankLink(dropping, orgId, link);
    const next = await serveBankLink(dropping, orgId, link);
    expect(next.failure).toMatch(/partial_upload: .*300 bytes/);
    expect(uploads.count).toBe(1);
    expect((await world.services.disbursementFiles.get(orgId, fileId))!.status).toBe('ready');
  });

  it('a file first sent after its cut-off is late (it settles a banking day late), once', async () => {
    const { world, orgId, link, linkServices } = await linkedWorld((i) => `6900${i}123`);
    const { payrollId } = await completedRun(world);
    const fileId = (await world.services.payrolls.get(orgId, payrollId))!.disbursement!.file_id!;
    const file = (await world.services.disbursementFiles.get(orgId, fileId))!;
    const afterCutoff = {
      ...linkServices,
      deps: { ...linkServices.deps, now: () => new Date(`${file.release_by}T20:30:00Z`) },
    };
    const outcome = await serveBankLink(afterCutoff, orgId, link);
    expect(outcome.failure).toBeUndefined();
    expect(outcome.sent).toEqual([fileId]);
    expect(outcome.late).toEqual([fileId]);
    const late = await world.services.events.list(orgId, { type: 'disbursement_file.late' }, 10);
    expect(late.items.map((e) => e.data)).toEqual([
      expect.objectContaining({ file_id: fileId, reason: 'transmitted_after_cutoff', status: 'transmitted' }),
    ]);
  });
});
