// SwiftCache's maximum context (§3.2 Eq. 1–5, §5.3 Fig. 9) on the twin: each model's KV region is
// what its GPU leaves after weights and the prefill chunk's activations; kv-core's elastic-cache
// coordinator (Algorithm 1, LCM units) decides what idle workers lend, and kv-core's layer-stream
// arithmetic (Eq. 2–5, and Mnemo's two-plane window) turns local and lent memory into a context.
import { blockElements, ElasticCacheCoordinator, layerStreamSplit, streamedContextPlan, type KvShape } from '@mnemo/kv-core';
import { MODELS } from '../../costs/hardware.tables.js';
import { kvBudgetBytes, maxContextAlone } from '../../costs/memory.budget.js';
import { kvShape, roundTo, SWIFTCACHE_SETUP, type MemoryPoint, type SwiftcacheModel, type SwiftcacheSetup } from './swiftcache.setup.js';

const round = (x: number) => roundTo(x, 3);

/** A model on the node and its KV shape, as kv-core's coordinator takes it. */
export interface LoanMember {
  readonly id: string;
  readonly model: SwiftcacheModel;
  readonly shape: KvShape;
}

export interface ElasticLoan {
  readonly members: readonly LoanMember[];
  /** Each model's region in its own blocks. */
  readonly regions: Readonly<Record<string, number>>;
  readonly coordinator: ElasticCacheCoordinator;
  /** What each worker lends, in its own blocks. */
  readonly lent: Readonly<Record<string, number>>;
}

export interface MaxContextPoint {
  readonly gb: number;
  readonly workers: readonly SwiftcacheModel[];
  readonly region_blocks: Readonly<Record<string, number>>;
  readonly lent_master_blocks: Readonly<Record<string, number>>;
  readonly vllm: { readonly no_chunking: number; readonly chunked_8k: number; readonly chunked_32k: number };
  readonly swiftcache: { readonly tokens: number; readonly regular_blocks: number; readonly lent_blocks: number; readonly window: number };
  readonly eq5: { readonly tokens: number; readonly n_lsc: number; readonly n_rc: number; readonly k_master: number };
  readonly vs_chunked8k: number;
  readonly eq5_vs_chunked8k: number;
  readonly vs_chunked32k: number;
  readonly vs_no_chunking: number;
}

/**
 * The elastic loan at one memory point: each model's region in its own blocks (whole blocks of its
 * KV budget at the 8K chunk), then kv-core's coordinator in 'stream' mode with the master's demand
 * `masterTokens` and each worker's `workerTokens`, one tick. Returns the regions and what each
 * worker lends in master blocks.
 */
export function elasticLoan(
  memBytes: number,
  workers: readonly SwiftcacheModel[],
  masterTokens: number,
  workerTokens: number,
  s: SwiftcacheSetup = SWIFTCACHE_SETUP,
  mode: 'stream' | 'cache' = 'stream',
): ElasticLoan {
  const members: LoanMember[] = [{ id: 'master', model: s.master }, ...workers.map((w, i) => ({ id: `worker${i}-${w}`, model: w }))].map(
    (m) => ({ ...m, shape: kvShape(MODELS[m.model], s.blockTokens) }),
  );
  const regions = Object.fromEntries(
    members.map((m) => {
      const model = MODELS[m.model];
      return [
        m.id,
        Math.floor(
          kvBudgetBytes(memBytes, model, s.chunkTokens, { utilization: s.utilization }) / (blockElements(m.shape) * model.dtypeBytes),
        ),
      ];
    }),
  );
  const coordinator = ElasticCacheCoordinator.withRegions(members, regions, s.elasticWindowMs, mode);
  coordinator.observe('master', 0, masterTokens);
  for (const w of members.slice(1)) coordinator.observe(w.id, 0, workerTokens);
  coordinator.tick(0);
  coordinator.checkInvariant();
  const lent = Object.fromEntries(members.slice(1).map((w) => [w.id, coordinator.state(w.id).lentBlocks]));
  return { members, regions, coordinator, lent };
}

/** One memory point: the master alone under vLLM (no chunking, 8K and 32K chunks) and with SwiftCache. */
export function maxContextAt(point: MemoryPoint, s: SwiftcacheSetup = SWIFTCACHE_SETUP): MaxContextPoint {
  const memBytes = point.gb * 1e9 * s.scale.mem;
  const m = MODELS[s.master];
  const shape = kvShape(m, s.blockTokens);
  const opts = { utilization: s.utilization };
  const vllm = {
    no_chunking: maxContextAlone(memBytes, m, null, s.blockTokens, opts),
    chunked_8k: maxContextAlone(memBytes, m, 8192, s.blockTokens, opts),
    chunked_32k: maxContextAlone(memBytes, m, 32_768, s.blockTokens, opts),
  };
  // Fig. 9 measures the master alone: the workers are idle (their window holds no demand), and the
  // master asks for more than any loan could give.
  const { regions, coordinator, members } = elasticLoan(memBytes, point.workers, Number.MAX_SAFE_INTEGER, 0, s);
  const masterElements = regions.master * blockElements(shape);
  const lentMasterBlocks = members.slice(1).map((w) => coordinator.borrowedBlocks(w.id).capacity);
  const eq5 = layerStreamSplit(
    shape,
    masterElements,
    lentMasterBlocks.map((b) => b * blockElements(shape)),
  );
  const mnemo = streamedContextPlan(
    shape,
    masterElements,
    lentMasterBlocks.reduce((a, b) => a + b, 0),
    s.window,
  );
  const swift = mnemo.contextBlocks * s.blockTokens;
  return {
    gb: point.gb,
    workers: point.workers,
    region_blocks: regions,
    lent_master_blocks: Object.fromEntries(members.slice(1).map((w, i) => [w.id, lentMasterBlocks[i]])),
    vllm,
    swiftcache: { tokens: swift, regular_blocks: mnemo.regularBlocks, lent_blocks: mnemo.lentBlocks, window: s.window },
    eq5: { tokens: eq5.maxContextTokens, n_lsc: eq5.streamBlocks, n_rc: eq5.regularBlocks, k_master: eq5.masterLayerBlocks },
    vs_chunked8k: round(swift / vllm.chunked_8k),
    eq5_vs_chunked8k: round(eq5.maxContextTokens / vllm.chunked_8k),
    vs_chunked32k: round(swift / vllm.chunked_32k),
    vs_no_chunking: round(swift / vllm.no_chunking),
  };
}

/** Every memory point of the setup; `progress(label)` is told before each. */
export function maxContextExperiment(
  s: SwiftcacheSetup = SWIFTCACHE_SETUP,
  progress: (label: string) => void = () => {},
): MaxContextPoint[] {
  return s.memoryPoints.map((p) => {
    progress(`max context @ ${p.gb} GB`);
    return maxContextAt(p, s);
  });
}
