import { DEFAULT_ROUTING_COSTS } from '@mnemo/kv-core';
import { ConfigError } from '@mnemo/service-kit';
import { loadSchedulerConfig, routingCosts } from './scheduler.config.js';

const base = { NATS_URL: 'nats://127.0.0.1:4222' };

describe(loadSchedulerConfig.name, () => {
  it('takes derived=base pairs', () => {
    expect(loadSchedulerConfig({ ...base, SCHEDULER_DROIDSPEAK_BASES: 'd1=b, d2=b' }).SCHEDULER_DROIDSPEAK_BASES).toEqual(['d1=b', 'd2=b']);
  });

  it.each([['symphony'], ['recompute'], ['sticky'], ['prefix-affinity'], ['llmd'], ['conductor']])(
    'takes SCHEDULER_POLICY=%s',
    (policy) => {
      expect(loadSchedulerConfig({ ...base, SCHEDULER_POLICY: policy }).SCHEDULER_POLICY).toBe(policy);
    },
  );

  it.each([['infercept'], ['LLMD']])('refuses SCHEDULER_POLICY=%j at boot', (policy) => {
    expect(() => loadSchedulerConfig({ ...base, SCHEDULER_POLICY: policy })).toThrow(ConfigError);
  });

  it.each([['d1'], ['d1=b=c'], ['b=b'], ['=b']])('refuses the pair entry %j at boot', (entry) => {
    expect(() => loadSchedulerConfig({ ...base, SCHEDULER_DROIDSPEAK_BASES: entry })).toThrow(ConfigError);
  });
});

describe(routingCosts.name, () => {
  it('defaults to the kv-core cost model (one H100, 100 Gb/s)', () => {
    expect(routingCosts(loadSchedulerConfig(base))).toEqual({
      ...DEFAULT_ROUTING_COSTS,
      recomputeMsPerChunk: (62 * 256) / 1000,
      conductorThreshold: 2,
    });
  });

  it.each([
    ['150', 1.5],
    ['400', 4],
  ])('takes SCHEDULER_CONDUCTOR_THRESHOLD_PCT=%s as a ratio of %s', (pct, ratio) => {
    expect(routingCosts(loadSchedulerConfig({ ...base, SCHEDULER_CONDUCTOR_THRESHOLD_PCT: pct })).conductorThreshold).toBe(ratio);
  });

  it('refuses a conductor threshold under 100% (a shorter prefix is never worth fetching)', () => {
    expect(() => loadSchedulerConfig({ ...base, SCHEDULER_CONDUCTOR_THRESHOLD_PCT: '99' })).toThrow(ConfigError);
  });

  it.each([
    [
      'measured tier and network costs',
      { SCHEDULER_HOST_LOAD_US_PER_CHUNK: '900', SCHEDULER_SSD_LOAD_US_PER_CHUNK: '4000', SCHEDULER_PEER_US_PER_CHUNK: '3500' },
      { host: 0.9, ssd: 4, peer: 3.5 },
    ],
    ['peer fetch off', { SCHEDULER_PEER_FETCH: 'off', SCHEDULER_PEER_US_PER_CHUNK: '1' }, { host: 1.4, ssd: 5.5, peer: Infinity }],
  ])('takes %s', (_n, env, want) => {
    const sut = routingCosts(loadSchedulerConfig({ ...base, ...env }));
    expect(sut.loadMsPerChunk).toEqual({ device: 0, host: want.host, ssd: want.ssd });
    expect(sut.peerMsPerChunk).toBe(want.peer);
  });

  it('refuses a negative transfer cost', () => {
    expect(() => loadSchedulerConfig({ ...base, SCHEDULER_PEER_US_PER_CHUNK: '-1' })).toThrow(ConfigError);
  });
});
