import { describe, expect, it } from 'vitest';
import { contentHash, netPay, payrollTotals } from '../../shared/domain/payroll.js';
import { validatePayrollBody, TooManyEmployeesError } from '../../shared/schemas/payroll.js';
import { httpErrorOf } from '../../shared/http/error-mapping.js';
import { PayrollRejectedError } from '../../shared/use-cases/submit-payroll.js';

const entry = (extra: Record<string, unknown> = {}) => ({
  employee_id: 'emp_a',
  gross_pay: '2000.00',
  hours_worked: 80,
  ...extra,
});
const body = (extra: Record<string, unknown> = {}) => ({
  pay_period_start: '2026-11-01',
  pay_period_end: '2026-11-14',
  pay_date: '2026-11-20',
  employees: [entry()],
  ...extra,
});

function problems(b: Record<string, unknown>) {
  return validatePayrollBody(b).problems.map((p) => ({ field: p.field, code: p.code, reason: p.reason }));
}

describe('payroll body validation (spec 2.2 and 7.2)', () => {
  it('accepts a valid body and computes exact totals', () => {
    const { submission, problems: found } = validatePayrollBody(
      body({
        employees: [
          entry({ bonuses: 0.1, deductions: { taxes: 0.2, benefits: '100.05' } }),
          entry({ employee_id: 'emp_b', gross_pay: 1999.99, hours_worked: '72.5', deductions: 10 }),
        ],
      }),
    );
    expect(found).toEqual([]);
    expect(submission!.type).toBe('regular');
    expect(submission!.employees[1]!.deductions).toEqual({ total: 1000 });
    expect(payrollTotals(submission!.employees)).toEqual({
      gross_pay: 399999,
      bonuses: 10,
      deductions: 11025,
      net_pay: 388984,
    });
    expect(netPay(submission!.employees[0]!)).toBe(200000 + 10 - 20 - 10005);
  });

  it.each([
    [{ pay_period_start: '' }, 'pay_period_start', 'invalid_date_range'],
    [{ pay_period_start: undefined }, 'pay_period_start', 'invalid_date_range'],
    [{ pay_period_end: '2026-11-31' }, 'pay_period_end', 'invalid_date_range'],
    [{ pay_date: '20/11/2026' }, 'pay_date', 'invalid_date_range'],
    [{ pay_period_end: '2026-10-31' }, 'pay_period_end', 'invalid_date_range'],
    [{ pay_period_end: '2026-11-01' }, 'pay_period_end', 'invalid_date_range'],
    [{ pay_date: '2026-10-30' }, 'pay_date', 'invalid_date_range'],
    [{ employees: [] }, 'employees', 'invalid_request_body'],
    [{ employees: 'all' }, 'employees', 'invalid_request_body'],
    [{ employees: undefined }, 'employees', 'invalid_request_body'],
    [{ type: 'bonus' }, 'type', 'invalid_request_body'],
    [{ colour: 'blue' }, 'colour', 'invalid_request_body'],
  ])('%j is reported on %s as %s', (patch, field, code) => {
    expect(problems(body(patch))).toContainEqual(expect.objectContaining({ field, code }));
  });

  it.each([
    [{ hours_worked: undefined }, 'employees[0].hours_worked', 'invalid_request_body', 'required'],
    [{ hours_worked: null }, 'employees[0].hours_worked', 'invalid_request_body', 'required'],
    [{ hours_worked: '' }, 'employees[0].hours_worked', 'invalid_request_body', 'required'],
    [{ hours_worked: '  ' }, 'employees[0].hours_worked', 'invalid_request_body', 'required'],
    [{ hours_worked: -1 }, 'employees[0].hours_worked', 'invalid_request_body', 'out_of_range'],
    [{ hours_worked: 337 }, 'employees[0].hours_worked', 'invalid_request_body', 'out_of_range'],
    [{ hours_worked: 1.234 }, 'employees[0].hours_worked', 'invalid_request_body', 'invalid_format'],
    [{ gross_pay: -5 }, 'employees[0].gross_pay', 'negative_pay', 'negative_pay'],
    [{ gross_pay: undefined }, 'employees[0].gross_pay', 'invalid_request_body', 'required'],
    [{ gross_pay: '12.345' }, 'employees[0].gross_pay', 'invalid_request_body', 'invalid_precision'],
    [{ gross_pay: 1e309 }, 'employees[0].gross_pay', 'invalid_request_body', 'invalid_amount'],
    [{ gross_pay: null }, 'employees[0].gross_pay', 'invalid_request_body', 'required'],
    [{ gross_pay: true }, 'employees[0].gross_pay', 'invalid_request_body', 'invalid_amount'],
    [{ hours_worked: [8] }, 'employees[0].hours_worked', 'invalid_request_body', 'invalid_type'],
    [{ bonuses: -0.01 }, 'employees[0].bonuses', 'negative_pay', 'negative_pay'],
    [{ deductions: -3 }, 'employees[0].deductions', 'negative_pay', 'negative_pay'],
    [{ deductions: { taxes: -3 } }, 'employees[0].deductions.taxes', 'negative_pay', 'negative_pay'],
    [{ deductions: { 'Taxes!': 3 } }, 'employees[0].deductions.Taxes!', 'invalid_request_body', 'invalid_format'],
    [{ deductions: [1] }, 'employees[0].deductions', 'invalid_request_body', 'invalid_type'],
    [{ deductions: { taxes: 1500, benefits: 600 } }, 'employees[0]', 'negative_pay', 'net_pay_below_zero'],
    [{ notes: 'x'.repeat(501) }, 'employees[0].notes', 'invalid_request_body', 'too_long'],
    [{ employee_id: '' }, 'employees[0].employee_id', 'invalid_request_body', 'required'],
    [{ salary: 1 }, 'employees[0].salary', 'invalid_request_body', 'unknown_field'],
  ])('entry %j is reported on %s as %s (%s)', (patch, field, code, reason) => {
    expect(problems(body({ employees: [entry(patch)] }))).toContainEqual({ field, code, reason });
  });

  it("accepts the period's full hours and hours as numeric strings", () => {
    expect(problems(body({ employees: [entry({ hours_worked: 336 })] }))).toEqual([]);
    expect(problems(body({ employees: [entry({ hours_worked: '0' })] }))).toEqual([]);
  });

  it('names the second appearance of an employee', () => {
    expect(problems(body({ employees: [entry(), entry({ gross_pay: 1 })] }))).toEqual([
      { field: 'employees[1].employee_id', code: 'invalid_request_body', reason: 'duplicate_employee' },
    ]);
  });

  it('reports every problem of every entry at once, each with its index', () => {
    const found = problems(
      body({
        pay_period_end: '2026-10-01',
        employees: [
          entry({ hours_worked: null }),
          entry({ employee_id: 'emp_b', gross_pay: -1 }),
          entry({ employee_id: 'emp_c' }),
          'junk',
        ],
      }),
    );
    expect(found.map((p) => p.field)).toEqual([
      'pay_period_end',
      'employees[0].hours_worked',
      'employees[1].gross_pay',
      'employees[3]',
    ]);
  });

  it('refuses more than 25,000 employees before looking at them', () => {
    expect(() => validatePayrollBody(body({ employees: Array.from({ length: 25_001 }, () => ({})) }))).toThrow(
      TooManyEmployeesError,
    );
  });

  it('hashes the meaning of a body, not its spelling', () => {
    const a = validatePayrollBody(
      body({ employees: [entry({ gross_pay: 2000, deductions: { benefits: 1, taxes: 2 } })] }),
    ).submission!;
    const b = validatePayrollBody(
      body({ employees: [entry({ gross_pay: '2000.00', deductions: { taxes: '2.00', benefits: 1.0 } })] }),
    ).submission!;
    const c = validatePayrollBody(body({ employees: [entry({ gross_pay: '2000.01' })] })).submission!;
    expect(contentHash(a)).toBe(contentHash(b));
    expect(contentHash(a)).not.toBe(contentHash(c));
    expect(contentHash(a)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('status precedence of a rejected payroll', () => {
  const p = (code: string) => ({ code, message: code }) as never;
  it.each([
    [['duplicate_payroll_window', 'employee_not_found', 'negative_pay'], 400, 'negative_pay'],
    [['duplicate_payroll_window', 'missing_bank_account'], 422, 'missing_bank_account'],
    [['employee_not_found', 'missing_bank_account'], 422, 'employee_not_found'],
    [['duplicate_payroll_window'], 409, 'duplicate_payroll_window'],
    [['invalid_date_range', 'invalid_request_body'], 400, 'invalid_date_range'],
  ])('%j answers %d %s', (codes, status, code) => {
    const err = new PayrollRejectedError(codes.map(p));
    expect(httpErrorOf(err).status).toBe(status);
    expect(err.code).toBe(code);
    expect(err.details).toHaveLength(codes.length);
  });
});

describe('amounts a NACHA file can carry (CONTRACT §5): refused at submission, never found by the processor', () => {
  const MAX_ENTRY = '99999999.99';
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `emp_${i}`);

  it('accepts every amount and a net pay of exactly 99,999,999.99', () => {
    expect(problems(body({ employees: [entry({ gross_pay: MAX_ENTRY })] }))).toEqual([]);
    expect(
      problems(body({ employees: [entry({ gross_pay: '99999000.00', bonuses: '999.99', deductions: '0.00' })] })),
    ).toEqual([]);
  });

  it.each([
    [{ gross_pay: '100000000.00' }, ['employees[0].gross_pay', 'employees[0]']],
    [{ gross_pay: '1.00', bonuses: '100000000.00' }, ['employees[0].bonuses', 'employees[0]']],
    // Gross and bonuses each fit; their sum, the deposit, does not.
    [{ gross_pay: MAX_ENTRY, bonuses: '0.01' }, ['employees[0]']],
    [{ gross_pay: '100000000.00', deductions: '100000000.00' }, ['employees[0].gross_pay', 'employees[0].deductions']],
  ])('refuses %o with 400 out_of_range naming %o', (extra, fields) => {
    const found = problems(body({ employees: [entry(extra)] }));
    expect(found).toEqual(fields.map((field) => ({ field, code: 'invalid_request_body', reason: 'out_of_range' })));
    expect(
      httpErrorOf(new PayrollRejectedError(validatePayrollBody(body({ employees: [entry(extra)] })).problems)).status,
    ).toBe(400);
  });

  it.each([
    // Found by an outside check: these answered 500 (a total no longer exact, then a RangeError).
    [{ gross_pay: '99999999999999.99' }, ['employees[0].gross_pay']],
    [{ gross_pay: '9999999999999.99' }, ['employees[0].gross_pay', 'employees[0]']],
    [
      {
        gross_pay: '1.00',
        deductions: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`d${i}`, '9999999999999.99'])),
      },
      ['employees[0].deductions'],
    ],
  ])('refuses the extreme %o with 400 out_of_range naming %o, never a 500', (extra, fields) => {
    const found = problems(body({ employees: [entry(extra)] }));
    expect(found.map((p) => p.field)).toEqual(fields);
    expect(found.every((p) => p.reason === 'out_of_range')).toBe(true);
  });

  it('accepts a net total of exactly 9,999,999,999.99 and refuses one cent more, on `employees`', () => {
    // 100 entries of 99,999,999.99 = 9,999,999,999.00; one more entry brings the total to the boundary.
    const full = ids(100).map((employee_id) => entry({ employee_id, gross_pay: MAX_ENTRY }));
    expect(problems(body({ employees: [...full, entry({ employee_id: 'emp_last', gross_pay: '0.99' })] }))).toEqual([]);
    expect(problems(body({ employees: [...full, entry({ employee_id: 'emp_last', gross_pay: '1.00' })] }))).toEqual([
      { field: 'employees', code: 'invalid_request_body', reason: 'out_of_range' },
    ]);
  });
});
