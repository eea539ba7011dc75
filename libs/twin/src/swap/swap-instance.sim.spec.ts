import { MODELS } from '../costs/hardware.tables.js';
import { SwapInstanceSim } from './swap-instance.sim.js';
import { FASTSWITCH, VLLM_SWAP, type SwapConversation, type SwapInstanceConfig, type SwapMechanisms } from './swap-instance.types.js';

const model = MODELS['llama-3.1-8b'];
const BLOCK_BYTES = 16 * 128 * 1024;
/** Fixed step costs, so a test reads its times off directly. */
const compute = { prefillMs: (seqs: number) => (seqs ? 10 : 0), decodeMs: (seqs: number) => (seqs ? 5 : 0), restorePerChunkMs: 0 };
/** Conversation 1 outranks conversation 0 from the start. */
const byConversation = { level: (conv: number) => conv, forget: () => {} };

const config = (mechanisms: SwapMechanisms, o: Partial<SwapInstanceConfig> = {}): SwapInstanceConfig => ({
  compute,
  model,
  link: { dispatchMs: 0.1, bytesPerMs: 25e6 },
  deviceBlocks: 12,
  hostBytes: 100 * BLOCK_BYTES,
  maxBatch: 8,
  maxPrefillTokens: 4096,
  groupBlocks: 8,
  segmentBlocks: 64,
  mechanisms,
  trace: byConversation,
  updateEvery: 4,
  ...o,
});

/** Conversation 0 holds 7 blocks when conversation 1 (higher priority, 7 blocks) arrives: 0 must be swapped out. */
const clash: SwapConversation[] = [
  { arrivalMs: 0, turns: [{ userTokens: 100, replyTokens: 40, thinkMs: 0 }] },
  { arrivalMs: 50, turns: [{ userTokens: 100, replyTokens: 20, thinkMs: 0 }] },
];

