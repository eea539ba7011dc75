// What Symphony's experiment needs and the twin may not import, passed in by the command line
// (tools/twin/symphony.mjs): the papers' sessions drawn by testkit's generator, and testkit's targets.
import type { GpuHardware } from '../../scenario/gpu-cluster.scenario.js';
import type { TwinSession } from '../../workload/session.workload.js';
import type { TargetCheck } from '../shared/experiment.ports.js';
import type { PaperRunSummary } from '../shared/paper-run.js';
import type { RunPoolOptions } from '../shared/run-pool.js';
import type { SymphonyRunSpec, SymphonySetup } from './symphony.setup.js';

export interface SymphonyPorts {
  /**
   * The papers' base sessions (their "1,000 samples") at a think-time compression, drawn on the
   * run's `seed` (1: the workload's own draw); a thread draws each once and reuses them.
   */
  readonly base: (thinkCompression: number, seed: number) => readonly TwinSession[];
  /** The workload's shared system prompt, tokens. */
  readonly systemTokens: number;
  /** The `twin-symphony` targets. */
  readonly holds: TargetCheck;
}

/** One run's summary and its wall time. */
export type SymphonyRunSummary = PaperRunSummary & { readonly wall_s: number | null };

/** What a thread is sent for one run (plain data: it is copied to the thread). */
export interface SymphonyTask {
  readonly r: SymphonyRunSpec;
  readonly o: SymphonySetup;
  readonly hw: GpuHardware;
}

/**
 * The module a thread imports and its export that runs one {@link SymphonyTask}: functions cannot
 * be sent to a thread, so the command line's module binds symphonyRun to its ports.
 */
export type SymphonyWorker = Pick<RunPoolOptions<SymphonyTask, SymphonyRunSummary>, 'module' | 'fn'>;
