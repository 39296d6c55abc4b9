import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundleFunction } from '../../infra/bundling/bundle-function.js';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addPayrollStacks } from '../../infra/app.js';
import { PayrollFunction } from '../../infra/constructs/payroll-function.js';
import { AWS_SDK_PATH, lambdaBuildOptions, SDK_LAYER_DIR, SDK_LAYER_FOLDER, SDK_PACKAGES, sdkLayerFile } from '../../infra/bundling/options.js';
import { buildSdkLayer, layerImportsOf, type SdkLayerBuild, sdkImports } from '../../infra/bundling/sdk-layer.js';
import { importRouteModule, routeModuleFile } from '../../shared/http/route-files.js';
import { ALL_HANDLERS, bundleSpecOf, WORKER_HANDLERS } from '../../infra/lambda-functions.js';
import { ROUTES, routeById, type RouteDef } from '../../shared/http/routes.js';
import { samplePaystub } from '../fixtures/paystub-document.js';
import { testEngines } from '../support/engines.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The AWS SDK layer (infra/bundling/sdk-layer.ts), built here as the CDK app builds it, into a temporary folder that
 * stands for /opt/payroll-aws-sdk; the bundles are built with the exact options the CDK construct deploys with,
 * importing that folder by absolute path, and run in a folder with no node_modules.
 */
