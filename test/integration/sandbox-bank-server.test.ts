import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import ssh2 from 'ssh2';
import SftpClient from 'ssh2-sftp-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type SandboxBank, type SandboxBankEvent, startSandboxBank } from '../../local/sandbox-bank/index.js';
import { buildNachaFile, entryDetailRecord } from '../../shared/adapters/nacha.js';
import { encryptForBank, readBankPublicKey } from '../../shared/adapters/pgp.js';
import { parseReturnFile } from '../../shared/adapters/nacha-returns.js';
import type { Originator } from '../../shared/domain/settings.js';

/*
 * The sandbox bank as the service meets it: over real SFTP (ssh2-sftp-client), pinning the host key, delivering a
 * NACHA file written by the service's own writer (in clear, or encrypted to the bank's PGP key), and reading back
 * what the bank answers with the service's own return-file reader.
 */

const USER = 'acme';
const PASSWORD = 'correct horse battery staple';
const ODFI8 = '02100002';
const FILE = 'PAYROLL_20260313_A.ach';
const MAGIC_TRACE = `${ODFI8}0000001`;

const originator: Originator = {
  company_name: 'Acme Payroll Inc',
  company_identification: '1234567890',
  originating_dfi_identification: ODFI8,
  immediate_destination: '021000021',
  immediate_destination_name: 'Sandbox Bank',
  immediate_origin: '1234567890',
  immediate_origin_name: 'Acme Payroll Inc',
};

function payrollFile(sequence: number, fundingAccount = '987654321') {
  return buildNachaFile({
    originator,
    fileCreation: new Date('2026-03-13T17:05:42.123Z'),
    effectiveEntryDate: '2026-03-16',
    companyEntryDescription: 'PAYROLL',
    entries: [
      // The sandbox's magic account: the bank returns this credit (R03).
      entryDetailRecord(ODFI8, {
        routingNumber: '021000021',
        accountNumber: '000000000',
        accountType: 'checking',
        amountCents: 123_456,
        individualId: 'EMP0001',
        individualName: 'Jane Doe',
        traceSequence: sequence,
      }),
      entryDetailRecord(ODFI8, {
        routingNumber: '011000015',
        accountNumber: '00012345678901234',
        accountType: 'savings',
        amountCents: 250_000,
        individualId: 'EMP0002',
        individualName: 'John Roe',
        traceSequence: sequence + 1,
      }),
    ],
    offset: {
      routingNumber: '021000021',
      accountNumber: fundingAccount,
      accountType: 'checking',
      traceSequence: sequence + 2,
    },
  });
}

