import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link of the README and the documentation reaches a file, and every `#anchor` a heading of it, as
 * GitHub renders them (heading slugs: lower case, punctuation dropped, spaces as hyphens, repeats numbered).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const FILES = [
  'README.md',
  'RELIABILITY.md',
  'BENCHMARKS.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text without fenced code blocks: a `#` line inside one is no heading. */
const withoutFences = (text: string) => text.replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
/** The text with code blocks and code spans removed: a link inside code is not a link. */
const prose = (text: string) => withoutFences(text).replace(/`[^`\n]*`/g, '');

function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of withoutFences(readFileSync(file, 'utf8')).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function linksOf(file: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  prose(readFileSync(join(ROOT, file), 'utf8'))
    .split('\n')
    .forEach((text, i) => {
      for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1]!, line: i + 1 });
    });
  return out.filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target));
}

describe('documentation links', () => {
  it('checks the files it should, and tells a broken anchor from a good one', () => {
    expect(FILES).toContain('README.md');
    expect(slug('Returns and corrections')).toBe('returns-and-corrections');
    expect(slug('`GET /v1/` and the index')).toBe('get-v1-and-the-index');
  });

  it.each(FILES.map((f) => [f] as const))('%s: every relative link and anchor resolves', (file) => {
    const broken: string[] = [];
    for (const { target, line } of linksOf(file)) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const resolved = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(path));
      if (!existsSync(resolved)) {
        broken.push(`line ${line}: ${target} (no file ${relative(ROOT, resolved)})`);
        continue;
      }
      if (anchor && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
        broken.push(`line ${line}: ${target} (no heading #${anchor})`);
    }
    expect(broken).toEqual([]);
  });
});
