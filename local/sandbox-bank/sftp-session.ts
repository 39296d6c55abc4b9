import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, readdir, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Attributes, FileEntry, SFTPWrapper } from 'ssh2';
import ssh2 from 'ssh2';
import { type Account, partName, UPLOAD_PREFIX } from './account.js';
import type { SandboxBankEvent } from './events.js';
import { crossesSymlink, type RootedPath, resolveInRoot } from './paths.js';

const { OPEN_MODE, STATUS_CODE } = ssh2.utils.sftp;

/** Larger than any payroll file the service writes; bounds what one upload may put on disk. */
const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;
/** Under the 34,000-byte packets ssh2 sends to a peer that is not OpenSSH. */
const MAX_READ_BYTES = 32 * 1024;
const NAMES_PER_READDIR = 100;
/** Inbound names reappear in longer outbound names (RET_<timestamp>_<name>): keep those under 255 bytes. */
const MAX_INBOUND_NAME_BYTES = 200;

class SftpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const denied = (message = 'outside your folder') => new SftpError(STATUS_CODE.PERMISSION_DENIED, message);
const failure = (message: string) => new SftpError(STATUS_CODE.FAILURE, message);

/** The status answering an error; messages never name a path on the bank's disk. */
function statusOf(error: unknown): [number, string] {
  if (error instanceof SftpError) return [error.code, error.message];
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return [STATUS_CODE.NO_SUCH_FILE, 'no such file'];
    case 'EACCES':
    case 'EPERM':
    case 'ELOOP':
      return [STATUS_CODE.PERMISSION_DENIED, 'permission denied'];
    case 'EEXIST':
      return [STATUS_CODE.FAILURE, 'exists'];
    case 'ENOTEMPTY':
      return [STATUS_CODE.FAILURE, 'not empty'];
    case 'EISDIR':
      return [STATUS_CODE.FAILURE, 'is a directory'];
    default:
      return [STATUS_CODE.FAILURE, 'failure'];
  }
}

interface Chained {
  /** Operations on one handle run one after another, so CLOSE comes after every WRITE sent before it. */
  chain: Promise<unknown>;
}

type Handle = Chained &
  (
    | { kind: 'read'; file: FileHandle }
    | { kind: 'upload'; file: FileHandle; temp: string; target: RootedPath }
    | { kind: 'dir'; path: RootedPath; pending?: FileEntry[] }
  );

