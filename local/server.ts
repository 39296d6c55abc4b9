import { randomUUID } from 'node:crypto';
import {
  createServer as createHttpServer,
  maxHeaderSize,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { dirname, join } from 'node:path';
import type { Duplex } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context, Handler } from 'aws-lambda';
import { InsecureTransportError, InvalidRequestError, PayloadTooLargeError } from '../shared/domain/errors.js';
import { renderError } from '../shared/http/envelope.js';
import type { RouteDef } from '../shared/api/route.js';
import { routeMatcher } from '../shared/api/routes.js';
import { isDashboardRequest, serveDashboard } from './dashboard-files.js';
import { asFunction } from './table-guard.js';

/**
 * The local stand-in for API Gateway: it turns each HTTPS request into the same REST proxy event API Gateway
 * sends, invokes the Lambda handler of the route's function in process, and writes its result back. The route
 * declarations are those the CDK stack deploys, so the local stack and AWS route identically.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** API Gateway's payload limit for a REST API request. */
const MAX_BODY_BYTES = 6 * 1024 * 1024;
const FUNCTION_TIMEOUT_MS = 29_000;
/** Headers, then the whole request, within 10 s of its first byte: 6 MB crosses loopback in well under a second. */
const REQUEST_TIMEOUT_MS = 10_000;
/** How long a client refused while still sending (413, 408) has to read its answer before it is cut off. */
const CLOSE_GRACE_MS = 1_000;
/** The same for a client refused for a malformed request: it has usually stopped sending, and closes by itself. */
const PARSER_ERROR_GRACE_MS = 10_000;

export interface ServerLimits {
  /** Headers, and then the whole request, must arrive within this many milliseconds of the request's first byte. */
  requestTimeoutMs: number;
}

/** `npm start`'s limits: PAYROLL_LOCAL_REQUEST_TIMEOUT_MS shortens the timeout, so tests of it take a second. */
export function serverLimits(env: NodeJS.ProcessEnv = process.env): ServerLimits {
  const raw = env.PAYROLL_LOCAL_REQUEST_TIMEOUT_MS;
  const ms = raw === undefined || raw === '' ? REQUEST_TIMEOUT_MS : Number(raw);
  if (!Number.isInteger(ms) || ms <= 0)
    throw new Error(`PAYROLL_LOCAL_REQUEST_TIMEOUT_MS must be a positive number of milliseconds, got "${raw}"`);
  return { requestTimeoutMs: ms };
}

/**
 * Node's own bounds on a slow client (`https.Server` options), rather than timers of our own: the request timeout
 * covers the body only until it is complete, so a function's run time never counts against it.
 */
function timeoutOptions(limits: ServerLimits) {
  return {
    headersTimeout: limits.requestTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // How often Node looks for requests past their timeout: its default (30 s) would let one run on that much longer.
    connectionsCheckingInterval: Math.min(1_000, Math.ceil(limits.requestTimeoutMs / 4)),
  };
}

type ProxyHandler = Handler<APIGatewayProxyEvent, APIGatewayProxyResult>;
const loaded = new Map<string, Promise<ProxyHandler>>();

function loadHandler(entry: string): Promise<ProxyHandler> {
  let p = loaded.get(entry);
  if (!p) {
    const url = pathToFileURL(join(ROOT, 'functions', `${entry}.ts`)).href;
    p = import(url).then((m: { handler: ProxyHandler }) => m.handler);
    loaded.set(entry, p);
  }
  return p;
}

