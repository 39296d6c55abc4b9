import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { type BuildOptions, buildSync, type Metafile } from 'esbuild';
import ts from 'typescript';
import type { BundleOutput } from './bundle-function.js';
import { AWS_SDK_MODULE, LAMBDA_ESBUILD_OPTIONS, REPO_ROOT, SDK_PACKAGES, sdkLayerFile } from './options.js';

/**
 * The AWS SDK as one Lambda layer shared by every function, instead of a copy inside each bundle.
 *
 * The layer holds one ES module per SDK package the functions use (`client-dynamodb.mjs`, `lib-dynamodb.mjs`, …),
 * each exporting exactly the names the code imports from that package, built in one esbuild run with code
 * splitting: the clients share one copy of the Smithy core, tree-shaken to what those names need. A function's
 * bundle imports these files by absolute path (the layer is unpacked under /opt), so it carries no SDK code of its
 * own and loads only the files its imports reach.
 *
 * Why not the SDK the Lambda runtime ships: that copy is not the one the lock file pins and the tests ran, it
 * changes under a deployed function, and its unbundled package graph loads in 120 ms and more. The layer is the
 * pinned SDK, minified and tree-shaken as before, one copy per stack instead of one in every function.
 */

/** The folders whose code goes into the Lambda bundles. */
const BUNDLED_SOURCES = ['functions', 'shared'];

function sourceFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The value names the bundled code imports from each SDK package, read from the TypeScript sources (type-only
 * imports left out; a dynamic import counts the names it destructures, `const { A } = await import('pkg')`). Forms
 * the layer cannot serve by name (`import *`, default imports, re-exports, other dynamic imports, an SDK package
 * missing from SDK_PACKAGES) fail the build, naming the file, rather than a function at its first cold start.
 */