function attrsOf(st: Stats): Attributes {
  return {
    mode: st.mode,
    uid: st.uid,
    gid: st.gid,
    size: st.size,
    atime: Math.floor(st.atimeMs / 1000),
    mtime: Math.floor(st.mtimeMs / 1000),
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `ls -l` style, which clients (ssh2-sftp-client's list) read the entry's type and rights from. */
function longnameOf(name: string, st: Stats, owner: string): string {
  const type = st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : '-';
  const rights = [...'rwxrwxrwx'].map((c, i) => (st.mode & (0o400 >> i) ? c : '-')).join('');
  const at = new Date(st.mtimeMs);
  const when = `${MONTHS[at.getUTCMonth()]} ${String(at.getUTCDate()).padStart(2)} ${at.toISOString().slice(11, 16)}`;
  return `${type}${rights}    1 ${owner.padEnd(8)} ${owner.padEnd(8)} ${String(st.size).padStart(8)} ${when} ${name}`;
}

type Area = 'root' | 'inbound' | 'outbound' | 'other';

function areaOf(path: RootedPath): Area {
  const [top] = path.segments;
  if (top === undefined) return 'root';
  return top === 'inbound' || top === 'outbound' ? top : 'other';
}

/** The root, /inbound and /outbound themselves: the bank's, never removed, renamed or replaced. */
function isFixed(path: RootedPath): boolean {
  return path.segments.length === 0 || (path.segments.length === 1 && areaOf(path) !== 'other');
}

/** `/inbound/<name>`: a delivery the bank answers. */
function deliveryName(path: RootedPath): string | undefined {
  return path.segments.length === 2 && path.segments[0] === 'inbound' ? path.segments[1] : undefined;
}

export interface SftpSession {
  /** Waits for requests under way, then drops what the client left open (partial uploads). Idempotent. */
  finish(): Promise<void>;
}

/** Serves one SFTP channel for `account`, confined to its folder. */
export function serveSftp(sftp: SFTPWrapper, account: Account, emit: (e: SandboxBankEvent) => void): SftpSession {
  const handles = new Map<number, Handle>();
  const inflight = new Set<Promise<void>>();
  let nextHandle = 0;
  let finishing: Promise<void> | undefined;

  // The channel may be gone by the time an answer is ready: nothing is left to tell.
  const reply = (send: () => void) => {
    try {
      send();
    } catch {}
  };

  const serve = (reqid: number, work: () => Promise<void>) => {
    const done = work().catch((error: unknown) => {
      const [code, message] = statusOf(error);
      reply(() => sftp.status(reqid, code, message));
    });
    inflight.add(done);
    void done.finally(() => inflight.delete(done));
  };

  const ok = (reqid: number) => reply(() => sftp.status(reqid, STATUS_CODE.OK));

  const run = <T>(handle: Handle, op: () => Promise<T>): Promise<T> => {
    const result = handle.chain.then(op);
    handle.chain = result.catch(() => {});
    return result;
  };

  const register = (reqid: number, handle: Handle) => {
    const id = nextHandle++;
    const buffer = Buffer.alloc(4);
    buffer.writeUInt32BE(id);
    handles.set(id, handle);
    reply(() => sftp.handle(reqid, buffer));
  };

  const find = (buffer: Buffer): [number, Handle] => {
    const id = buffer.length === 4 ? buffer.readUInt32BE(0) : -1;
    const handle = handles.get(id);
    if (!handle) throw failure('invalid handle');
    return [id, handle];
  };

  const locate = async (requested: string): Promise<RootedPath> => {
    const path = resolveInRoot(account.root, requested);
    if (!path || (await crossesSymlink(account.root, path.segments))) throw denied();
    return path;
  };

  const exists = async (host: string) =>
    lstat(host).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );

  const openForReading = async (reqid: number, path: RootedPath) => {
    const file = await open(path.host, constants.O_RDONLY | constants.O_NOFOLLOW);
    if ((await file.stat()).isDirectory()) {
      await file.close();
      throw failure('is a directory');
    }
    register(reqid, { kind: 'read', file, chain: Promise.resolve() });
  };

  /** An upload goes to a hidden temporary file; CLOSE publishes it under its name, whole. */
  const openForUpload = async (reqid: number, path: RootedPath, flags: number) => {
    if (flags & (OPEN_MODE.READ | OPEN_MODE.APPEND) || !(flags & OPEN_MODE.CREAT))
      throw new SftpError(STATUS_CODE.OP_UNSUPPORTED, 'files are written once: open a new file with "w" or "wx"');
    const area = areaOf(path);
    if (area === 'outbound') throw denied('the bank writes /outbound');
    if (isFixed(path)) throw failure('is a directory');
    const name = deliveryName(path);
    if (name !== undefined) {
      if (Buffer.byteLength(name) > MAX_INBOUND_NAME_BYTES) throw failure('name too long');
      if (account.isKnown(name)) throw failure('exists');
    }
    if (await exists(path.host)) throw failure('exists');
    if (!(await lstat(dirname(path.host))).isDirectory())
      throw new SftpError(STATUS_CODE.NO_SUCH_FILE, 'no such folder');
    // Checked and taken with no await between: two connections cannot both upload one name.
    if (account.uploading.has(path.virtual) || (name !== undefined && account.isKnown(name))) throw failure('exists');
    account.uploading.add(path.virtual);
    const temp = join(dirname(path.host), partName(UPLOAD_PREFIX));
    try {
      const file = await open(temp, 'wx', 0o600);
      register(reqid, { kind: 'upload', file, temp, target: path, chain: Promise.resolve() });
    } catch (error) {
      account.uploading.delete(path.virtual);
      throw error;
    }
  };

  const publish = async (upload: Extract<Handle, { kind: 'upload' }>) => {
    try {
      try {
        await upload.file.sync();
      } finally {
        await upload.file.close();
      }
      // link() refuses an existing name, where rename() would replace it.
      await link(upload.temp, upload.target.host);
    } finally {
      await unlink(upload.temp).catch(() => {});
      account.uploading.delete(upload.target.virtual);
    }
    const name = deliveryName(upload.target);
    if (name !== undefined) account.accept(name);
  };

  const drop = async (handle: Handle) => {
    if (handle.kind === 'dir') return;
    await handle.file.close().catch(() => {});
    if (handle.kind === 'upload') {
      await unlink(handle.temp).catch(() => {});
      account.uploading.delete(handle.target.virtual);
      emit({ type: 'upload-abandoned', username: account.username, file: handle.target.virtual });
    }
  };

  const listing = async (path: RootedPath): Promise<FileEntry[]> => {
    const out: FileEntry[] = [];
    for (const name of await readdir(path.host)) {
      if (name.startsWith('.')) continue;
      const st = await lstat(join(path.host, name)).catch(() => undefined);
      if (st) out.push({ filename: name, longname: longnameOf(name, st, account.username), attrs: attrsOf(st) });
    }
    return out;
  };

  sftp
    .on('OPEN', (reqid, filename, flags) =>
      serve(reqid, async () => {
        const path = await locate(filename);
        if (flags & OPEN_MODE.WRITE) await openForUpload(reqid, path, flags);
        else if (flags & OPEN_MODE.READ) await openForReading(reqid, path);
        else throw failure('open for reading or for writing');
      }),
    )
    .on('READ', (reqid, buffer, offset, length) =>
      serve(reqid, async () => {
        const [, handle] = find(buffer);
        if (handle.kind !== 'read') throw failure('not open for reading');
        const chunk = Buffer.alloc(Math.min(length, MAX_READ_BYTES));
        const { bytesRead } = await run(handle, () => handle.file.read(chunk, 0, chunk.length, offset));
        if (bytesRead === 0) reply(() => sftp.status(reqid, STATUS_CODE.EOF));
        else reply(() => sftp.data(reqid, chunk.subarray(0, bytesRead)));
      }),
    )
    .on('WRITE', (reqid, buffer, offset, data) =>
      serve(reqid, async () => {
        const [, handle] = find(buffer);
        if (handle.kind !== 'upload') throw failure('not open for writing');
        if (offset + data.length > MAX_UPLOAD_BYTES) throw failure('file too large');
        await run(handle, () => handle.file.write(data, 0, data.length, offset));
        ok(reqid);
      }),
    )
    .on('CLOSE', (reqid, buffer) =>
      serve(reqid, async () => {
        const [id, handle] = find(buffer);
        handles.delete(id);
        if (handle.kind === 'read') await run(handle, () => handle.file.close());
        if (handle.kind === 'upload') await run(handle, () => publish(handle));
        ok(reqid);
      }),
    )
    .on('FSTAT', (reqid, buffer) =>
      serve(reqid, async () => {
        const [, handle] = find(buffer);
        const st = handle.kind === 'dir' ? await lstat(handle.path.host) : await run(handle, () => handle.file.stat());
        reply(() => sftp.attrs(reqid, attrsOf(st)));
      }),
    )
    .on('FSETSTAT', (reqid, buffer) =>
      serve(reqid, async () => {
        find(buffer);
        ok(reqid);
      }),
    )
    .on('SETSTAT', (reqid, requested) =>
      serve(reqid, async () => {
        await lstat((await locate(requested)).host);
        ok(reqid);
      }),
    )
    .on('OPENDIR', (reqid, requested) =>
      serve(reqid, async () => {
        const path = await locate(requested);
        if (!(await lstat(path.host)).isDirectory()) throw failure('not a directory');
        register(reqid, { kind: 'dir', path, chain: Promise.resolve() });
      }),
    )
    .on('READDIR', (reqid, buffer) =>
      serve(reqid, async () => {
        const [, handle] = find(buffer);
        if (handle.kind !== 'dir') throw failure('not a directory');
        handle.pending ??= await listing(handle.path);
        const names = handle.pending.splice(0, NAMES_PER_READDIR);
        if (names.length === 0) reply(() => sftp.status(reqid, STATUS_CODE.EOF));
        else reply(() => sftp.name(reqid, names));
      }),
    )
    .on('STAT', (reqid, requested) => serve(reqid, () => stat(reqid, requested)))
    .on('LSTAT', (reqid, requested) => serve(reqid, () => stat(reqid, requested)))
    .on('REALPATH', (reqid, requested) =>
      serve(reqid, async () => {
        const { virtual } = await locate(requested);
        // No attributes are needed in a REALPATH answer; ssh2 writes none for an empty object.
        reply(() => sftp.name(reqid, [{ filename: virtual, longname: virtual, attrs: {} as Attributes }]));
      }),
    )
    .on('REMOVE', (reqid, requested) =>
      serve(reqid, async () => {
        const path = await locate(requested);
        if (isFixed(path)) throw denied('the bank keeps this folder');
        if ((await lstat(path.host)).isDirectory()) throw failure('is a directory');
        const name = deliveryName(path);
        if (name !== undefined && !account.isSettled(name)) throw failure('the bank is still reading it');
        await unlink(path.host);
        ok(reqid);
      }),
    )
    .on('RENAME', (reqid, oldPath, newPath) =>
      serve(reqid, async () => {
        const from = await locate(oldPath);
        const to = await locate(newPath);
        if (isFixed(from) || isFixed(to)) throw denied('the bank keeps this folder');
        // Files enter /inbound by upload only, so each is answered once, under the name it was delivered as.
        if (areaOf(from) === 'inbound' || areaOf(to) === 'inbound') throw denied('files in /inbound stay as delivered');
        if (areaOf(to) === 'outbound' && areaOf(from) !== 'outbound') throw denied('the bank writes /outbound');
        const st = await lstat(from.host);
        if (account.uploading.has(to.virtual) || (await exists(to.host))) throw failure('exists');
        if (st.isDirectory()) await rename(from.host, to.host);
        else {
          await link(from.host, to.host);
          await unlink(from.host);
        }
        ok(reqid);
      }),
    )
    .on('MKDIR', (reqid, requested) =>
      serve(reqid, async () => {
        const path = await locate(requested);
        if (areaOf(path) === 'outbound') throw denied('the bank writes /outbound');
        await mkdir(path.host, { mode: 0o700 });
        ok(reqid);
      }),
    )
    .on('RMDIR', (reqid, requested) =>
      serve(reqid, async () => {
        const path = await locate(requested);
        if (isFixed(path)) throw denied('the bank keeps this folder');
        await rmdir(path.host);
        ok(reqid);
      }),
    );

  async function stat(reqid: number, requested: string) {
    // STAT and LSTAT alike: no symlink is followed (and a path through one is refused by locate).
    const st = await lstat((await locate(requested)).host);
    reply(() => sftp.attrs(reqid, attrsOf(st)));
  }

  const finish = () => {
    finishing ??= (async () => {
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
      const open = [...handles.values()];
      handles.clear();
      await Promise.all(open.map((handle) => run(handle, () => drop(handle))));
    })();
    return finishing;
  };
  sftp.once('close', () => void finish());
  return { finish };
}
