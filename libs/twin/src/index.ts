export { EventQueue, call, type TwinEvent } from './core/event.queue.js';
export { SeededRng } from './core/seeded.rng.js';
export { Distribution } from './core/distribution.js';
export { percentile } from './core/percentile.js';
export { simCostCompute, type ComputeModel } from './costs/compute.port.js';
export { transferMs, linkFromTwoPoints, validateLink, type TransferLink } from './costs/transfer.port.js';
export { NO_OVERHEADS, type ServiceOverheads } from './costs/overhead.port.js';
export { TwinNode, type TwinNodeConfig, type TwinNodeCosts, type TwinNodeNet } from './node/twin.node.js';
export { TwinSeq, type TwinRequest, type TwinKvSource } from './node/twin-seq.js';
export { TwinTiers, type TwinPoolDevice } from './node/twin-tiers.js';
export { restorePass, MIN_SLEEP_MS, type PassLoad } from './node/restore-pass.js';
export { TwinScheduler, DEFAULT_TWIN_SCHEDULER, type TwinSchedulerConfig, type TwinDispatch } from './scheduler/twin.scheduler.js';
export {
  ClosedLoopUsers,
  type TwinRequestResult,
  type UsersOptions,
  type TwinClient,
  type UserNet,
  type InferOutcome,
} from './client/closed-loop.users.js';
export { TwinCluster, type TwinClusterConfig } from './scenario/twin.cluster.js';
export type { TwinSession, TwinTurn } from './workload/session.workload.js';
export { multiroundCluster, type MultiroundSetup, type MeasuredCosts, type AdvisoryVariant } from './scenario/multiround.scenario.js';
export { summarizeRun, type RunSummary } from './report/run.summary.js';
export { PromptKeys } from './node/prompt-keys.js';
export {
  GPUS,
  MODELS,
  kvBytesPerToken,
  deviceKvBlocks,
  pcieLink,
  derivedDispatchMs,
  dispatchBandMs,
  DEFAULT_EFFICIENCY,
  H200_MEASURED_EFFICIENCY,
  GPU_EFFICIENCY,
  efficiencyOf,
  PCIE_EFFICIENCY,
  NETWORK_100G,
  INFINIBAND,
  NVME_GEN4,
  HOST_MEMORY,
  FASTSWITCH_TABLE1,
  PCIE_NOMINAL_BYTES_PER_S,
  PCIE_MEASURED_EFFICIENCY,
  MEASURED_DISPATCH_MS,
  PCIE4_SHARED_BY,
  NVLINK_SWIFTCACHE_BYTES_PER_S,
  nvlinkLink,
  type GpuSpec,
  type ModelSpec,
  type Efficiency,
} from './costs/hardware.tables.js';
export { rooflineCompute, scaleGpu, type RooflineCompute } from './costs/roofline.compute.js';
export {
  activationBytesPerToken,
  kvBudgetBytes,
  maxContextAlone,
  VLLM_GPU_MEMORY_UTILIZATION,
  type MemoryBudgetOptions,
} from './costs/memory.budget.js';
export { layerwisePrefillMs } from './costs/layerwise.load.js';
export { SessionKvTiers } from './node/session-kv.tiers.js';
export { mapPattern, planCost, eCacheBytesPerToken, type PlanCost } from './droidspeak/reuse-plan.cost.js';
export { serveReuse, type ReuseRequest, type ReusePolicy, type ReuseServerConfig, type ReuseRun } from './droidspeak/reuse.server.js';
export { SwapInstanceSim } from './swap/swap-instance.sim.js';
export { PriorityTrace, PRIORITY_PATTERNS, type PriorityPattern, type PriorityTraceOptions } from './swap/priority.trace.js';
export {
  VLLM_SWAP,
  FASTSWITCH,
  type SwapMechanisms,
  type SwapConversation,
  type SwapTurn,
  type SwapInstanceConfig,
  type SwapRunResult,
} from './swap/swap-instance.types.js';
export { baselineCheck, baselineSummary, BASELINE_ERROR_TARGET, type BaselineCheck } from './report/baseline.check.js';
