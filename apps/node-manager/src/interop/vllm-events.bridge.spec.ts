import { blockKeys, vllmBlockHash } from '@mnemo/kv-core';
import type { VllmEventBatch } from '@mnemo/service-kit';
import { VllmEventsBridge } from './vllm-events.bridge.js';

const tokens = Array.from({ length: 256 + 32 }, (_, i) => i % 97);
const keys = blockKeys('m', 't', tokens);
const chunk0 = {
  kind: 'written' as const,
  model: 'm',
  key: keys[15]!,
  seqId: 's',
  chunk: 0,
  superseded: keys.slice(0, 15),
  ids: tokens.slice(0, 256),
  parentKey: null,
};
const partial1 = {
  kind: 'partial' as const,
  model: 'm',
  key: keys[17]!,
  seqId: 's',
  chunk: 1,
  tokens: 32,
  superseded: [keys[16]!],
  ids: tokens.slice(256, 288),
  parentKey: keys[15]!,
};

function setup() {
  const batches: VllmEventBatch[] = [];
  const sut = new VllmEventsBridge({ publish: (b) => batches.push(b) }, new Set(['m']), 8, 10, () => 2000);
  return { sut, batches };
}

describe(VllmEventsBridge.name, () => {
  it.each<[string, Parameters<VllmEventsBridge['onChange']>[0], object | null]>([
    [
      'a whole chunk stored on the device: 16 GPU blocks',
      { kind: 'stored', tier: 'device', model: 'm', keys: [keys[15]!] },
      {
        type: 'BlockStored',
        medium: 'GPU',
        blockHashes: keys.slice(0, 16).map(vllmBlockHash),
        parentBlockHash: null,
        tokenIds: tokens.slice(0, 256),
        blockSize: 16,
      },
    ],
    [
      'a partial chunk in the host pool: its 2 blocks, chained on chunk 0',
      { kind: 'stored', tier: 'mem', model: 'm', keys: [keys[17]!] },
      {
        type: 'BlockStored',
        medium: 'CPU',
        blockHashes: [keys[16]!, keys[17]!].map(vllmBlockHash),
        parentBlockHash: vllmBlockHash(keys[15]!),
      },
    ],
    [
      'removed from the SSD pool',
      { kind: 'removed', tier: 'ssd', model: 'm', keys: [keys[15]!] },
      { type: 'BlockRemoved', medium: 'DISK', blockHashes: keys.slice(0, 16).map(vllmBlockHash) },
    ],
    [
      'truncated (later layers gone): no longer a whole block',
      { kind: 'truncated', tier: 'ssd', model: 'm', keys: [keys[15]!] },
      { type: 'BlockRemoved', medium: 'DISK' },
    ],
    [
      'a chunk never seen on the device (journal replay): left out',
      { kind: 'stored', tier: 'ssd', model: 'm', keys: ['0'.repeat(32)] },
      null,
    ],
    ['a tier-only model (E cache): left out', { kind: 'stored', tier: 'mem', model: 'm#e', keys: [keys[15]!] }, null],
  ])('%s', (_n, change, event) => {
    const { sut, batches } = setup();
    sut.onChunk(chunk0);
    sut.onChunk(partial1);
    sut.onChange(change);
    sut.flush();
    if (event === null) return expect(batches).toEqual([]);
    expect(batches).toEqual([{ ts: 2, events: [expect.objectContaining(event)] }]);
  });

  it('counts what it could not describe, and remembers a bounded number of chunks', () => {
    const { sut } = setup();
    for (let i = 0; i < 10; i++) sut.onChunk({ ...chunk0, key: keys[i]!, superseded: keys.slice(0, 15) });
    sut.onChange({ kind: 'stored', tier: 'device', model: 'm', keys: [keys[0]!, keys[1]!, keys[9]!] });
    sut.flush();
    expect(sut.counters).toEqual({ events: 1, unmapped: 2 });
  });
});
