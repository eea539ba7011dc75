import { ConfigError, loadConfig, type Schema } from './config.loader.js';

const schema = {
  PORT: { type: 'int', doc: 'port', default: 8080, min: 1, max: 65535 },
  NATS_URL: { type: 'url', doc: 'nats', required: true, protocols: ['nats'] },
  KEYS: { type: 'list', doc: 'keys', secret: true },
  MODE: { type: 'enum', doc: 'mode', values: ['a', 'b'], default: 'a' },
  DB: { type: 'url', doc: 'db', required: true, protocols: ['postgres'], when: (e) => e.MODE === 'b' },
  FLAG: { type: 'bool', doc: 'flag', default: false },
} as const satisfies Schema;

describe(loadConfig.name, () => {
  const cases: Array<[string, Record<string, string>, Record<string, unknown> | string[]]> = [
    ['defaults apply', { NATS_URL: 'nats://h:1' }, { PORT: 8080, MODE: 'a', FLAG: false, KEYS: undefined }],
    ['values parse', { NATS_URL: 'nats://h:1', PORT: '9', KEYS: 'a, b,,c', FLAG: 'yes' }, { PORT: 9, KEYS: ['a', 'b', 'c'], FLAG: true }],
    ['conditional var required only when on', { NATS_URL: 'nats://h:1', MODE: 'b' }, ['DB is required']],
    ['every problem listed', { PORT: 'x', MODE: 'c', FLAG: 'maybe' }, ['PORT="x"', 'NATS_URL is required', 'MODE="c"', 'FLAG="maybe"']],
    ['range checked', { NATS_URL: 'nats://h:1', PORT: '70000' }, ['PORT="70000": must be ≤ 65535']],
    ['protocol checked', { NATS_URL: 'http://h:1' }, ['NATS_URL="http://h:1": protocol']],
    ['conditional url checked', { NATS_URL: 'nats://h:1', MODE: 'b', DB: 'mysql://u:pw@h' }, ['DB="mysql://u:pw@h"']],
  ];
  it.each(cases)('%s', (_name, env, expected) => {
    if (Array.isArray(expected)) {
      let err: unknown;
      try {
        loadConfig(schema, env);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).toHaveLength(expected.length);
      expected.forEach((p, i) => expect(problems[i]).toContain(p));
    } else {
      expect(loadConfig(schema, env)).toMatchObject(expected);
    }
  });

  it('hides secret values in problems', () => {
    const sut = { K: { type: 'url', doc: 'k', protocols: ['nats'], secret: true } } as const satisfies Schema;
    expect(() => loadConfig(sut, { K: 'http://user:hunter2@h' })).toThrow(/K=<secret>/);
  });
});
