import { describe, expect, it } from 'vitest';
import { checkContract, type ObservedResponse } from '../support/contract.js';

/** The end-to-end tests' contract check (test/support/contract.ts) itself: it must catch what it is there to catch. */
const EMPLOYEE = {
  employee_id: 'emp_01kfz8d4w6t2m9q3r5v7x8y0ab',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
  employment_type: 'full_time',
  pay_group: 'default',
  pay_schedule: 'biweekly',
  start_date: '2026-01-05',
  status: 'active',
  bank_account: null,
  created_at: '2026-11-02T09:14:03.120Z',
  updated_at: '2026-11-02T09:14:03.120Z',
};
const RATE = { 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '299', 'x-ratelimit-reset': '0' };
const json = (status: number, body: unknown, headers: Record<string, string> = {}): ObservedResponse => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1', ...headers },
  text: JSON.stringify(body),
  body,
});
const ok = (data: unknown) => ({ status: 200, message: 'OK', data, request_id: 'req-1' });

describe('the contract check', () => {
  it('accepts a documented answer', () => {
    expect(() => checkContract('GET', '/v1/employees/emp_1', json(200, ok(EMPLOYEE), RATE))).not.toThrow();
    expect(() =>
      checkContract(
        'GET',
        '/v1/employees?limit=5',
        json(200, ok({ employees: [EMPLOYEE], next_page_token: null }), RATE),
      ),
    ).not.toThrow();
  });

  it('refuses a field the schema does not have, or a wrong type', () => {
    expect(() => checkContract('GET', '/v1/employees/emp_1', json(200, ok({ ...EMPLOYEE, ssn: '123' }), RATE))).toThrow(
      /additional properties/,
    );
    expect(() =>
      checkContract('GET', '/v1/employees/emp_1', json(200, ok({ ...EMPLOYEE, status: 'gone' }), RATE)),
    ).toThrow(/allowed values/);
  });

  it('refuses an undocumented status, a missing required header, an undocumented media type', () => {
    expect(() => checkContract('GET', '/v1/employees/emp_1', json(418, ok(EMPLOYEE), RATE))).toThrow(
      /status 418 is not documented/,
    );
    expect(() => checkContract('GET', '/v1/employees/emp_1', json(200, ok(EMPLOYEE)))).toThrow(
      /required header X-RateLimit-Limit/,
    );
    expect(() =>
      checkContract('GET', '/v1/employees/emp_1', {
        ...json(200, ok(EMPLOYEE), RATE),
        headers: { ...RATE, 'x-request-id': 'r', 'content-type': 'text/html' },
      }),
    ).toThrow(/text\/html/);
  });

  it('checks shared answers (components/responses) and error codes by status', () => {
    const unauthorized = {
      status: 401,
      error: { code: 'unauthorized', message: 'Unauthorized', details: [] },
      request_id: 'req-1',
    };
    expect(() =>
      checkContract('GET', '/v1/employees', json(401, unauthorized, { 'www-authenticate': 'Bearer realm="payroll"' })),
    ).not.toThrow();
    expect(() => checkContract('GET', '/v1/employees', json(401, unauthorized))).toThrow(/WWW-Authenticate/);
    expect(() =>
      checkContract(
        'GET',
        '/v1/employees',
        json(401, { ...unauthorized, error: { ...unauthorized.error, code: 'nope' } }, { 'www-authenticate': 'x' }),
      ),
    ).toThrow(/allowed values/);
  });

  it('checks a non-JSON answer by its media type only, and unrouted requests against the generic answers', () => {
    const nacha: ObservedResponse = {
      status: 200,
      headers: { 'content-type': 'text/plain; charset=us-ascii', 'x-request-id': 'r', ...RATE },
      text: '101 …',
      body: '101 …',
    };
    expect(() => checkContract('GET', '/v1/payroll/pay_1/disbursement', nacha)).not.toThrow();
    const notFound = { status: 404, error: { code: 'not_found', message: 'Not found', details: [] }, request_id: 'r' };
    expect(() => checkContract('GET', '/v1/nothing-here', json(404, notFound))).not.toThrow();
    const notAllowed = {
      status: 405,
      error: { code: 'method_not_allowed', message: 'Method not allowed', details: [] },
      request_id: 'r',
    };
    expect(() => checkContract('PUT', '/v1/employees', json(405, notAllowed, { allow: 'POST, GET' }))).not.toThrow();
    expect(() => checkContract('PUT', '/v1/employees', json(405, notAllowed))).toThrow(/Allow/);
  });
});
