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

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES)
    throw new PayloadTooLargeError(`A request body may be at most ${MAX_BODY_BYTES} bytes`);
  // Without a length or a chunked encoding a request has no body (RFC 9112 §6.3): most requests are GETs, and
  // they are not read as a stream. Node discards anything unread once the answer is sent.
  if (declared === 0 && req.headers['transfer-encoding'] === undefined) return EMPTY;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new PayloadTooLargeError(`A request body may be at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
      send(res, renderError(err instanceof PayloadTooLargeError ? err : new InvalidRequestError(), requestId));
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
 * it, and the reset can overtake the answer.
 */
const answered = new WeakSet<Duplex>();

function answerParserError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // The parser reports its error again for every later chunk of the same request: answered once is enough.
  if (answered.has(socket)) return;
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent || !err.code?.startsWith('HPE_')) {
    // As Node does by default: a timed-out request gets its bare 408; a reset or a half-sent answer, nothing.
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.writable && !inFlight?.headersSent)
      socket.write('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new PayloadTooLargeError(`The request's headers may be at most ${maxHeaderSize} bytes`)
      : new InvalidRequestError([], 'Malformed request');
  const result = renderError(error, requestId);
  const body = Buffer.from(result.body, 'utf8');
  const head = [
    `HTTP/1.1 ${result.statusCode} ${STATUS_CODES[result.statusCode]}`,
    ...Object.entries(result.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${body.length}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  answered.add(socket);
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  // The client closes on `Connection: close`; one that does not is cut off after a bound.
  setTimeout(() => socket.destroy(), 10_000).unref();
}

export function createApiServer(tls: { key: string; cert: string }): Server {
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    // The developer dashboard's static site (deployed on its own origin: infra/dashboard-stack.ts); the rest is API.
    if (isDashboardRequest(req)) void serveDashboard(req, res);
    else void dispatch(req, res);
  };
  const server = createHttpsServer({ key: tls.key, cert: tls.cert }, serve);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerParserError);
  // An `Expect` other than 100-continue is ignored (RFC 9110 allows it) rather than answered with Node's bare 417.
  server.on('checkExpectation', serve);
  return server;
}

/** Plain HTTP is answered, never served: every request gets 403 https_required. */
export function createHttpRejectServer(): Server {
  const server = createHttpServer((req, res) => {
    req.resume();
    send(res, renderError(new InsecureTransportError(), randomUUID()));
  });
  server.on('clientError', answerParserError);
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
