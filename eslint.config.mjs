// Lint exists mainly to keep the package arrows one way (ARCHITECTURE.md §2):
// apps → libs, engine → kv-core/native-cuda, and kv-core imports nothing of ours
// and no framework or I/O.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const io = [
  '@nestjs/*',
  '@nats-io/*',
  '@grpc/*',
  'typeorm',
  'pg',
  'express',
  'fs',
  'node:fs',
  'node:fs/promises',
  'net',
  'node:net',
  'http',
  'node:http',
  'child_process',
  'node:child_process',
];

export default [
  { ignores: ['**/dist/**', '**/node_modules/**', '**/build/**', '**/build-*/**', '.nx/**', 'bench/results/**', 'libs/proto/src/gen/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:policy', onlyDependOnLibsWithTags: [], bannedExternalImports: io },
            { sourceTag: 'type:contract', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:service-kit', onlyDependOnLibsWithTags: ['type:policy'] },
            { sourceTag: 'type:mechanism', onlyDependOnLibsWithTags: [] },
            // Benchmarks' and tests' shared library: policy's statistics, the wire contract and the twin's paper workloads
            // (composed with its generator), never in a service.
            { sourceTag: 'type:testkit', onlyDependOnLibsWithTags: ['type:policy', 'type:contract', 'type:twin'] },
            { sourceTag: 'type:engine', onlyDependOnLibsWithTags: ['type:policy', 'type:mechanism'] },
            // The twin composes policy and the engine's cost model in virtual time: no framework, no I/O.
            { sourceTag: 'type:twin', onlyDependOnLibsWithTags: ['type:policy', 'type:engine'], bannedExternalImports: io },
            { sourceTag: 'app:gateway', onlyDependOnLibsWithTags: ['type:policy', 'type:engine', 'type:contract', 'type:service-kit'] },
            { sourceTag: 'app:scheduler', onlyDependOnLibsWithTags: ['type:policy', 'type:contract', 'type:service-kit'] },
            {
              sourceTag: 'app:node-manager',
              onlyDependOnLibsWithTags: ['type:policy', 'type:engine', 'type:mechanism', 'type:contract', 'type:service-kit'],
            },
            { sourceTag: 'app:profiler', onlyDependOnLibsWithTags: ['type:policy', 'type:engine', 'type:contract', 'type:service-kit'] },
          ],
        },
      ],
    },
  },
  {
    // kv-core is pure policy and the twin runs in virtual time: Node's I/O modules are banned too (the Nx rule only sees packages).
    files: ['libs/kv-core/**/*.ts', 'libs/twin/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: io.filter((m) => !m.includes('*')), patterns: ['@nestjs/*', '@nats-io/*', '@grpc/*'] }],
    },
  },
  {
    // Prettier breaks code at 140 columns but never a string or a comment: this catches those.
    files: ['**/*.ts'],
    ignores: ['libs/proto/src/gen/**'],
    rules: { 'max-len': ['error', { code: 140, ignoreUrls: true }] },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
];
