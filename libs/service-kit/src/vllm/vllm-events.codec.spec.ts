import { decode } from '@msgpack/msgpack';
import { blockHashKey, decodeVllmEventBatch, encodeVllmEventBatch, VllmEventsFormatError } from './vllm-events.codec.js';
import { encodeMsgpack, Float64, MsgMap } from './msgpack.writer.js';

// Byte-exact samples assembled by hand from the MessagePack spec and vLLM's schema, as msgspec
// writes them: fixarray 0x9N, fixmap 0x8N, fixstr 0xaN, str8 0xd9, float64 0xcb, uint64 0xcf, nil 0xc0.
const str = (s: string) =>
  (s.length < 32 ? [0xa0 | s.length] : [0xd9, s.length]).map((b) => b.toString(16).padStart(2, '0')).join('') +
  Buffer.from(s).toString('hex');
const f64 = (x: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(x);
  return 'cb' + b.toString('hex');
};
const hex = (...parts: string[]) => Buffer.from(parts.join('').replace(/\s+/g, ''), 'hex');
const tokens16 = [151644, 872, 198, 9064, 374, 279, 6722, 315, 5616, 30, 151645, 198, 151644, 77091, 198, 151667];
const uint = (n: number) =>
  n < 128
    ? n.toString(16).padStart(2, '0')
    : n < 256
      ? 'cc' + n.toString(16).padStart(2, '0')
      : n < 65536
        ? 'cd' + n.toString(16).padStart(4, '0')
        : 'ce' + n.toString(16).padStart(8, '0');

// A BlockStored as vLLM 0.26 sends it (map layout, vllm-project/vllm#42892), with the defaulted
// fields a newer engine sets (extra_keys, group_idx, kv_cache_spec_kind), inside an EventBatch
// [ts, events, data_parallel_rank].
// The batch [ts, [BlockStored], 0] in map layout, `mapHeader` (fixmap 0x8N) over the eight fields every
// version sends, then `extra` fields.
const blockStoredBatch = (mapHeader: string, ...extra: string[]) =>
  hex(
    '93',
    f64(1789095808.8378847),
    '91',
    mapHeader,
    str('type'),
    str('BlockStored'),
    str('block_hashes'),
    '91',
    'cf',
    'dab89baa7b5857c0',
    str('parent_block_hash'),
    'c0',
    str('token_ids'),
    'dc0010',
    tokens16.map(uint).join(''),
    str('block_size'),
    '10',
    str('lora_id'),
    'c0',
    str('medium'),
    str('GPU'),
    str('lora_name'),
    'c0',
    ...extra,
    '00',
  );
const VLLM_MAP_SAMPLE = blockStoredBatch(
  '8b',
  str('extra_keys'),
  '91',
  'c0',
  str('group_idx'),
  '00',
  str('kv_cache_spec_kind'),
  str('full_attention'),
);

// The BlockStored event of both map samples, decoded.
const SAMPLE_BLOCK_STORED = {
  type: 'BlockStored',
  blockHashes: [15760518052499183552n],
  parentBlockHash: null,
  tokenIds: tokens16,
  blockSize: 16,
  loraId: null,
  medium: 'GPU',
  loraName: null,
} as const;

// The positional layout of older vLLM (array_like events: [tag, block_hashes, parent, token_ids,
// block_size, lora_id, medium]), a BlockRemoved [tag, hashes, medium] and AllBlocksCleared [tag];
// no data_parallel_rank (omitted at its default).
const VLLM_ARRAY_SAMPLE = hex(
  '92',
  f64(1700000000.25),
  '93',
  '97',
  str('BlockStored'),
  '92',
  '01',
  'cf',
  'ffffffffffffffff',
  '2a',
  '90',
  '10',
  'c0',
  str('CPU'),
  '93',
  str('BlockRemoved'),
  '91',
  '01',
  str('GPU'),
  '91',
  str('AllBlocksCleared'),
);

