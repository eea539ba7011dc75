import { ConfigError } from '@mnemo/service-kit';
import { syntheticBase } from '../engine/engine.factory.js';
import { loadNodeManagerConfig } from './node-manager.config.js';

const base = { NATS_URL: 'nats://127.0.0.1:4222' };

describe(loadNodeManagerConfig.name, () => {
  it('applies the documented defaults', () => {
    const sut = loadNodeManagerConfig(base);
    expect(sut).toMatchObject({
      NODE_ENGINE: 'reference',
      NODE_MAX_BATCH: 8,
      NODE_HEARTBEAT_MS: 500,
      NODE_GRPC_PORT: 0,
      NODE_MODELS: ['mnemo-tiny'],
    });
    expect(sut.NODE_ID).toMatch(/^[A-Za-z0-9_-]+-\d+$/);
  });

  it('lists every problem at once', () => {
    try {
      loadNodeManagerConfig({ NODE_ID: 'a.b', NODE_MAX_BATCH: '0', NODE_ENGINE: 'gpu' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems.join('\n');
      for (const name of ['NATS_URL', 'NODE_MAX_BATCH', 'NODE_ENGINE', 'NODE_ID']) expect(problems).toContain(name);
    }
  });

  it('parses DroidSpeak settings: catalog pairs served together, a 1% floor by default, bad pairs refused', () => {
    const sut = loadNodeManagerConfig({ ...base, NODE_MODELS: 'mnemo-small,mnemo-small-ds24' }, syntheticBase);
    expect(sut.droidSpeak).toMatchObject({ enabled: true, maxQualityLoss: 0.01 });
    expect([...sut.droidSpeak.bases]).toEqual([['mnemo-small-ds24', 'mnemo-small']]);
    expect(loadNodeManagerConfig({ ...base, NODE_MODELS: 'mnemo-small,mnemo-small-ds24' }).droidSpeak.bases.size).toBe(0);
    expect(loadNodeManagerConfig({ ...base, NODE_DROIDSPEAK: 'off' }).droidSpeak.enabled).toBe(false);
    expect(() => loadNodeManagerConfig({ ...base, NODE_DROIDSPEAK_BASES: 'just-one' })).toThrow(ConfigError);
    expect(() => loadNodeManagerConfig({ ...base, NODE_DROIDSPEAK_MAX_LOSS_BP: '20000' })).toThrow(ConfigError);
  });

  it('only reads sim settings for the sim engine', () => {
    expect(
      loadNodeManagerConfig({ ...base, NODE_ENGINE: 'reference', NODE_SIM_DECODE_STEP_MS: 'x' }).NODE_SIM_DECODE_STEP_MS,
    ).toBeUndefined();
    expect(() => loadNodeManagerConfig({ ...base, NODE_ENGINE: 'sim', NODE_SIM_DECODE_STEP_MS: 'x' })).toThrow(ConfigError);
    expect(loadNodeManagerConfig({ ...base, NODE_KV_BLOCKS: '64' }).NODE_KV_BLOCKS).toBe(64);
  });

  it.each([
    ['unset', {}, undefined],
    ['off', { NODE_SIM_KV_BYTES: 'off' }, undefined],
    ['one layout for every model', { NODE_SIM_KV_BYTES: '32x16' }, { layers: 32, rowElems: 16 }],
    [
      'per model',
      { NODE_MODELS: 'mnemo-tiny,mnemo-small', NODE_SIM_KV_BYTES: 'mnemo-small=8x4' },
      { 'mnemo-small': { layers: 8, rowElems: 4 } },
    ],
  ])('reads NODE_SIM_KV_BYTES %s', (_n, env, want) => {
    expect(loadNodeManagerConfig({ ...base, NODE_ENGINE: 'sim', ...env }).simKvBytes).toEqual(want);
  });

  it.each([
    ['a malformed layout', '32by16'],
    ['zero layers', '0x16'],
    ['a model not served', 'mnemo-huge=4x4'],
    ['a bare layout among model entries', 'mnemo-tiny=4x4,8x8'],
  ])('refuses NODE_SIM_KV_BYTES with %s', (_n, value) => {
    expect(() => loadNodeManagerConfig({ ...base, NODE_ENGINE: 'sim', NODE_SIM_KV_BYTES: value })).toThrow(/NODE_SIM_KV_BYTES/);
  });

  it('ignores NODE_SIM_KV_BYTES for the reference engine', () => {
    expect(loadNodeManagerConfig({ ...base, NODE_SIM_KV_BYTES: 'nonsense' }).simKvBytes).toBeUndefined();
  });

  it.each(['node-a', 'node-a:50061', '10.0.0.7:1', '[fd00::1]:50061'])('accepts NODE_GRPC_ADVERTISE=%s', (value) => {
    expect(loadNodeManagerConfig({ ...base, NODE_GRPC_ADVERTISE: value }).NODE_GRPC_ADVERTISE).toBe(value);
  });

  it.each(['http://node-a', 'node-a:0', 'node-a:99999', 'a b'])('refuses NODE_GRPC_ADVERTISE=%s', (value) => {
    expect(() => loadNodeManagerConfig({ ...base, NODE_GRPC_ADVERTISE: value })).toThrow(/NODE_GRPC_ADVERTISE/);
  });

  it.each<[string, Record<string, string>, RegExp | null]>([
    ['loopback without a token (a single host, npm test)', {}, null],
    ['localhost without a token', { NODE_GRPC_HOST: 'localhost' }, null],
    ['every interface without a token', { NODE_GRPC_HOST: '0.0.0.0' }, /NODE_PEER_TOKEN is required when NODE_GRPC_HOST="0\.0\.0\.0"/],
    ['a LAN address without a token', { NODE_GRPC_HOST: '10.0.0.7' }, /NODE_PEER_TOKEN is required/],
    ['every interface with a good token', { NODE_GRPC_HOST: '0.0.0.0', NODE_PEER_TOKEN: 'c2VzYW1lLW9wZW4tc2VzYW1l' }, null],
    ['a short token', { NODE_PEER_TOKEN: 'sesame' }, /at least 16 characters/],
    ['a token with a space', { NODE_PEER_TOKEN: 'open sesame open sesame' }, /must be a bearer token/],
    ['a token with a newline', { NODE_PEER_TOKEN: 'open-sesame\nX-Evil: 1' }, /must be a bearer token/],
  ])('peer token: %s', (_n, env, problem) => {
    const load = () => loadNodeManagerConfig({ ...base, ...env });
    if (problem) expect(load).toThrow(problem);
    else expect(load).not.toThrow();
  });

  it('never echoes the peer token in a problem', () => {
    expect(() => loadNodeManagerConfig({ ...base, NODE_PEER_TOKEN: 'short secret' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('short secret') }),
    );
  });

  it('schedules first come first served and preempts by swap unless told otherwise', () => {
    expect(loadNodeManagerConfig(base)).toMatchObject({
      NODE_SCHEDULING: 'fcfs',
      NODE_HOLD_LONG_PROMPTS: 'on',
      NODE_PREEMPTION: 'swap',
      NODE_SWAP_IN: 'adaptive',
      NODE_SWAP_SPACE_MB: 256,
      NODE_BLOCK_GROUP_BLOCKS: 60,
      NODE_PRIORITY_UPDATE_EVERY: 4,
      NODE_FAIRNESS_AGING_ITERATIONS: 32,
      NODE_FAIRNESS_TOKENS_PER_LEVEL: 0,
    });
  });

  it('refuses bad scheduling and swap settings, naming each', () => {
    const bad = {
      NODE_SCHEDULING: 'lottery',
      NODE_HOLD_LONG_PROMPTS: 'maybe',
      NODE_PREEMPTION: 'kill',
      NODE_SWAP_IN: 'later',
      NODE_SWAP_SPACE_MB: '0',
      NODE_PRIORITY_UPDATE_EVERY: '0',
      NODE_FAIRNESS_AGING_ITERATIONS: '-1',
    };
    try {
      loadNodeManagerConfig({ ...base, ...bad });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems.join('\n');
      for (const name of Object.keys(bad)) expect(problems).toContain(name);
    }
  });
});
