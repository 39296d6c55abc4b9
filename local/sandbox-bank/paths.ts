import { lstat } from 'node:fs/promises';
import { join } from 'node:path';

export interface RootedPath {
  /** The normalized path the client sees, '/' being its root. */
  virtual: string;
  segments: readonly string[];
  host: string;
}

/**
 * Where `requested` lies inside `root`, resolved lexically against '/' (the client's working directory). Undefined
 * when it climbs above the root or names a dot file: those are the bank's (its ledger, unfinished uploads).
 */
export function resolveInRoot(root: string, requested: string): RootedPath | undefined {
  if (requested.includes('\0')) return undefined;
  const segments: string[] = [];
  for (const part of requested.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (segments.length === 0) return undefined;
      segments.pop();
      continue;
    }
    segments.push(part);
  }
  if (segments.some((s) => s.startsWith('.'))) return undefined;
  return { virtual: `/${segments.join('/')}`, segments, host: join(root, ...segments) };
}

/** Whether any existing component of the path below the root is a symlink: the bank follows none. */
export async function crossesSymlink(root: string, segments: readonly string[]): Promise<boolean> {
  let at = root;
  for (const segment of segments) {
    at = join(at, segment);
    try {
      if ((await lstat(at)).isSymbolicLink()) return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw error;
    }
  }
  return false;
}