describe(SwapInstanceSim.name, () => {
  it('serves a lone request at the compute costs: TTFT one prefill, every TBT one decode step, nothing swapped', () => {
    const sut = new SwapInstanceSim(config(VLLM_SWAP, { deviceBlocks: 100 }), [
      { arrivalMs: 0, turns: [{ userTokens: 100, replyTokens: 5, thinkMs: 0 }] },
    ]).run();
    expect(sut.ttftMs).toEqual([10]);
    expect(sut.tbtMs).toEqual([5, 5, 5, 5]);
    expect(sut.swapOuts + sut.swapIns + sut.switchStallMs).toBe(0);
  });

  it("vLLM swaps per block, layer and K/V (kv-core's per-block ranges); block groups move the same blocks in one call", () => {
    const vllm = new SwapInstanceSim(config(VLLM_SWAP), clash).run();
    const groups = new SwapInstanceSim(config({ ...VLLM_SWAP, groups: true }), clash).run();
    for (const r of [vllm, groups]) {
      expect(r.swapOuts).toBe(1);
      expect(r.swapIns).toBe(1);
      expect(r.requests).toBe(2);
      expect(r.ttftMs).toHaveLength(2);
    }
    expect(vllm.swapOutBlocks).toBe(groups.swapOutBlocks);
    expect(vllm.swapOutCalls).toBe(vllm.swapOutBlocks * 2 * model.layers);
    expect(groups.swapOutCalls).toBe(1);
    expect(groups.blocksPerCall).toBeGreaterThan(1);
    expect(groups.switchStallMs).toBeLessThan(vllm.switchStallMs / 10);
  });

  it("the paper's groups on vLLM's per-layer layout copy each run once per layer for K and for V", () => {
    const blockMajor = new SwapInstanceSim(config({ ...VLLM_SWAP, groups: true }), clash).run();
    const perLayer = new SwapInstanceSim(config({ ...VLLM_SWAP, groups: true, perLayerRuns: true }), clash).run();
    expect(perLayer.swapOutBlocks).toBe(blockMajor.swapOutBlocks);
    expect(perLayer.swapOutCalls).toBe(blockMajor.swapOutCalls * 2 * model.layers);
    expect(perLayer.swapOutCalls).toBeLessThan(perLayer.swapOutBlocks * 2 * model.layers);
    // Without groups the layout changes nothing: vLLM's copies are per block, layer and K/V already.
    const vllm = new SwapInstanceSim(config({ ...VLLM_SWAP, perLayerRuns: true }), clash).run();
    expect(vllm.swapOutCalls).toBe(vllm.swapOutBlocks * 2 * model.layers);
  });

  it('prices a copy as calls × dispatch + bytes / bandwidth, stalling the iteration for swap-out and a synchronous swap-in', () => {
    const r = new SwapInstanceSim(config(VLLM_SWAP), clash).run();
    const copyMs = (blocks: number) => blocks * 2 * model.layers * 0.1 + (blocks * BLOCK_BYTES) / 25e6;
    expect(r.switchStallMs).toBeCloseTo(copyMs(r.swapOutBlocks) + copyMs(r.swapInBlocks), 6);
  });

  it('reuses the host copy: a second swap-out of the same request copies only blocks written since (§3.3)', () => {
    // Conversation 2 arrives after 0 is back, and preempts it again.
    const twice: SwapConversation[] = [...clash, { arrivalMs: 250, turns: [{ userTokens: 100, replyTokens: 20, thinkMs: 0 }] }];
    const plain = new SwapInstanceSim(config({ ...VLLM_SWAP, groups: true }), twice).run();
    const reuse = new SwapInstanceSim(config({ ...VLLM_SWAP, groups: true, reuse: true }), twice).run();
    expect(plain.swapOuts).toBe(2);
    expect(reuse.swapOuts).toBe(2);
    expect(plain.reusedBlocks).toBe(0);
    expect(reuse.reusedBlocks).toBeGreaterThan(0);
    expect(reuse.swapOutBlocks).toBe(plain.swapOutBlocks - reuse.reusedBlocks);
    // Table 1's comparison inside one run: the same swap-outs, each also priced copying every block.
    expect(plain.traditionalSwapOut).toEqual({ blocks: plain.swapOutBlocks, calls: plain.swapOutCalls, ms: plain.swapOutMs });
    expect(reuse.traditionalSwapOut.blocks).toBe(reuse.swapOutBlocks + reuse.reusedBlocks);
    expect(reuse.traditionalSwapOut.calls).toBeGreaterThanOrEqual(reuse.swapOutCalls);
    const copyMs = (calls: number, blocks: number) => calls * 0.1 + (blocks * BLOCK_BYTES) / 25e6;
    expect(reuse.swapOutMs).toBeCloseTo(copyMs(reuse.swapOutCalls, reuse.swapOutBlocks), 6);
    expect(reuse.traditionalSwapOut.ms).toBeCloseTo(copyMs(reuse.traditionalSwapOut.calls, reuse.traditionalSwapOut.blocks), 6);
    expect(reuse.traditionalSwapOut.ms).toBeGreaterThan(reuse.swapOutMs);
  });

  it('refuses a request that could never fit the device alone (it would be swapped out and in for ever)', () => {
    const sut = new SwapInstanceSim(config(VLLM_SWAP), [{ arrivalMs: 0, turns: [{ userTokens: 12 * 16, replyTokens: 1, thinkMs: 0 }] }]);
    expect(() => sut.run()).toThrow(RangeError);
  });

  it('is deterministic, and FastSwitch runs with every mechanism on', () => {
    const a = new SwapInstanceSim(config(FASTSWITCH), clash).run();
    expect(new SwapInstanceSim(config(FASTSWITCH), clash).run()).toEqual(a);
    expect(a.ttftMs).toHaveLength(2);
  });

  describe('prefill with prefix (prefixKept, FastSwitch §4)', () => {
    // 1 ms per prefilled token, nothing per decode step: computeMs counts the tokens computed.
    const perToken = { prefillMs: (_s: number, tokens: number) => tokens, decodeMs: () => 0, restorePerChunkMs: 0 };
    const turns: SwapConversation[] = [
      {
        arrivalMs: 0,
        turns: [
          { userTokens: 100, replyTokens: 20, thinkMs: 1000 },
          { userTokens: 50, replyTokens: 20, thinkMs: 1000 },
          { userTokens: 30, replyTokens: 5, thinkMs: 0 },
        ],
      },
    ];
    const run = (mechanisms: SwapMechanisms, o: Partial<SwapInstanceConfig>) =>
      new SwapInstanceSim(config(mechanisms, { compute: perToken, deviceBlocks: 100, ...o }), turns).run();

    it('a returning turn swaps its history in and computes only its new tokens', () => {
      const whole = run(VLLM_SWAP, {});
      const kept = run(VLLM_SWAP, { prefixKept: true });
      // Whole history each turn: 100, then 120 + 50, then 190 + 30.
      expect(whole.computeMs).toBe(100 + 170 + 220);
      // The copies hold each turn's KV (its prompt and reply less the last token): 119 and 189 tokens.
      expect(kept.prefixRestores).toBe(2);
      expect(kept.prefixRestoredTokens).toBe(119 + 189);
      expect(kept.computeMs).toBe(whole.computeMs - 119 - 189);
      expect(kept.switchStallMs).toBeGreaterThan(0);
    });

    it('vLLM copies a whole turn at its end and frees the copy on swap-in; with reuse only the blocks the copy lacks go', () => {
      const vllm = run(VLLM_SWAP, { prefixKept: true });
      const reuse = run({ ...VLLM_SWAP, reuse: true }, { prefixKept: true });
      // Turn ends before the last: 119 tokens (8 blocks), then 189 (12 blocks).
      expect(vllm.swapOutBlocks).toBe(8 + 12);
      expect(vllm.reusedBlocks).toBe(0);
      expect(reuse.reusedBlocks).toBe(7);
      expect(reuse.swapOutBlocks).toBe(8 + 12 - 7);
    });

    it('a turn whose copy the host gave up recomputes its whole history', () => {
      const starved = run(VLLM_SWAP, { prefixKept: true, hostBytes: 4 * BLOCK_BYTES });
      expect(starved.prefixRestores).toBe(0);
      expect(starved.computeMs).toBe(100 + 170 + 220);
    });
  });
});
