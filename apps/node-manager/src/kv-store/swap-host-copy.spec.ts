// FastSwitch's host copy and the KV store's host pool as one (issue 10, item 4): a swap-out
// leaves out the whole chunks the host pool holds, pinned for the sequence, and the swap-in
// copies them back from there — bit-identical logits to a run never preempted, on the CPU
// backend with a real store (real pool devices and files). A held chunk that fails its CRC at
// swap-in is never used: the sequence recomputes.
import { chunkKeys } from '@mnemo/kv-core';
import { ReferenceEngine } from '@mnemo/engine';
import { transfer } from '@mnemo/native-cuda';
import { create } from '@bufbuild/protobuf';
import { InferenceRequestSchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { Sequence } from '../shared/sequence.js';
import { SequenceStore } from '../batching/sequence.store.js';
import { SwapManager } from '../batching/swap.manager.js';
import { openStoreRig, type StoreRig } from '../../test/kv-store.fixture.js';
import type { KvStore } from './kv.store.js';

const MODEL = 'mnemo-tiny';
const SALT = 't';
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const KiB = 1024;
const toks = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 31 + salt * 17 + 3) % 250);
const bitsOf = (a: Float32Array) => Uint32Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

/** Prefills `tokens` as a new sequence; its prompt logits' bits, and its first decode input in `pending`. */
async function start(
  e: ReferenceEngine,
  seqId: string,
  tokens: number[],
  pending: Map<string, number>,
  salt: string | undefined = SALT,
): Promise<Uint32Array> {
  e.openSequence(seqId, MODEL, GREEDY, salt);
  const hit = e.attachCachedPrefix(seqId, tokens);
  const [r] = await e.step([{ seqId, tokens: tokens.slice(hit) }]);
  pending.set(seqId, e.sample(seqId, r!.logits));
  return bitsOf(r!.logits);
}

async function decode(e: ReferenceEngine, seqId: string, pending: Map<string, number>): Promise<Uint32Array> {
  const [r] = await e.step([{ seqId, tokens: [pending.get(seqId)!] }]);
  pending.set(seqId, e.sample(seqId, r!.logits));
  return bitsOf(r!.logits);
}

