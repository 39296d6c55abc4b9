import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSample } from '../support/contract.js';

/**
 * The JSON samples of the README and docs/ cannot drift from the API: each ```json block says what it is in the
 * HTML comment just above it (a component schema, an operation's request or response body), and must be one valid
 * JSON value that validates against docs/openapi.json, the document generated from the route declarations.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const MARKDOWN = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const MARKER = /^<!--\s*sample:\s*(.+?)\s*-->$/;

interface Sample {
  file: string;
  line: number;
  claim: string | undefined;
  text: string;
}

function samplesOf(file: string): Sample[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const samples: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```json') continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    let previous = i - 1;
    while (previous >= 0 && lines[previous]!.trim() === '') previous--;
    const claim = MARKER.exec(lines[previous]?.trim() ?? '')?.[1];
    samples.push({ file, line: i + 1, claim, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return samples;
}

const samples = MARKDOWN.flatMap(samplesOf);

describe('documentation samples', () => {
  it('exist, and the check finds a sample that is not what it claims', () => {
    expect(samples.length).toBeGreaterThan(0);
    expect(checkSample('Employee', { employee_id: 'emp_x' })).not.toEqual([]);
    expect(checkSample('POST /v1/employees request', { first_name: 'Ada', unknown: 1 })).not.toEqual([]);
    expect(checkSample('GET /v1/employees 200', { status: 200 })).not.toEqual([]);
    expect(checkSample('NoSuchSchema', {})).toEqual(['no component schema named NoSuchSchema']);
  });

  it.each(samples.map((s) => [`${s.file}:${s.line}`, s] as const))('%s is what it says it is', (_, sample) => {
    expect(sample.claim, 'a <!-- sample: … --> comment must name what the block is').toBeDefined();
    if (sample.claim!.startsWith('none')) {
      expect(sample.claim, 'a sample that is no API message says why').toMatch(/^none\s*[—-]\s*\S/);
      expect(() => JSON.parse(sample.text)).not.toThrow();
      return;
    }
    let value: unknown;
    expect(() => {
      value = JSON.parse(sample.text);
    }, 'one complete JSON value').not.toThrow();
    expect(checkSample(sample.claim!, value)).toEqual([]);
  });
});
