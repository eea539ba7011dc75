import { ErrorCode } from '@mnemo/kv-core';
import { bits } from '../../test/bits.js';
import { cpuBackend } from '../../test/test-backend.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import type { SwapOptions } from './kv.swapper.js';
import { ReferenceEngine } from './reference.engine.js';

const MODEL = 'mnemo-tiny';
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const toks = (n: number, salt = 0): number[] => Array.from({ length: n }, (_, i) => (i * 37 + salt * 11 + 5) % 256);
const HOST = 64 * 2 ** 20;

function engine(kvBlocks: number, swap?: SwapOptions, blockGroups?: number): ReferenceEngine {
  return new ReferenceEngine(cpuBackend(), [syntheticWeightsFor(MODEL)], kvBlocks, { swap, blockGroups });
}

/** Prefills `tokens`; the raw bits of the prompt's logits, and the sampled token (the first decode input) in `pending`. */
async function start(
  sut: ReferenceEngine,
  seqId: string,
  tokens: number[],
  salt?: string,
  pending?: Map<string, number>,
): Promise<Uint32Array> {
  sut.openSequence(seqId, MODEL, GREEDY, salt);
  const hit = sut.attachCachedPrefix(seqId, tokens);
  const [r] = await sut.step([{ seqId, tokens: tokens.slice(hit) }]);
  pending?.set(seqId, sut.sample(seqId, r!.logits));
  return Uint32Array.from(bits(r!.logits));
}

/** One decode step of each sequence (batched), returning each one's logits bits. */
async function decode(sut: ReferenceEngine, seqIds: string[], pending: Map<string, number>): Promise<Map<string, Uint32Array>> {
  const rs = await sut.step(seqIds.map((seqId) => ({ seqId, tokens: [pending.get(seqId)!] })));
  const out = new Map<string, Uint32Array>();
  for (const r of rs) {
    pending.set(r.seqId, sut.sample(r.seqId, r.logits));
    out.set(r.seqId, Uint32Array.from(bits(r.logits)));
  }
  return out;
}

/** Logits of the prompt and of `steps` decode steps of a sequence alone and never preempted. */
async function reference(tokens: number[], steps: number): Promise<Uint32Array[]> {
  const sut = engine(256);
  const pending = new Map<string, number>();
  const out = [await start(sut, 'x', tokens, undefined, pending)];
  for (let i = 0; i < steps; i++) out.push((await decode(sut, ['x'], pending)).get('x')!);
  await sut.close();
  return out;
}