describe('AWS SDK layer', () => {
  let dir: string;
  let layer: SdkLayerBuild;
  const entries = ALL_HANDLERS;
  let bundles: { entry: string; file: string; sdkInputs: string[]; layerImports: string[]; dynamicLayerImports: string[] }[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'payroll-layer-test-'));
    layer = buildSdkLayer(join(dir, 'payroll-aws-sdk'));
    bundles = await Promise.all(entries.map(async (entry) => {
      const asset = join(dir, 'functions', entry);
      const output = await bundleFunction(bundleSpecOf(entry), asset, { sdkDir: layer.dir });
      return {
        entry,
        file: join(asset, 'index.mjs'),
        sdkInputs: Object.keys(output.inputs).filter((input) => AWS_SDK_PATH.test(input)),
        layerImports: layerImportsOf(output, layer.dir, 'import-statement'),
        dynamicLayerImports: layerImportsOf(output, layer.dir, 'dynamic-import'),
      };
    }));
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the names the code imports, one file per package (exactly those: see "AWS SDK layer imports")', () => {
    expect(Object.keys(layer.exports).sort()).toEqual([...SDK_PACKAGES].sort());
    expect(layer.exports['@aws-sdk/lib-dynamodb']).toEqual(expect.arrayContaining(['DynamoDBDocumentClient', 'GetCommand', 'TransactWriteCommand']));
    for (const pkg of SDK_PACKAGES) expect(existsSync(join(layer.dir, sdkLayerFile(pkg)))).toBe(true);
  });

  it('carries no SSO, STS or profile credential code', () => {
    const code = Object.keys(layer.metafile.outputs).filter((file) => file.endsWith('.mjs')).map((file) => readFileSync(resolve(ROOT, file), 'utf8')).join('\n');
    for (const marker of ['SSOClient', 'STSClient', 'fromIni', 'AWS_CONTAINER_CREDENTIALS', 'sso_start_url']) expect(code).not.toContain(marker);
  });

  it('measures and loads what the CDK app deploys: every file of functions/, each one a function of the app', () => {
    const files = readdirSync(join(ROOT, 'functions'), { recursive: true, withFileTypes: true }).filter((f) => f.isFile() && f.name.endsWith('.ts'))
      .map((f) => relative(join(ROOT, 'functions'), join(f.parentPath, f.name)).replace(/\.ts$/, ''));
    const context = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
    const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
    addPayrollStacks(app);
    const deployed = new Set(app.node.findAll().filter((c): c is PayrollFunction => c instanceof PayrollFunction).map((f) => f.handler));
    expect([...deployed].sort()).toEqual(files.sort());
    expect([...ALL_HANDLERS].sort()).toEqual(files.sort());
  });

  it('leaves no SDK code in any function bundle: each imports the layer instead', () => {
    for (const bundle of bundles) expect({ entry: bundle.entry, sdk: bundle.sdkInputs }).toEqual({ entry: bundle.entry, sdk: [] });
    const tableUsers = bundles.filter((b) => b.layerImports.some((path) => path.endsWith(`/${sdkLayerFile('@aws-sdk/lib-dynamodb')}`)));
    expect(tableUsers.length).toBe(entries.length - 1); // all but the fallback, which never reads the table
  });

  it('links: every function bundle loads with the layer, in a fresh process, and exports its handler', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', [
      `const files = ${JSON.stringify(bundles.map((b) => b.file))};`,
      `for (const file of files) { const m = await import('file://' + file); if (typeof m.handler !== 'function') throw new Error(file + ': no handler'); }`,
      `console.log(files.length);`,
    ].join('\n')], { cwd: dir, env: { PATH: process.env.PATH!, HOME: dir, AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } });
    expect(Number(stdout.trim())).toBe(entries.length);
  });

  it('defines every name it serves', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', [
      `const served = ${JSON.stringify(Object.fromEntries(Object.entries(layer.exports).map(([pkg, names]) => [join(layer.dir, sdkLayerFile(pkg)), names])))};`,
      `const missing = [];`,
      `for (const [file, names] of Object.entries(served)) { const m = await import('file://' + file); for (const n of names) if (m[n] === undefined) missing.push(file + ' ' + n); }`,
      `console.log(JSON.stringify(missing));`,
    ].join('\n')], { cwd: dir, env: { PATH: process.env.PATH!, HOME: dir, AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } });
    expect(JSON.parse(stdout)).toEqual([]);
  });

  it('loads the S3 client on first use only, in every function that can touch the bucket', () => {
    const s3 = join(layer.dir, sdkLayerFile('@aws-sdk/client-s3'));
    const users = bundles.filter((b) => b.dynamicLayerImports.includes(s3)).map((b) => b.entry).sort();
    // Exactly the functions granted the bucket: the routes with bucket access, and the processor.
    const granted = (ROUTES as readonly RouteDef[]).filter((r) => r.access?.some((a) => a.startsWith('bucket:'))).map((r) => r.handler as string);
    expect(users).toEqual([...new Set([...granted, WORKER_HANDLERS.processor])].sort());
    for (const bundle of bundles) expect({ entry: bundle.entry, static: bundle.layerImports.includes(s3) }).toEqual({ entry: bundle.entry, static: false });
  });

  describe('a bundle built on the layer, against the DynamoDB engine', () => {
    let bundle: string;

    beforeAll(async () => {
      const entry = join(dir, 'entry.ts');
      writeFileSync(entry, [
        `import { GetCommand } from '@aws-sdk/lib-dynamodb';`,
        `import { createDocumentClient } from ${JSON.stringify(join(ROOT, 'shared', 'adapters', 'dynamo.js'))};`,
        // A table that does not exist: the engine's answer proves the request was signed and sent.
        `export const handler = () => createDocumentClient().send(new GetCommand({ TableName: 'no-such-table', Key: { PK: 'a', SK: 'b' } })).then(() => 'found', (e) => e.name);`,
      ].join('\n'));
      bundle = join(dir, 'index.mjs');
      await build({ ...lambdaBuildOptions(entry, bundle, layer.dir), logLevel: 'silent' });
    });

    const invoke = (env: Record<string, string>) => run(process.execPath, ['--input-type=module', '-e',
      `const { handler } = await import(${JSON.stringify(`file://${bundle}`)}); console.log(await handler());`],
    { cwd: dir, env: { PATH: process.env.PATH!, HOME: dir, AWS_REGION: testEngines().region, AWS_ENDPOINT_URL_DYNAMODB: testEngines().dynamodbEndpoint,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', AWS_MAX_ATTEMPTS: '1', ...env } });

    it('signs with the role credentials Lambda puts in the environment', async () => {
      const { stdout } = await invoke({ AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_SESSION_TOKEN: 'session' });
      expect(stdout.trim()).toBe('ResourceNotFoundException');
    });

    it('fails at once, naming the cause, when the environment holds no credentials', async () => {
      const { stdout } = await invoke({});
      expect(stdout.trim()).toBe('CredentialsProviderError');
    });
  });
});

/** The imports the layer cannot serve by name fail its build, naming the file. */
describe('AWS SDK layer imports', () => {
  let root: string;
  const write = (file: string, text: string) => { mkdirSync(join(root, file, '..'), { recursive: true }); writeFileSync(join(root, file), text); };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'payroll-layer-imports-'));
    write('functions/a.ts', `import { GetCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';\nimport type { S3Client } from '@aws-sdk/client-s3';\n`);
    write('shared/b.ts', `import { SQSClient as Queue, SendMessageCommand } from '@aws-sdk/client-sqs';\n`);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('collects the value names per package, leaving type-only imports out and reading through aliases', () => {
    expect(sdkImports(root)).toEqual({ '@aws-sdk/lib-dynamodb': ['GetCommand'], '@aws-sdk/client-sqs': ['SQSClient', 'SendMessageCommand'] });
  });

  it('counts the names a dynamic import destructures', () => {
    write('shared/d.ts', `export async function load() {\n  const { S3Client, GetObjectCommand: Get } = await import('@aws-sdk/client-s3');\n  return [S3Client, Get];\n}\n`);
    expect(sdkImports(root)['@aws-sdk/client-s3']).toEqual(['GetObjectCommand', 'S3Client']);
  });

  it.each([
    ['a namespace import', `import * as s3 from '@aws-sdk/client-s3';`, 'import * from @aws-sdk/client-s3'],
    ['a default import', `import kms from '@aws-sdk/client-kms';`, 'default import from @aws-sdk/client-kms'],
    ['a re-export', `export { GetCommand } from '@aws-sdk/lib-dynamodb';`, 're-exports from @aws-sdk/lib-dynamodb'],
    ['a dynamic import that does not name what it takes', `export const load = () => import('@aws-sdk/client-s3');`, 'dynamic import of @aws-sdk/client-s3 must destructure the names it uses'],
    ['a dynamic import that takes the rest', `export const load = async () => { const { S3Client, ...rest } = await import('@aws-sdk/client-s3'); };`, 'dynamic import of @aws-sdk/client-s3 must name what it takes'],
    ['a package the layer does not serve', `import { STSClient } from '@aws-sdk/client-sts';`, 'imports @aws-sdk/client-sts, which the SDK layer does not serve'],
  ])('refuses %s', (_what, code, message) => {
    write('shared/c.ts', `${code}\n`);
    expect(() => sdkImports(root)).toThrow(`shared/c.ts: ${message}`);
  });
});

