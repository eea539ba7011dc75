import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, relative, resolve } from 'node:path';

// A clone of this repository alone must explain the system: every relative link in a tracked
// Markdown file resolves to a file in the repo, and none leaves it.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const docs = execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f.length > 0 && existsSync(join(root, f)));

const LINK = /\]\(([^)\s]+)\)/g;

describe('Markdown links', () => {
  it('there are docs to check', () => {
    expect(docs).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/request-path.md', 'docs/DEVELOPMENT.md']));
  });

  it.each(docs)('%s links only inside the repo, to files that exist', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(LINK)) {
      if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) {
        if (!target!.startsWith('#')) broken.push(`${target} (outside the repo)`);
        continue;
      }
      const path = resolve(dirname(join(root, file)), target!.split('#')[0]!);
      if (relative(root, path).startsWith('..')) broken.push(`${target} (outside the repo)`);
      else if (!existsSync(path)) broken.push(`${target} (missing)`);
    }
    expect(broken).toEqual([]);
  });
});
