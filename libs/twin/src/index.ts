export { EventQueue, call, type TwinEvent } from './core/event.queue.js';
export { SeededRng } from './core/seeded.rng.js';
export { Distribution } from './core/distribution.js';
export { percentile } from '@mnemo/kv-core';
export { simCostCompute, type ComputeModel } from './costs/compute.port.js';
export { fitEngineSteps, type EngineStepFit, type StepFitQuality } from './costs/engine-steps.fit.js';
export { nodePathFit, nodeDecodePath, type PathPoint } from './costs/request-path.fit.js';
export type { LiveRun, LivePassFigures, LiveSummary, LiveCluster, CalibrationFile } from './experiments/validate/live-run.js';
export { measuredCosts, multiroundSetup, bytesOf, type MultiroundBench } from './experiments/validate/validate.setup.js';
export {
  validateAgainstLive,
  NOT_MODELLED,
  UNCONTENDED_TPOT_RATIO,
  type ValidatePorts,
  type ValidateOptions,
  type Validation,
  type SystemValidation,
} from './experiments/validate/validate.experiment.js';
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
export {
  gpuCluster,
  scaledHardware,
  hardwareLinks,
  routingFigures,
  SYMPHONY_HARDWARE,
  type GpuHardware,
  type GpuHardwareFigure,
  type GpuLinks,
  type RoutingFigures,
  type GpuClusterOptions,
  type GpuClusterConfig,
} from './scenario/gpu-cluster.scenario.js';
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
export {
  loadTrace,
  traceText,
  parseTraceLine,
  TRACE_BLOCK_TOKENS,
  DEFAULT_TRACE_OPTIONS,
  type TraceLine,
  type TraceRequest,
  type TraceOptions,
  type LoadedTrace,
} from './trace/mooncake.trace.js';
export { TraceBlockBook, type BlockBookOptions } from './trace/trace.blocks.js';
export { traceStats, formatTraceStats, reusableChunks, MOONCAKE_TABLE2_CONVERSATION, type TraceStats } from './trace/trace.stats.js';
export { ChunkCache, type CacheTier } from './trace/chunk.cache.js';
export {
  LLAMA3_70B,
  A800,
  A800_NVLINK_BYTES_PER_S,
  MOONCAKE_NODE_RDMA_BYTES_PER_S,
  MOONCAKE_INSTANCE,
  prefillCosts,
  type PrefillCosts,
  type PrefillInstanceSpec,
} from './trace/mooncake.hardware.js';
export {
  runPrefillPool,
  TRACE_POLICIES,
  type TracePolicy,
  type PrefillPoolConfig,
  type PrefillPoolResult,
} from './trace/prefill-pool.sim.js';
export {
  MOONCAKE_CONVERSATION_PAPER,
  unknownPaper,
  FIG9_CAPACITIES,
  check,
  type TracePaper,
  type PaperCheck,
} from './trace/trace.paper.js';
export {
  traceExperiment,
  capacityCurve,
  DEFAULT_TRACE_EXPERIMENT,
  type TraceExperimentOptions,
  type Progress,
} from './trace/trace.experiment.js';
export {
  parseTraceArgs,
  traceName,
  TraceArgsError,
  TRACE_USAGE,
  MOONCAKE_CONVERSATION_NAME,
  type TraceCommand,
} from './trace/trace.args.js';
export { baselineCheck, baselineSummary, BASELINE_ERROR_TARGET, type BaselineCheck } from './report/baseline.check.js';
export type { TargetCheck, SessionDraw } from './experiments/shared/experiment.ports.js';
export { robustnessRows, type RobustnessSweep, type RobustnessCase } from './experiments/shared/robustness.sweep.js';
export { runPool, poolWorkers, type RunPoolOptions, type PoolTaskFn } from './experiments/shared/run-pool.js';
export {
  PAPER_STATS,
  PAPER_WORKLOAD_FIT,
  FASTSWITCH_WORKLOAD_FIT,
  paperWorkload,
  fastswitchWorkload,
  cycleSessions,
  paperWorkloadStats,
  type LengthDistribution,
  type PaperWorkloadOptions,
  type PaperWorkloadStats,
} from './experiments/shared/paper-workload.js';
export {
  FASTSWITCH_SETUP,
  FASTSWITCH_SYSTEMS,
  FASTSWITCH_PAPER,
  FASTSWITCH_BANDED,
  fastswitchInBands,
  fastswitchConversations,
  fastswitchHardware,
  type FastswitchSetup,
  type FastswitchSystem,
  type FastswitchPorts,
  type FastswitchHardware,
  type HardwareScale,
} from './experiments/fastswitch/fastswitch.setup.js';
export {
  fastswitchRunOnce,
  fastswitchRatios,
  type FastswitchRun,
  type FastswitchRatios,
  type FastswitchPair,
  type FastswitchRunOptions,
} from './experiments/fastswitch/fastswitch.run.js';
export {
  fastswitchPaperDispatchMs,
  fastswitchBaselineChecks,
  fastswitchCauses,
  fastswitchCausesOf,
  type FastswitchPoint,
  type FastswitchAblation,
  type FastswitchPrefixKept,
  type FastswitchResultsFigures,
} from './experiments/fastswitch/fastswitch.checks.js';
export { fastswitchExperiment, type FastswitchCurvePoint, type FastswitchResult } from './experiments/fastswitch/fastswitch.experiment.js';
export {
  FASTSWITCH_ROBUSTNESS,
  fastswitchRobustness,
  type FastswitchRobustnessSweep,
  type FastswitchRobustnessRow,
  type FastswitchRobustness,
} from './experiments/fastswitch/fastswitch.robustness.js';
export {
  POOLING_SETUP,
  POOLING_PAPER,
  POOLING_CONFIGS,
  POOLING_CONFIG_NAMES,
  type PoolingSetup,
  type PoolingConfig,
  type PoolingConfigName,
} from './experiments/pooling/pooling.setup.js';
export { poolingRequestTimes, ssdRetrievalMs, type RequestTimes } from './experiments/pooling/pooling.times.js';
export {
  poolingExperiment,
  poolingBaselineChecks,
  type PoolingCurves,
  type PoolingResult,
  type PoolingKeys,
} from './experiments/pooling/pooling.experiment.js';
export { poolingRobustness, type PoolingRobustness, type PoolingRobustnessRow } from './experiments/pooling/pooling.robustness.js';
export {
  SWIFTCACHE_SETUP,
  SWIFTCACHE_PAPER,
  swiftcacheHardware,
  type SwiftcacheSetup,
  type SwiftcacheHardware,
} from './experiments/swiftcache/swiftcache.setup.js';
export { maxContextAt, maxContextExperiment, type MaxContextPoint } from './experiments/swiftcache/max-context.experiment.js';
export {
  ttftWorkload,
  runTtft,
  ttftExperiment,
  type TtftWork,
  type TtftRun,
  type TtftRate,
} from './experiments/swiftcache/ttft.experiment.js';
export {
  interferenceAtLength,
  swiftcacheExperiment,
  type SwiftcacheKeys,
  type SwiftcacheExperiment,
} from './experiments/swiftcache/swiftcache.experiment.js';
export { swiftcacheRobustness, SWIFTCACHE_HEADLINES, type SwiftcacheRobustness } from './experiments/swiftcache/swiftcache.robustness.js';
export { swiftcacheResults, swiftcacheSteps, type SwiftcacheResults } from './experiments/swiftcache/swiftcache.report.js';
export { DROIDSPEAK_SETUP, DROIDSPEAK_PAPER, type DroidspeakSetup } from './experiments/droidspeak/droidspeak.setup.js';
export { profiledPairs, targetFrontier, type DroidspeakProfiles, type ProfiledPair } from './experiments/droidspeak/droidspeak.profiles.js';
export { droidspeakExperiment, type DroidspeakExperiment, type DroidspeakKeys } from './experiments/droidspeak/droidspeak.experiment.js';
export { droidspeakRobustness, type DroidspeakRobustness } from './experiments/droidspeak/droidspeak.robustness.js';
export { droidspeakResults, droidspeakSteps, type DroidspeakResults } from './experiments/droidspeak/droidspeak.report.js';
export {
  PLAN_PRICES,
  hourlyCost,
  nodesFor,
  costModel,
  type PlanPrices,
  type PlanCostModel,
  type MemoryPoint,
} from './experiments/plan/plan.cost.js';
export {
  PLAN_RUN,
  PLAN_POLICIES,
  planHardware,
  defaultTpotSloMs,
  type PlanQuestion,
  type PlanRunOptions,
  type PlanPorts,
  type PlanPolicy,
  type PlanGpu,
  type PlanModel,
} from './experiments/plan/plan.setup.js';
export { parsePlanArgs, PlanArgsError, PLAN_USAGE, PLAN_GPUS } from './experiments/plan/plan.args.js';
export {
  planPolicy,
  fewestInstances,
  type Candidate,
  type Evaluation,
  type RunFigures,
  type Tried,
  type PlanBest,
  type PolicySearch,
} from './experiments/plan/plan.search.js';
export { verifyWhole, ttftFloorMs, type Verification, type WholeRun, type FloorSession } from './experiments/plan/plan.verify.js';
export {
  planOnePolicy,
  type PlanTask,
  type PolicyPlan,
  type PlanRunEvent,
  type PlanRunSummary,
  type PlanVerification,
} from './experiments/plan/plan.policy.js';
export { capacityPlan, type PlanWorker, type PlanResult, type CapacityPlanOptions } from './experiments/plan/plan.experiment.js';
export { planTable } from './experiments/plan/plan.table.js';
export {
  paperRun,
  measuredUsers,
  withoutRequests,
  roundFigure,
  type PaperRunSummary,
  type MeasuredRequest,
  type Curves,
} from './experiments/shared/paper-run.js';
export {
  SYMPHONY_RUN,
  SYMPHONY_PAPER,
  symphonyRuns,
  conductorSweepRuns,
  type SymphonySetup,
  type SymphonyPaperFigure,
  type SymphonyRunSpec,
} from './experiments/symphony/symphony.setup.js';
export type { SymphonyPorts, SymphonyRunSummary, SymphonyTask, SymphonyWorker } from './experiments/symphony/symphony.ports.js';
export {
  symphonyRun,
  symphonyExperiment,
  symphonyExperimentInWorkers,
  type ConductorSweep,
  type SymphonyResult,
  type SymphonyExperimentOptions,
} from './experiments/symphony/symphony.experiment.js';
export { symphonyKeys, type SymphonyKeys } from './experiments/symphony/symphony.keys.js';
export {
  neverBehind,
  aaNoise,
  overSeeds,
  pairedOverSeeds,
  type SymphonyRunFigures,
  type Verdict,
  type SeedRatios,
} from './experiments/symphony/symphony.noise.js';
export {
  symphonyBaselineChecks,
  symphonyCauses,
  sloCrossingUsers,
  symphonyHardware,
  type SymphonyResultsFigures,
} from './experiments/symphony/symphony.checks.js';
export { symphonyResults, type SymphonyResults } from './experiments/symphony/symphony.report.js';
export {
  SYMPHONY_ROBUSTNESS,
  symphonyRobustness,
  type SymphonyRobustnessSweep,
  type SymphonyRobustnessRow,
  type SymphonyRobustness,
} from './experiments/symphony/symphony.robustness.js';
