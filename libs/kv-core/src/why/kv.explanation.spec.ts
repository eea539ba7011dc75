import { explainKv, type ChunkRoutingFacts, type ExplainInput } from './kv.explanation.js';

const k = (c: string) => c.repeat(32);
const nothing: ChunkRoutingFacts = { heldBy: [], otherModels: [], otherTenantHeld: false, drops: [] };
const base: ExplainInput = {
  promptTokens: 600,
  chunkKeys: [k('a'), k('b')],
  nodeId: 'n1',
  policy: 'symphony',
  node: { deviceTokens: 0, host: 0, ssd: 0, peer: 0 },
  routing: [nothing, nothing],
  admin: false,
};
const view = (i: ExplainInput) => explainKv(i).map((s) => [s.chunk, s.start, s.tokens, s.source, s.reason ?? null] as const);

describe('explainKv', () => {
  it.each<[string, Partial<ExplainInput>, ReadonlyArray<readonly [number, number, number, string, string | null]>]>([
    [
      'nothing cached, nothing known',
      {},
      [
        [0, 0, 256, 'computed', 'never_stored'],
        [1, 256, 256, 'computed', 'never_stored'],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      'a device prefix ending inside chunk 1, the rest computed',
      { node: { deviceTokens: 320, host: 0, ssd: 0, peer: 0 } },
      [
        [0, 0, 256, 'device', null],
        [1, 256, 64, 'device', null],
        [1, 320, 192, 'computed', 'never_stored'],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      'device then a host restore of chunk 1',
      { node: { deviceTokens: 256, host: 256, ssd: 0, peer: 0 } },
      [
        [0, 0, 256, 'device', null],
        [1, 256, 256, 'host', null],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      'a restore from host and SSD',
      { node: { deviceTokens: 0, host: 256, ssd: 256, peer: 0 } },
      [
        [0, 0, 256, 'host+ssd', null],
        [1, 256, 256, 'host+ssd', null],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      'a peer restore',
      { node: { deviceTokens: 0, host: 0, ssd: 0, peer: 512, peerNode: 'n2' } },
      [
        [0, 0, 256, 'peer', null],
        [1, 256, 256, 'peer', null],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      'evicted by policy: the node says when and why',
      { routing: [{ ...nothing, drops: [{ reason: 'evicted', tier: 'device', policy: 'LRU', atUnixMs: 5 }] }, nothing] },
      [
        [0, 0, 256, 'computed', 'evicted'],
        [1, 256, 256, 'computed', 'never_stored'],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      'held on another node',
      { routing: [{ ...nothing, heldBy: [{ nodeId: 'n2', tiers: ['ssd'] }] }, nothing] },
      [
        [0, 0, 256, 'computed', 'held_elsewhere'],
        [1, 256, 256, 'computed', 'never_stored'],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      'cached under another model',
      { routing: [{ ...nothing, otherModels: ['m-base'] }, nothing] },
      [
        [0, 0, 256, 'computed', 'model_mismatch'],
        [1, 256, 256, 'computed', 'never_stored'],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      "another tenant's copy, asked by an admin",
      { admin: true, routing: [{ ...nothing, otherTenantHeld: true }, nothing] },
      [
        [0, 0, 256, 'computed', 'tenant_isolated'],
        [1, 256, 256, 'computed', 'never_stored'],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      "another tenant's copy, asked by the tenant: not revealed",
      { routing: [{ ...nothing, otherTenantHeld: true }, nothing] },
      [
        [0, 0, 256, 'computed', 'never_stored'],
        [1, 256, 256, 'computed', 'never_stored'],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
    [
      "the node's record is gone",
      { node: null },
      [
        [0, 0, 256, 'unknown', 'node_record_missing'],
        [1, 256, 256, 'unknown', 'node_record_missing'],
        [2, 512, 88, 'unknown', 'partial'],
      ],
    ],
    [
      'DroidSpeak reuse past the device prefix',
      { node: { deviceTokens: 0, host: 0, ssd: 0, peer: 0, droidspeak: { base: 'b', tokens: 512 } } },
      [
        [0, 0, 256, 'droidspeak', null],
        [1, 256, 256, 'droidspeak', null],
        [2, 512, 88, 'computed', 'partial'],
      ],
    ],
  ])('%s', (_n, change, want) => {
    expect(view({ ...base, ...change })).toEqual(want);
  });

  it('a drop names its tier, policy and time', () => {
    const [s] = explainKv({
      ...base,
      routing: [{ ...nothing, drops: [{ reason: 'expired', tier: 'ssd', policy: 'SSD pool TTL', atUnixMs: 0 }] }, nothing],
    });
    expect(s).toMatchObject({ reason: 'expired', tier: 'ssd', policy: 'SSD pool TTL', atUnixMs: 0 });
    expect(s!.detail).toContain('1970-01-01T00:00:00.000Z');
  });
});
