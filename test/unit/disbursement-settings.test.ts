import { describe, expect, it } from 'vitest';
import { isValidRoutingNumber } from '../../shared/domain/aba.js';
import { disbursementDates, fileIdModifierFor, tooSoon } from '../../shared/domain/disbursement.js';
import { defaultSettings, placeholdersOf, sandboxOdfi } from '../../shared/domain/settings.js';
import { problemsFromZod } from '../../shared/schemas/problems.js';
import { updateSettingsBody } from '../../shared/schemas/settings.js';

const NOW = new Date('2026-11-25T12:00:00Z');

describe('file ID modifiers', () => {
  it('runs A–Z then 0–9 and starts again after the 36th file of a day', () => {
    expect(Array.from({ length: 38 }, (_, i) => fileIdModifierFor(i)).join('')).toBe(
      'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789AB',
    );
  });
});

describe('disbursement dates', () => {
  it.each([
    ['2026-11-20', '2026-11-20', '2026-11-19'], // a Friday
    ['2026-11-28', '2026-11-27', '2026-11-25'], // a Saturday after Thanksgiving
    ['2026-12-25', '2026-12-24', '2026-12-23'], // Christmas Day, a Friday
    ['2026-09-07', '2026-09-04', '2026-09-03'], // Labor Day
  ])('pay date %s settles on %s and must reach the bank by %s', (payDate, effective, release) => {
    expect(disbursementDates(payDate)).toEqual({ effective_entry_date: effective, release_by: release });
  });

  it('is too soon when the release day is past in New York, and names the earliest pay date still possible', () => {
    // Wednesday 2026-11-25, noon UTC: the next banking day is Friday (Thursday is Thanksgiving).
    expect(tooSoon('2026-11-27', NOW)).toBeUndefined(); // released today, on time
    expect(tooSoon('2026-11-25', NOW)).toEqual({ earliest_pay_date: '2026-11-27', release_by: '2026-11-24' });
    expect(tooSoon('2026-11-26', NOW)).toEqual({ earliest_pay_date: '2026-11-27', release_by: '2026-11-24' });
    // 11:30 pm Eastern on the 25th is already the 26th in UTC: New York's date decides.
    expect(tooSoon('2026-11-27', new Date('2026-11-26T04:30:00Z'))).toBeUndefined();
    expect(tooSoon('2026-11-27', new Date('2026-11-26T05:30:00Z'))).toEqual({
      earliest_pay_date: '2026-11-30',
      release_by: '2026-11-25',
    });
  });
});

describe('default originator', () => {
  it('gives each sandbox organization its own test ODFI, a routing number with a valid check digit', () => {
    const odfis = new Set(Array.from({ length: 200 }, (_, i) => sandboxOdfi(`org_${i}`)));
    expect(odfis.size).toBe(200);
    const a = defaultSettings({ id: 'org_a', name: 'Åsa & Søn Ltd.' }, 'sandbox', NOW);
    expect(a.originator.immediate_destination.slice(0, 8)).toBe(a.originator.originating_dfi_identification);
    expect(isValidRoutingNumber(a.originator.immediate_destination)).toBe(true);
    expect(a.originator.company_name).toBe('ASA & SON LTD.');
    expect(placeholdersOf(a, 'sandbox')).toEqual([]);
    expect(a.funding_account).toBeNull();
  });

  it('starts a production organization with placeholders no PATCH accepts and payroll refuses', () => {
    const p = defaultSettings({ id: 'org_p', name: 'Prod' }, 'production', NOW);
    expect(placeholdersOf(p, 'production')).toEqual([
      'company_identification',
      'originating_dfi_identification',
      'immediate_destination',
      'immediate_destination_name',
      'immediate_origin',
      'immediate_origin_name',
    ]);
    const patch = updateSettingsBody.safeParse({
      originator: {
        company_identification: p.originator.company_identification,
        originating_dfi_identification: p.originator.originating_dfi_identification,
        immediate_destination: p.originator.immediate_destination,
        immediate_origin: p.originator.immediate_origin,
      },
    });
    expect(patch.success).toBe(false);
    expect(
      problemsFromZod(patch.error!, {})
        .map((d) => d.field)
        .sort(),
    ).toEqual([
      'originator.company_identification',
      'originator.immediate_destination',
      'originator.immediate_origin',
      'originator.originating_dfi_identification',
    ]);
  });

  it('treats a production organization made before placeholders were tracked by its old defaults', () => {
    const legacy = { ...defaultSettings({ id: 'org_l', name: 'Old' }, 'sandbox', NOW) };
    delete legacy.originator_placeholders;
    legacy.originator = {
      ...legacy.originator,
      originating_dfi_identification: '02100002',
      immediate_destination: '021000021',
      company_identification: '0000000000',
    };
    expect(placeholdersOf(legacy, 'production')).toEqual([
      'company_identification',
      'originating_dfi_identification',
      'immediate_destination',
      'immediate_destination_name',
      'immediate_origin',
      'immediate_origin_name',
    ]);
    expect(placeholdersOf(legacy, 'sandbox')).toEqual([]);
  });
});

describe('PATCH /v1/settings originator and funding account', () => {
  const fieldsOf = (body: unknown) => {
    const parsed = updateSettingsBody.safeParse(body);
    return parsed.success ? [] : problemsFromZod(parsed.error, body).map((d) => `${d.field}:${d.code}`);
  };

  it('accepts what the file can carry, names uppercased', () => {
    const parsed = updateSettingsBody.parse({
      originator: {
        company_name: 'Acme Payroll',
        company_identification: '1234567890',
        originating_dfi_identification: '02100002',
        immediate_destination: '021000021',
        immediate_destination_name: 'First Bank',
        immediate_origin: ' 021000021',
        immediate_origin_name: 'Acme Co.',
      },
      funding_account: { routing_number: '011000015', account_number: '1234567', account_type: 'savings' },
    });
    expect(parsed.originator).toMatchObject({
      company_name: 'ACME PAYROLL',
      immediate_destination_name: 'FIRST BANK',
      immediate_origin_name: 'ACME CO.',
    });
    expect(
      updateSettingsBody.parse({ originator: { immediate_origin: 'ACMEPAYROL' } }).originator?.immediate_origin,
    ).toBe('ACMEPAYROL');
    expect(updateSettingsBody.parse({ funding_account: null }).funding_account).toBeNull();
  });

  it('refuses, field by field, what the file could not carry', () => {
    expect(
      fieldsOf({
        originator: {
          immediate_destination: '021000022',
          immediate_origin: 'acmepayrol',
          company_identification: '12345',
          company_name: 'Acmé',
          immediate_origin_name: 'Acme™',
          immediate_destination_name: '   ',
          originating_dfi_identification: '99000000',
        },
      }).sort(),
    ).toEqual([
      'originator.company_identification:invalid_format',
      'originator.company_name:invalid_format',
      'originator.immediate_destination:invalid_check_digit',
      'originator.immediate_destination_name:too_short',
      'originator.immediate_origin:invalid_format',
      'originator.immediate_origin_name:invalid_format',
      'originator.originating_dfi_identification:invalid_value',
    ]);
    expect(fieldsOf({ originator: { company_name: 'A'.repeat(17) } })).toEqual(['originator.company_name:too_long']);
    expect(
      fieldsOf({ funding_account: { routing_number: '011000016', account_number: '12', account_type: 'loan' } }).sort(),
    ).toEqual([
      'funding_account.account_number:invalid_format',
      'funding_account.account_type:invalid_value',
      'funding_account.routing_number:invalid_check_digit',
    ]);
  });
});
