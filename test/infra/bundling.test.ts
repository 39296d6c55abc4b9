import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AssetLoad, assetLoad, bundleFunction } from '../../infra/bundling/bundle-function.js';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addPayrollStacks } from '../../infra/app.js';
import { PayrollFunction } from '../../infra/constructs/payroll-function.js';
import { lambdaBuildOptions, PLACEHOLDER_DEPLOYED_ENV } from '../../infra/bundling/options.js';
import { accessOf, ALL_HANDLERS, apiHandlerOf, bundleSpecOf, WORKER_HANDLERS } from '../../infra/lambda-functions.js';
import { FUNCTIONS, routeById } from '../../shared/api/routes.js';
import { samplePaystub } from '../fixtures/paystub-document.js';
import { testEngines } from '../support/engines.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const KB = 1024;
/**
 * A guard against growth, not the target's verdict (600 KB): what a function loads at a cold start with tracing off
 * (index.mjs and the chunks its static imports reach). 625 KB since the payroll function unwraps the key of each
 * NACHA file it serves (the KMS client, about 12 KB over 600). Deployed, the tracer's chunk loads too: `npm run bench
 * -- --only cold-start` counts it and says so in BENCHMARKS.md.
 */
const BUNDLE_LIMIT = 625 * KB;
/**
 * The bank link's scheduled worker carries an SSH client (ssh2, in pure JavaScript: its native addons are left out):
 * it runs once a minute off the request path, where a cold start costs nobody a wait.
 */
