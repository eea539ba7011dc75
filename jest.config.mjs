// Two projects: fast unit specs next to the code, and integration specs that talk to
// real NATS and Postgres (started once in global set-up unless NATS_URL/DATABASE_URL are set).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'es6' },
  },
];

const common = {
  rootDir: '.',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json', 'node'],
  moduleNameMapper: {
    '^@mnemo/(kv-core|proto|engine|native-cuda|service-kit|twin|testkit)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/', '<rootDir>/.mnemo/'],
};

export default {
  // Per-project testTimeout is ignored by jest 30; integration specs need the headroom.
  testTimeout: 60000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.spec.ts', '<rootDir>/tools/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,libs}/*/{src,test}/**/*.integration-spec.ts', '<rootDir>/test/**/*.integration-spec.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.mjs',
      globalTeardown: '<rootDir>/test/integration/global-teardown.mjs',
    },
  ],
};
