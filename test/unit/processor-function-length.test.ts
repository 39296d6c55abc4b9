import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** The processing engine's files: no function in them is over MAX_LINES lines, so each step reads as named steps. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAX_LINES = 80;
const ENGINE = [
  'shared/use-cases/process-payroll.ts',
  ...readdirSync(join(ROOT, 'shared/use-cases/processor'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `shared/use-cases/processor/${f}`),
  'functions/processor/process-payroll.ts',
];

/** `name: lines` of every function (declarations, methods, arrows, function expressions) of a file. */
function functionLengths(fileName: string, text: string): [string, number][] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: [string, number][] = [];
  const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const name =
        node.name && ts.isIdentifier(node.name) ? node.name.text : `<anonymous@${line(node.getStart()) + 1}>`;
      found.push([`${fileName}:${name}`, line(node.getEnd()) - line(node.getStart()) + 1]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the processing engine', () => {
  it(`has no function over ${MAX_LINES} lines`, () => {
    const lengths = ENGINE.flatMap((f) => functionLengths(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(lengths.length).toBeGreaterThan(20);
    expect(lengths.filter(([, n]) => n > MAX_LINES)).toEqual([]);
  });

  it('measures a function from its first line to its last (the check itself)', () => {
    const body = Array.from({ length: 81 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    expect(functionLengths('x.ts', `export async function long() {\n${body}\n}\nconst short = () => 1;`)).toEqual([
      ['x.ts:long', 83],
      ['x.ts:<anonymous@84>', 1],
    ]);
  });
});
