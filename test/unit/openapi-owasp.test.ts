import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  formatFindings,
  lintOpenApi,
  OPENAPI_DOCUMENT_PATH,
  owaspRuleset,
  type OwaspFinding,
} from '../../openapi/owasp-ruleset.js';

/**
 * docs/openapi.json against the OWASP API Security ruleset (Spectral, recommended rules, as openapi/owasp-ruleset.ts
 * sets it): every bound the service enforces is declared, so a client sees the limits before it meets them.
 * `npm run lint:api` prints the same findings.
 */
const listed = (findings: readonly OwaspFinding[]) => `\n${formatFindings(findings)}\n`;

describe('the OpenAPI document against the OWASP API Security ruleset', () => {
  it('has no finding', async () => {
    const findings = await lintOpenApi();
    expect(findings, `${findings.length} OWASP finding(s) (npm run lint:api):${listed(findings)}`).toEqual([]);
  }, 60_000);

  it('still finds a credential in a URL: only `page_token` is exempt', async () => {
    const doc = JSON.parse(readFileSync(OPENAPI_DOCUMENT_PATH, 'utf8'));
    const parameters = doc.paths['/v1/employees'].get.parameters as unknown[];
    parameters.push({ name: 'access_token', in: 'query', schema: { type: 'string', maxLength: 64, pattern: '^x$' } });
    const findings = await lintOpenApi({ text: JSON.stringify(doc) });
    expect(
      findings.map((f) => [f.code, f.path]),
      listed(findings),
    ).toEqual([
      ['owasp:api2:2023-no-credentials-in-url', `paths./v1/employees.get.parameters.${parameters.length - 1}.name`],
    ]);
  }, 60_000);

  it('turns a rule off only where it finds something: every override is still needed', async () => {
    const { overrides = [], ...withoutOverrides } = owaspRuleset;
    const findings = await lintOpenApi({ ruleset: withoutOverrides as typeof owaspRuleset });
    for (const override of overrides) {
      const places = override.files.map((file) => file.slice(file.indexOf('#')));
      const rules = Object.keys('rules' in override ? (override.rules ?? {}) : {});
      for (const rule of rules) {
        const found = findings.filter(
          (f) => f.code === rule && places.some((p) => f.pointer === p || f.pointer.startsWith(`${p}/`)),
        );
        expect(found.length, `${rule} at ${places.join(', ')}: a stale override`).toBeGreaterThan(0);
      }
    }
    // And nothing else: without the overrides, every finding is one of theirs.
    const covered = (f: OwaspFinding) =>
      overrides.some(
        (o) =>
          'rules' in o &&
          f.code in (o.rules ?? {}) &&
          o.files.some((file) => {
            const p = file.slice(file.indexOf('#'));
            return f.pointer === p || f.pointer.startsWith(`${p}/`);
          }),
      );
    expect(
      findings.filter((f) => !covered(f)),
      listed(findings),
    ).toEqual([]);
  }, 60_000);
});
