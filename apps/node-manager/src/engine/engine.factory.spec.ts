import { ConfigError } from '@mnemo/service-kit';
import type { Engine } from '@mnemo/engine';
import { loadNodeManagerConfig } from '../config/node-manager.config.js';
import { createEngine } from './engine.factory.js';

const base = { NATS_URL: 'nats://127.0.0.1:4222', NODE_ENGINE: 'sim', NODE_MODELS: 'mnemo-tiny,mnemo-small' };

/** Device blocks each model's cache was given (the engine's KV budget answer for an empty cache). */
function capacities(engine: Engine): Record<string, number> {
  return Object.fromEntries(engine.models().map((m) => [m.id, engine.kvBudget(m.id).capacity]));
}

describe(createEngine.name, () => {
  // tiny block = 2·4·16·2·16 = 4096 el, small = 2·6·16·2·32 = 12288 el → node unit 12288 el (24 KiB at fp16).
  it.each([
    ['one unit each', '48KiB', { 'mnemo-tiny': 3, 'mnemo-small': 1 }],
    ['leftover below a unit each is unused', '100KiB', { 'mnemo-tiny': 6, 'mnemo-small': 2 }],
    ['1MiB', '1MiB', { 'mnemo-tiny': 63, 'mnemo-small': 21 }],
  ])('splits NODE_KV_DEVICE_BYTES into elastic regions: %s', async (_n, bytes, expected) => {
    const sut = await createEngine(loadNodeManagerConfig({ ...base, NODE_KV_DEVICE_BYTES: bytes }));
    expect(capacities(sut)).toEqual(expected);
  });

  it('keeps NODE_KV_BLOCKS per model without a budget', async () => {
    const sut = await createEngine(loadNodeManagerConfig({ ...base, NODE_KV_BLOCKS: '5' }));
    expect(capacities(sut)).toEqual({ 'mnemo-tiny': 5, 'mnemo-small': 5 });
  });

  it('refuses a budget below one unit per model, naming the minimum', async () => {
    await expect(createEngine(loadNodeManagerConfig({ ...base, NODE_KV_DEVICE_BYTES: '40KiB' }))).rejects.toThrow(/at least 49152 bytes/);
    await expect(createEngine(loadNodeManagerConfig({ ...base, NODE_KV_DEVICE_BYTES: '40KiB' }))).rejects.toBeInstanceOf(ConfigError);
  });

  it.each(['lots', '0', '-5MiB'])('refuses NODE_KV_DEVICE_BYTES=%s at load', (v) => {
    expect(() => loadNodeManagerConfig({ ...base, NODE_KV_DEVICE_BYTES: v })).toThrow(/NODE_KV_DEVICE_BYTES/);
  });
});
