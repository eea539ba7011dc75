import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

// Every script of every package.json must run on a fresh clone: the files it names are in the
// repo (or in node_modules, for tools), the npm scripts it calls exist, and its programs are
// installed. Scripts are not run here (build, lint and test take minutes); a script that points
// at nothing is what this catches — `npm run build` once named a file that was never committed.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Pkg {
  scripts?: Record<string, string>;
  workspaces?: string[];
}

const readPkg = (dir: string): Pkg => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Pkg;
const rootPkg = readPkg(root);
const packages: Array<[string, string]> = [['.', root], ...(rootPkg.workspaces ?? []).map((w): [string, string] => [w, join(root, w)])];

/** Programs a script may call that are not in node_modules/.bin. */
const SYSTEM = new Set(['node', 'npm', 'npx', 'bash', 'sh', 'cd', 'echo', 'true']);

/** What one shell command needs: files relative to the package, npm scripts, installed programs. */
function requirementsOf(command: string): { files: string[]; npmScripts: string[]; programs: string[] } {
  const out = { files: [] as string[], npmScripts: [] as string[], programs: [] as string[] };
  for (const segment of command.split(/&&|\|\||;|\|/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .filter((w) => w.length > 0 && !/^[A-Z_]+=/.test(w));
    if (words.length === 0) continue;
    const [program, ...args] = words;
    if (program === 'node' || program === 'bash' || program === 'sh') {
      const file = args.find((a) => !a.startsWith('-'));
      if (file) out.files.push(file);
    } else if (program === 'npm' && args[0] === 'run') {
      out.npmScripts.push(args[1]!);
    } else if (program === 'npx') {
      const tool = args.find((a) => !a.startsWith('-'));
      if (tool) out.programs.push(tool);
    } else if (!SYSTEM.has(program!)) {
      out.programs.push(program!);
    }
  }
  return out;
}

describe('package.json scripts', () => {
  const cases = packages.flatMap(([name, dir]) =>
    Object.entries(readPkg(dir).scripts ?? {}).map(([script, command]): [string, string, string, string] => [name, script, command, dir]),
  );

  it('there are scripts to check', () => {
    expect(cases.map(([, s]) => s)).toEqual(expect.arrayContaining(['build', 'start', 'test', 'lint', 'bench', 'proto:gen']));
  });

  it.each(cases)('%s: %s refers only to what a clone has', (_pkg, _script, command, dir) => {
    const needs = requirementsOf(command);
    const scripts = readPkg(dir).scripts ?? {};
    for (const f of needs.files) expect({ file: f, exists: existsSync(join(dir, f)) }).toEqual({ file: f, exists: true });
    for (const s of needs.npmScripts) expect({ script: s, defined: s in scripts }).toEqual({ script: s, defined: true });
    for (const p of needs.programs)
      expect({ program: p, installed: existsSync(join(root, 'node_modules/.bin', p)) }).toEqual({ program: p, installed: true });
  });

  it.each<[string, string, ReturnType<typeof requirementsOf>]>([
    [
      'node with flags',
      'node --experimental-vm-modules node_modules/jest/bin/jest.js --selectProjects unit',
      { files: ['node_modules/jest/bin/jest.js'], npmScripts: [], programs: [] },
    ],
    [
      'a chain',
      'node scripts/ensure.mjs && node scripts/start.mjs',
      { files: ['scripts/ensure.mjs', 'scripts/start.mjs'], npmScripts: [], programs: [] },
    ],
    ['a tool and an npm script', 'eslint . && npm run build', { files: [], npmScripts: ['build'], programs: ['eslint'] }],
    ['npx with flags, env prefix', 'NX_DAEMON=false npx --yes nx graph', { files: [], npmScripts: [], programs: ['nx'] }],
  ])('reads %s', (_name, command, expected) => {
    expect(requirementsOf(command)).toEqual(expected);
  });
});