export function sdkImports(root: string = REPO_ROOT): Record<string, string[]> {
  const served = new Set<string>(SDK_PACKAGES);
  const names = new Map<string, Set<string>>(SDK_PACKAGES.map((pkg) => [pkg, new Set()]));
  const problems: string[] = [];
  for (const file of BUNDLED_SOURCES.flatMap((dir) => sourceFiles(join(root, dir)))) {
    const text = readFileSync(file, 'utf8');
    // Most files import no SDK package: skip parsing them.
    if (!/['"](@aws-sdk|@smithy)\//.test(text)) continue;
    const where = relative(root, file);
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [arg] = node.arguments;
        if (arg && ts.isStringLiteral(arg) && AWS_SDK_MODULE.test(arg.text)) {
          // Loaded on first use: the names are those destructured, `const { A, B } = await import('pkg')`.
          const declaration = ts.isAwaitExpression(node.parent) ? node.parent.parent : undefined;
          if (!served.has(arg.text)) problems.push(`${where}: imports ${arg.text}, which the SDK layer does not serve (SDK_PACKAGES)`);
          else if (declaration && ts.isVariableDeclaration(declaration) && ts.isObjectBindingPattern(declaration.name)) {
            for (const element of declaration.name.elements) {
              const name = element.propertyName ?? element.name;
              if (element.dotDotDotToken || !ts.isIdentifier(name)) problems.push(`${where}: dynamic import of ${arg.text} must name what it takes`);
              else names.get(arg.text)!.add(name.text);
            }
          } else problems.push(`${where}: dynamic import of ${arg.text} must destructure the names it uses: const { A } = await import('${arg.text}')`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    for (const statement of source.statements) {
      const isImport = ts.isImportDeclaration(statement);
      if (!isImport && !ts.isExportDeclaration(statement)) continue;
      const spec = statement.moduleSpecifier;
      if (!spec || !ts.isStringLiteral(spec) || !AWS_SDK_MODULE.test(spec.text)) continue;
      const pkg = spec.text;
      if (!isImport) {
        if (!statement.isTypeOnly) problems.push(`${where}: re-exports from ${pkg}; import the names instead`);
        continue;
      }
      const clause = statement.importClause;
      if (!clause || clause.isTypeOnly) continue;
      if (!served.has(pkg)) { problems.push(`${where}: imports ${pkg}, which the SDK layer does not serve (SDK_PACKAGES)`); continue; }
      if (clause.name) problems.push(`${where}: default import from ${pkg}; import the names instead`);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) problems.push(`${where}: import * from ${pkg}; import the names instead`);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) if (!element.isTypeOnly) names.get(pkg)!.add((element.propertyName ?? element.name).text);
      }
    }
  }
  if (problems.length) throw new Error(`The AWS SDK layer cannot serve these imports:\n  ${problems.join('\n  ')}`);
  return Object.fromEntries([...names].filter(([, set]) => set.size).map(([pkg, set]) => [pkg, [...set].sort()]));
}

/** The esbuild options of the layer, writing into `outdir` (the layer's folder, e.g. `<asset>/payroll-aws-sdk`). */
function layerBuildOptions(facades: Record<string, string>, outdir: string): BuildOptions {
  return {
    ...LAMBDA_ESBUILD_OPTIONS,
    entryPoints: facades,
    outdir,
    splitting: true,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    // Line mappings for --enable-source-maps, as the functions have; the sources themselves would double the upload.
    sourcemap: true,
    sourcesContent: false,
    // Credentials from the environment only: see env-credentials.ts for why that is exact on Lambda.
    alias: { '@aws-sdk/credential-provider-node': join(REPO_ROOT, 'infra', 'bundling', 'env-credentials.ts') },
    metafile: true,
  };
}

export interface SdkLayerBuild {
  /** The folder holding the layer's files (pass it to lambdaBuildOptions as the SDK folder). */
  dir: string;
  /** The names served per package. */
  exports: Record<string, string[]>;
  metafile: Metafile;
}

/**
 * Builds the layer's files into `dir` (created if missing): the CDK construct calls this with
 * `<asset>/payroll-aws-sdk`, the benchmark and the tests with a temporary folder.
 */
export function buildSdkLayer(dir: string, root: string = REPO_ROOT): SdkLayerBuild {
  const exports = sdkImports(root);
  const facadeDir = mkdtempSync(join(tmpdir(), 'payroll-sdk-facades-'));
  try {
    const facades: Record<string, string> = {};
    for (const [pkg, names] of Object.entries(exports)) {
      const name = sdkLayerFile(pkg).replace(/\.mjs$/, '');
      const file = join(facadeDir, `${name}.js`);
      writeFileSync(file, `export { ${names.join(', ')} } from ${JSON.stringify(pkg)};\n`);
      facades[name] = file;
    }
    mkdirSync(dir, { recursive: true });
    const { metafile } = buildSync(layerBuildOptions(facades, dir));
    return { dir, exports, metafile: metafile! };
  } finally {
    rmSync(facadeDir, { recursive: true, force: true });
  }
}

/**
 * The layer files a module reaches through static imports, with their sizes: what a function's cold start loads
 * from the layer. `entries` are the layer files the function imports (absolute paths under `layer.dir`).
 */
export function sdkLayerFilesLoaded(layer: SdkLayerBuild, entries: readonly string[]): { file: string; bytes: number }[] {
  const outputs = Object.fromEntries(Object.entries(layer.metafile.outputs).map(([path, output]) => [join(REPO_ROOT, path), output]));
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    const output = outputs[file];
    if (!output) throw new Error(`${file} is not a file of the SDK layer`);
    seen.add(file);
    for (const imported of output.imports) if (imported.kind === 'import-statement' && !imported.external) walk(join(REPO_ROOT, imported.path));
  };
  for (const entry of entries) walk(entry);
  return [...seen].map((file) => ({ file: relative(layer.dir, file), bytes: outputs[file]!.bytes }));
}

/** The layer files a function's bundle imports at load (`import-statement`) or on first use (`dynamic-import`). */
export function layerImportsOf(output: BundleOutput, layerDir: string, kind: 'import-statement' | 'dynamic-import'): string[] {
  return output.imports.filter((i) => i.external && i.kind === kind && i.path.startsWith(`${layerDir}/`)).map((i) => i.path);
}