function lambdaContext(entry: string, requestId: string): Context {
  const deadline = Date.now() + FUNCTION_TIMEOUT_MS;
  const name = `local-${entry.replace(/\//g, '-')}`;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

const EMPTY = Buffer.alloc(0);

const bodyTooLarge = () => new PayloadTooLargeError(`A request body may be at most ${MAX_BODY_BYTES} bytes`);

/** The body could not be read because the connection went away (a reset, a request timeout): nobody to answer. */
class ClientGoneError extends Error {}

const declaresTooMuch = (req: IncomingMessage) => Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES;

/**
 * The whole body, counted as it arrives: past the limit it rejects at once, with the rest neither read nor kept
 * (the stream is paused, so Node stops reading the socket once its small buffer is full).
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  if (declaresTooMuch(req)) return Promise.reject(bodyTooLarge());
  // Without a length or a chunked encoding a request has no body (RFC 9112 §6.3): most requests are GETs, and
  // they are not read as a stream. Node discards anything unread once the answer is sent.
  if (Number(req.headers['content-length'] ?? 0) === 0 && req.headers['transfer-encoding'] === undefined)
    return Promise.resolve(EMPTY);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else {
        req.pause();
        settle(() => reject(bodyTooLarge()));
      }
    };
    const onEnd = () => settle(() => resolve(chunks.length === 0 ? EMPTY : Buffer.concat(chunks, size)));
    const onGone = () => settle(() => reject(new ClientGoneError()));
    req.on('data', onData).once('end', onEnd).once('error', onGone).once('close', onGone);
  });
}

/**
 * A 413 for a body past the limit (readBody has stopped reading), and the connection closed. The answer is written
 * straight to the socket rather than through Node's response, whose close on `Connection: close` destroys the socket
 * the moment the answer is flushed: with the client's body still arriving that is a reset, which can reach the client
 * before it has read its 413 (a client streaming a body then saw ECONNRESET and no answer).
 */
function refuseTooLarge(req: IncomingMessage, error: PayloadTooLargeError, requestId: string): void {
  // A later parser error or timeout on this socket is not answered a second time.
  answered.add(req.socket);
  endWithAnswer(req.socket, renderError(error, requestId), CLOSE_GRACE_MS);
}

function toEvent(
  req: IncomingMessage,
  url: URL,
  body: Buffer,
  requestId: string,
  route: RouteDef | undefined,
  params: Record<string, string>,
): APIGatewayProxyEvent {
  // Null-prototype maps: a header or query parameter named `constructor` or `__proto__` is data, not an
  // inherited property (the fuzz tests found `?constructor=` failing here).
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const value = req.rawHeaders[i + 1]!;
    headers[name] = value;
    multiValueHeaders[name] ??= [];
    multiValueHeaders[name].push(value);
  }
  const query: Record<string, string> = Object.create(null);
  const multiQuery: Record<string, string[]> = Object.create(null);
  for (const [k, v] of url.searchParams) {
    query[k] = v;
    multiQuery[k] ??= [];
    multiQuery[k].push(v);
  }
  const hasQuery = Object.keys(query).length > 0;
  const text = body.toString('utf8');
  const binary = body.length > 0 && !Buffer.from(text, 'utf8').equals(body);
  const resource = route?.path ?? '/{proxy+}';
  return {
    resource,
    path: url.pathname,
    httpMethod: req.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(params).length > 0 ? params : null,
    stageVariables: null,
    body: body.length === 0 ? null : binary ? body.toString('base64') : text,
    isBase64Encoded: binary,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: req.method ?? 'GET',
      identity: {
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: req.headers['user-agent'] ?? null,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      stage: 'local',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: resource,
    },
  };
}

function send(res: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  // A text body goes to `end` as a string: Node then joins the head and the body into one chunk for the TLS socket,
  // where a Buffer is queued after the head as a second one.
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : (result.body ?? '');
  if (result.statusCode !== 204)
    headers['Content-Length'] = String(typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length);
  res.writeHead(result.statusCode, headers);
  if (result.statusCode === 204) res.end();
  else if (typeof body === 'string') res.end(body, 'utf8');
  else res.end(body);
}

export async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = randomUUID();
  try {
    const url = new URL(req.url ?? '/', 'https://localhost');
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (err) {
      if (err instanceof PayloadTooLargeError) refuseTooLarge(req, err, requestId);
      else if (!(err instanceof ClientGoneError) && req.socket.writable)
        send(res, renderError(new InvalidRequestError(), requestId));
      return;
    }
    const match = routeMatcher.find(req.method ?? 'GET', url.pathname);
    // As API Gateway routes: a declared method goes to its route's function, anything else to the docs function.
    const fn = match?.route.function ?? 'docs';
    const entry = `api/${fn}`;
    const event = toEvent(req, url, body, requestId, match?.route, match?.params ?? {});
    const handler = await loadHandler(entry);
    // Inside the function's own table grant (local/table-guard.ts), as its role on AWS.
    const result = (await asFunction(fn, () =>
      handler(event, lambdaContext(entry, requestId), () => undefined),
    )) as APIGatewayProxyResult;
    send(res, result);
  } catch (err) {
    // A handler renders its own errors; reaching here means the adapter itself failed.
    console.error(
      JSON.stringify({ level: 'ERROR', message: 'local adapter failure', request_id: requestId, error: String(err) }),
    );
    if (!res.headersSent) send(res, renderError(err, requestId));
    else res.destroy();
  }
}

