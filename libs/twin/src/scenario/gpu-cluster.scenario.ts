// A twin cluster on modelled GPU hardware (the hardware tables): the multi-round benchmark's
// cluster shape (kv-core SERVING_SYSTEMS: routing, between-turn behaviour, tiers, peer fetch,
// advisories) with every size and cost taken from the tables instead of this machine's sim nodes.
import { SERVING_SYSTEMS, type ServingSystem } from '@mnemo/kv-core';
import { DEFAULT_SIM_COST } from '@mnemo/engine';
import { Distribution } from '../core/distribution.js';
import { NO_OVERHEADS } from '../costs/overhead.port.js';
import {
  DEFAULT_EFFICIENCY,
  deviceKvBlocks,
  GPUS,
  HOST_MEMORY,
  kvBytesPerToken,
  MODELS,
  NETWORK_100G,
  NVME_GEN4,
  pcieLink,
  type Efficiency,
  type GpuSpec,
  type ModelSpec,
} from '../costs/hardware.tables.js';
import { rooflineCompute, type RooflineCompute } from '../costs/roofline.compute.js';
import type { TransferLink } from '../costs/transfer.port.js';
import { multiroundCluster, type AdvisoryVariant } from './multiround.scenario.js';
import type { TwinClusterConfig } from './twin.cluster.js';

const GiB = 1024 ** 3;
const CHUNK_TOKENS = 256;

/** One instance's hardware and the cluster's size: what a GPU cluster is built from. */
export interface GpuHardware {
  readonly gpu: GpuSpec;
  readonly model: ModelSpec;
  readonly instances: number;
  readonly hostPoolBytes: number;
  readonly ssdPoolBytes: number;
  /** The network to other instances, as one instance's share of its node's link. */
  readonly peer: TransferLink;
  readonly efficiency: Efficiency;
  readonly maxBatch: number;
  readonly maxContext: number;
  readonly heartbeatMs: number;
  /** PCIe bandwidth against the table's (the robustness sweep's); 1 when absent. */
  readonly pcieScale?: number;
}

/**
 * Symphony §4's testbed: 2 nodes of 4 A100-80GB (one Llama-3.1-8B instance per GPU), 256 GB DRAM
 * and 4 TB SSD per node, 100 Gb/s between the nodes.
 */
export const SYMPHONY_HARDWARE: GpuHardware = {
  gpu: GPUS.A100,
  model: MODELS['llama-3.1-8b'],
  instances: 8,
  // Per instance: its quarter of the node's DRAM less a quarter for the OS and the serving processes.
  hostPoolBytes: Math.floor(((HOST_MEMORY.symphonyNodeBytes / HOST_MEMORY.gpusPerSymphonyNode) * 0.75) / GiB) * GiB,
  ssdPoolBytes: 1024 * GiB,
  // The node's one 100 Gb/s link shared by its 4 instances when all pull at once.
  peer: { dispatchMs: NETWORK_100G.dispatchMs, bytesPerMs: NETWORK_100G.bytesPerMs / HOST_MEMORY.gpusPerSymphonyNode },
  efficiency: DEFAULT_EFFICIENCY,
  // vLLM defaults: max_num_seqs 256; without chunked prefill a whole prompt is one step (budget = context).
  maxBatch: 256,
  maxContext: 65_536,
  heartbeatMs: 1000,
};

/** A hardware figure the robustness sweeps scale. */
export type GpuHardwareFigure = 'flops' | 'mem' | 'pcie' | 'network';

/** The same hardware with figures scaled (robustness). */
export function scaledHardware<H extends GpuHardware>(hw: H, f: Partial<Record<GpuHardwareFigure, number>> = {}): H {
  return {
    ...hw,
    gpu: { ...hw.gpu, bf16Flops: hw.gpu.bf16Flops * (f.flops ?? 1), memBytesPerS: hw.gpu.memBytesPerS * (f.mem ?? 1) },
    peer: { ...hw.peer, bytesPerMs: hw.peer.bytesPerMs * (f.network ?? 1) },
    pcieScale: f.pcie ?? 1,
  };
}

/** The links of one instance. */
export interface GpuLinks {
  readonly hostLoad: TransferLink;
  readonly hostWrite: TransferLink;
  readonly peer: TransferLink;
  readonly ssdRead: TransferLink;
  readonly ssdWrite: TransferLink;
}

/** PCIe of the GPU's generation, the shared network, the node's NVMe drive. */
export function hardwareLinks(hw: GpuHardware): GpuLinks {
  const pcie = pcieLink(hw.gpu.pcieGen);
  const p = { dispatchMs: pcie.dispatchMs, bytesPerMs: pcie.bytesPerMs * (hw.pcieScale ?? 1) };
  return { hostLoad: p, hostWrite: p, peer: hw.peer, ssdRead: NVME_GEN4.read, ssdWrite: NVME_GEN4.write };
}

