import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readState, type StackState } from '../../local/stack-state.js';
import { checkContract } from './contract.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** The body's bytes, for binary answers (a PDF). */
  raw: Buffer;
  text: string;
  body: any;
}

/** A header given as a list is sent once per value, as repeated header lines. */
export type RequestHeaders = Record<string, string | string[]>;

export interface RunningStack {
  dir: string;
  /** The stack's own process (API, workers and the in-process queue engine). */
  pid: number;
  state: StackState;
  /** Everything the stack wrote, for assertions on logs. */
  output(): string;
  /**
   * Over HTTPS. The answer is checked against the OpenAPI document (test/support/contract.ts) and a mismatch
   * throws, unless `validate: false` (hostile input the document does not describe, such as the fuzz tests').
   */
  request(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: RequestHeaders; validate?: boolean },
  ): Promise<HttpResponse>;
  /** The plain-HTTP listener, which refuses everything: not checked against the document. */
  plainHttp(method: string, path: string): Promise<HttpResponse>;
  admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** An organization and its admin token, made with the admin CLI. */
  createOrganization(name?: string): Promise<{ organization_id: string; token: string }>;
  stop(): Promise<void>;
}

function run(args: string[], env: NodeJS.ProcessEnv, nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, '--import', TSX, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function runToEnd(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = run(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
  });
}

function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/**
 * Starts `local/start.ts` (what `npm start` runs) in its own process with a fresh data folder (or a given one, to
 * test restarts) and ports chosen by the OS, and waits for its ready line: no sleeps.
 */
export async function startLocalStack(
  options: { dir?: string; env?: Record<string, string> } = {},
): Promise<RunningStack> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'payroll-e2e-'));
  const env = {
    ...process.env,
    PAYROLL_DATA_DIR: dir,
    PAYROLL_HTTPS_PORT: '0',
    PAYROLL_HTTP_PORT: '0',
    PAYROLL_SANDBOX_BANK_PORT: '0',
    // Tests poll; the rate-limit tests set their own small limits.
    PAYROLL_RATE_LIMIT_READ: '100000',
    PAYROLL_RATE_LIMIT_PAYROLL_WRITE: '100000',
    PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE: '100000',
    ...options.env,
  };
  const child = run([join(ROOT, 'local', 'start.ts')], env);
  let output = '';
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`local stack not ready in 60 s:\n${output}`)), 60_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes(' ready at ')) {
        clearTimeout(timer);
        ready();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`local stack exited with ${code} before it was ready:\n${output}`));
    });
  });
  const state = readState(dir)!;
  const ca = readFileSync(join(dir, 'tls', 'cert.pem'));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));

  const send = (
    transport: typeof httpsRequest,
    port: number,
    method: string,
    path: string,
    body: string | undefined,
    headers: RequestHeaders,
  ) =>
    new Promise<HttpResponse>((resolvePromise, reject) => {
      // Keep-alive, as curl, browsers and fetch send it: a server may answer before it has read the body (a 413 is
      // decided from Content-Length alone), and on a kept-alive connection it then reads and discards the rest. With
      // `Connection: close` (what Node sends for `agent: false`) it closes with the body unread, the kernel resets
      // the connection, and the reset can reach this client before it has read the answer: EPIPE, and the answer
      // is lost with the socket. Each connection still serves one request: it is closed once the answer is read.
      const connection = Object.keys(headers).some((k) => k.toLowerCase() === 'connection')
        ? {}
        : { Connection: 'keep-alive' };
      let response: IncomingMessage | undefined;
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        outcome();
      };
      const req = transport(
        {
          host: '127.0.0.1',
          servername: 'localhost',
          port,
          method,
          path,
          headers: { ...connection, ...headers },
          ca,
          agent: false,
        },
        (res) => {
          response = res;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const raw = Buffer.concat(chunks);
            const text = raw.toString('utf8');
            settle(() =>
              resolvePromise({
                status: res.statusCode ?? 0,
                headers: Object.fromEntries(
                  Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
                ),
                raw,
                text,
                body: parseBody(text),
              }),
            );
            req.destroy();
          });
          res.on('error', (err) => settle(() => reject(err)));
          res.on('close', () =>
            settle(() =>
              reject(
                new Error(`${method} ${path.slice(0, 200)}: the connection closed before the answer was complete`),
              ),
            ),
          );
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        // The server answered and closed before taking the whole body: the rest of the write fails, and the answer
        // it sent is still the outcome. The response's own end (or its error, if it was cut short) settles.
        if (response && (err.code === 'EPIPE' || err.code === 'ECONNRESET')) return;
        settle(() => reject(err));
      });
      if (body !== undefined) req.write(body);
      req.end();
    });

  const stack: RunningStack = {
    dir,
    pid: child.pid!,
    state,
    output: () => output,
    request(method, path, opts = {}) {
      const headers: RequestHeaders = { ...opts.headers };
      if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
        // Case-insensitive, as HTTP is: a `content-type` given by a client must not get a second Content-Type.
        if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
          headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = String(Buffer.byteLength(body));
      }
      // Every answer is checked against docs/openapi.json: a mismatch fails the test that made the request.
      return send(httpsRequest, state.https_port, method, path, body, headers).then((res) => {
        if (opts.validate !== false) checkContract(method, path, res);
        return res;
      });
    },
    plainHttp(method, path) {
      return send(httpRequest as unknown as typeof httpsRequest, state.http_port, method, path, undefined, {});
    },
    admin: (...args) => runToEnd([join(ROOT, 'local', 'admin-cli.ts'), ...args], env),
    async createOrganization(name = 'Acme Test') {
      const res = await stack.admin('org', 'create', '--name', name, '--json');
      if (res.code !== 0) throw new Error(`org create failed: ${res.stderr}`);
      return JSON.parse(res.stdout) as { organization_id: string; token: string };
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT');
        await exited;
      }
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}

/** `npm run workers` for a stack started with PAYROLL_LOCAL_WORKERS=external: the processor in its own process. */
export async function startWorkersProcess(
  stack: RunningStack,
  nodeArgs: string[] = [],
): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = run([join(ROOT, 'local', 'run-workers.ts')], { ...process.env, PAYROLL_DATA_DIR: stack.dir }, nodeArgs);
  let output = '';
  await new Promise<void>((ready, fail) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.includes('Workers polling')) ready();
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => fail(new Error(`workers exited with ${code}:\n${output}`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT');
        await exited;
      }
    },
  };
}
