import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@mnemo/service-kit';
import type { Engine } from '@mnemo/engine';
import { loadNodeManagerConfig } from '../config/node-manager.config.js';
import { createEngine, engineAttentionShare } from './engine.factory.js';

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

  it.each([
    ['the sim engine without an attention term: none', { NODE_SIM_PREFILL_TOKEN_US: '40' }, undefined],
    // 2 µs per token per 1K attended · 256 · 256 / 1000 ÷ (40 µs · 256) = 0.0128
    ['the sim engine with one: its share', { NODE_SIM_PREFILL_TOKEN_US: '40', NODE_SIM_PREFILL_KCONTEXT_US: '2' }, 0.0128],
    ['the reference engine: none (its passes measure it)', { NODE_ENGINE: 'reference', NODE_MODELS: 'mnemo-tiny' }, undefined],
  ])('states the attention share its node pulls its measured costs towards: %s', (_n, env, want) => {
    const share = engineAttentionShare(loadNodeManagerConfig({ ...base, ...env }));
    if (want === undefined) expect(share).toBeUndefined();
    else expect(share).toBeCloseTo(want, 9);
  });

  it('keeps NODE_KV_BLOCKS per model without a budget', async () => {
    const sut = await createEngine(loadNodeManagerConfig({ ...base, NODE_KV_BLOCKS: '5' }));
    expect(capacities(sut)).toEqual({ 'mnemo-tiny': 5, 'mnemo-small': 5 });
  });

  it('refuses a budget below one unit per model, naming the minimum', async () => {
    await expect(createEngine(loadNodeManagerConfig({ ...base, NODE_KV_DEVICE_BYTES: '40KiB' }))).rejects.toThrow(/at least 49152 bytes/);
    await expect(createEngine(loadNodeManagerConfig({ ...base, NODE_KV_DEVICE_BYTES: '40KiB' }))).rejects.toBeInstanceOf(ConfigError);
  });

  describe('layer stream (reference engine)', () => {
    const reference = { ...base, NODE_ENGINE: 'reference', NODE_REFERENCE_BACKEND: 'cpu', NODE_MODELS: 'mnemo-tiny', NODE_KV_BLOCKS: '4' };

    it('is on by default, with a window of 2 and 64 MiB of host memory per model', async () => {
      const config = loadNodeManagerConfig(reference);
      expect([config.NODE_KV_LAYER_STREAM, config.NODE_KV_STREAM_WINDOW, config.NODE_KV_STREAM_HOST_MB]).toEqual(['on', 2, 64]);
      const sut = await createEngine(config);
      // mnemo-tiny, 4 layers: planes ⌈C/2⌉ ≤ 4 → 8 blocks.
      expect(sut.layerStream?.limit('mnemo-tiny', 4)).toBe(8);
      await sut.close();
    });

    it('NODE_STEP_TRACE: appends each forward step as a JSON line', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mnemo-steps-'));
      try {
        const path = join(dir, 'steps.jsonl');
        const sut = await createEngine(loadNodeManagerConfig({ ...reference, NODE_KV_BLOCKS: '16', NODE_STEP_TRACE: path }));
        const sampling = { temperature: 0, topP: 1, seed: 0 };
        await sut.prefill([{ seqId: 'a', model: 'mnemo-tiny', tokens: [5, 6, 7, 8, 9], sampling }]);
        await sut.decode(['a']);
        await sut.close();
        const lines = readFileSync(path, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        expect(lines.map((l) => [l.kind, l.seqs, l.tokens, l.attendedTokens, l.contextTokens])).toEqual([
          ['prefill', 1, 5, 10, 0],
          ['decode', 1, 1, 0, 6],
        ]);
        for (const l of lines) expect(l.ms).toBeGreaterThanOrEqual(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('NODE_STEP_TRACE: a path it cannot open is a configuration error', async () => {
      const config = loadNodeManagerConfig({ ...reference, NODE_STEP_TRACE: '/nonexistent-dir/steps.jsonl' });
      await expect(createEngine(config)).rejects.toBeInstanceOf(ConfigError);
      await expect(createEngine(config)).rejects.toThrow(/NODE_STEP_TRACE=\/nonexistent-dir\/steps.jsonl/);
    });

    it('off: the engine has no stream', async () => {
      const sut = await createEngine(loadNodeManagerConfig({ ...reference, NODE_KV_LAYER_STREAM: 'off' }));
      expect(sut.layerStream).toBeUndefined();
      await sut.close();
    });

    it('refuses a window some served model cannot hold, naming the setting', async () => {
      await expect(createEngine(loadNodeManagerConfig({ ...reference, NODE_KV_STREAM_WINDOW: '5' }))).rejects.toThrow(
        /NODE_KV_STREAM_WINDOW=5: layer stream window must be in \[2, 4\] for mnemo-tiny/,
      );
    });

    it.each([
      ['NODE_KV_LAYER_STREAM', 'maybe'],
      ['NODE_KV_STREAM_WINDOW', '1'],
      ['NODE_KV_STREAM_HOST_MB', '-1'],
    ])('refuses %s=%s at load', (name, v) => {
      expect(() => loadNodeManagerConfig({ ...reference, [name]: v })).toThrow(new RegExp(name));
    });
  });

  it.each(['lots', '0', '-5MiB'])('refuses NODE_KV_DEVICE_BYTES=%s at load', (v) => {
    expect(() => loadNodeManagerConfig({ ...base, NODE_KV_DEVICE_BYTES: v })).toThrow(/NODE_KV_DEVICE_BYTES/);
  });
});
