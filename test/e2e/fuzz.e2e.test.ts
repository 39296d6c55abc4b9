import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROUTES } from '../../shared/api/routes.js';
import { startLocalStack, type HttpResponse, type RunningStack } from '../support/local-stack.js';

/**
 * Hostile input, generated from the route table so a new route is fuzzed without anyone editing this file: odd
 * path segments, unknown and malformed query parameters, bodies of every JSON shape (deep, huge numbers, unicode
 * edge cases, prototype keys) and non-JSON bodies with wrong content types; and hostile headers (Authorization,
 * Idempotency-Key, Content-Type, Accept, X-Forwarded-*, repeated headers, values up to and past the server's
 * header limit). Whatever arrives, the answer is below 500, in the envelope, with its request id, and echoes no
 * stack trace and no secret.
 * FUZZ_REQUESTS sets the total, shared two to one by bodies, queries and paths and by headers (npm run
 * test:stress runs 12,000; npm test a smaller sample).
 */
const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 1500);
const HEADER_REQUESTS = Math.round(TOTAL / 3);
const INPUT_REQUESTS = TOTAL - HEADER_REQUESTS;

let stack: RunningStack;
let token: string;
let employeeAccount = '';
/** Real ids, so header variants reach the handlers that read them (Accept on a paystub and a disbursement). */
const real: Record<string, string> = {};

const weird = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom(
    '..',
    '%2e%2e',
    '%00',
    '\u0000',
    '\u202e',
    '💸',
    'null',
    '__proto__',
    'constructor',
    'emp_01m7yqsbp8exfp9x030mnbw8ts',
    'x'.repeat(3000),
    ' ',
    '%',
    '%zz',
    '1e309',
    '-0',
    '0.1+0.2',
    // Numeric extremes, undecodable escapes, control and bidirectional characters.
    '99999999999999.99',
    '9999999999999.99',
    '1'.repeat(40),
    '%E0%A4%A',
    '%ZZ',
    'a\u0007b',
    'a\r\nb',
    '\u2066x\u2069',
  ),
);
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.constantFrom(1e308, -1e308, 0.1 + 0.2, 2 ** 53 + 1, -0, 1e21, 123456789012345.67, 99999999999999.99, 1e20),
    weird,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(
      fc.oneof(
        weird,
        fc.constantFrom('__proto__', 'constructor', 'employees', 'gross_pay', 'hours_worked', 'url', 'type', 'email'),
      ),
      tie('value'),
      { maxKeys: 6 },
    ),
  ),
}));
const deep = fc.integer({ min: 50, max: 5000 }).map((n) => '['.repeat(n) + ']'.repeat(n));
const body = fc.oneof(
  jsonValue.value.map((v) => ({ text: JSON.stringify(v) ?? 'null', type: 'application/json' })),
  deep.map((text) => ({ text, type: 'application/json' })),
  fc.string().map((text) => ({
    text,
    type: fc.sample(
      fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/xml'),
      1,
    )[0]!,
  })),
  fc.constant({ text: `{"employees":${'1,'.repeat(10)}}`, type: 'application/json' }),
  // Amplification: many problems from one body (named deductions, unknown keys, entries each wrong).
  fc.constantFrom(
    {
      text: JSON.stringify({
        employees: [{ deductions: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`d${i}`, 1])) }],
      }),
      type: 'application/json',
    },
    {
      text: JSON.stringify(
        Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`unknown_${i}`, 'x'.repeat(30)])),
      ),
      type: 'application/json',
    },
    {
      text: JSON.stringify({ employees: Array.from({ length: 3000 }, () => ({ gross_pay: 'x', hours_worked: -1 })) }),
      type: 'application/json',
    },
  ),
);
const query = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      'limit',
      'page_token',
      'from',
      'to',
      'employee_id',
      'payroll_id',
      'status',
      'type',
      'dry_run',
      'delivery_status',
      'path_prefix',
    ),
    weird,
  ),
  weird,
  { maxKeys: 4 },
);

