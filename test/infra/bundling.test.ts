import { execFile, execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaBuildOptions, lambdaModuleCommand } from '../../infra/bundling/options.js';
import { importRouteModule, routeModuleFile } from '../../shared/http/route-files.js';
import { routeById } from '../../shared/http/routes.js';
import { samplePaystub } from '../fixtures/paystub-document.js';
import { testEngines } from '../support/engines.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The Lambda bundles replace the SDK's default credential chain with environment credentials
 * (infra/bundling/env-credentials.ts). Built here with the exact options the CDK construct deploys with, then run
 * in a folder with no node_modules against the local DynamoDB engine, through the application's own client.
 */
describe('Lambda bundles', () => {
  let dir: string;
  let bundle: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'payroll-bundle-test-'));
    const entry = join(dir, 'entry.ts');
    writeFileSync(entry, [
      `import { ListTablesCommand } from '@aws-sdk/client-dynamodb';`,
      `import { createDocumentClient } from ${JSON.stringify(join(ROOT, 'shared', 'adapters', 'dynamo.js'))};`,
      `export const handler = async () => (await createDocumentClient().send(new ListTablesCommand({}))).TableNames;`,
    ].join('\n'));
    bundle = join(dir, 'index.mjs');
    // Resolve packages from the repository, as NodejsFunction does (its project root).
    await build({ ...lambdaBuildOptions(entry, bundle), nodePaths: [join(ROOT, 'node_modules')], logLevel: 'silent' });
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const invoke = (env: Record<string, string>) => run(process.execPath, ['--input-type=module', '-e',
    `const { handler } = await import(${JSON.stringify(`file://${bundle}`)}); console.log(JSON.stringify(await handler()));`],
  { cwd: dir, env: { PATH: process.env.PATH!, HOME: dir, AWS_REGION: testEngines().region, AWS_ENDPOINT_URL_DYNAMODB: testEngines().dynamodbEndpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', AWS_MAX_ATTEMPTS: '1', ...env } });

  it('carries no SSO, STS or profile credential code', () => {
    const code = readFileSync(bundle, 'utf8');
    for (const marker of ['SSOClient', 'STSClient', 'fromIni', 'AWS_CONTAINER_CREDENTIALS', 'sso_start_url']) expect(code).not.toContain(marker);
  });

  it('signs with the role credentials Lambda puts in the environment', async () => {
    const { stdout } = await invoke({ AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_SESSION_TOKEN: 'session' });
    expect(Array.isArray(JSON.parse(stdout))).toBe(true);
  });

  it('fails at once, naming the cause, when the environment holds no credentials', async () => {
    const err = await invoke({}).then(() => undefined, (e: { stderr: string }) => e);
    expect(err?.stderr).toContain('Unable to find environment variable credentials');
  });
});

/**
 * A route module (routes.ts `modules`) is bundled into its own file beside the function, with the command the CDK
 * construct runs after bundling; the function's own bundle leaves it out and imports it on first use.
 */
describe('route modules', () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'payroll-module-test-'));
    await build({ ...lambdaBuildOptions(join(ROOT, 'functions', 'api', 'get-paystub.ts'), join(dir, 'index.mjs')), logLevel: 'silent' });
    for (const module of routeById.getPaystub.modules) execSync(lambdaModuleCommand(module, join(dir, routeModuleFile(module))), { cwd: ROOT });
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the PDF renderer out of get-paystub\'s bundle', () => {
    const main = readFileSync(join(dir, 'index.mjs'), 'utf8');
    const renderer = readFileSync(join(dir, routeModuleFile(routeById.getPaystub.modules[0])), 'utf8');
    // pdf-lib's standard font metrics: megabytes of tables only the renderer needs.
    for (const marker of ['Helvetica-Bold', 'StandardFonts']) {
      expect(renderer).toContain(marker);
      expect(main).not.toContain(marker);
    }
    expect(main.length).toBeLessThan(renderer.length);
  });

  it('loads the bundled renderer from beside the function, and it renders a statement', async () => {
    const { renderPaystubPdf } = await importRouteModule<typeof import('../../shared/adapters/paystub-pdf.js')>(
      `file://${join(dir, 'index.mjs')}`, routeById.getPaystub.modules[0]);
    const pdf = await renderPaystubPdf(samplePaystub);
    expect(Buffer.from(pdf).subarray(0, 5).toString()).toBe('%PDF-');
  });
});
