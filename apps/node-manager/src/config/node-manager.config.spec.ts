import { ConfigError } from '@mnemo/service-kit';
import { loadNodeManagerConfig } from './node-manager.config.js';

const base = { NATS_URL: 'nats://127.0.0.1:4222' };

describe(loadNodeManagerConfig.name, () => {
  it('applies the documented defaults', () => {
    const sut = loadNodeManagerConfig(base);
    expect(sut).toMatchObject({ NODE_ENGINE: 'reference', NODE_MAX_BATCH: 8, NODE_HEARTBEAT_MS: 1000, NODE_GRPC_PORT: 0, NODE_MODELS: ['mnemo-tiny'] });
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

  it('only reads sim settings for the sim engine', () => {
    expect(loadNodeManagerConfig({ ...base, NODE_ENGINE: 'reference', NODE_SIM_DECODE_STEP_MS: 'x' }).NODE_SIM_DECODE_STEP_MS).toBeUndefined();
    expect(() => loadNodeManagerConfig({ ...base, NODE_ENGINE: 'sim', NODE_SIM_DECODE_STEP_MS: 'x' })).toThrow(ConfigError);
    expect(loadNodeManagerConfig({ ...base, NODE_KV_BLOCKS: '64' }).NODE_KV_BLOCKS).toBe(64);
  });

  it.each(['node-a', 'node-a:50061', '10.0.0.7:1', '[fd00::1]:50061'])('accepts NODE_GRPC_ADVERTISE=%s', (value) => {
    expect(loadNodeManagerConfig({ ...base, NODE_GRPC_ADVERTISE: value }).NODE_GRPC_ADVERTISE).toBe(value);
  });

  it.each(['http://node-a', 'node-a:0', 'node-a:99999', 'a b'])('refuses NODE_GRPC_ADVERTISE=%s', (value) => {
    expect(() => loadNodeManagerConfig({ ...base, NODE_GRPC_ADVERTISE: value })).toThrow(/NODE_GRPC_ADVERTISE/);
  });
});