/**
 * A route module (routes.ts `modules`) is bundled into its own file beside the function, as the CDK construct
 * builds the asset; the function's own bundle leaves it out and imports it on first use.
 */
describe('route modules', () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'payroll-module-test-'));
    await bundleFunction(bundleSpecOf(routeById.getPaystub.handler), dir);
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

/**
 * The CDK app's own bundling, for real, on the workers stack (three functions and the layer): each function gets
 * its own asset holding its bundle and source map, importing the SDK from /opt, and the stack's layer holds the
 * SDK's files. (The other infra tests skip bundling to stay fast.)
 */
describe('the CDK app\'s assets', () => {
  let outdir: string;
  let assets: { id: string; dir: string }[];
  let layerDir: string;

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'payroll-cdk-assets-'));
    const context = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
    const app = new App({ outdir, context: { ...context, 'aws:cdk:bundling-stacks': ['Payroll-sandbox-bundle-Workers'], stage: 'bundle' } });
    const { workers } = addPayrollStacks(app);
    expect(workers.stackName).toBe('Payroll-sandbox-bundle-Workers');
    app.synth();
    const resources = Template.fromStack(workers).toJSON().Resources as Record<string, { Type: string; Properties: { Code?: { S3Key: string }; Content?: { S3Key: string } } }>;
    const assetDir = (key: string) => join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
    assets = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function').map(([id, r]) => ({ id, dir: assetDir(r.Properties.Code!.S3Key) }));
    layerDir = assetDir(Object.values(resources).find((r) => r.Type === 'AWS::Lambda::LayerVersion')!.Properties.Content!.S3Key);
  }, 180_000);

  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('gives each function its own bundle, with its source map, importing the SDK from the layer', () => {
    expect(assets).toHaveLength(3);
    expect(new Set(assets.map((a) => a.dir)).size).toBe(3);
    const bundles = assets.map((a) => readFileSync(join(a.dir, 'index.mjs'), 'utf8'));
    expect(new Set(bundles).size).toBe(3);
    for (const [i, code] of bundles.entries()) {
      expect(readdirSync(assets[i]!.dir).sort()).toEqual(['index.mjs', 'index.mjs.map']);
      expect(code).toContain(`from"${SDK_LAYER_DIR}/${sdkLayerFile('@aws-sdk/lib-dynamodb')}"`);
      expect(code).not.toMatch(/@smithy|DynamoDBDocumentClient\s*extends/);
    }
  });

  it('puts the SDK layer\'s files where the bundles import them from: /opt/<folder>', () => {
    expect(readdirSync(layerDir)).toEqual([SDK_LAYER_FOLDER]);
    for (const pkg of SDK_PACKAGES) expect(existsSync(join(layerDir, SDK_LAYER_FOLDER, sdkLayerFile(pkg)))).toBe(true);
  });
});