/** As `ssh-keygen -lf` prints it, computed here from the key blob the client receives. */
const fingerprintOf = (blob: Buffer) =>
  `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let dataDir: string;
let bank: SandboxBank;
const events: SandboxBankEvent[] = [];
const clients: SftpClient[] = [];

async function start() {
  bank = await startSandboxBank({ dataDir, port: 0, onEvent: (e) => events.push(e) });
  await bank.addAccount(USER, PASSWORD);
}

/** Connections the bank closed (the client's close callback), by client. */
const closedByBank = new WeakSet<SftpClient>();

async function connect(opts: { password?: string; pinned?: string } = {}): Promise<SftpClient> {
  // Quiet callbacks: ssh2-sftp-client's defaults log every end and close the client did not ask for.
  const client: SftpClient = new SftpClient('test', {
    end: () => {},
    error: () => {},
    close: () => closedByBank.add(client),
  });
  const pinned = opts.pinned ?? bank.hostKeyFingerprint;
  await client.connect({
    host: '127.0.0.1',
    port: bank.port,
    username: USER,
    password: opts.password ?? PASSWORD,
    hostVerifier: (key: Buffer) => fingerprintOf(key) === pinned,
    readyTimeout: 10_000,
    retries: 0,
  } as SftpClient.ConnectOptions);
  clients.push(client);
  return client;
}

async function download(client: SftpClient, path: string): Promise<string> {
  return ((await client.get(path)) as Buffer).toString('latin1');
}

/** Waits (bounded) until `/outbound` holds `name`. */
async function outboundOnceItHas(client: SftpClient, name: string | RegExp): Promise<string[]> {
  return vi.waitFor(
    async () => {
      const names = (await client.list('/outbound')).map((f) => f.name).sort();
      expect(names.some((n) => (typeof name === 'string' ? n === name : name.test(n)))).toBe(true);
      return names;
    },
    { timeout: 15_000, interval: 50 },
  );
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sandbox-bank-'));
  await start();
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.end()));
  await bank?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the sandbox bank over SFTP', () => {
  const payroll = payrollFile(1);
  let ack: string;
  let returnName: string;

  it('acknowledges a delivered file and returns the entry to the magic account (R03), as the service reads it', async () => {
    const client = await connect();
    // The client sees its own root: the bank's ledger is not in it.
    expect((await client.list('/')).map((f) => [f.name, f.type]).sort()).toEqual([
      ['inbound', 'd'],
      ['outbound', 'd'],
    ]);
    await client.put(Buffer.from(payroll.content), `/inbound/${FILE}`);

    const names = await outboundOnceItHas(client, `${FILE}.ack`);
    ack = await download(client, `/outbound/${FILE}.ack`);
    expect(ack.split('\n')).toEqual([
      `ACK ${FILE} ${sha256(payroll.content)}`,
      'ENTRIES 3',
      `TOTAL_DEBIT_CENTS ${payroll.control.totalDebitCents}`,
      `TOTAL_CREDIT_CENTS ${payroll.control.totalCreditCents}`,
      'ACCEPTED',
      '',
    ]);
    expect(payroll.control.totalDebitCents).toBe(373_456);

    // The return file is written before the acknowledgement: seen together.
    const returns = names.filter((n) => n.startsWith('RET_'));
    expect(returns).toHaveLength(1);
    returnName = returns[0]!;
    expect(returnName).toMatch(new RegExp(`^RET_\\d{8}T\\d{6}Z_${FILE.replaceAll('.', '\\.')}$`));
    const text = await download(client, `/outbound/${returnName}`);
    const lines = text.split('\n');
    expect(text.endsWith('\n')).toBe(false);
    expect(lines.every((l) => l.length === 94)).toBe(true);
    expect(lines.length % 10).toBe(0);

    const reading = parseReturnFile(text);
    expect(reading).toEqual({
      ok: true,
      items: [
        {
          type: 'return',
          code: 'R03',
          trace_number: MAGIC_TRACE,
          amount_cents: 123_456,
          company_identification: originator.company_identification,
          line: 4,
        },
      ],
    });
    // The original batch's company name and identification, in a credits-only batch of the returning bank.
    const originalBatch = payroll.content.split('\n')[1]!;
    const returnBatch = lines[1]!;
    expect(returnBatch.slice(0, 4)).toBe('5220');
    expect(returnBatch.slice(4, 20)).toBe(originalBatch.slice(4, 20));
    expect(returnBatch.slice(40, 50)).toBe('1234567890');
    // Back to the ODFI (immediate destination), from the receiving bank (immediate origin).
    expect(lines[0]!.slice(3, 23)).toBe(' 021000021 021000021');
    expect(lines[2]!.slice(0, 3)).toBe('621');
    expect(lines[2]!.slice(12, 29).trim()).toBe('000000000');
    expect(events).toEqual([]);
  });

  it('refuses a second delivery under the same name, and any path outside the account', async () => {
    const client = await connect();
    await expect(client.put(Buffer.from(payroll.content), `/inbound/${FILE}`)).rejects.toThrow(/exists/);
    await expect(client.put(Buffer.from('x'), '../x')).rejects.toThrow(/outside your folder/);
    await expect(client.put(Buffer.from('x'), '/inbound/../../x')).rejects.toThrow(/outside your folder/);
    await expect(client.get('/../../etc/passwd')).rejects.toThrow(/outside your folder/);
    await expect(client.list('/..')).rejects.toThrow(/outside your folder/);
    await expect(client.stat('/../accounts')).rejects.toThrow(/outside your folder/);
    await expect(client.get('/.bank-ledger.json')).rejects.toThrow(/outside your folder/);
    // An absolute path is the account's own: /etc/passwd is not the machine's.
    await expect(client.get('/etc/passwd')).rejects.toThrow(/No such file/i);
    // The bank writes /outbound; files in /inbound stay as delivered.
    await expect(client.put(Buffer.from('x'), '/outbound/forged.ack')).rejects.toThrow(/bank writes/);
    await expect(client.rename(`/inbound/${FILE}`, '/inbound/renamed.ach')).rejects.toThrow(/stay as delivered/);
    await expect(client.rename(`/outbound/${returnName}`, `/outbound/${FILE}.ack`)).rejects.toThrow(/exists/);
    expect(existsSync(join(dataDir, 'accounts', 'x'))).toBe(false);
    expect(existsSync(join(dataDir, 'x'))).toBe(false);
    // Nothing more was acknowledged.
    expect((await client.list('/outbound')).map((f) => f.name).sort()).toEqual([`${FILE}.ack`, returnName].sort());

    // A symlink inside the account (planted on the bank's disk) is never followed.
    const planted = join(dataDir, 'accounts', USER, 'outbound', 'etc');
    await symlink('/etc', planted);
    try {
      await expect(client.get('/outbound/etc/passwd')).rejects.toThrow(/outside your folder/);
      await expect(client.list('/outbound/etc')).rejects.toThrow(/outside your folder/);
      await expect(client.put(Buffer.from('x'), '/outbound/etc/x')).rejects.toThrow(/outside your folder/);
    } finally {
      await unlink(planted);
    }
  });

  it('refuses a wrong password, and a client pinning another host key fails to connect', async () => {
    await expect(connect({ password: 'wrong' })).rejects.toThrow(/authentication/i);
    let offered: string | undefined;
    const client = new SftpClient('test', { end: () => {}, error: () => {}, close: () => {} });
    await expect(
      client.connect({
        host: '127.0.0.1',
        port: bank.port,
        username: USER,
        password: PASSWORD,
        hostVerifier: (key: Buffer) => {
          offered = fingerprintOf(key);
          return offered === 'SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU';
        },
        readyTimeout: 10_000,
        retries: 0,
      } as SftpClient.ConnectOptions),
    ).rejects.toThrow();
    expect(offered).toBe(bank.hostKeyFingerprint);
  });

  it('a debit to the magic account comes back as a 26 in a debits-only (225) batch', async () => {
    const client = await connect();
    const file = payrollFile(30, '000000000');
    await client.put(Buffer.from(file.content), '/inbound/DEBIT.ach');
    const names = await outboundOnceItHas(client, 'DEBIT.ach.ack');
    const returnFile = names.find((n) => n.startsWith('RET_') && n.endsWith('_DEBIT.ach'))!;
    const text = await download(client, `/outbound/${returnFile}`);
    const reading = parseReturnFile(text);
    expect(
      reading.ok && reading.items.map((i) => [i.trace_number, i.code, 'amount_cents' in i && i.amount_cents]),
    ).toEqual([
      [`${ODFI8}0000030`, 'R03', 123_456],
      [`${ODFI8}0000032`, 'R03', file.control.totalDebitCents],
    ]);
    const lines = text.split('\n');
    expect(lines.filter((l) => l[0] === '5').map((l) => l.slice(1, 4))).toEqual(['220', '225']);
    expect(lines.filter((l) => l[0] === '6').map((l) => l.slice(1, 3))).toEqual(['21', '26']);
    expect(lines.find((l) => l[0] === '9')!.slice(31, 55)).toBe(
      `${String(file.control.totalDebitCents).padStart(12, '0')}${String(123_456).padStart(12, '0')}`,
    );
  });

  it('a file it cannot read is acknowledged as REJECTED', async () => {
    const client = await connect();
    await client.put(Buffer.from('not a NACHA file\n'), '/inbound/garbage.txt');
    await outboundOnceItHas(client, 'garbage.txt.ack');
    const text = await download(client, '/outbound/garbage.txt.ack');
    expect(text).toBe(
      `ACK garbage.txt ${sha256('not a NACHA file\n')}\nREJECTED line 1: a record is 94 characters, this one 16\n`,
    );
    expect(events).toEqual([
      {
        type: 'file-rejected',
        username: USER,
        file: 'garbage.txt',
        reason: 'line 1: a record is 94 characters, this one 16',
      },
    ]);
    events.length = 0;
  });

  it('after a restart on the same folder: the same host key, and no file answered twice', async () => {
    const fingerprint = bank.hostKeyFingerprint;
    const pgpPublicKey = bank.pgpPublicKey;
    const before = await connect();
    const outboundBefore = await before.list('/outbound');
    await bank.stop();
    // stop() closed the connection it had.
    await vi.waitFor(() => expect(closedByBank.has(before)).toBe(true), { timeout: 5_000, interval: 50 });

    await start();
    expect(bank.hostKeyFingerprint).toBe(fingerprint);
    expect(bank.pgpPublicKey).toBe(pgpPublicKey);
    const client = await connect();
    // Files are answered in the order they arrive: once the next file's answer is there, any repeat would be too.
    const next = payrollFile(10);
    await client.put(Buffer.from(next.content), '/inbound/PAYROLL_20260313_B.ach');
    const names = await outboundOnceItHas(client, 'PAYROLL_20260313_B.ach.ack');
    const returns = names.filter((n) => n.startsWith('RET_'));
    expect(returns.filter((n) => n.endsWith(`_${FILE}`))).toEqual([returnName]);
    expect(returns.filter((n) => n.endsWith('_PAYROLL_20260313_B.ach'))).toHaveLength(1);
    expect(await download(client, `/outbound/${FILE}.ack`)).toBe(ack);
    const after = new Map((await client.list('/outbound')).map((f) => [f.name, f.modifyTime]));
    for (const f of outboundBefore) expect(after.get(f.name)).toBe(f.modifyTime);

    // The ledger, not the file's presence, refuses a name delivered before.
    await client.delete(`/inbound/${FILE}`);
    await expect(client.put(Buffer.from(payroll.content), `/inbound/${FILE}`)).rejects.toThrow(/exists/);
    const ledger = JSON.parse(await readFile(join(dataDir, 'accounts', USER, '.bank-ledger.json'), 'utf8'));
    expect(ledger.files[FILE]).toMatchObject({ sha256: sha256(payroll.content), state: 'done', result: 'accepted' });
    expect(events).toEqual([]);
  });

  it('a restart answers a file published but not yet recorded, and drops unfinished uploads', async () => {
    await bank.stop();
    // What a crash between publishing an upload and recording it leaves, and a crash mid-upload.
    const hostInbound = join(dataDir, 'accounts', USER, 'inbound');
    await writeFile(join(hostInbound, 'CRASH.ach'), payrollFile(40).content);
    await writeFile(join(hostInbound, '.upload-leftover.part'), 'half');
    await start();
    const client = await connect();
    await outboundOnceItHas(client, 'CRASH.ach.ack');
    expect(await download(client, '/outbound/CRASH.ach.ack')).toMatch(/\nACCEPTED\n$/);
    expect((await readdir(hostInbound)).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(events).toEqual([]);
  });

  it('presents an ECDSA host key when asked (what Transfer Family connectors trust), kept apart from its ed25519 one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-bank-ecdsa-'));
    const ecdsa = await startSandboxBank({ dataDir: dir, port: 0, hostKeyType: 'ecdsa' });
    try {
      await ecdsa.addAccount('connector', 'pw-connector');
      const client = new SftpClient('ecdsa');
      let presented: string | undefined;
      await client.connect({
        host: '127.0.0.1',
        port: ecdsa.port,
        username: 'connector',
        password: 'pw-connector',
        hostVerifier: (key: Buffer) => {
          presented = key.subarray(4, 4 + key.readUInt32BE(0)).toString('latin1');
          return fingerprintOf(key) === ecdsa.hostKeyFingerprint;
        },
      });
      expect(presented).toBe('ecdsa-sha2-nistp256');
      expect(await client.list('/inbound')).toEqual([]);
      await client.end();
      expect(existsSync(join(dir, 'host_key_ecdsa'))).toBe(true);
      expect(existsSync(join(dir, 'host_key'))).toBe(false);
    } finally {
      await ecdsa.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a half upload (the client gone mid-write) leaves nothing in /inbound and is not acknowledged', async () => {
    const conn = new ssh2.Client();
    conn.on('error', () => {});
    const ready = once(conn, 'ready');
    conn.connect({
      host: '127.0.0.1',
      port: bank.port,
      username: USER,
      password: PASSWORD,
      hostVerifier: (key: Buffer) => fingerprintOf(key) === bank.hostKeyFingerprint,
    });
    await ready;
    const sftp = await new Promise<ssh2.SFTPWrapper>((done, fail) =>
      conn.sftp((err, s) => (err ? fail(err) : done(s))),
    );
    const handle = await new Promise<Buffer>((done, fail) =>
      sftp.open('/inbound/HALF.ach', 'w', (err, h) => (err ? fail(err) : done(h))),
    );
    const part = Buffer.from(payroll.content.slice(0, 500));
    // Acknowledged by the bank: the bytes are on its disk.
    await new Promise<void>((done, fail) =>
      sftp.write(handle, part, 0, part.length, 0, (err) => (err ? fail(err) : done())),
    );
    const hostInbound = join(dataDir, 'accounts', USER, 'inbound');
    expect((await readdir(hostInbound)).filter((n) => n.startsWith('.'))).toHaveLength(1);
    // Meanwhile a reader sees whole files only.
    const reader = await connect();
    expect((await reader.list('/inbound')).map((f) => f.name)).not.toContain('HALF.ach');
    expect(await reader.exists('/inbound/HALF.ach')).toBe(false);
    conn.destroy();

    await vi.waitFor(
      () => expect(events).toContainEqual({ type: 'upload-abandoned', username: USER, file: '/inbound/HALF.ach' }),
      { timeout: 10_000, interval: 50 },
    );
    const delivered = ['CRASH.ach', 'DEBIT.ach', 'PAYROLL_20260313_B.ach', 'garbage.txt'];
    expect((await readdir(hostInbound)).sort()).toEqual(delivered);
    const client = reader;
    expect((await client.list('/inbound')).map((f) => f.name).sort()).toEqual(delivered);
    expect((await client.list('/outbound')).map((f) => f.name)).not.toContain('HALF.ach.ack');

    // The name was never delivered: a whole upload under it is taken and answered.
    await client.put(Buffer.from(payrollFile(20).content), '/inbound/HALF.ach');
    await outboundOnceItHas(client, 'HALF.ach.ack');
    expect(await download(client, '/outbound/HALF.ach.ack')).toMatch(/\nACCEPTED\n$/);
  });

  it('a file encrypted to its PGP key (`.ach.pgp`) is decrypted, read and acknowledged under the name delivered', async () => {
    // What the half upload before this left: not this test's concern.
    events.length = 0;
    const reading = await readBankPublicKey(bank.pgpPublicKey);
    expect(reading).toMatchObject({ ok: true });
    const client = await connect();
    const file = payrollFile(50);
    const encrypted = await encryptForBank(Buffer.from(file.content, 'ascii'), bank.pgpPublicKey);
    const name = 'PAYROLL_20260313_C.ach.pgp';
    await client.put(encrypted, `/inbound/${name}`);
    const names = await outboundOnceItHas(client, `${name}.ack`);
    // The hash is of the bytes received (the encrypted file), as the service hashes what it sends.
    expect(await download(client, `/outbound/${name}.ack`)).toBe(
      [
        `ACK ${name} ${createHash('sha256').update(encrypted).digest('hex')}`,
        'ENTRIES 3',
        `TOTAL_DEBIT_CENTS ${file.control.totalDebitCents}`,
        `TOTAL_CREDIT_CENTS ${file.control.totalCreditCents}`,
        'ACCEPTED',
        '',
      ].join('\n'),
    );
    // The return of the magic account comes back in clear, named after the file without `.pgp`.
    const returnFile = names.find((n) => n.startsWith('RET_') && n.endsWith('_PAYROLL_20260313_C.ach'));
    expect(returnFile).toBeDefined();
    const returned = parseReturnFile(await download(client, `/outbound/${returnFile}`));
    expect(returned.ok && returned.items.map((i) => [i.trace_number, i.code])).toEqual([[`${ODFI8}0000050`, 'R03']]);
    expect(events).toEqual([]);
  });

  it('a `.pgp` file it cannot decrypt (another key, or not PGP at all) is acknowledged as REJECTED with the reason', async () => {
    const client = await connect();
    const other = await openpgp.generateKey({ type: 'curve25519', userIDs: [{ name: 'Another bank' }] });
    const wrongKey = await encryptForBank(Buffer.from(payrollFile(60).content, 'ascii'), other.publicKey);
    await client.put(wrongKey, '/inbound/WRONG_KEY.ach.pgp');
    await client.put(Buffer.from(payrollFile(70).content, 'ascii'), '/inbound/CLEAR.ach.pgp');
    await outboundOnceItHas(client, 'CLEAR.ach.pgp.ack');
    for (const [name, bytes] of [
      ['WRONG_KEY.ach.pgp', wrongKey],
      ['CLEAR.ach.pgp', Buffer.from(payrollFile(70).content, 'ascii')],
    ] as const) {
      const ack = (await download(client, `/outbound/${name}.ack`)).split('\n');
      expect(ack[0]).toBe(`ACK ${name} ${createHash('sha256').update(bytes).digest('hex')}`);
      expect(ack[1]).toMatch(/^REJECTED cannot decrypt with the bank's PGP key: \S/);
      expect(ack).not.toContain('ACCEPTED');
    }
    // Nothing was read from them: no return file.
    expect((await client.list('/outbound')).some((f) => /_(WRONG_KEY|CLEAR)\.ach/.test(f.name))).toBe(false);
    expect(events.map((e) => [e.type, 'file' in e && e.file])).toEqual([
      ['file-rejected', 'WRONG_KEY.ach.pgp'],
      ['file-rejected', 'CLEAR.ach.pgp'],
    ]);
    events.length = 0;
  });
});
