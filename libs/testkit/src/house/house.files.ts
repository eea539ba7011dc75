import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every TypeScript and JavaScript source git knows in `root` (tracked, or untracked and not ignored), by path. */
export function sourceFiles(root: string): Map<string, string> {
  const list = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  const out = new Map<string, string>();
  for (const path of list.split('\n')) {
    if (!/\.(ts|mts|mjs|js)$/.test(path)) continue;
    try {
      out.set(path, readFileSync(join(root, path), 'utf8'));
    } catch {
      // listed by git but deleted in the work tree
    }
  }
  return out;
}
