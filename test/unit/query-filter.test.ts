import { describe, expect, it } from 'vitest';
import { queryFilter } from '../../shared/data/filters.js';

describe('queryFilter', () => {
  const key = { ':pk': 'ORG#1', ':prefix': 'PAYROLL#' };

  it('adds nothing but the key values when no filter is asked for', () => {
    expect(queryFilter(key, [undefined, '', false, null])).toStrictEqual({ ExpressionAttributeValues: key });
  });

  it('joins the conditions asked for with AND, with their names and values after the key values', () => {
    const parts = queryFilter(key, [
      { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': 'pending' } },
      undefined,
      { expression: 'pay_date <= :to', values: { ':to': '2026-12-31' } },
      { expression: 'attribute_exists(x)' },
    ]);
    expect(parts).toStrictEqual({
      FilterExpression: '#status = :status AND pay_date <= :to AND attribute_exists(x)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pk': 'ORG#1', ':prefix': 'PAYROLL#', ':status': 'pending', ':to': '2026-12-31' },
    });
    expect(Object.keys(parts.ExpressionAttributeValues)).toEqual([':pk', ':prefix', ':status', ':to']);
  });

  it('leaves out the names when no condition uses one', () => {
    expect(
      queryFilter(key, [{ expression: 'pay_date >= :from', values: { ':from': '2026-01-01' } }]),
    ).not.toHaveProperty('ExpressionAttributeNames');
  });

  it('refuses one placeholder standing for two values', () => {
    expect(() => queryFilter(key, [{ expression: 'a = :pk', values: { ':pk': 'other' } }])).toThrow(/:pk/);
    expect(() =>
      queryFilter(key, [
        { expression: 'a = :v', values: { ':v': 1 } },
        { expression: 'b = :v', values: { ':v': 1 } },
      ]),
    ).not.toThrow();
  });
});
