import { readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The dependency arrows of the source tree. shared/ is the Lambda source: it imports nothing from the entry points
 * (functions/), the local stack (local/), the CDK app (infra/), or build- and test-time code (openapi/, scripts/,
 * bench/, test/, dashboard/). shared/domain/ is the pure rules: it imports no other layer of shared/.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUTSIDE_SHARED = ['functions', 'local', 'infra', 'openapi', 'scripts', 'bench', 'test', 'dashboard'];
const ABOVE_DOMAIN = [
  'shared/adapters',
  'shared/data',
  'shared/use-cases',
  'shared/api',
  'shared/http',
  'shared/schemas',
];

/**
 * Every module specifier a file names: import and export declarations (type-only ones too), `import x =
 * require()`, dynamic `import()`, `require()`, and `import('…')` types.
 */
function specifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    true,
    fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: string[] = [];
  const literal = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      literal(node.moduleReference.expression);
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    )
      literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Where a specifier points, relative to the repository root with `/` separators; null for a package. */
function target(file: string, specifier: string): string | null {
  const path = specifier.startsWith('file://') ? fileURLToPath(specifier) : specifier;
  if (!isAbsolute(path) && !path.startsWith('.')) return null;
  return relative(ROOT, resolve(dirname(file), path))
    .split(sep)
    .join('/');
}

const within = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(c|m)?(t|j)sx?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** `file: specifier (→ where it points)` for every import of a file under `dir` that lands in one of `forbidden`. */
function violations(dir: string, forbidden: string[]): string[] {
  return sourceFiles(dir).flatMap((file) =>
    specifiers(file, readFileSync(file, 'utf8')).flatMap((specifier) => {
      const to = target(file, specifier);
      if (to === null || !forbidden.some((folder) => within(to, folder))) return [];
      return [`${relative(ROOT, file).split(sep).join('/')}: '${specifier}' (→ ${to})`];
    }),
  );
}

describe('the layers of the source tree', () => {
  it('finds every form of import (the check itself)', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { b } from '../b.js';",
      "import './c.js';",
      "export * from './d.js';",
      "export type { e } from './e.js';",
      "import f = require('./f.js');",
      "const g = await import('./g.js');",
      "const h = require('./h.js');",
      "type I = import('./i.js').I;",
      "const notAnImport = 'from ./j.js';",
    ].join('\n');
    expect(specifiers('x.ts', text)).toEqual([
      './a.js',
      '../b.js',
      './c.js',
      './d.js',
      './e.js',
      './f.js',
      './g.js',
      './h.js',
      './i.js',
    ]);
  });

  it('reads the files under shared/ and resolves their imports', () => {
    // Not vacuous: the files are found and a known import resolves to where it points.
    const files = sourceFiles('shared');
    expect(files.length).toBeGreaterThan(50);
    const routes = files.find((f) => f.endsWith(join('shared', 'api', 'route.ts')))!;
    expect(specifiers(routes, readFileSync(routes, 'utf8')).map((s) => target(routes, s))).toContain(
      'shared/domain/scopes.js',
    );
  });

  it('no file under shared/ imports from functions/, local/, infra/ or build- and test-time folders', () => {
    expect(violations('shared', OUTSIDE_SHARED)).toEqual([]);
  });

  it('no file under shared/domain/ imports from the adapters, data, use-cases, api, http or schemas (the domain is pure)', () => {
    expect(violations('shared/domain', ABOVE_DOMAIN)).toEqual([]);
  });

  it('data and adapters know nothing above them, the use cases neither the route declarations nor HTTP, and the declarations not HTTP', () => {
    expect(violations('shared/use-cases', ['shared/api', 'shared/http'])).toEqual([]);
    expect(violations('shared/api', ['shared/http'])).toEqual([]);
    for (const below of ['shared/data', 'shared/adapters'])
      expect(violations(below, ['shared/use-cases', 'shared/api', 'shared/http'])).toEqual([]);
  });
});