/** Stands for the valid token in generated values (generated before the token exists). */
const TOKEN = '\u0001token\u0001';
/** Node's client sends a header string's characters as bytes (Latin-1): UTF-8 text is sent as its bytes this way. */
const utf8 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');
/** Only what Node's client lets through: tab, visible ASCII and bytes 0x80–0xff (it refuses other control characters). */
const sendable = (s: string) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
const hostileText = fc.oneof(
  fc.string().map(sendable),
  fc.string({ unit: 'grapheme' }).map((s) => sendable(utf8(s))),
  fc.string({ unit: 'binary', maxLength: 30 }).map((s) => sendable(utf8(s))),
  fc.constantFrom(
    '',
    ' ',
    '\t',
    '\t\t x \t',
    utf8('\u202e\u200b\ufeff💸'),
    '\xa0\x85\xff',
    '%00',
    '%0d%0aSet-Cookie: x=1',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    '${jndi:ldap://x}',
    '{{7*7}}',
    "' OR 1=1 --",
    'null',
    'undefined',
    '__proto__',
    'constructor',
    '[object Object]',
    '1e309',
    '-1',
    'x'.repeat(4000),
  ),
);
const authorization = fc.oneof(
  // Well-formed variants of the valid token (any case of the scheme, extra spaces): they authenticate.
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      `Bearer ${TOKEN}`,
      `bearer ${TOKEN}`,
      `BEARER ${TOKEN}`,
      `bEaReR    ${TOKEN}`,
      `Bearer ${TOKEN}   `,
      `Bearer ${TOKEN}\t`,
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      `Bearer\t${TOKEN}`,
      `Bearer\xa0${TOKEN}`,
      `Bearer ${TOKEN}${utf8('é')}`,
      `Bearer ${utf8('ｐｋ_sandbox_')}${TOKEN}`,
      `Bearer ${TOKEN} ${TOKEN}`,
      `Bearer ${TOKEN},Bearer ${TOKEN}`,
      `Bearer${TOKEN}`,
      TOKEN,
      `Token ${TOKEN}`,
      `Bearer "${TOKEN}"`,
      'Bearer',
      'Bearer ',
      'Bearer     ',
      `Basic ${Buffer.from('admin:admin').toString('base64')}`,
      `Bearer ${'A'.repeat(8000)}`,
      `Bearer pk_live_${'A'.repeat(43)}`,
      `Bearer pk_sandbox_${'A'.repeat(43)}`,
      `Bearer ${utf8(`pk_sandbox_${'é'.repeat(43)}`)}`,
      `Bearer pk_sandbox_${'A'.repeat(42)}\xff`,
    ),
  },
  { weight: 2, arbitrary: hostileText.map((t) => `Bearer ${t}`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      [`Bearer ${TOKEN}`, 'Bearer garbage'],
      ['Bearer garbage', `Bearer ${TOKEN}`],
      [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`],
      ['', `Bearer ${TOKEN}`],
    ),
  },
);
const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'APPLICATION/JSON',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/json; charset="utf-8"; boundary=x; q=0.5',
    'application/json;;;',
    'application/merge-patch+json',
    'application/problem+json',
    'text/plain; charset=utf-8',
    'text/html',
    'multipart/form-data; boundary=----x',
    'application/x-www-form-urlencoded',
    'application/octet-stream',
    '*/*',
    '',
    ';',
    `application/json; charset=${'x'.repeat(2000)}`,
  ),
  hostileText.map((t) => `application/json; ${t}`),
  hostileText,
);
const accept = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/pdf',
    'text/plain',
    'text/html',
    '*/*',
    'application/*',
    'application/pdf;q=0, application/json',
    'application/json;q=0',
    'application/pdf, application/json',
    'image/png',
    'application/xml',
    '',
    ','.repeat(200),
    `${'application/pdf,'.repeat(500)}`,
  ),
  hostileText,
);
const idempotencyKey = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\t',
    'k',
    'k'.repeat(255),
    'k'.repeat(256),
    'k'.repeat(8000),
    ` ${'k'.repeat(255)} `,
    utf8('ключ-💸-\u202e'),
    utf8('é'.repeat(200)),
    '\xff'.repeat(255),
    'a\tb',
    '%00',
    'fixed-key',
  ),
  fc.constantFrom(['one', 'two'], ['fixed-key', 'fixed-key'], ['', 'k']),
  hostileText,
);
const forwardedFor = fc.oneof(
  fc.constantFrom(
    '127.0.0.1',
    '::1',
    '169.254.169.254',
    '10.0.0.1, 127.0.0.1',
    'unknown',
    '',
    '999.999.999.999',
    '1.1.1.1,'.repeat(500),
    '[::ffff:127.0.0.1]:80',
    'for=192.0.2.60;proto=http;by=203.0.113.43',
    '<script>',
    "1.1.1.1' --",
  ),
  hostileText,
);
const forwardedProto = fc.oneof(
  fc.constantFrom('http', 'HTTP', 'https', 'http, https', 'https, http', ' http ', 'ws', 'ftp', '', 'javascript:'),
  hostileText,
);
/** Other headers proxies and clients send, and a few that servers have been fooled by. */
const other = fc.dictionary(
  fc.constantFrom(
    'X-Forwarded-Host',
    'X-Forwarded-Port',
    'Forwarded',
    'X-Real-IP',
    'X-Request-Id',
    'X-Amzn-Trace-Id',
    'X-Api-Key',
    'X-HTTP-Method-Override',
    'X-Original-URL',
    'X-Rewrite-URL',
    'Origin',
    'Referer',
    'User-Agent',
    'Cookie',
    'Range',
    'If-None-Match',
    'If-Modified-Since',
    'Content-Encoding',
    'Content-Language',
    'Expect',
    'Prefer',
    'Access-Control-Request-Method',
    'Upgrade',
    'Via',
    'X-Idempotency-Key',
    'idempotency_key',
    'Authorization-Fallback',
  ),
  fc.oneof(
    hostileText,
    hostileText.map((t) => [t, t]),
    fc.constantFrom(
      'DELETE',
      '/v1/api-keys',
      'gzip',
      '100-continue',
      'websocket',
      'bytes=0-1',
      'bytes=-1,0-',
      `Bearer ${TOKEN}`,
    ),
  ),
  { maxKeys: 4 },
);
/** An extra header's length: some near Node's 16 KiB limit on all headers together, some past it (413 in the envelope). */
const padding = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.constantFrom(1000, 8000, 15_000, 15_800, 16_100, 16_384, 16_500, 20_000, 64_000) },
);

function headerSet() {
  return fc.record({
    headers: fc
      .record(
        {
          Authorization: authorization,
          'Content-Type': contentType,
          Accept: accept,
          'Idempotency-Key': idempotencyKey,
          'X-Forwarded-For': forwardedFor,
          'X-Forwarded-Proto': forwardedProto,
        },
        { requiredKeys: [] },
      )
      .chain((known) => other.map((extra) => ({ ...extra, ...known }) as Record<string, string | string[]>)),
    padding,
    window: fc.integer({ min: 1, max: 3 }),
  });
}

function concrete(path: string, segment: string): string {
  return path.replace(/\{\w+\}/g, () => encodeURIComponent(segment));
}

/** Routes whose success answer is a document of its own, not the envelope. */
const RAW_SUCCESS = new Set(['/v1/openapi.json']);

/** The largest and the slowest answer of the run, printed beside the count when the file ends. */
const extremes = { largest: { bytes: 0, what: '' }, slowest: { ms: 0, what: '' }, count: 0, serverErrors: 0 };

/** Sends and measures: the answer's size and time are kept for the summary. */
async function timed(described: string, send: () => Promise<HttpResponse>): Promise<HttpResponse> {
  const started = performance.now();
  const res = await send();
  const ms = performance.now() - started;
  extremes.count++;
  if (res.status >= 500) extremes.serverErrors++;
  if (res.raw.length > extremes.largest.bytes)
    extremes.largest = { bytes: res.raw.length, what: described.slice(0, 160) };
  if (ms > extremes.slowest.ms) extremes.slowest = { ms, what: described.slice(0, 160) };
  return res;
}

function check(res: HttpResponse, described: string, path: string): void {
  expect(res.status, described).toBeLessThan(500);
  expect(res.headers['x-request-id'], described).toBeTruthy();
  expect(res.text, described).not.toContain(token);
  expect(JSON.stringify(res.headers), described).not.toContain(token);
  const type = res.headers['content-type'] ?? '';
  // The NACHA file is the one answer that must carry the full account number: the bank credits it.
  const nacha = res.status === 200 && type.startsWith('text/plain') && path.split('?')[0]!.endsWith('/disbursement');
  if (employeeAccount && !nacha) expect(res.text, described).not.toContain(employeeAccount);
  if (res.status >= 400) expect(type, described).toMatch(/^application\/json/);
  // Stack traces would show in an API answer; the reference page's own script may say "Error:" as code.
  if (type.startsWith('application/json') || res.status >= 400)
    expect(res.text, described).not.toMatch(/\n\s+at .+:\d+:\d+|node_modules|Error: /);
  if (!type.startsWith('application/json')) return;
  if (res.status < 400 && RAW_SUCCESS.has(path.split('?')[0]!)) return;
  expect(res.body, described).toBeTypeOf('object');
  expect(res.body.request_id, described).toBe(res.headers['x-request-id']);
  expect(res.body.status, described).toBe(res.status);
  if (res.status >= 400) {
    expect(res.body.error, described).toMatchObject({
      code: expect.any(String),
      message: expect.any(String),
      details: expect.any(Array),
    });
  }
}

beforeAll(async () => {
  stack = await startLocalStack();
  token = (await stack.createOrganization('Fuzz Co')).token;
  employeeAccount = '9876543210123';
  const employee = await stack.request('POST', '/v1/employees', {
    token,
    body: {
      first_name: 'Fuzzy',
      last_name: 'Target',
      email: 'fuzzy@example.com',
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'weekly',
      start_date: '2026-01-05',
      bank_account: { account_number: employeeAccount, routing_number: '021000021', account_type: 'checking' },
    },
  });
  real.employees = employee.body.data.employee_id;
  const run = await stack.request('POST', '/v1/payroll', { token, body: payroll(0) });
  real.payroll = run.body.data.payroll_id;
  real.paystubs = await vi.waitFor(
    async () => {
      const id: string | undefined = (await stack.request('GET', `/v1/paystubs?payroll_id=${real.payroll}`, { token }))
        .body.data.paystubs[0]?.paystub_id;
      if (!id) throw new Error(`no paystub of payroll ${real.payroll} within 20000 ms`);
      return id;
    },
    { timeout: 20_000, interval: 50 },
  );
  expect(real.paystubs).toBeTruthy();
});

/** A valid run for the fuzz employee; a few windows only, so submissions collide (409) and keys replay. */
function payroll(window: number) {
  const start = new Date(Date.UTC(2026, 0, 5 + 7 * window));
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    pay_period_start: iso(start),
    pay_period_end: iso(new Date(start.getTime() + 6 * 86_400_000)),
    pay_date: iso(new Date(start.getTime() + 9 * 86_400_000)),
    employees: [{ employee_id: real.employees, gross_pay: 1000, hours_worked: 40 }],
  };
}

afterAll(async () => {
  await stack?.stop();
});

describe(`hostile input: ${TOTAL} generated requests over every route`, () => {
  it(
    `never answers 5xx, always answers the envelope, never leaks (${INPUT_REQUESTS} bodies, queries and paths)`,
    async () => {
      // One sample dealt to the routes in turn (each route used to get the same inputs as every other).
      const requests = fc
        .sample(
          fc.record({
            segment: weird,
            query,
            body,
            auth: fc.constantFrom('valid', 'valid', 'valid', 'none', 'garbage'),
          }),
          { numRuns: INPUT_REQUESTS, seed: 42 },
        )
        .map((r, i) => ({ route: ROUTES[i % ROUTES.length]!, ...r }));
      let next = 0;
      let sent = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < requests.length) {
            const r = requests[next++]!;
            const qs = new URLSearchParams(r.query).toString();
            const path = `${concrete(r.route.path, r.segment)}${qs ? `?${qs}` : ''}`;
            const headers: Record<string, string> = { 'Content-Type': r.body.type };
            if (r.auth === 'valid') headers.Authorization = `Bearer ${token}`;
            if (r.auth === 'garbage')
              headers.Authorization = `Bearer ${r.segment.slice(0, 200).replace(/[^\x21-\x7e]/g, '')}`;
            const withBody = r.route.method !== 'GET' && r.route.method !== 'DELETE';
            const described = `${r.route.method} ${path.slice(0, 200)} ${withBody ? r.body.text.slice(0, 200) : ''}`;
            const res = await timed(described, () =>
              stack.request(r.route.method, path, {
                headers,
                body: withBody ? r.body.text : undefined,
                validate: false,
              }),
            );
            check(res, described, path);
            // A refusal never answers with more than was sent (beyond a small envelope).
            if (res.status >= 400)
              expect(res.raw.length, described).toBeLessThanOrEqual(
                Math.max(withBody ? r.body.text.length : 0, 16_384),
              );
            sent++;
          }
        }),
      );
      expect(sent).toBe(requests.length);
    },
    Math.max(30_000, INPUT_REQUESTS * 50),
  );

  it(
    `never answers 5xx, always answers the envelope, never leaks (${HEADER_REQUESTS} header sets)`,
    async () => {
      // One sample dealt to the routes in turn: every route gets its share, and no two the same header sets.
      const requests = fc
        .sample(headerSet(), { numRuns: HEADER_REQUESTS, seed: 7 })
        .map((h, i) => ({ route: ROUTES[i % ROUTES.length]!, ...h }));
      let next = 0;
      let sent = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < requests.length) {
            const r = requests[next++]!;
            // Real ids for reads (so Accept reaches the paystub and disbursement handlers); writes get an unknown id.
            const path = r.route.path.replace(
              /(\w[\w-]*)\/\{\w+\}/g,
              (_, collection: string) =>
                `${collection}/${(r.route.method === 'GET' && real[collection]) || 'x_unknown'}`,
            );
            const withToken = (v: string) => v.replaceAll(TOKEN, token);
            const headers = Object.fromEntries(
              Object.entries(r.headers).map(([k, v]) => [k, Array.isArray(v) ? v.map(withToken) : withToken(v)]),
            );
            const withBody = r.route.method !== 'GET' && r.route.method !== 'DELETE';
            const text = r.route.id === 'submitPayroll' ? JSON.stringify(payroll(r.window)) : '{}';
            const res = await timed(`${r.route.method} ${path} (header set)`, () =>
              stack.request(r.route.method, path, {
                headers: r.padding ? { ...headers, 'X-Padding': 'p'.repeat(r.padding) } : headers,
                body: withBody ? text : undefined,
                validate: false,
              }),
            );
            const shown = JSON.stringify(r.headers, (_, v) =>
              typeof v === 'string' && v.length > 120 ? `${v.slice(0, 120)}…(${v.length})` : v,
            );
            check(res, `${r.route.method} ${path} padding=${r.padding} ${shown}`, path);
            sent++;
          }
        }),
      );
      expect(sent).toBe(requests.length);
    },
    Math.max(30_000, HEADER_REQUESTS * 50),
  );

  it('answers an oversized body with 413 in the envelope, every time', async () => {
    // The server answers from Content-Length before reading the body. Repeated: the test client used to lose that
    // answer to a race (EPIPE, in more than half of the attempts in a loop): see `send` in test/support/local-stack.ts.
    const huge = JSON.stringify({ first_name: 'x'.repeat(7 * 1024 * 1024) });
    for (let i = 0; i < 10; i++) {
      const res = await stack.request('POST', '/v1/employees', { token, body: huge, validate: false });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
      check(res, `oversized body, attempt ${i + 1}`, '/v1/employees');
    }
  });

  afterAll(() => {
    console.log(
      `fuzz: ${extremes.count} requests, ${extremes.serverErrors} × 5xx; largest answer ${extremes.largest.bytes} bytes (${extremes.largest.what}); slowest ${Math.round(extremes.slowest.ms)} ms (${extremes.slowest.what})`,
    );
  });
});
