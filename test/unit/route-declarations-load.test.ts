import { describe, expect, it, vi } from 'vitest';

// Spies around the two file writers the declarations' examples use: every function loads these declarations at a
// cold start, and a bank file built there is documentation work (the banking calendar's time-zone data alone took
// about 17 ms of each API function's load).
const built = vi.hoisted(() => ({ nacha: 0, returns: 0 }));
vi.mock('../../shared/adapters/nacha.js', async (actual) => {
  const real = await actual<typeof import('../../shared/adapters/nacha.js')>();
  return {
    ...real,
    buildNachaFile: (...args: Parameters<typeof real.buildNachaFile>) => {
      built.nacha++;
      return real.buildNachaFile(...args);
    },
  };
});
vi.mock('../../shared/adapters/nacha-returns.js', async (actual) => {
  const real = await actual<typeof import('../../shared/adapters/nacha-returns.js')>();
  return {
    ...real,
    writeReturnFile: (...args: Parameters<typeof real.writeReturnFile>) => {
      built.returns++;
      return real.writeReturnFile(...args);
    },
  };
});

describe('the route declarations', () => {
  it('build no example file when a function loads them, only when the document reads the example', async () => {
    const { payrollRoutes } = await import('../../shared/api/payroll.js');
    const { disbursementReturnRoutes } = await import('../../shared/api/disbursement-returns.js');
    await import('../../shared/api/routes.js');
    expect(built).toEqual({ nacha: 0, returns: 0 });

    const nacha = payrollRoutes.getDisbursement.success[0]?.alternatives?.['text/plain']?.example;
    const returns = disbursementReturnRoutes.postDisbursementReturns.body?.text?.example;
    expect(built).toEqual({ nacha: 1, returns: 1 });
    expect(String(nacha).split('\n')[0]).toMatch(/^101 /);
    expect(String(returns).split('\n')[0]).toMatch(/^101 /);
  });
});
