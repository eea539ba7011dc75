import { ConfigError } from '@mnemo/service-kit';
import { loadSchedulerConfig } from './scheduler.config.js';

describe(loadSchedulerConfig.name, () => {
  const env = { NATS_URL: 'nats://127.0.0.1:4222' };

  it('takes derived=base pairs', () => {
    expect(loadSchedulerConfig({ ...env, SCHEDULER_DROIDSPEAK_BASES: 'd1=b, d2=b' }).SCHEDULER_DROIDSPEAK_BASES).toEqual(['d1=b', 'd2=b']);
  });

  it.each([['d1'], ['d1=b=c'], ['b=b'], ['=b']])('refuses the pair entry %j at boot', (entry) => {
    expect(() => loadSchedulerConfig({ ...env, SCHEDULER_DROIDSPEAK_BASES: entry })).toThrow(ConfigError);
  });
});
