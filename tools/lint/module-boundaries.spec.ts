import { execSync } from 'node:child_process';
import { ESLint } from 'eslint';

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
    ['kv-core importing the engine', 'libs/kv-core/src/probe.ts', "import * as e from '@mnemo/engine';\nexport const x = e;\n", false],
    [
      'kv-core importing a framework',
      'libs/kv-core/src/probe.ts',
      "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n",
      false,
    ],
    [
      'kv-core doing file I/O',
      'libs/kv-core/src/probe.ts',
      "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
      false,
    ],
    ['scheduler importing the engine', 'apps/scheduler/src/probe.ts', "import * as e from '@mnemo/engine';\nexport const x = e;\n", false],
    ['a lib importing an app', 'libs/engine/src/probe.ts', "import * as g from '@mnemo/gateway';\nexport const x = g;\n", false],
    ['gateway importing kv-core', 'apps/gateway/src/probe.ts', "import * as k from '@mnemo/kv-core';\nexport const x = k;\n", true],
    ['engine importing kv-core', 'libs/engine/src/probe.ts', "import * as k from '@mnemo/kv-core';\nexport const x = k;\n", true],
    [
      'twin importing kv-core and the engine',
      'libs/twin/src/probe.ts',
      "import * as k from '@mnemo/kv-core';\nimport * as e from '@mnemo/engine';\nexport const x = [k, e];\n",
      true,
    ],
    [
      'twin importing a framework',
      'libs/twin/src/probe.ts',
      "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n",
      false,
    ],
    [
      'twin importing NATS',
      'libs/twin/src/probe.ts',
      "import { connect } from '@nats-io/transport-node';\nexport const x = connect;\n",
      false,
    ],
    ['twin reading files', 'libs/twin/src/probe.ts', "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n", false],
    ['twin importing an app', 'libs/twin/src/probe.ts', "import * as s from '@mnemo/scheduler';\nexport const x = s;\n", false],
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