/** Per-chunk figures the scheduler weighs routes by, ms. */
export interface RoutingFigures {
  readonly recomputeMsPerChunk: number;
  readonly hostMsPerChunk: number;
  readonly ssdMsPerChunk: number;
  readonly peerMsPerChunk: number;
}

/** The scheduler's per-chunk figures, from the same tables as the nodes' costs. */
export function routingFigures(hw: GpuHardware, compute: RooflineCompute): RoutingFigures {
  const chunkBytes = kvBytesPerToken(hw.model) * CHUNK_TOKENS;
  const l = hardwareLinks(hw);
  const ms = (link: TransferLink): number => link.dispatchMs + chunkBytes / link.bytesPerMs;
  return {
    recomputeMsPerChunk: compute.prefillPerTokenMs * CHUNK_TOKENS,
    hostMsPerChunk: ms(l.hostLoad),
    ssdMsPerChunk: ms(l.ssdRead),
    peerMsPerChunk: ms(l.peer),
  };
}

/** What varies between the GPU clusters one experiment runs. */
export interface GpuClusterOptions {
  readonly users: number;
  readonly rampMs: number;
  readonly seed: number;
  readonly tenant: string;
  readonly variant?: AdvisoryVariant;
  readonly untilMs?: number;
  readonly client?: TwinClusterConfig['client'];
  /** vLLM as the papers ran it: no prefix cache and no tiers, every turn recomputed, strict FCFS. */
  readonly paperBaseline?: boolean;
  readonly conductorThreshold?: number;
}

/** A GPU cluster's configuration: its compute is the roofline's, which paper runs read for their P99 floor. */
export type GpuClusterConfig = TwinClusterConfig & { readonly costs: TwinClusterConfig['costs'] & { readonly compute: RooflineCompute } };

/**
 * One serving system on the hardware: multiroundCluster's wiring (nodes, scheduler, users) with
 * the roofline compute port, device KV from the GPU's memory, the links, and message hops of
 * 0.1 ms (a datacenter RPC; the services' CPU is not modelled at this scale).
 */
export function gpuCluster(hw: GpuHardware, systemName: string, o: GpuClusterOptions): GpuClusterConfig {
  const { users, rampMs, seed, tenant, variant, untilMs, client, paperBaseline, conductorThreshold } = o;
  const system: ServingSystem | undefined = (SERVING_SYSTEMS as Readonly<Record<string, ServingSystem>>)[systemName];
  if (!system) throw new Error(`unknown serving system ${systemName}`);
  const compute = rooflineCompute(hw.gpu, hw.model, hw.efficiency);
  const r = routingFigures(hw, compute);
  const setup = {
    nodes: hw.instances,
    model: hw.model.name,
    kvBlocks: deviceKvBlocks(hw.gpu, hw.model),
    maxBatch: hw.maxBatch,
    maxContext: hw.maxContext,
    hostPoolBytes: hw.hostPoolBytes,
    ssdPoolBytes: hw.ssdPoolBytes,
    heartbeatMs: hw.heartbeatMs,
    bandwidths: { host: 25, ssd: 7 },
    kvLayers: hw.model.layers,
    kvBytesPerToken: kvBytesPerToken(hw.model),
    compute: { ...DEFAULT_SIM_COST, prefillPerTokenMs: compute.prefillPerTokenMs, restorePerChunkMs: 0 },
    routing: {
      queueMsPerRequest: 20,
      moveMarginMs: 20,
      hostMsPerChunk: r.hostMsPerChunk,
      ssdMsPerChunk: r.ssdMsPerChunk,
      peerMsPerChunk: r.peerMsPerChunk,
      ...(conductorThreshold !== undefined ? { conductorThreshold } : {}),
    },
    users,
    rampMs,
  };
  const overheads = { ...NO_OVERHEADS, natsMs: Distribution.constant(0.1) };
  const base = multiroundCluster(setup, system, { links: hardwareLinks(hw), overheads }, { seed, tenant, variant, untilMs });
  return {
    ...base,
    // No refusals at scale: a closed-loop user whose request is refused would leave the run.
    nodes: base.nodes.map((n) => ({
      ...n,
      maxPrefillTokens: hw.maxContext,
      maxWaiting: 1_000_000,
      // Every system's nodes run the same pass rule (a live node's default); the paper's vLLM runs strict FCFS, as it did.
      holdLongPrompts: !paperBaseline,
      ...(paperBaseline ? { prefixCache: false, host: [], ssd: [] } : {}),
    })),
    costs: { ...base.costs, compute },
    ...(client ? { client } : {}),
  };
}
