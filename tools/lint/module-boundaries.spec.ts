import { execSync } from 'node:child_process';
import { ESLint } from 'eslint';

/** A probe file that imports each binding and exports what it bound, so no unused-import rule fires instead. */
function importing(...imports: Array<[binding: string, from: string]>): string {
  const used = imports.map(([binding]) => binding.replace(/^\* as |[{ }]/g, ''));
  const x = used.length === 1 ? used[0] : `[${used.join(', ')}]`;
  return imports.map(([binding, from]) => `import ${binding} from '${from}';\n`).join('') + `export const x = ${x};\n`;
}

// The package arrows of ARCHITECTURE.md §2 are enforced by lint; this proves the rule
// really fires (a misconfigured rule would otherwise pass silently).
describe('module boundaries', () => {
  let sut: ESLint;

  beforeAll(() => {
    // The Nx rule reads the cached project graph; make sure one exists.
    execSync('npx nx show projects', { stdio: 'ignore', env: { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' } });
    sut = new ESLint({ cwd: process.cwd() });
  }, 120_000);

  const cases: Array<[string, string, string, boolean]> = [
    ['kv-core importing the engine', 'libs/kv-core/src/probe.ts', importing(['* as e', '@mnemo/engine']), false],
    ['kv-core importing a framework', 'libs/kv-core/src/probe.ts', importing(['{ Injectable }', '@nestjs/common']), false],
    ['kv-core doing file I/O', 'libs/kv-core/src/probe.ts', importing(['{ readFileSync }', 'node:fs']), false],
    ['scheduler importing the engine', 'apps/scheduler/src/probe.ts', importing(['* as e', '@mnemo/engine']), false],
    ['a lib importing an app', 'libs/engine/src/probe.ts', importing(['* as g', '@mnemo/gateway']), false],
    ['gateway importing kv-core', 'apps/gateway/src/probe.ts', importing(['* as k', '@mnemo/kv-core']), true],
    ['engine importing kv-core', 'libs/engine/src/probe.ts', importing(['* as k', '@mnemo/kv-core']), true],
    [
      'twin importing kv-core and the engine',
      'libs/twin/src/probe.ts',
      importing(['* as k', '@mnemo/kv-core'], ['* as e', '@mnemo/engine']),
      true,
    ],
    ['twin importing a framework', 'libs/twin/src/probe.ts', importing(['{ Injectable }', '@nestjs/common']), false],
    ['twin importing NATS', 'libs/twin/src/probe.ts', importing(['{ connect }', '@nats-io/transport-node']), false],
    ['twin reading files', 'libs/twin/src/probe.ts', importing(['{ readFileSync }', 'node:fs']), false],
    ['twin importing an app', 'libs/twin/src/probe.ts', importing(['* as s', '@mnemo/scheduler']), false],
  ];

  it.each(cases)(
    '%s',
    async (_name, filePath, code, allowed) => {
      const [result] = await sut.lintText(code, { filePath });
      const violations = result.messages.filter(
        (m) => m.ruleId === '@nx/enforce-module-boundaries' || m.ruleId === 'no-restricted-imports',
      );
      expect(violations.length === 0).toBe(allowed);
    },
    60_000,
  );

  // Prettier never breaks a string or a comment; the lint catches a TS line past its width.
  it.each([
    ['a 140-character line', 140, true],
    ['a 141-character line', 141, false],
  ])('%s', async (_name, width, allowed) => {
    const code = `export const x = '${'a'.repeat(width - 20)}';\n`;
    expect(code.length - 1).toBe(width);
    const [result] = await sut.lintText(code, { filePath: 'libs/kv-core/src/probe.ts' });
    expect(result.messages.some((m) => m.ruleId === 'max-len')).toBe(!allowed);
  });
});
