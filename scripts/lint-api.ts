import { formatFindings, lintOpenApi } from '../openapi/owasp-ruleset.js';

/**
 * `npm run lint:api`: docs/openapi.json against the OWASP API Security ruleset (openapi/owasp-ruleset.ts). Prints
 * each finding (rule, place, message) and exits 1 if there is any; test/unit/openapi-owasp.test.ts expects none.
 */
const findings = await lintOpenApi();
if (findings.length > 0) {
  console.log(formatFindings(findings));
  console.log(`\n${findings.length} OWASP finding(s) in docs/openapi.json`);
  process.exitCode = 1;
} else {
  console.log('docs/openapi.json: no OWASP finding');
}