describe('swap copies and the KV store host pool: one host copy', () => {
  const prompt = toks(560, 1); // two whole chunks and 48 tokens
  const keys = chunkKeys(MODEL, SALT, prompt);
  const STEPS = 12;
  let rig: StoreRig;
  let want: Uint32Array[];
  let engine: ReferenceEngine;
  let store: KvStore;

  beforeAll(async () => {
    const e = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 256 });
    const pending = new Map<string, number>();
    want = [await start(e, 'x', prompt, pending, undefined)];
    for (let i = 0; i < STEPS; i++) want.push(await decode(e, 'x', pending));
    await e.close();
  });

  beforeEach(async () => {
    // 48 device blocks: a filler of 700 tokens pushes the swapped-out sequence's blocks off the
    // device. 768 KiB of host pool: three of mnemo-tiny's 256 KiB chunks.
    rig = await openStoreRig(
      'mnemo-swap-held-',
      { models: [MODEL], kvBlocks: 48, swap: { granularity: 'grouped', hostBytes: 64 * 1024 * KiB } },
      { hostBytes: 768 * KiB },
    );
    ({ engine, store } = rig);
    engine.swap!.useHostCopies!({ hold: (model, salt, tokens) => store.holdForSwap(model, salt, tokens) });
  });
  afterEach(() => rig.close());

  /** x prefilled and decoded `steps` times, its prompt's chunks written through to the host pool. */
  async function running(pending: Map<string, number>, got: Uint32Array[], steps: number): Promise<void> {
    got.push(await start(engine, 'x', prompt, pending));
    for (let i = 0; i < steps; i++) got.push(await decode(engine, 'x', pending));
    await store.settle();
    const m = store.tiers.model(MODEL);
    for (const k of keys) expect(m.table.holdsChunk(k, 'mem')).toBe(true);
  }

  /**
   * Another sequence takes the device; `left` of x's tokens stay there as cached prefix (blocks
   * are reclaimed tail first), which a swap-in attaches instead of copying.
   */
  async function crowdOut(filler: number, left: number): Promise<void> {
    const pending = new Map<string, number>();
    await start(engine, 'filler', toks(filler, 9), pending, 'other');
    engine.release('filler');
    await store.settle();
    expect(engine.cachedTokens({ seqId: 'q', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: SALT })).toBe(left);
  }

  /** Overwrites the first 4 KiB of `layer` of the prompt's chunk `chunk` in the host pool. */
  async function corruptHeld(chunk: number, layer: number): Promise<void> {
    const loc = store.tiers.model(MODEL).table.get(keys[chunk]!, layer, 'mem')!;
    await transfer(
      [new Uint8Array(4096).fill(0x5a), store.tiers.device(loc.deviceIndex).device],
      Float64Array.of(0, 0, 1, loc.offset, 4096),
    );
  }

  it('a swap-out copies only what the host pool lacks; swapped in (twice), the logits are bit-identical', async () => {
    const pending = new Map<string, number>();
    const got: Uint32Array[] = [];
    await running(pending, got, 4);
    const swap = engine.swap!;
    const bytesPerBlock = (b: { bytes: number; blocks: number }) => b.bytes / b.blocks;

    const out = await swap.swapOut(['x']);
    // 564 tokens in 36 blocks: the 32 of the two whole chunks stay in the host pool, pinned.
    expect(out).toMatchObject({ seqIds: ['x'], blocks: 4, heldBlocks: 32 });
    expect(store.swapHolds).toEqual({ held: 1, chunks: 2 });
    const blockBytes = bytesPerBlock(out);
    // The filler's chunks find the host pool full of pins except one slot: they cannot evict x's.
    // Its first 4 blocks stay on the device: the swap-in attaches them and loads the rest of the
    // held chunks around them.
    await crowdOut(700, 64);
    const into = await swap.swapIn(['x']);
    expect(into).toMatchObject({ seqIds: ['x'], blocks: 32, bytes: 32 * blockBytes });
    for (let i = 0; i < 4; i++) got.push(await decode(engine, 'x', pending));

    // Again: the swap copy gives its full blocks again, the host pool its chunks; only the new blocks are copied.
    const again = await swap.swapOut(['x']);
    expect(again).toMatchObject({ blocks: 1, heldBlocks: 32 });
    await crowdOut(760, 0);
    expect((await swap.swapIn(['x'])).seqIds).toEqual(['x']);
    while (got.length < want.length) got.push(await decode(engine, 'x', pending));
    got.forEach((g, i) => expect(g).toEqual(want[i]));

    engine.release('x');
    expect(store.swapHolds).toEqual({ held: 0, chunks: 0 });
  });

  it(
    'a held chunk corrupted in the host pool is never used: the ' + 'swap-in leaves the sequence out, it recomputes bit-identically',
    async () => {
      const pending = new Map<string, number>();
      const got: Uint32Array[] = [];
      await running(pending, got, 4);
      const swap = engine.swap!;
      await swap.swapOut(['x']);
      await crowdOut(760, 0);
      await corruptHeld(1, 2);

      const into = await swap.swapIn(['x']);
      expect(into.seqIds).toEqual([]);
      expect(swap.isSwapped('x')).toBe(false);
      expect(store.swapHolds).toEqual({ held: 0, chunks: 0 });
      expect(store.tiers.model(MODEL).table.get(keys[1]!, 2, 'mem')).toBeUndefined();
      await engine.resume(['x']);
      while (got.length < want.length) got.push(await decode(engine, 'x', pending));
      got.forEach((g, i) => expect(g).toEqual(want[i]));
    },
  );

  it(
    "the node's swap manager puts a sequence whose held KV failed back " + 'to waiting, for recompute, and one that came back to running',
    async () => {
      const seqs = new SequenceStore();
      const clock = { monotonicMs: () => performance.now(), unixMs: () => Date.now() };
      const config = { NODE_PREEMPTION: 'swap', NODE_SWAP_IN: 'sync' } as NodeManagerConfig;
      const sut = new SwapManager(
        engine,
        config,
        seqs,
        clock,
        new NodeMetrics(new ServiceMetrics('swap-held-test')),
        new JsonLogger('test', 'error', () => undefined),
      );
      const seq = new Sequence(
        create(InferenceRequestSchema, { requestId: 'x', model: MODEL, tokens: prompt, tenant: SALT }),
        engine.models()[0]!,
        0,
        0,
      );
      seqs.add(seq);
      await running(new Map(), [], 2);
      seq.phase = 'running';
      expect(await sut.swapOut([seq])).toEqual([]);
      seq.preempted = true;
      seq.phase = 'waiting';
      await sut.swapIn([seq], engine.resumeBlocks('x'), false);
      expect({ phase: seq.phase, preempted: seq.preempted }).toEqual({ phase: 'running', preempted: false });

      expect(await sut.swapOut([seq])).toEqual([]);
      seq.preempted = true;
      seq.phase = 'waiting';
      await crowdOut(760, 0);
      await corruptHeld(0, 0);
      await sut.swapIn([seq], engine.resumeBlocks('x'), false);
      expect({ phase: seq.phase, preempted: seq.preempted, swapped: sut.isSwapped(seq) }).toEqual({
        phase: 'waiting',
        preempted: true,
        swapped: false,
      });
    },
  );

  it('without a host pool copy to lean on (prefix sharing off) the swap copy takes every block', async () => {
    const pending = new Map<string, number>();
    engine.openSequence('y', MODEL, GREEDY);
    const [r] = await engine.step([{ seqId: 'y', tokens: prompt }]);
    pending.set('y', engine.sample('y', r!.logits));
    const out = await engine.swap!.swapOut(['y']);
    expect(out.blocks).toBe(35);
    expect(store.swapHolds).toEqual({ held: 0, chunks: 0 });
  });
});