/**
 * What Node's HTTP parser refuses before any handler runs (headers over its limit, a malformed request) is answered
 * in the envelope with a request id, as API Gateway's own refusals are deployed (its gateway responses in
 * infra/api-stack.ts), not with Node's bare status line. Headers over the limit are 413 payload_too_large, like a
 * body over its limit. The connection is ended, not destroyed: destroying it with the request unread would reset
 * it, and the reset can overtake the answer. A request past its timeout (headersTimeout, requestTimeout) is answered
 * 408 in the envelope the same way, but its client is still sending, so it is cut off after a shorter grace.
 */
const answered = new WeakSet<Duplex>();

function answerParserError(err: NodeJS.ErrnoException, socket: Duplex, limits: ServerLimits): void {
  // The parser reports its error again for every later chunk of the same request: answered once is enough.
  if (answered.has(socket)) return;
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  // A reset, an answer already under way, or an error that is not the client's: nothing more can be said.
  const result = socket.writable && !inFlight?.headersSent ? clientErrorAnswer(err, limits) : undefined;
  if (!result) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  // A client past its timeout is still sending and is cut off soon; one that sent a malformed request has usually
  // finished, and closes on `Connection: close`: the longer bound is for one that does not.
  endWithAnswer(socket, result, err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? CLOSE_GRACE_MS : PARSER_ERROR_GRACE_MS);
}

function clientErrorAnswer(err: NodeJS.ErrnoException, limits: ServerLimits): APIGatewayProxyResult | undefined {
  const requestId = randomUUID();
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return requestTimeout(requestId, limits);
  if (!err.code?.startsWith('HPE_')) return undefined;
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new PayloadTooLargeError(`The request's headers may be at most ${maxHeaderSize} bytes`)
      : new InvalidRequestError([], 'Malformed request');
  return renderError(error, requestId);
}

/**
 * 408 in the error envelope. No domain error maps to it (a deployed function never sees a request before it has
 * arrived whole), so the envelope is written here, with the headers renderError gives every error.
 */
function requestTimeout(requestId: string, limits: ServerLimits): APIGatewayProxyResult {
  const { headers } = renderError(new InvalidRequestError(), requestId);
  const message = `The whole request must arrive within ${limits.requestTimeoutMs / 1000} s of its first byte`;
  const body = {
    status: 408,
    error: { code: 'request_timeout', message: 'Request timeout', details: [{ code: 'request_timeout', message }] },
    request_id: requestId,
  };
  return { statusCode: 408, headers, body: `${JSON.stringify(body)}\n` };
}

/**
 * Ends the connection with a whole answer written straight to the socket, and destroys the socket after `graceMs`
 * unless the client has hung up by then. Not at once: destroying a socket with unread bytes resets the connection,
 * and the reset can overtake the answer; the grace lets the client read it first.
 */
function endWithAnswer(socket: Duplex, result: APIGatewayProxyResult, graceMs: number): void {
  const body = Buffer.from(result.body, 'utf8');
  const head = [
    `HTTP/1.1 ${result.statusCode} ${STATUS_CODES[result.statusCode]}`,
    ...Object.entries(result.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${body.length}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  const timer = setTimeout(() => socket.destroy(), graceMs).unref();
  socket.once('close', () => clearTimeout(timer));
}

export function createApiServer(tls: { key: string; cert: string }, limits: ServerLimits = serverLimits()): Server {
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    // The developer dashboard's static site (deployed on its own origin: infra/dashboard-stack.ts); the rest is API.
    if (isDashboardRequest(req)) void serveDashboard(req, res);
    else void dispatch(req, res);
  };
  const server = createHttpsServer(
    // A client that never finishes its TLS handshake is held no longer than one that never finishes its headers.
    { key: tls.key, cert: tls.cert, handshakeTimeout: limits.requestTimeoutMs, ...timeoutOptions(limits) },
    serve,
  );
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerParserError(err, socket, limits));
  // An `Expect` other than 100-continue is ignored (RFC 9110 allows it) rather than answered with Node's bare 417.
  server.on('checkExpectation', serve);
  // A body declared too large is refused at once (dispatch) rather than invited with 100 Continue.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!declaresTooMuch(req)) res.writeContinue();
    serve(req, res);
  });
  return server;
}

/** Plain HTTP is answered, never served: every request gets 403 https_required. */
export function createHttpRejectServer(limits: ServerLimits = serverLimits()): Server {
  const server = createHttpServer(timeoutOptions(limits), (req, res) => {
    req.resume();
    send(res, renderError(new InsecureTransportError(), randomUUID()));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerParserError(err, socket, limits));
  return server;
}

export function listen(server: Server, port: number, host = '127.0.0.1'): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