const WORKER_LIMITS: Record<string, number> = { 'bank-link/serve-bank-links': 1024 * KB };
/** Plain `node` in a folder with no node_modules: nothing but the asset to resolve from. */
const nodeEnv = (dir: string, env: Record<string, string> = {}) => ({
  PATH: process.env.PATH!,
  HOME: dir,
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  ...env,
});
/** Every code file of an asset folder. */
const codeFiles = (dir: string) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => join(dir, f));
/** Imports by absolute path, as the bundles once made of an SDK layer under /opt. */
const OPT_IMPORT = /(from\s*|import\s*\(\s*|import\s*)["']\/opt\//;

/**
 * Every function's asset, built exactly as the CDK construct builds it (infra/bundling/bundle-function.ts: ESM,
 * minified, node22, source maps, the AWS SDK bundled in and tree-shaken), into a temporary folder with no
 * node_modules, and run there with plain `node`.
 */
describe('function bundles', () => {
  let dir: string;
  const entries = ALL_HANDLERS;
  let bundles: { entry: string; asset: string; file: string; load: AssetLoad; sdkInputs: string[] }[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'payroll-bundle-test-'));
    bundles = entries.map((entry) => {
      const asset = join(dir, 'functions', entry);
      const output = bundleFunction(bundleSpecOf(entry), asset);
      const load = assetLoad(output);
      const sdkInputs = Object.keys(output.index.inputs).filter((input) => /node_modules\/@aws-sdk\//.test(input));
      return { entry, asset, file: join(asset, 'index.mjs'), load, sdkInputs };
    });
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('measures and loads what the CDK app deploys: every file of functions/, each one a function of the app', () => {
    const files = readdirSync(join(ROOT, 'functions'), { recursive: true, withFileTypes: true })
      .filter((f) => f.isFile() && f.name.endsWith('.ts'))
      .map((f) => relative(join(ROOT, 'functions'), join(f.parentPath, f.name)).replace(/\.ts$/, ''));
    const context = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> })
      .context;
    const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
    addPayrollStacks(app);
    const deployed = new Set(
      app.node
        .findAll()
        .filter((c): c is PayrollFunction => c instanceof PayrollFunction)
        .map((f) => f.handler),
    );
    expect([...deployed].sort()).toEqual(files.sort());
    expect([...ALL_HANDLERS].sort()).toEqual(files.sort());
  });

  it('bundles the AWS SDK into each function that uses it, and imports nothing from /opt', () => {
    const tableUsers = bundles.filter((b) =>
      b.sdkInputs.some((input) => input.includes('node_modules/@aws-sdk/lib-dynamodb/')),
    );
    expect(tableUsers.length).toBe(entries.length - 1); // all but the fallback, which never reads the table
    for (const bundle of bundles) {
      for (const file of codeFiles(bundle.asset))
        expect({ file: relative(dir, file), opt: OPT_IMPORT.test(readFileSync(file, 'utf8')) }).toEqual({
          file: relative(dir, file),
          opt: false,
        });
    }
  });

  it('carries no SSO, STS or profile credential code', () => {
    const code = bundles
      .flatMap((b) => codeFiles(b.asset))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    for (const marker of ['SSOClient', 'STSClient', 'fromIni', 'AWS_CONTAINER_CREDENTIALS', 'sso_start_url'])
      expect(code).not.toContain(marker);
  });

  it("writes no chunk of the SDK's browser user-agent parser, which no Node code path loads", () => {
    for (const bundle of bundles) {
      const files = codeFiles(bundle.asset).map((file) => relative(bundle.asset, file));
      expect({ entry: bundle.entry, bowser: files.filter((f) => /bowser/i.test(f)) }).toEqual({
        entry: bundle.entry,
        bowser: [],
      });
    }
  });

  it(`keeps what each function loads at a cold start with tracing off (locally, as the yardstick loads it) within ${BUNDLE_LIMIT / KB} KB`, () => {
    const sizes = bundles.map((b) => ({
      entry: b.entry,
      kb: Math.round(b.load.atLoad.reduce((sum, f) => sum + f.bytes, 0) / KB),
    }));
    console.log(
      `bundle sizes at load (index.mjs and its static chunks):\n${sizes.map((s) => `  ${s.entry} ${s.kb} KB`).join('\n')}`,
    );
    for (const size of sizes)
      expect(size.kb * KB, size.entry).toBeLessThanOrEqual(WORKER_LIMITS[size.entry] ?? BUNDLE_LIMIT);
  });

  it('runs with plain node: every bundle loads in a fresh process, in a folder with no node_modules, and exports its handler', async () => {
    const loaded = await Promise.all(
      bundles.map(async (b) => {
        const { stdout } = await run(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `const m = await import(${JSON.stringify(`file://${b.file}`)}); console.log(typeof m.handler);`,
          ],
          { cwd: dir, env: nodeEnv(dir, PLACEHOLDER_DEPLOYED_ENV) },
        );
        return { entry: b.entry, handler: stdout.trim() };
      }),
    );
    expect(loaded).toEqual(bundles.map((b) => ({ entry: b.entry, handler: 'function' })));
  });

  it('keeps the route declarations of other resources, and their schemas, out of the docs function', () => {
    // It answers the preflights and unknown paths of every resource from the OpenAPI document it serves.
    const docs = bundles.find((b) => b.entry === apiHandlerOf('docs'))!;
    const declarations = docs.load.inputsAtLoad.filter((input) => /^shared\/(api|schemas)\//.test(input)).sort();
    expect(declarations).toEqual(['shared/api/docs.ts', 'shared/api/route.ts', 'shared/schemas/problems.ts']);
  });

  it('answers 404, 405 with Allow and a preflight from the docs bundle, with the document copied beside it', async () => {
    const docs = bundles.find((b) => b.entry === apiHandlerOf('docs'))!;
    const event = (httpMethod: string, path: string) =>
      JSON.stringify({ httpMethod, path, resource: '/{proxy+}', headers: { Origin: 'https://dash.example.com' } });
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        [
          `const { handler } = await import(${JSON.stringify(`file://${docs.file}`)});`,
          `const call = (e) => handler(JSON.parse(e), { awsRequestId: 'r', getRemainingTimeInMillis: () => 1000 });`,
          `const answers = [];`,
          `for (const e of ${JSON.stringify([event('PUT', '/v1/employees/emp_1'), event('GET', '/v1/nothing'), event('OPTIONS', '/v1/employees')])})`,
          `  { const r = await call(e); answers.push({ status: r.statusCode, allow: r.headers?.Allow ?? null, methods: r.headers?.['Access-Control-Allow-Methods'] ?? null }); }`,
          'console.log(JSON.stringify(answers));',
        ].join('\n'),
      ],
      { cwd: dir, env: nodeEnv(dir, { ...PLACEHOLDER_DEPLOYED_ENV, PAYROLL_CORS_ALLOW_ORIGIN: '*' }) },
    );
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual([
      { status: 405, allow: 'GET, PATCH, DELETE', methods: null },
      { status: 404, allow: null, methods: null },
      { status: 204, allow: null, methods: expect.stringContaining('POST') },
    ]);
  });

  it('loads the S3 client on first use only, in every function that can touch the bucket', () => {
    const s3 = (entryPoint: string) => entryPoint.startsWith('node_modules/@aws-sdk/client-s3/');
    const users = bundles
      .filter((b) => b.load.onFirstUse.some((u) => s3(u.entryPoint)))
      .map((b) => b.entry)
      .sort();
    // Exactly the functions granted the bucket: those serving routes with bucket access, the processor, and the bank
    // link (the sealed files it sends).
    const granted = FUNCTIONS.filter((f) => accessOf(f.routes).some((a) => a.startsWith('bucket:'))).map((f) =>
      apiHandlerOf(f.name),
    );
    expect(users).toEqual([...new Set([...granted, WORKER_HANDLERS.processor, WORKER_HANDLERS.bankLink])].sort());
    for (const bundle of bundles) {
      // The S3 client's code: in a chunk of the asset, never in what a cold start loads.
      const s3AtLoad = bundle.load.inputsAtLoad.filter((input) => input.includes('node_modules/@aws-sdk/client-s3/'));
      expect({ entry: bundle.entry, static: s3AtLoad }).toEqual({ entry: bundle.entry, static: [] });
    }
  });

  it('loads the SSH client on first use only: in the bank link worker and the function of the connection test', () => {
    // ssh2 is about 400 KB: the bank link's status and inbound files answer without it, a test loads it.
    const users = bundles
      .filter((b) => b.load.onFirstUse.some((u) => u.entryPoint === 'shared/adapters/sftp-transport.ts'))
      .map((b) => b.entry)
      .sort();
    expect(users).toEqual([apiHandlerOf(routeById.testBankConnection.function), WORKER_HANDLERS.bankLink].sort());
    for (const bundle of bundles) {
      const sshAtLoad = bundle.load.inputsAtLoad.filter((input) => /node_modules\/ssh2(-sftp-client)?\//.test(input));
      expect({ entry: bundle.entry, static: sshAtLoad }).toEqual({ entry: bundle.entry, static: [] });
    }
  });

  describe('a bundle built with the same options, against the DynamoDB engine', () => {
    let bundle: string;

    beforeAll(() => {
      const entry = join(dir, 'entry.ts');
      writeFileSync(
        entry,
        [
          `import { GetCommand } from '@aws-sdk/lib-dynamodb';`,
          `import { createDocumentClient } from ${JSON.stringify(join(ROOT, 'shared', 'adapters', 'dynamo.js'))};`,
          // A table that does not exist: the engine's answer proves the request was signed and sent.
          `export const handler = () => createDocumentClient().send(new GetCommand({ TableName: 'no-such-table', Key: { PK: 'a', SK: 'b' } })).then(() => 'found', (e) => e.name);`,
        ].join('\n'),
      );
      const outdir = join(dir, 'probe');
      buildSync({ ...lambdaBuildOptions(entry, outdir), logLevel: 'silent' });
      bundle = join(outdir, 'index.mjs');
    });

    const invoke = (env: Record<string, string>) =>
      run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { handler } = await import(${JSON.stringify(`file://${bundle}`)}); console.log(await handler());`,
        ],
        {
          cwd: dir,
          env: nodeEnv(dir, {
            AWS_REGION: testEngines().region,
            AWS_ENDPOINT_URL_DYNAMODB: testEngines().dynamodbEndpoint,
            AWS_MAX_ATTEMPTS: '1',
            ...env,
          }),
        },
      );

    it('signs with the role credentials Lambda puts in the environment', async () => {
      const { stdout } = await invoke({
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_SESSION_TOKEN: 'session',
      });
      expect(stdout.trim()).toBe('ResourceNotFoundException');
    });

    it('fails at once, naming the cause, when the environment holds no credentials', async () => {
      const { stdout } = await invoke({});
      expect(stdout.trim()).toBe('CredentialsProviderError');
    });
  });

  /** The PDF renderer is imported on the first PDF request: a chunk of get-paystub's asset, not of its cold start. */
  describe('the paystub PDF renderer', () => {
    const paystub = () => bundles.find((b) => b.entry === apiHandlerOf(routeById.getPaystub.function))!;
    const renderer = () => paystub().load.onFirstUse.find((u) => u.entryPoint === 'shared/adapters/paystub-pdf.ts')!;

    it('keeps it out of what get-paystub loads at a cold start, in a chunk of its own asset', () => {
      expect(renderer()).toBeDefined();
      const atLoad = paystub()
        .load.atLoad.map((f) => readFileSync(f.file, 'utf8'))
        .join('\n');
      const chunk = renderer()
        .files.map((f) => readFileSync(f.file, 'utf8'))
        .join('\n');
      // pdf-lib's standard font metrics: megabytes of tables only the renderer needs.
      for (const marker of ['Helvetica-Bold', 'StandardFonts']) {
        expect(chunk).toContain(marker);
        expect(atLoad).not.toContain(marker);
      }
      for (const f of renderer().files) expect(f.file.startsWith(paystub().asset)).toBe(true);
      expect(paystub().load.inputsAtLoad.filter((input) => input.includes('node_modules/@pdfme/pdf-lib/'))).toEqual([]);
    });

    it('loads from the asset with plain node, and renders a statement', async () => {
      const [main] = renderer().files;
      const { stdout } = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          [
            `const { renderPaystubPdf } = await import(${JSON.stringify(`file://${main!.file}`)});`,
            `const pdf = await renderPaystubPdf(${JSON.stringify(samplePaystub)});`,
            `console.log(Buffer.from(pdf).subarray(0, 5).toString());`,
          ].join('\n'),
        ],
        { cwd: dir, env: nodeEnv(dir) },
      );
      expect(stdout.trim()).toBe('%PDF-');
    });
  });
});

/**
 * The CDK app's own bundling, for real, on the workers stack (three functions, no layer): each function gets its own
 * self-contained asset, its bundle, chunks and source maps, which runs with plain `node`. (The other infra tests skip
 * bundling to stay fast.)
 */
describe("the CDK app's assets", () => {
  let outdir: string;
  let assets: { id: string; dir: string }[];
  let resources: Record<string, { Type: string; Properties: { Code?: { S3Key: string }; Layers?: unknown } }>;

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'payroll-cdk-assets-'));
    const context = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> })
      .context;
    const app = new App({
      outdir,
      context: { ...context, 'aws:cdk:bundling-stacks': ['Payroll-sandbox-bundle-Workers'], stage: 'bundle' },
    });
    const { workers } = addPayrollStacks(app);
    expect(workers.stackName).toBe('Payroll-sandbox-bundle-Workers');
    app.synth();
    resources = Template.fromStack(workers).toJSON().Resources as typeof resources;
    const assetDir = (key: string) => join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
    assets = Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .map(([id, r]) => ({ id, dir: assetDir(r.Properties.Code!.S3Key) }));
  }, 180_000);

  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('gives each function its own bundle, with its source maps, the SDK bundled in and nothing imported from /opt', () => {
    // The processor, the sweeper, the deliverer and the bank link.
    expect(assets).toHaveLength(4);
    expect(new Set(assets.map((a) => a.dir)).size).toBe(4);
    const bundles = assets.map((a) => readFileSync(join(a.dir, 'index.mjs'), 'utf8'));
    expect(new Set(bundles).size).toBe(4);
    for (const asset of assets) {
      const files = readdirSync(asset.dir, { recursive: true, encoding: 'utf8' });
      expect(files).toEqual(expect.arrayContaining(['index.mjs', 'index.mjs.map']));
      for (const file of files.filter((f) => f.endsWith('.mjs'))) {
        expect(files).toContain(`${file}.map`);
        expect(OPT_IMPORT.test(readFileSync(join(asset.dir, file), 'utf8'))).toBe(false);
      }
    }
  });

  it('has no layer: no LayerVersion in the stack, none listed by a function', () => {
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::LayerVersion')).toEqual([]);
    expect(assets).toHaveLength(4);
    for (const { id } of assets) expect(resources[id]!.Properties.Layers).toBeUndefined();
  });

  it('runs with plain node: each asset loads in a fresh process, in a folder with no node_modules, and exports its handler', async () => {
    expect(assets).toHaveLength(4);
    for (const asset of assets) {
      const { stdout } = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(`file://${join(asset.dir, 'index.mjs')}`)}); console.log(typeof m.handler);`,
        ],
        { cwd: outdir, env: nodeEnv(outdir, PLACEHOLDER_DEPLOYED_ENV) },
      );
      expect({ id: asset.id, handler: stdout.trim() }).toEqual({ id: asset.id, handler: 'function' });
    }
  });
});