describe('vLLM KV event codec', () => {
  it('reads the map layout of current vLLM, extra fields ignored', () => {
    const batch = decodeVllmEventBatch(VLLM_MAP_SAMPLE);
    expect(batch.ts).toBe(1789095808.8378847);
    expect(batch.dataParallelRank).toBe(0);
    expect(batch.events).toEqual([SAMPLE_BLOCK_STORED]);
  });

  it('reads the positional layout of older vLLM', () => {
    const batch = decodeVllmEventBatch(VLLM_ARRAY_SAMPLE);
    expect(batch.dataParallelRank).toBeNull();
    expect(batch.events).toEqual([
      {
        type: 'BlockStored',
        blockHashes: [1, 0xffffffffffffffffn],
        parentBlockHash: 42,
        tokenIds: [],
        blockSize: 16,
        loraId: null,
        medium: 'CPU',
        loraName: null,
      },
      { type: 'BlockRemoved', blockHashes: [1], medium: 'GPU' },
      { type: 'AllBlocksCleared' },
    ]);
  });

  it('writes the map layout byte for byte as msgspec does', () => {
    const ours = encodeVllmEventBatch({
      ts: 1789095808.8378847,
      events: [SAMPLE_BLOCK_STORED],
      dataParallelRank: 0,
    });
    const expected = blockStoredBatch('88');
    expect(Buffer.from(ours).toString('hex')).toBe(expected.toString('hex'));
  });

  it('our batches decode with a plain msgpack decoder into vLLM field names and order', () => {
    const payload = encodeVllmEventBatch({
      ts: 2,
      events: [
        {
          type: 'BlockStored',
          blockHashes: [7n, 2n ** 63n],
          parentBlockHash: 5n,
          tokenIds: [1, 2],
          blockSize: 16,
          loraId: null,
          medium: 'CPU',
          loraName: null,
        },
        { type: 'BlockRemoved', blockHashes: [7n], medium: 'DISK' },
        { type: 'AllBlocksCleared' },
      ],
    });
    const raw = decode(payload, { useBigInt64: true }) as [number, Array<Record<string, unknown>>];
    expect(raw).toHaveLength(2); // data_parallel_rank left out at its default
    expect(raw[0]).toBe(2);
    expect(Buffer.from(payload).subarray(1, 2).toString('hex')).toBe('cb'); // ts stays a float
    expect(raw[1].map((e) => Object.keys(e))).toEqual([
      ['type', 'block_hashes', 'parent_block_hash', 'token_ids', 'block_size', 'lora_id', 'medium', 'lora_name'],
      ['type', 'block_hashes', 'medium'],
      ['type'],
    ]);
    expect(raw[1][0]).toMatchObject({
      type: 'BlockStored',
      block_hashes: [7, 2n ** 63n],
      parent_block_hash: 5,
      token_ids: [1, 2],
      block_size: 16,
      medium: 'CPU',
    });
  });

  it.each<[string, Buffer]>([
    ['not msgpack', Buffer.from([0xc1])],
    ['not an array', Buffer.from(encodeMsgpack(new MsgMap([['ts', 1]])))],
    ['events not a list', Buffer.from(encodeMsgpack([new Float64(1), 3]))],
    [
      'token ids not ints',
      Buffer.from(
        encodeMsgpack([
          new Float64(1),
          [
            new MsgMap([
              ['type', 'BlockStored'],
              ['block_hashes', [1]],
              ['token_ids', ['a']],
              ['block_size', 16],
            ]),
          ],
        ]),
      ),
    ],
    [
      'a hash that is a string',
      Buffer.from(
        encodeMsgpack([
          new Float64(1),
          [
            new MsgMap([
              ['type', 'BlockRemoved'],
              ['block_hashes', ['x']],
            ]),
          ],
        ]),
      ),
    ],
  ])('refuses %s with a format error', (_n, payload) => {
    expect(() => decodeVllmEventBatch(payload)).toThrow(VllmEventsFormatError);
  });

  it('skips event types it does not know (a newer engine)', () => {
    const payload = encodeMsgpack([
      new Float64(1),
      [
        new MsgMap([
          ['type', 'TierBlocksCleared'],
          ['medium', 'CPU'],
        ]),
      ],
    ]);
    expect(decodeVllmEventBatch(payload).events).toEqual([]);
  });

  it.each<[string, bigint | number | Uint8Array, string]>([
    ['a small int', 5, '5'],
    ['the same value as a bigint', 5n, '5'],
    ['a u64', 2n ** 64n - 1n, '18446744073709551615'],
    ['bytes', Uint8Array.from([1, 2]), 'b:0102'],
  ])('blockHashKey: %s', (_n, h, key) => {
    expect(blockHashKey(h)).toBe(key);
  });
});