describe('ReferenceEngine swap preemption', () => {
  const prompt = toks(90);

  it.each<[string, SwapOptions, number | undefined, string | undefined]>([
    ['grouped copies with reuse, block groups', { granularity: 'grouped', hostBytes: HOST }, 60, undefined],
    ['grouped copies, prefix-sharing sequences (hits attached on swap-in)', { granularity: 'grouped', hostBytes: HOST }, 60, 't'],
    ['per-block copies, no reuse, no groups', { granularity: 'per-block', hostBytes: HOST }, undefined, undefined],
  ])(
    'a sequence swapped out and in any number of times, beside others, gives bit-identical logits (%s)',
    async (_name, swap, groups, salt) => {
      const steps = 24;
      const want = await reference(prompt, steps);
      const sut = engine(48, swap, groups);
      expect(sut.swap).toBeDefined();
      const pending = new Map<string, number>();
      const got = [await start(sut, 'x', prompt, salt, pending)];
      await start(sut, 'y', toks(70, 3), salt, pending);
      await start(sut, 'z', [...prompt.slice(0, 48), ...toks(20, 9)], salt, pending);
      for (let i = 0; i < steps; i++) {
        // Preempt x on most steps, sometimes with its neighbours; neighbours keep decoding when x is out.
        if (i % 3 !== 2) {
          const out = i % 4 === 0 ? ['x', 'z'] : ['x'];
          expect((await sut.swap!.swapOut(out)).seqIds).toEqual(out);
          await expect(sut.decode(['x'])).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
          const others = ['y', 'z'].filter((id) => !out.includes(id));
          if (others.length > 0) await decode(sut, others, pending);
          expect((await sut.swap!.swapIn(out)).seqIds).toEqual(out);
        }
        const logits = await decode(sut, ['x', 'y', 'z'], pending);
        got.push(logits.get('x')!);
      }
      expect(got).toEqual(want);
      await sut.close();
    },
  );

  it("an asynchronous swap-in overlapping other sequences' passes (allocations included) still gives bit-identical logits", async () => {
    const steps = 12;
    const want = await reference(prompt, steps);
    const sut = engine(40, { granularity: 'grouped', hostBytes: HOST }, 8);
    const pending = new Map<string, number>();
    const got = [await start(sut, 'x', prompt, undefined, pending)];
    await start(sut, 'y', toks(30, 3), undefined, pending);
    let n = 0;
    for (let i = 0; i < steps; i++) {
      await sut.swap!.swapOut(['x']);
      // The copy back runs on the native workers while y's pass runs and new sequences take blocks.
      const back = sut.swap!.swapIn(['x']);
      await Promise.all([decode(sut, ['y'], pending), start(sut, `n${n}`, toks(20, n + 5))]);
      sut.release(`n${n++}`);
      await back;
      got.push((await decode(sut, ['x'], pending)).get('x')!);
    }
    expect(got).toEqual(want);
    (sut as unknown as { runtimes: Map<string, { cache: { ledger: { blocks: { checkInvariant(): void } } } }> }).runtimes
      .get(MODEL)!
      .cache.ledger.blocks.checkInvariant();
    await sut.close();
  });

  it('a later swap-out copies only blocks written since the last one (grouped) — per-block copies everything again', async () => {
    const volumes: Record<string, number[]> = {};
    for (const granularity of ['grouped', 'per-block'] as const) {
      const sut = engine(64, { granularity, hostBytes: HOST }, granularity === 'grouped' ? 60 : undefined);
      const pending = new Map<string, number>();
      await start(sut, 'x', toks(150), undefined, pending);
      volumes[granularity] = [];
      for (let turn = 0; turn < 3; turn++) {
        volumes[granularity]!.push((await sut.swap!.swapOut(['x'])).blocks);
        await sut.swap!.swapIn(['x']);
        for (let i = 0; i < 16; i++) await decode(sut, ['x'], pending);
      }
      await sut.close();
    }
    // 150 tokens = 10 blocks, the last partial; +16 tokens a turn: the grouped copy re-sends the partial tail and the new block.
    expect(volumes.grouped).toEqual([10, 2, 2]);
    expect(volumes['per-block']).toEqual([10, 11, 12]);
  });

  it('grouped copies are few and large; per-block copies are layers · 2 per block', async () => {
    const copies: Record<string, number> = {};
    for (const granularity of ['grouped', 'per-block'] as const) {
      const sut = engine(64, { granularity, hostBytes: HOST }, granularity === 'grouped' ? 60 : undefined);
      await start(sut, 'x', toks(160));
      copies[granularity] = (await sut.swap!.swapOut(['x'])).copies;
      await sut.close();
    }
    expect(copies.grouped).toBe(1);
    expect(copies['per-block']).toBe(10 * 2 * sut_layers());
  });

  it('a sequence released while its swap-out copy runs keeps its blocks until the copy ends, then frees them', async () => {
    const sut = engine(32, { granularity: 'grouped', hostBytes: HOST }, 60);
    await start(sut, 'x', toks(100));
    const before = sut.freeBlocks(MODEL);
    const swapping = sut.swap!.swapOut(['x']);
    sut.release('x');
    // Still held: nobody can be handed a block the copy is reading.
    expect(sut.freeBlocks(MODEL)).toBe(before);
    const report = await swapping;
    expect(report.seqIds).toEqual([]);
    expect(sut.freeBlocks(MODEL)).toBe(32);
    expect(sut.swap!.hostBytes()).toBe(0);
    await sut.close();
  });

  it('no host room: the sequence is left running, nothing changes', async () => {
    const sut = engine(32, { granularity: 'grouped', hostBytes: 1024 }, 60);
    await start(sut, 'x', toks(100));
    const report = await sut.swap!.swapOut(['x']);
    expect(report.seqIds).toEqual([]);
    expect(sut.swap!.isSwapped('x')).toBe(false);
    expect(sut.sequenceLength('x')).toBe(100);
    await sut.close();
  });

  it.each([
    ['swap-in of a running sequence', async (s: ReferenceEngine) => s.swap!.swapIn(['x']), ErrorCode.InvalidRequest],
    ['swap-out of an unknown sequence', async (s: ReferenceEngine) => s.swap!.swapOut(['nope']), ErrorCode.NotFound],
  ])('%s is refused with a code and changes nothing', async (_name, act, code) => {
    const sut = engine(32, { granularity: 'grouped', hostBytes: HOST }, 60);
    await start(sut, 'x', toks(40));
    const free = sut.freeBlocks(MODEL);
    await expect(act(sut)).rejects.toMatchObject({ code });
    expect(sut.freeBlocks(MODEL)).toBe(free);
    expect(sut.sequenceLength('x')).toBe(40);
    await sut.close();
  });

  it('swap-in that does not fit the device is refused as overloaded; the sequence stays swapped out', async () => {
    const sut = engine(8, { granularity: 'grouped', hostBytes: HOST }, 4);
    await start(sut, 'x', toks(100));
    await sut.swap!.swapOut(['x']);
    await start(sut, 'y', toks(60, 2));
    await expect(sut.swap!.swapIn(['x'])).rejects.toMatchObject({ code: ErrorCode.Overloaded });
    expect(sut.swap!.isSwapped('x')).toBe(true);
    sut.release('y');
    await sut.swap!.swapIn(['x']);
    expect(sut.sequenceLength('x')).toBe(100);
    await sut.close();
  });
});

function sut_layers(): number {
  return syntheticWeightsFor(MODEL).config.layers;
}
