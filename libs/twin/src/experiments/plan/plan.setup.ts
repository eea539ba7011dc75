// The capacity plan's question, the shape of each twin run it makes, and the hardware one
// candidate configuration runs on: Symphony's testbed with the GPU and model asked for.
import type { ServingSystemName } from '@mnemo/kv-core';
import { GPUS, MODELS } from '../../costs/hardware.tables.js';
import { rooflineCompute } from '../../costs/roofline.compute.js';
import { SYMPHONY_HARDWARE, type GpuHardware } from '../../scenario/gpu-cluster.scenario.js';
import type { TwinSession } from '../../workload/session.workload.js';
import { PLAN_PRICES, type MemoryPoint } from './plan.cost.js';

const GiB = 1024 ** 3;

/** The serving systems `npm run twin -- symphony` compares (kv-core SERVING_SYSTEMS), in its order. */
export const PLAN_POLICIES = ['symphony', 'recompute', 'infercept', 'llmd'] as const satisfies readonly ServingSystemName[];
export type PlanPolicy = (typeof PLAN_POLICIES)[number];
export type PlanGpu = keyof typeof GPUS;
export type PlanModel = keyof typeof MODELS;

/** What an operator asks: `users` on `gpu`s serving `model` within a P99 TTFT (and mean TPOT; null: the default rule). */
export interface PlanQuestion {
  readonly users: number;
  readonly model: PlanModel;
  readonly gpu: PlanGpu;
  readonly sloTtftMs: number;
  readonly sloTpotMs: number | null;
  readonly policies: readonly PlanPolicy[];
  /** The results file asked for (null: the command's default). */
  readonly out?: string | null;
}

export interface PlanRunOptions {
  readonly thinkCompression: number;
  readonly rampMs: number;
  readonly warmMs: number;
  readonly untilMs: number;
  readonly seed: number;
  readonly cellInstances: number;
  /** A cell is grown past one node where that would leave fewer users than this: P99 over too few requests is their maximum. */
  readonly minCellUsers: number;
  /** The best configuration found on a cell is verified on whole-cluster runs up to this many users (a run's cost grows with them). */
  readonly fullCheckMaxUsers: number;
  /** Where the instance search starts: users ÷ this (the symphony experiment's A100s held ~32 users each within its TPOT SLO). */
  readonly usersPerInstanceStart: number;
  readonly maxInstances: number;
  /** Doubling the instances must cut P99 TTFT by this much, or the SLO is taken as under the policy's floor. */
  readonly floorGain: number;
  readonly base: MemoryPoint;
  readonly hostGbGrid: readonly number[];
  readonly ssdTbGrid: readonly number[];
  /**
   * Without --slo-tpot-ms, Symphony's TPOT SLO built the same way (§4.2, Fig. 11: 1.5× vLLM's TPOT
   * at its lightest load, 64 users on 8 instances): 1.5× the roofline decode step of 8 sequences of
   * 4K tokens on the GPU asked for (A100, Llama-3.1-8B: 20.2 ms; the experiment's own is 19.8 ms).
   */
  readonly defaultTpot: { readonly overLight: number; readonly seqs: number; readonly contextTokens: number };
}

/**
 * The search's bounds and each run's shape. Runs are the symphony experiment's (same workload,
 * think-time compression, seed) over a shorter window: 40 s simulated of ramp and warm-up, then
 * 30 s measured. A cluster of more than `cellInstances` runs as a cell of that many instances
 * carrying its share of the users (users × cell ÷ instances), grown where that would leave fewer
 * than `minCellUsers`: the twin's cost grows with the users it runs, and a closed-loop user
 * population spread evenly over identical nodes loads each the same. Both are limits written in
 * docs/twin.md.
 */
export const PLAN_RUN: PlanRunOptions = {
  thinkCompression: 6,
  rampMs: 10_000,
  warmMs: 40_000,
  untilMs: 70_000,
  seed: 1,
  cellInstances: 4,
  minCellUsers: 128,
  fullCheckMaxUsers: 512,
  usersPerInstanceStart: 32,
  maxInstances: 256,
  floorGain: 0.1,
  base: { hostGb: 256, ssdTb: 4 },
  hostGbGrid: [64, 256, 1024],
  ssdTbGrid: [0, 4],
  defaultTpot: { overLight: 1.5, seqs: 8, contextTokens: 4096 },
};

/**
 * What the plan needs and the twin may not import, passed in by the command line (tools/twin/plan.mjs):
 * the papers' sessions, drawn by testkit's generator.
 */
export interface PlanPorts {
  /** The base sessions (the papers' "1,000 samples") with think times compressed so, drawn once per thread (seconds each). */
  readonly base: (thinkCompression: number) => readonly TwinSession[];
  /** The generator's system prompt length, shared by every session a run cycles through the base ones. */
  readonly systemTokens: number;
}

/** One candidate configuration: `instances` GPUs of `gpu` serving `model`, with `hostGb` and `ssdTb` in each node. */
export interface PlanConfig extends MemoryPoint {
  readonly gpu: PlanGpu;
  readonly model: PlanModel;
  readonly instances: number;
}

/** One instance's hardware: Symphony's testbed with the GPU and model asked for, the node's memory split over its GPUs. */
export function planHardware({ gpu, model, instances, hostGb, ssdTb }: PlanConfig): GpuHardware {
  const perInstance = PLAN_PRICES.gpusPerNode;
  return {
    ...SYMPHONY_HARDWARE,
    gpu: GPUS[gpu],
    model: MODELS[model],
    instances,
    // As SYMPHONY_HARDWARE: a quarter of the node's DRAM is the OS's and the serving processes'.
    hostPoolBytes: Math.floor((((hostGb * 1e9) / perInstance) * 0.75) / GiB) * GiB,
    ssdPoolBytes: Math.floor((ssdTb * 1e12) / perInstance / GiB) * GiB,
  };
}

export const tenths = (x: number): number => Math.round(x * 10) / 10;

/** The TPOT SLO used when none is given, from the hardware tables (PLAN_RUN.defaultTpot). */
export function defaultTpotSloMs({ gpu, model }: Pick<PlanQuestion, 'gpu' | 'model'>, o: PlanRunOptions = PLAN_RUN): number {
  const hw = planHardware({ gpu, model, instances: 1, hostGb: 0, ssdTb: 0 });
  const d = o.defaultTpot;
  return tenths(d.overLight * rooflineCompute(hw.gpu, hw.model, hw.efficiency).decodeMs(d.seqs, d.seqs * d.contextTokens));
}

/** The SLO a plan meets, ms. */
export interface PlanSlo {
  readonly ttftMs: number;
  readonly tpotMs: number;
}

export const sloOf = (q: PlanQuestion, o: PlanRunOptions): PlanSlo => ({
  ttftMs: q.sloTtftMs,
  tpotMs: q.sloTpotMs === null ? defaultTpotSloMs(q, o) : q.sloTpotMs,
});

/** The search's memory grid and instance bounds for a question. */
export interface SearchShape {
  readonly grid: readonly MemoryPoint[];
  readonly start: number;
  readonly max: number;
}

export function searchShape({ users }: Pick<PlanQuestion, 'users'>, o: PlanRunOptions): SearchShape {
  return {
    grid: o.hostGbGrid.flatMap((hostGb) => o.ssdTbGrid.map((ssdTb) => ({ hostGb, ssdTb }))),
    start: Math.max(1, Math.ceil(users / o.usersPerInstanceStart)),
    max: Math.min(o.maxInstances, Math.max(users, 1)),
  };
}
